/**
 * Writes that must land although the store is briefly out of reach: standalone's DynamoDB
 * emulator restarting (killed, or after its disk filled), or DynamoDB throttling past the SDK's
 * own retries. Two of them had been dropped at the first error, each costing a stall found by
 * `npm run chaos` (docs/reliability.md):
 * - a worker's result write: the lease lapsed, the sweeper failed the attempt over, and the task
 *   ran a second time half a minute after it had succeeded (seed 2029, disk-full);
 * - the dispatcher giving back its claim on a command it could not execute: the command stayed
 *   claimed for the 60 s a claim takes to go stale, and the instance did not start for a minute
 *   (seeds 31 and 2029, children).
 */

/** How long such a write is tried again before it is given up, ms. */
export const STORE_RETRY_MS = 60_000;
/** The first and the longest wait between tries, ms. */
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 2_000;

/**
 * Runs `write` until it answers (a conditional write that does not apply answers too: it
 * resolves), trying again after a thrown error with waits of 0.25 s doubling to 2 s, for up to
 * `retryMs`. The waits stay short because once the store is back the write should land before
 * anything else acts on the state it leaves (the sweeper waits one lease period after an outage
 * before it fails attempts over, sweeper.ts).
 * @param opts.now the clock, epoch ms.
 * @param opts.retryMs how long to go on, ms (default {@link STORE_RETRY_MS}).
 * @param opts.onRetry told of the first failure (once).
 * @param opts.onLanded told when a write that had failed landed, with the number of tries.
 * @throws the last error once `retryMs` has passed.
 */
export async function retryWhileUnreachable<T>(
  write: () => Promise<T>,
  opts: {
    now: () => number;
    retryMs?: number;
    onRetry?: (error: unknown) => void;
    onLanded?: (tries: number) => void;
  },
): Promise<T> {
  const deadline = opts.now() + (opts.retryMs ?? STORE_RETRY_MS);
  let wait = FIRST_WAIT_MS;
  for (let tries = 1; ; tries++) {
    try {
      const answer = await write();
      if (tries > 1) opts.onLanded?.(tries);
      return answer;
    } catch (e) {
      if (opts.now() + wait > deadline) throw e;
      if (tries === 1) opts.onRetry?.(e);
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(MAX_WAIT_MS, wait * 2);
    }
  }
}
