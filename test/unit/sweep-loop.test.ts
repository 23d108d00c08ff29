/** The sweep loop standalone and `shoal sweeper` share (lib/standalone/sweep-loop.ts). */
import { describe, expect, it } from "vitest";
import { startSweepLoop } from "../../lib/standalone/sweep-loop.js";
import { until } from "../helpers/poll.js";

describe("the sweep loop", () => {
  it("spaces out failing sweeps, logs the 1st, 2nd, 4th … and says when it sweeps again", async () => {
    const starts: number[] = [];
    const lines: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
    let failing = true;
    const loop = startSweepLoop({
      intervalMs: 20,
      sweep: async () => {
        starts.push(performance.now());
        if (failing) throw new Error("connect ECONNREFUSED");
      },
      log: (msg, fields) => lines.push({ msg, ...(fields ? { fields } : {}) }),
      name: "sweeper",
    });
    try {
      await until(() => starts.length >= 4, { timeoutMs: 5_000, what: "four sweeps" });
      // Waits of 20, 40 and 80 ms between them (ticks every 20 ms): at least 140 ms in all.
      expect((starts[3] ?? 0) - (starts[0] ?? 0)).toBeGreaterThanOrEqual(130);
      expect(lines.map((l) => l.fields?.failedInARow)).toEqual([1, 2, 4].slice(0, lines.length));
      failing = false;
      await until(() => lines.some((l) => l.msg === "sweeper: sweeping again"), {
        timeoutMs: 5_000,
        what: "a sweep that succeeds",
      });
    } finally {
      await loop.stop();
    }
    const n = starts.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(starts.length).toBe(n);
  });
});
