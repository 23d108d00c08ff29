/**
 * The backfill port: DolphinScheduler's complement-data runs, advanced by the sweeper. Every
 * state change is a single-item conditional write. Times are epoch milliseconds.
 */
import type { FailureStrategy, Priority } from "../core/model.js";
import type { Page } from "./records.js";

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
   * @throws RequestError ValidationError for a token this query did not return.
   */
  listBackfills(q: ListBackfillsQuery): Promise<Page<BackfillSummary>>;
}
