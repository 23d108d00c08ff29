/**
 * Retry timing (DolphinScheduler `failRetryTimes` / `failRetryInterval`, here in seconds), with
 * an optional exponential backoff capped by `maxRetryIntervalSeconds`.
 */

/** FIXED: every retry waits `retryIntervalSeconds`; EXPONENTIAL: it doubles each time. */
export const RETRY_BACKOFFS = ["FIXED", "EXPONENTIAL"] as const;
export type RetryBackoff = (typeof RETRY_BACKOFFS)[number];

/** What retry timing reads from a task definition. */
export interface RetryPolicy {
  /** Further attempts after a failure. */
  retries: number;
  /** Seconds before the first retry (and every retry, for FIXED). */
  retryIntervalSeconds: number;
  retryBackoff?: RetryBackoff;
  /** Upper bound of an EXPONENTIAL interval, seconds. */
  maxRetryIntervalSeconds?: number;
}

/**
 * Whether a task that failed after `retriesUsed` retries gets another attempt.
 * Failover re-runs (NEED_FAULT_TOLERANCE) are not counted in `retriesUsed`.
 */
export function shouldRetry(policy: RetryPolicy, retriesUsed: number): boolean {
  return retriesUsed < policy.retries;
}

/**
 * Delay before retry number `retryNumber` (1-based), seconds: the interval, or for EXPONENTIAL
 * interval × 2^(n−1), never above `maxRetryIntervalSeconds` when set.
 */
export function retryDelaySeconds(policy: RetryPolicy, retryNumber: number): number {
  const base = policy.retryIntervalSeconds;
  if (policy.retryBackoff !== "EXPONENTIAL") return base;
  const grown = base * 2 ** Math.max(0, retryNumber - 1);
  return Math.min(grown, policy.maxRetryIntervalSeconds ?? Number.POSITIVE_INFINITY);
}
