/**
 * Polling with a deadline for the LocalStack suite: the deployed engine is asynchronous (SQS,
 * EventBridge, Lambda cold starts), so tests wait for a state, never for a fixed time.
 */

/** Options of `pollUntil`: the deadline and pace (ms) and what is awaited (for the error). */
export interface PollOptions {
  timeoutMs: number;
  /** Pause between reads (ms), default 2,000: each read is a Lambda invocation. */
  intervalMs?: number;
  /** What is awaited, for the timeout message ("instance … to finish"). */
  what: string;
}

/**
 * Calls `read` until `done(value)` holds and returns that value. A read that throws counts as
 * not done (a cold start may time out once). Throws when `timeoutMs` passes, naming `what`
 * and the last value or error seen, so that a failure shows where the run got stuck.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  opts: PollOptions,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let last = "nothing yet";
  for (;;) {
    try {
      const value = await read();
      if (done(value)) return value;
      last = JSON.stringify(value);
    } catch (e) {
      last = `error: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `timed out after ${Math.round(opts.timeoutMs / 1000)} s waiting for ${opts.what}; last: ${last.slice(0, 2000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 2_000));
  }
}
