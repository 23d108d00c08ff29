/** The backoff of failures in a row that pollers and sweepers share (lib/standalone/failure-backoff.ts). */
import { describe, expect, it } from "vitest";
import { FailureBackoff } from "../../lib/standalone/failure-backoff.js";

describe("FailureBackoff", () => {
  it("doubles the wait up to the longest and reports the 1st, 2nd, 4th, 8th … failure", () => {
    let now = 0;
    const b = new FailureBackoff(500, 4_000, () => now);
    const reports: Array<{ failures: number; waitMs: number } | undefined> = [];
    for (let i = 0; i < 9; i++) {
      reports.push(b.failed());
      now += b.remainingMs();
    }
    expect(reports.map((r) => r?.failures)).toEqual([
      1,
      2,
      undefined,
      4,
      undefined,
      undefined,
      undefined,
      8,
      undefined,
    ]);
    expect(reports[3]?.waitMs).toBe(4_000);
    expect(reports[7]?.waitMs).toBe(4_000);
    expect(b.failures).toBe(9);
  });

  it("counts failures during a wait as the same outage, and resets on success", () => {
    let now = 0;
    const b = new FailureBackoff(500, 30_000, () => now);
    expect(b.failed()).toEqual({ failures: 1, waitMs: 500 });
    expect(b.failed()).toBeUndefined(); // another queue's long poll, the same outage
    expect(b.failures).toBe(1);
    now += 499;
    expect(b.remainingMs()).toBe(1);
    now += 1;
    expect(b.failed()).toEqual({ failures: 2, waitMs: 1_000 });
    expect(b.succeeded()).toBe(2);
    expect(b.remainingMs()).toBe(0);
    expect(b.failed()).toEqual({ failures: 1, waitMs: 500 });
  });
});
