/**
 * What the scheduling side of Shoal keeps, and the store interfaces over it: schedules (cron,
 * rate or one-time), the fire ledger, named leases, backfills and event triggers.
 *
 * They replace DolphinScheduler's Quartz tables (`t_ds_schedules` plus Quartz's own trigger
 * state) and its complement-data commands. Like the engine's Store (store.ts), every state change
 * is a single-item conditional write: a method whose condition did not hold returns
 * false/undefined instead of throwing, so the caller decides what a lost race means.
 * Times are epoch milliseconds unless a name says otherwise.
 */
import type { FailureStrategy, Priority } from "../core/model.js";
import type { ScheduleTiming } from "../core/schedule-time.js";
import type { Page } from "./records.js";

// ---- schedules ----

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

// ---- fires ----

/**
 * What the sweeper decided for one nominal time: FIRED (a run was started), SKIPPED_MISFIRE (too
 * late under the misfire policy), DISCARDED_OVERLAP (an earlier run was still going, or a newer
 * time replaced it in the queue), QUEUED_SERIAL (waits for the running one; later becomes FIRED
 * or DISCARDED_OVERLAP).
 */
export type FireDecision = "FIRED" | "SKIPPED_MISFIRE" | "DISCARDED_OVERLAP" | "QUEUED_SERIAL";

/**
 * One entry of the fire ledger. Its key (scheduleId, nominalTime) is written once, so a nominal
 * time is decided at most once however many sweepers race on it.
 */
export interface FireRecord {
  scheduleId: string;
  /** The time the schedule said, epoch ms. */
  nominalTime: number;
  /** When the decision was taken, epoch ms. */
  actualTime: number;
  /** actualTime - nominalTime, ms. */
  latenessMs: number;
  decision: FireDecision;
  /** FIRED: the instance started (its command id is `<scheduleId>#<nominalTime>`). */
  instanceId?: string;
}

/** Fields updateFire may change (not the key). */
export type FireChanges = Partial<
  Pick<FireRecord, "decision" | "instanceId" | "actualTime" | "latenessMs">
>;

export interface ListFiresQuery {
  /** Nominal times from this, inclusive, epoch ms. */
  from?: number;
  /** Nominal times up to this, inclusive, epoch ms. */
  to?: number;
  limit: number;
  nextToken?: string;
}

export interface FireStore {
  /**
   * Records a decision if none exists for this nominal time (attribute_not_exists).
   * @returns true only for the first writer.
   */
  putFire(f: FireRecord): Promise<boolean>;
  /** Strongly consistent read. */
  getFire(scheduleId: string, nominalTime: number): Promise<FireRecord | undefined>;
  /**
   * Changes a fire whose decision is still `fromDecision` (e.g. QUEUED_SERIAL → FIRED).
   * @returns the new record, or undefined when the decision differs or the fire does not exist.
   */
  updateFire(
    scheduleId: string,
    nominalTime: number,
    fromDecision: FireDecision,
    changes: FireChanges,
  ): Promise<FireRecord | undefined>;
  /**
   * A schedule's fires by ascending nominal time (strongly consistent).
   * @throws ShoalError ValidationError for a token this query did not return.
   */
  listFires(scheduleId: string, q: ListFiresQuery): Promise<Page<FireRecord>>;
}

// ---- leases ----

/**
 * A named lease (e.g. one sweeper shard): held by `owner` until `expiresAt`. Stands in for the
 * ZooKeeper locks DolphinScheduler's masters take; expiry replaces the session timeout.
 */
export interface LeaseRecord {
  name: string;
  owner: string;
  /** Epoch ms; the lease is free once `expiresAt < now`. */
  expiresAt: number;
  /** When the current owner took it, epoch ms: renewals before expiry keep it, later claims reset it. */
  acquiredAt: number;
}

export interface LeaseStore {
  /**
   * Takes or renews the lease until `now + ttlMs`: succeeds when it is absent, expired
   * (`expiresAt < now`) or already `owner`'s.
   * @returns the lease as written, or undefined when another owner holds it.
   * @throws RangeError when ttlMs is not a positive number.
   */
  claimLease(
    name: string,
    owner: string,
    now: number,
    ttlMs: number,
  ): Promise<LeaseRecord | undefined>;
  /** Drops the lease if `owner` holds it. @returns false when it is not `owner`'s (or absent). */
  releaseLease(name: string, owner: string): Promise<boolean>;
  /** Strongly consistent read; an expired lease is returned as stored. */
  getLease(name: string): Promise<LeaseRecord | undefined>;
}

// ---- backfills ----

/** Lifecycle of a backfill; only RUNNING ones are active (the sweeper advances them). */
export type BackfillState = "RUNNING" | "PAUSED" | "CANCELLED" | "SUCCESS" | "FAILURE";

/**
 * A backfill: DolphinScheduler's "complement data" — runs of a workflow at past nominal times,
 * one after the other (SERIAL) or up to `parallelism` at once (PARALLEL, DolphinScheduler's
 * expected parallelism number). `rev` guards every write.
 */
export interface BackfillRecord {
  id: string;
  workflow: string;
  /** Nominal times to run, ascending, epoch ms. */
  nominalTimes: number[];
  mode: "SERIAL" | "PARALLEL";
  parallelism: number;
  priority: Priority;
  params: Record<string, string>;
  failureStrategy?: FailureStrategy;
  /**
   * IANA zone of its runs' time parameters: the zone its cron was read in, or the `timezone` it
   * was given with a list of dates; absent: each run uses the workflow's `timezone`, else UTC.
   */
  timezone?: string;
  state: BackfillState;
  /** Index into nominalTimes of the next to start. */
  next: number;
  /** Instance ids running now. */
  running: string[];
  done: number;
  failed: number;
  /** Epoch ms, 0 .. 10^15 - 1 (it is part of a sort key). */
  createdAt: number;
  updatedAt: number;
  rev: number;
}

/**
 * A backfill as lists show it: without the nominal times (they can be thousands), with their
 * count and range instead.
 */
export type BackfillSummary = Omit<BackfillRecord, "nominalTimes"> & {
  /** nominalTimes.length */
  total: number;
  /** nominalTimes[0], when there is one. */
  firstTime?: number;
  /** The last nominal time, when there is one. */
  lastTime?: number;
};

export interface ListBackfillsQuery {
  workflow?: string;
  /** Only backfills in this state (filters each page: a page may come back short). */
  state?: BackfillState;
  limit: number;
  nextToken?: string;
}

export interface BackfillStore {
  /**
   * Creates a backfill. @returns false when the id exists.
   * @throws RangeError for a createdAt outside 0 .. 10^15 - 1.
   */
  putBackfill(b: BackfillRecord): Promise<boolean>;
  /** Strongly consistent read. */
  getBackfill(id: string): Promise<BackfillRecord | undefined>;
  /** Replaces the backfill iff its stored `rev` is `b.rev - 1`. @returns false otherwise. */
  updateBackfill(b: BackfillRecord): Promise<boolean>;
  /**
   * RUNNING backfills, oldest first, at most `limit`. From a sparse index: eventually
   * consistent, re-read (getBackfill) before acting.
   */
  listActiveBackfills(limit: number): Promise<BackfillSummary[]>;
  /**
   * Newest first. Eventually consistent.
   * @throws ShoalError ValidationError for a token this query did not return.
   */
  listBackfills(q: ListBackfillsQuery): Promise<Page<BackfillSummary>>;
}

// ---- triggers ----

/**
 * Starts a workflow when an event matches `eventPattern` (an EventBridge event pattern), at most
 * once per `debounceSeconds`.
 */
export interface TriggerRecord {
  id: string;
  workflow: string;
  /** EventBridge event pattern, JSON. */
  eventPattern: string;
  /** Workflow parameter name → JSON path into the event. */
  params: Record<string, string>;
  /** Events within this many seconds of the last fire are dropped. */
  debounceSeconds: number;
  /** Epoch ms, 0 .. 10^15 - 1 (it is part of a sort key). */
  createdAt: number;
  /** When it last started a run, epoch ms. */
  lastFiredAt?: number;
  rev: number;
}

export interface TriggerStore {
  /**
   * Creates a trigger. @returns false when the id exists.
   * @throws RangeError for a createdAt outside 0 .. 10^15 - 1.
   */
  putTrigger(t: TriggerRecord): Promise<boolean>;
  /** Strongly consistent read. */
  getTrigger(id: string): Promise<TriggerRecord | undefined>;
  /**
   * Changes workflow, eventPattern, params and debounceSeconds iff the stored `rev` is
   * `t.rev - 1`; lastFiredAt is left alone, so an edit never undoes a debounce claim.
   * @returns false when it changed meanwhile or is gone.
   */
  updateTrigger(t: TriggerRecord): Promise<boolean>;
  /**
   * Newest first. Eventually consistent.
   * @throws ShoalError ValidationError for a token this query did not return.
   */
  listTriggers(limit: number, nextToken?: string): Promise<Page<TriggerRecord>>;
  /** @returns false when there was no such trigger. */
  deleteTrigger(id: string): Promise<boolean>;
  /**
   * The debounce claim: sets lastFiredAt to `firedAt` iff it is still `expectedLastFiredAt`
   * (absent when undefined), so of callers that read the same value only one wins.
   * @returns false when the value moved or the trigger is gone.
   */
  markFired(id: string, expectedLastFiredAt: number | undefined, firedAt: number): Promise<boolean>;
}
