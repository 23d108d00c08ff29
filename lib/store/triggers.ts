/**
 * The event-trigger port: triggers start a workflow when an event matches their EventBridge
 * event pattern. Every state change is a single-item conditional write.
 */
import type { Page } from "./records.js";

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
}
