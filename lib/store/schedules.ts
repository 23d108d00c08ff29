/**
 * The schedule port: schedules (cron, rate or one-time) that the sweeper fires. They replace
 * DolphinScheduler's Quartz tables (`t_ds_schedules` plus Quartz's own trigger state). Like the
 * engine's Store (store.ts), every state change is a single-item conditional write: a method whose
 * condition did not hold returns false/undefined instead of throwing, so the caller decides what a
 * lost race means. Times are epoch milliseconds unless a name says otherwise.
 */
import type { FailureStrategy, Priority } from "../core/model.js";
import type { ScheduleTiming } from "../core/schedule-time.js";
import type { Page } from "./records.js";

/**
 * What the sweeper does with nominal times it finds already past by more than the misfire
 * threshold. Named after Quartz's CronTrigger misfire instructions, which DolphinScheduler's
 * schedules run on: SKIP ≈ `MISFIRE_INSTRUCTION_DO_NOTHING`, FIRE_ONCE ≈
 * `MISFIRE_INSTRUCTION_FIRE_ONCE_NOW` (fire-and-proceed), FIRE_ALL ≈
 * `MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY` (every missed time, up to `maxCatchup`).
 */
export type MisfirePolicy = "SKIP" | "FIRE_ONCE" | "FIRE_ALL";

/**
 * What a fire does while an earlier run of the same schedule is still going. PARALLEL starts it
 * anyway; SERIAL_WAIT queues it (runs in nominal order); SERIAL_DISCARD drops it; SERIAL_PRIORITY
 * queues it but keeps only the newest waiting time.
 */
export type OverlapPolicy = "PARALLEL" | "SERIAL_WAIT" | "SERIAL_DISCARD" | "SERIAL_PRIORITY";

export type ScheduleState = "ONLINE" | "OFFLINE";

/**
 * A schedule of one workflow. Exactly one of `cron`, `rate` and `at` says when it fires (the API
 * validates that; the store does not). `rev` guards every write (optimistic lock, as instances).
 * Its timing fields (`cron`, `rate`, `at`, `timezone`, `startTime`, `endTime`) mean what they
 * mean in {@link ScheduleTiming}; a rate is anchored at `startTime`, else `createdAt`.
 */
export interface ScheduleRecord extends Omit<ScheduleTiming, "anchor"> {
  id: string;
  workflow: string;
  /** Workflow parameters of every run (name → value). */
  params: Record<string, string>;
  priority?: Priority;
  failureStrategy?: FailureStrategy;
  workerGroup?: string;
  misfirePolicy: MisfirePolicy;
  /** A nominal time later than this, in seconds, is a misfire. */
  misfireThresholdSeconds: number;
  /** FIRE_ALL: at most this many missed times are fired in one catch-up. */
  maxCatchup: number;
  overlapPolicy: OverlapPolicy;
  state: ScheduleState;
  /** The sweeper shard that fires it (non-empty). */
  shard: string;
  /** The next nominal time to fire, epoch ms; absent when there is none (finished or not computed). */
  nextFireTime?: number;
  /** SERIAL_*: nominal times waiting for the running one, ascending. */
  queued?: number[];
  /** SERIAL_*: the instance of this schedule that runs now. */
  activeInstanceId?: string;
  /** Epoch ms, 0 .. 10^15 - 1 (it is part of a sort key). */
  createdAt: number;
  updatedAt: number;
  /** 1 when created; each update writes rev + 1. */
  rev: number;
}

export interface ListSchedulesQuery {
  /** Only this workflow's schedules. */
  workflow?: string;
  limit: number;
  /** A token a previous page of the same query returned. */
  nextToken?: string;
}

export interface ScheduleStore {
  /**
   * Creates a schedule.
   * @returns false when the id exists.
   * @throws RangeError for an empty shard or a createdAt outside 0 .. 10^15 - 1.
   */
  putSchedule(s: ScheduleRecord): Promise<boolean>;
  /** Strongly consistent read. */
  getSchedule(id: string): Promise<ScheduleRecord | undefined>;
  /**
   * Replaces the schedule iff its stored `rev` is `s.rev - 1`.
   * @returns false when it changed meanwhile or is gone.
   * @throws RangeError as putSchedule.
   */
  updateSchedule(s: ScheduleRecord): Promise<boolean>;
  /** @returns false when there was no such schedule. */
  deleteSchedule(id: string): Promise<boolean>;
  /**
   * Newest first (by createdAt, then id). Read from an index, so eventually consistent.
   * @throws ShoalError ValidationError for a token this query did not return.
   */
  listSchedules(q: ListSchedulesQuery): Promise<Page<ScheduleRecord>>;
  /**
   * ONLINE schedules of `shard` with `nextFireTime <= beforeMs`, earliest first, at most `limit`.
   * Read from a sparse index, so eventually consistent: re-read (getSchedule) before acting.
   */
  listDue(shard: string, beforeMs: number, limit: number): Promise<ScheduleRecord[]>;
}
