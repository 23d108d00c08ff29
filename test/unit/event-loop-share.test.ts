/**
 * The embedded backend's share of the event loop (lib/embedded/event-loop-share.ts): a stream of
 * calls that answer without I/O must still let timers and I/O run (it starved standalone's HTTP
 * server and its signals), and a lone call pays nothing.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, it } from "vitest";
import { SLICE_MS, yieldIfBusy } from "../../lib/embedded/event-loop-share.js";

/** Calls "answered at once" for `ms`, as the embedded clients answer, each asking for its turn. */
async function busy(ms: number): Promise<number> {
  const end = performance.now() + ms;
  let calls = 0;
  while (performance.now() < end) {
    const turn = yieldIfBusy();
    if (turn) await turn;
    await Promise.resolve(); // the call's own answer: a settled promise
    calls++;
  }
  return calls;
}

it("a busy stream of calls lets a timer and an HTTP request through within a few slices", async () => {
  const server = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  try {
    const t0 = performance.now();
    let timerAt = Number.POSITIVE_INFINITY;
    setTimeout(() => {
      timerAt = performance.now() - t0;
    }, 5);
    let answeredAt = Number.POSITIVE_INFINITY;
    const request = fetch(`http://127.0.0.1:${port}/`).then(async (r) => {
      await r.text();
      answeredAt = performance.now() - t0;
    });
    await busy(600);
    await request;
    // Without the turns both would wait for the whole 600 ms.
    expect(timerAt).toBeLessThan(5 + 10 * SLICE_MS);
    expect(answeredAt).toBeLessThan(300);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

it("a call after a pause starts a new slice without waiting", async () => {
  await busy(3 * SLICE_MS);
  await new Promise((r) => setTimeout(r, 2 * SLICE_MS));
  expect(yieldIfBusy()).toBeUndefined();
});
