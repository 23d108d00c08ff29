/** Retry timing (DolphinScheduler `failRetryTimes` / `failRetryInterval`, here in seconds). */

/** What retry timing reads from a task definition. */
export interface RetryPolicy {
  /** Further attempts after a failure. */
  retries: number;
  /** Seconds between a failure and the next attempt. */
  retryIntervalSeconds: number;
}

/**
 * Whether a task that failed after `retriesUsed` retries gets another attempt.
 * Failover re-runs (NEED_FAULT_TOLERANCE) are not counted in `retriesUsed`.
 */
export function shouldRetry(policy: RetryPolicy, retriesUsed: number): boolean {
  return retriesUsed < policy.retries;
}

/** Delay before retry number `retryNumber` (1-based), seconds. Fixed interval for now. */
export function retryDelaySeconds(policy: RetryPolicy, _retryNumber: number): number {
  return policy.retryIntervalSeconds;
}
