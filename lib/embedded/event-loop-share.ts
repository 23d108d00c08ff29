/**
 * Keeps the embedded backend from starving the process's event loop. Its calls run SQLite
 * synchronously and answer on an already settled promise, so a busy stream of them (a dispatcher
 * with 40 messages in flight, a trigger storm) runs entirely as microtasks: the event loop never
 * reaches its poll phase, and HTTP requests (`/v1/health`, `shoal trigger delete`), timers and
 * signals (Ctrl-C) wait until the work runs out. Over the network the emulators' and AWS's
 * answers arrive as I/O, which interleaves on its own.
 *
 * Every call first asks {@link yieldIfBusy}: once calls have run for {@link SLICE_MS} without a
 * macrotask in between, every caller waits for one `setImmediate`, so the loop polls I/O (and
 * fires timers) at least every couple of slices. Below the budget a call pays one clock read.
 */

/** Longest run of embedded calls between two turns of the event loop, ms. */
export const SLICE_MS = 10;

let sliceStart = performance.now();
let lastCall = sliceStart;
let turn: Promise<void> | undefined;

/**
 * Undefined while the current slice is under {@link SLICE_MS}; else a promise that settles on the
 * event loop's next turn (one shared by every caller), after which a new slice starts.
 */
export function yieldIfBusy(): Promise<void> | undefined {
  if (turn) return turn;
  const now = performance.now();
  // After a pause in the calls the loop has had its turns: a new slice, with no wait (a lone
  // call, the common case when idle, never pays for one).
  if (now - lastCall > SLICE_MS) sliceStart = now;
  lastCall = now;
  if (now - sliceStart < SLICE_MS) return undefined;
  turn = new Promise<void>((resolve) =>
    setImmediate(() => {
      turn = undefined;
      sliceStart = performance.now();
      resolve();
    }),
  );
  return turn;
}
