/**
 * The schedule port: schedules (cron, rate or one-time) that the sweeper fires. They replace
 * DolphinScheduler's Quartz tables (`t_ds_schedules` plus Quartz's own trigger state). Like the
 * engine's Store (store.ts), every state change is a single-item conditional write: a method whose
 * condition did not hold returns false/undefined instead of throwing, so the caller decides what a
 * lost race means. Times are epoch milliseconds unless a name says otherwise.
 */
import type { AlertRule } from "../core/alert-rules.js";
import type { MisfirePolicy, OverlapPolicy } from "../core/fire-decisions.js";
import type { FailureStrategy, Priority } from "../core/model.js";
import type { ScheduleTiming } from "../core/schedule-time.js";
import type { Page } from "./records.js";

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
  /** Alert rules of its runs and misfires (lib/core/alert-rules.ts). */
  alerts?: AlertRule[];
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
   * @throws RequestError ValidationError for a token this query did not return.
   */
  listSchedules(q: ListSchedulesQuery): Promise<Page<ScheduleRecord>>;
  /**
   * ONLINE schedules of `shard` with `nextFireTime <= beforeMs`, earliest first, at most `limit`.
   * Read from a sparse index, so eventually consistent: re-read (getSchedule) before acting.
   */
  listDue(shard: string, beforeMs: number, limit: number): Promise<ScheduleRecord[]>;
}

/** Shards of the due-schedules index; a schedule's shard is a hash of its id. */
export const SCHEDULE_SHARDS = 8;

/** The shard of a schedule id (stable: FNV-1a of the id). */
export function shardOf(id: string, shards = SCHEDULE_SHARDS): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return String(h % shards);
}

/** The timing of a schedule record (what lib/core/schedule-time.ts computes fire times from). */
export function timingOf(s: ScheduleRecord): ScheduleTiming {
  return {
    ...(s.cron !== undefined ? { cron: s.cron } : {}),
    ...(s.rate !== undefined ? { rate: s.rate } : {}),
    ...(s.at !== undefined ? { at: s.at } : {}),
    timezone: s.timezone,
    ...(s.startTime !== undefined ? { startTime: s.startTime } : {}),
    ...(s.endTime !== undefined ? { endTime: s.endTime } : {}),
    anchor: s.startTime ?? s.createdAt,
  };
}
