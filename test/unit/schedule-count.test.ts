/**
 * exceedsFireCount (lib/core/schedule-time.ts): decides "more than `limit` fires" without
 * listing them, soundly (never true when listing finds at most `limit`), and fast for dense
 * timings over long ranges (what lets a huge backfill be refused at once).
 */
import { describe, expect, it } from "vitest";
import {
  exceedsFireCount,
  fireTimesBetween,
  type ScheduleTiming,
} from "../../lib/core/schedule-time.js";

const at = (iso: string) => Date.parse(iso);

describe("exceedsFireCount", () => {
  it("is true at once for a per-second cron over 30 years", () => {
    const t: ScheduleTiming = { cron: "* * * * * *", timezone: "UTC" };
    exceedsFireCount(t, 0, 1000, 10); // compiles the cron parser's code paths once
    const started = performance.now();
    expect(
      exceedsFireCount(t, at("1995-01-01T00:00:00Z"), at("2025-01-01T00:00:00Z"), 10_000),
    ).toBe(true);
    expect(performance.now() - started).toBeLessThan(50);
  });

  it("counts a rate exactly", () => {
    const t: ScheduleTiming = { rate: "1 hours", timezone: "UTC", anchor: 0 };
    expect(exceedsFireCount(t, 0, 100 * 3_600_000, 100)).toBe(false);
    expect(exceedsFireCount(t, 0, 101 * 3_600_000, 100)).toBe(true);
    expect(exceedsFireCount(t, -1, 100 * 3_600_000, 100)).toBe(true); // 0 included
  });

  // Soundness: whenever it says "more", listing finds more (DST gaps at 02:00 and at midnight,
  // day-of-week and day-of-month rules, months).
  const crons = [
    "* * * * *",
    "*/7 * * * *",
    "*/30 * 2 * * *",
    "0,30 1-3 * * *",
    "*/5 * * * 1-5",
    "*/5 * 13 * 5",
    "*/2 * 1,15 1,7 *",
    "* * * * 7",
  ];
  const zones = ["UTC", "Europe/Berlin", "America/Santiago", "Asia/Beirut", "Australia/Lord_Howe"];
  const ranges: Array<[string, string]> = [
    ["2023-03-24T00:00:00Z", "2023-04-03T00:00:00Z"],
    ["2022-09-01T00:00:00Z", "2022-09-20T00:00:00Z"],
    ["2021-12-30T12:34:56Z", "2022-01-16T00:00:00Z"],
  ];
  it("never says more than the fires listing finds", () => {
    for (const cron of crons) {
      for (const timezone of zones) {
        for (const [from, to] of ranges) {
          const t: ScheduleTiming = { cron, timezone };
          const listed = fireTimesBetween(t, at(from), at(to), 20_000).length;
          for (const limit of [listed - 1, listed, Math.floor(listed / 2)]) {
            if (limit < 0 || listed === 20_000) continue;
            const says = exceedsFireCount(t, at(from), at(to), limit);
            if (says)
              expect(listed, `${cron} ${timezone} ${from}..${to} limit ${limit}`).toBeGreaterThan(
                limit,
              );
          }
        }
      }
    }
  });

  it("finds dense ranges over the limit (not only says 'unknown')", () => {
    const t: ScheduleTiming = { cron: "*/5 * * * 1-5", timezone: "Europe/Berlin" };
    expect(exceedsFireCount(t, at("2023-01-01T00:00:00Z"), at("2023-03-01T00:00:00Z"), 5_000)).toBe(
      true,
    );
    expect(exceedsFireCount(t, at("2023-01-01T00:00:00Z"), at("2023-01-02T00:00:00Z"), 5_000)).toBe(
      false,
    );
  });
});
