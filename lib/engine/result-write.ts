/**
 * Writing an attempt's result while the store is out of reach. A task that ran to its end must
 * not run again because the write of its result failed: the DynamoDB emulator of standalone
 * restarting after its disk filled, or DynamoDB throttling past the SDK's own retries. Before,
 * the result was dropped, the lease lapsed and the sweeper failed the attempt over, so the task
 * ran a second time half a minute after it had succeeded (chaos seed 2029, disk-full,
 * docs/reliability.md).
 */

/** How long a result write is tried again before it is given up, ms. */
export const RESULT_WRITE_RETRY_MS = 60_000;
/** The first and the longest wait between tries, ms. */
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 2_000;

/**
 * Runs `write` until it answers (a conditional write that does not apply answers too: it
 * resolves), trying again after a thrown error with waits of 0.25 s doubling to 2 s, for up to
 * `retryMs`. The waits stay short because once the store is back the worker must write before
 * the sweeper fails the attempt over (it waits a lease period after an outage, sweeper.ts).
 * @param now the clock, epoch ms.
 * @throws the last error once `retryMs` has passed.
 */
export async function writeResultDurably<T>(
  write: () => Promise<T>,
  opts: {
    now: () => number;
    retryMs?: number;
    log?: (msg: string, fields?: Record<string, unknown>) => void;
    what: Record<string, unknown>;
  },
): Promise<T> {
  const deadline = opts.now() + (opts.retryMs ?? RESULT_WRITE_RETRY_MS);
  let wait = FIRST_WAIT_MS;
  for (let tries = 1; ; tries++) {
    try {
      const answer = await write();
      if (tries > 1)
        opts.log?.("worker: result recorded after the store came back", { ...opts.what, tries });
      return answer;
    } catch (e) {
      if (opts.now() + wait > deadline) throw e;
      if (tries === 1) {
        opts.log?.("worker: result not recorded yet, trying again", {
          ...opts.what,
          error: String(e),
        });
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(MAX_WAIT_MS, wait * 2);
    }
  }
}
