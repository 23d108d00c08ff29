/** Groups of the API's states the CLI decides on (when to stop waiting, what still runs). */

/** Backfill states after which nothing changes any more (PAUSED may still be resumed). */
export const TERMINAL_BACKFILL_STATES: ReadonlySet<string> = new Set([
  "SUCCESS",
  "FAILURE",
  "CANCELLED",
]);

/** Instance states after which nothing changes any more. */
export const TERMINAL_INSTANCE_STATES: ReadonlySet<string> = new Set([
  "SUCCESS",
  "FAILURE",
  "STOPPED",
]);

/**
 * Task states in which an attempt is still going: without `endedAt` its duration counts up.
 * Any other state without an end (a PAUSED logic task, a SKIPPED one) is not running.
 */
export const ACTIVE_TASK_STATES: ReadonlySet<string> = new Set([
  "SUBMITTED",
  "DISPATCHED",
  "RUNNING",
]);
