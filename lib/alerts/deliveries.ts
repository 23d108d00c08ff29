/**
 * The alert delivery port: one record per delivery (rule × channel × occurrence), what
 * `GET /v1/instances/{id}` shows as `alerts`, and a queue of due delivery jobs the deliverer
 * (deliverer.ts) works through. Like the engine's store, every state change is a single-item
 * conditional write; a method whose condition did not hold returns false/undefined.
 * Times are epoch milliseconds.
 */
import type { AlertEvent } from "../core/alert-rules.js";

export type DeliveryStatus = "PENDING" | "SENT" | "FAILED";

/** One delivery of one alert to one channel. */
export interface DeliveryRecord {
  /** Stable per rule, channel and occurrence (lib/core/alert-rules.ts `deliveryId`). */
  deliveryId: string;
  /** Whose alerts these are: the instance id, or `schedule:<id>` for a misfire. */
  subject: string;
  workflow: string;
  instanceId?: string;
  /** The instance's run (1, +1 per rerun or recover-failed). */
  run?: number;
  scheduleId?: string;
  /** `workflow.alerts[0]`, `schedule.alerts[1]`: the rule that asked for it. */
  rule: string;
  channel: string;
  event: AlertEvent;
  /** TASK_RETRY_EXHAUSTED: the task and its last attempt. */
  taskCode?: string;
  attempt?: number;
  /** SCHEDULE_MISFIRE: the fire's nominal time and what became of it. */
  nominalTime?: number;
  misfireOutcome?: string;
  /** When the event happened. */
  occurredAt: number;
  status: DeliveryStatus;
  /** Sends tried so far. */
  attempts: number;
  /** While a deliverer sends: the claim lapses then (a crashed deliverer's job is taken over). */
  claimedUntil?: number;
  /** PENDING after a failed send: when the next one is due. */
  nextAttemptAt?: number;
  /** Why the last send failed (never the channel's URL). */
  lastError?: string;
  sentAt?: number;
  createdAt: number;
  /** Incremented by every write, which is conditioned on the previous value. */
  rev: number;
}

/** A due job: "send delivery `deliveryId` of `subject` at `dueAt`". */
export interface DeliveryJob {
  deliveryId: string;
  subject: string;
  dueAt: number;
}

export interface DeliveryStore {
  /**
   * Creates the record and its first job, due at `rec.createdAt`, unless the record exists (a
   * repeated event).
   * @returns false when it existed (nothing written).
   */
  create(rec: DeliveryRecord): Promise<boolean>;
  get(subject: string, deliveryId: string): Promise<DeliveryRecord | undefined>;
  /** Every delivery of a subject (an instance, `schedule:<id>`), oldest first. */
  list(subject: string): Promise<DeliveryRecord[]>;
  /** Replaces the record iff its stored `rev` is `rec.rev - 1`. */
  update(rec: DeliveryRecord): Promise<boolean>;
  /** Jobs with `dueAt <= now`, oldest first, at most `limit` (strongly consistent). */
  listDueJobs(now: number, limit: number): Promise<DeliveryJob[]>;
  /** Writes a job (the same deliveryId and dueAt is the same item). */
  putJob(job: DeliveryJob): Promise<void>;
  /** @returns true only for the caller that removed it. */
  deleteJob(job: DeliveryJob): Promise<boolean>;
}
