/**
 * The event-trigger port: triggers start a workflow when an event matches their EventBridge
 * event pattern. Every state change is a single-item conditional write; the counters that limit
 * trigger loops and storms (lib/core/trigger-events.ts) are atomic conditional increments.
 */
import type { ReleaseState } from "../core/model.js";
import type { LoopStopReason } from "../core/state-events.js";
import type { Page } from "./records.js";

/** The last time a trigger started nothing to cut a loop off (shown in its view). */
export interface LoopStopRecord {
  /** Epoch ms. */
  at: number;
  reason: LoopStopReason;
  /** The limit reached (depth, or runs per originating event). */
  limit: number;
  /** The depth the run would have had. */
  depth: number;
  eventId: string;
  originEventId: string;
  /** The instances whose events led here, oldest first. */
  chain: string[];
}

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
  /**
   * ONLINE: matching events start runs; OFFLINE: the trigger starts nothing (as a schedule or a
   * workflow offline). Absent on triggers created before it existed: ONLINE.
   */
  state?: ReleaseState;
  /** Epoch ms, 0 .. 10^15 - 1 (it is part of a sort key). */
  createdAt: number;
  /** When it last started a run, epoch ms. */
  lastFiredAt?: number;
  /** Runs refused over the rate limit, in all, and when the last was (epoch ms). */
  refusedRuns?: number;
  lastRefusedAt?: number;
  /** Loops cut off at this trigger, in all, and the last one. */
  loopStops?: number;
  lastLoopStop?: LoopStopRecord;
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
   * @throws RequestError ValidationError for a token this query did not return.
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
  /**
   * Sets the trigger's state (ONLINE / OFFLINE).
   * @returns the trigger as it is now, or undefined when there is no such trigger.
   */
  setTriggerState(id: string, state: ReleaseState): Promise<TriggerRecord | undefined>;
  /**
   * Takes one of the `limit` runs the trigger may start in the rate window beginning at
   * `windowStart` (epoch ms): an atomic conditional increment, so concurrent deliveries never
   * take more than `limit` together.
   * @returns false when the window's runs are all taken.
   */
  takeRateSlot(id: string, windowStart: number, limit: number): Promise<boolean>;
  /**
   * Counts a refused run on the trigger (`refusedRuns`, `lastRefusedAt` = `at`).
   * @returns true for the first refusal in the rate window beginning at `windowStart` (one
   *   event per trigger a minute is published from it), false otherwise or when it is gone.
   */
  recordRefusal(id: string, windowStart: number, at: number): Promise<boolean>;
  /**
   * Takes one of the `limit` runs the event `originEventId` may lead to in all (an atomic
   * conditional increment; the counter expires after a week).
   * @returns false when they are all taken.
   */
  takeOriginRun(originEventId: string, limit: number, now: number): Promise<boolean>;
  /**
   * Counts a loop stop on the trigger and keeps it as the last one.
   * @returns true when the last one before it was of another originating event (the first stop
   *   of this chain here, which the caller publishes), false otherwise or when it is gone.
   */
  recordLoopStop(id: string, stop: LoopStopRecord): Promise<boolean>;
}
