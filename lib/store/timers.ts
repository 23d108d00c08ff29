/**
 * Timers: "do `kind` for this instance at `dueAt`", kept in the store and fired by the sweeper.
 * They cover what SQS cannot delay: retries whose interval exceeds SQS's 15-minute
 * `DelaySeconds` maximum (SQS Developer Guide, "Amazon SQS delay queues"), workflow timeouts and
 * DEPENDENT re-checks. The sweeper lists due timers, acts, then deletes each one; the delete is
 * conditional, so of two sweepers racing on one timer only one learns it removed it.
 */

/**
 * One timer as stored: the store keeps `kind` and the fields opaque; the engine builds them and
 * reads them back as its union of kinds (lib/engine/timers.ts). Times are epoch milliseconds.
 */
export interface TimerRecord {
  /**
   * Unique per timer and stable across retries of whoever writes it (e.g.
   * `check:<instanceId>:<code>:<attempt>`), so a repeated `putTimer` overwrites, never doubles.
   */
  id: string;
  /** When it fires, epoch ms (0 .. 10^15 - 1). */
  dueAt: number;
  /** What to do (the sweeper's switch): `release-task`, `instance-timeout` or `logic-check`. */
  kind: string;
  instanceId: string;
  code?: string;
  attempt?: number;
  /** Opaque data the firing needs (JSON), small: the item must stay under DynamoDB's 400 KB. */
  payload?: string;
}

export interface TimerStore {
  /**
   * Writes the timer (idempotent: the same id and dueAt is the same item, rewritten).
   * @throws RangeError for an empty id or a dueAt that is not a whole number in 0 .. 10^15 - 1.
   */
  putTimer(t: TimerRecord): Promise<void>;
  /**
   * Timers with `dueAt <= now` (epoch ms), oldest first, at most `limit` (strongly consistent, so
   * a timer just written or deleted is seen as such).
   */
  listDueTimers(now: number, limit: number): Promise<TimerRecord[]>;
  /** Removes the timer. @returns true only for the caller that removed it (false: already gone). */
  deleteTimer(t: Pick<TimerRecord, "id" | "dueAt">): Promise<boolean>;
}
