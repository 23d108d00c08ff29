import { describe, expect, it } from "vitest";
import {
  chooseTickStep,
  formatDurationBrief,
  formatDurationPrecise,
  MIN_TICK_SPACING_PX,
  makeTimeAxis,
  msAt,
  TICK_STEPS_MS,
  xOf,
} from "../../console/src/model/time-axis.js";

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;
const T0 = Date.UTC(2026, 10, 24, 6, 0, 0); // 2026-11-24T06:00:00Z

const RANGES = [200, 999, 1_500, 12_345, 59 * S, 2 * MIN, 17 * MIN, H, 5 * H, D, 3 * D, 30 * D];
const WIDTHS = [300, 640, 1000, 1920, 3000];
const ZONES = ["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu"];

describe("time axis ticks", () => {
  it("are never closer than the minimum spacing, from 200 ms to 30 days, 300 to 3000 px", () => {
    for (const span of RANGES) {
      for (const widthPx of WIDTHS) {
        for (const timeZone of ZONES) {
          const axis = makeTimeAxis({
            startMs: T0 + 123,
            endMs: T0 + 123 + span,
            widthPx,
            timeZone,
          });
          expect(axis.ticks.length, `${span} ms over ${widthPx} px`).toBeGreaterThanOrEqual(1);
          for (let i = 1; i < axis.ticks.length; i++) {
            const gap = (axis.ticks[i]?.x ?? 0) - (axis.ticks[i - 1]?.x ?? 0);
            expect(gap).toBeGreaterThanOrEqual(MIN_TICK_SPACING_PX - 1e-6);
          }
          for (const t of axis.ticks) {
            expect(t.x).toBeGreaterThanOrEqual(-1e-6);
            expect(t.x).toBeLessThanOrEqual(widthPx + 1e-6);
            expect(t.label.length).toBeGreaterThan(0);
            expect(t.label.length).toBeLessThanOrEqual(20);
          }
          // Not absurdly sparse either: a wide axis shows several ticks.
          if (widthPx >= 1000) expect(axis.ticks.length).toBeGreaterThanOrEqual(3);
          // Neighbouring ticks never read the same.
          for (let i = 1; i < axis.ticks.length; i++) {
            expect(axis.ticks[i]?.label).not.toBe(axis.ticks[i - 1]?.label);
          }
        }
      }
    }
  });

  it("chooses the smallest nice step that fits, and honours another minimum spacing", () => {
    expect(chooseTickStep(1000, 1000, 80)).toBe(100);
    expect(chooseTickStep(H, 1200, 80)).toBe(5 * MIN);
    expect(chooseTickStep(30 * D, 300, 80)).toBe(14 * D);
    expect(chooseTickStep(1000 * 365 * D, 100, 80)).toBeGreaterThan(365 * D);
    expect(TICK_STEPS_MS).toContain(15 * S);
    const axis = makeTimeAxis({
      startMs: T0,
      endMs: T0 + 10 * S,
      widthPx: 1000,
      minSpacingPx: 150,
    });
    expect(axis.stepMs).toBe(2 * S);
  });

  it("labels sub-second runs as offsets: +250 ms, +1.5 s", () => {
    const axis = makeTimeAxis({ startMs: T0 + 7, endMs: T0 + 7 + 1_800, widthPx: 600 });
    expect(axis.labelMode).toBe("relative");
    expect(axis.stepMs).toBe(250);
    expect(axis.ticks.map((t) => t.label)).toEqual([
      "0",
      "+250 ms",
      "+500 ms",
      "+750 ms",
      "+1 s",
      "+1.25 s",
      "+1.5 s",
      "+1.75 s",
    ]);
    const short = makeTimeAxis({ startMs: T0, endMs: T0 + 90 * S, widthPx: 800 });
    expect(short.ticks.map((t) => t.label)).toContain("+1 min 30 s");
  });

  it("labels long runs with wall-clock times, dated on the first tick and day changes", () => {
    const axis = makeTimeAxis({
      startMs: T0 - 30 * MIN,
      endMs: T0 + 2 * D,
      widthPx: 1200,
      timeZone: "UTC",
    });
    expect(axis.labelMode).toBe("absolute");
    expect(axis.stepMs).toBe(6 * H);
    expect(axis.ticks.map((t) => t.label)).toEqual([
      "Nov 24 06:00",
      "12:00",
      "18:00",
      "Nov 25 00:00",
      "06:00",
      "12:00",
      "18:00",
      "Nov 26 00:00",
      "06:00",
    ]);
  });

  it("labels in the given IANA zone, on round local hours", () => {
    // 06:00Z is 11:30 in Kolkata: 3-hour ticks fall on 12:00 and 15:00 local, not on UTC hours.
    const axis = makeTimeAxis({
      startMs: T0,
      endMs: T0 + 12 * H,
      widthPx: 400,
      timeZone: "Asia/Kolkata",
    });
    expect(axis.stepMs).toBe(3 * H);
    expect(axis.ticks[0]?.label).toBe("Nov 24 12:00");
    expect(axis.ticks[1]?.label).toBe("15:00");
    expect(axis.ticks[0]?.ms).toBe(T0 + 30 * MIN);
  });

  it("survives a DST change and multi-week ranges", () => {
    // Europe/Paris leaves summer time on 2026-10-25.
    const start = Date.UTC(2026, 9, 24, 12);
    const axis = makeTimeAxis({
      startMs: start,
      endMs: start + 2 * D,
      widthPx: 3000,
      timeZone: "Europe/Paris",
    });
    for (const t of axis.ticks) expect(t.label).toMatch(/^(Oct \d+ )?\d\d:00$/);
    const month = makeTimeAxis({ startMs: T0, endMs: T0 + 30 * D, widthPx: 800, timeZone: "UTC" });
    expect(month.stepMs).toBe(7 * D);
    // Weeks start on Monday; 2026-11-30 is one.
    expect(month.ticks.map((t) => t.label)).toEqual(["Nov 30 2026", "Dec 7", "Dec 14", "Dec 21"]);
  });

  it("maps times to px and back, and widens an empty range", () => {
    const axis = makeTimeAxis({ startMs: 1000, endMs: 3000, widthPx: 500 });
    expect(xOf(axis, 2000)).toBe(250);
    expect(msAt(axis, 250)).toBe(2000);
    const empty = makeTimeAxis({ startMs: T0, endMs: T0, widthPx: 500 });
    expect(empty.endMs).toBeGreaterThan(empty.startMs);
    expect(empty.ticks.length).toBeGreaterThanOrEqual(1);
  });

  it("rejects an unknown zone", () => {
    expect(() =>
      makeTimeAxis({ startMs: T0, endMs: T0 + H, widthPx: 500, timeZone: "Mars/Olympus" }),
    ).toThrow(RangeError);
  });
});

describe("durations", () => {
  it("precisely, to the ms, for hovers", () => {
    expect(formatDurationPrecise(0)).toBe("0 ms");
    expect(formatDurationPrecise(850)).toBe("850 ms");
    expect(formatDurationPrecise(1_234)).toBe("1.234 s");
    expect(formatDurationPrecise(1_200)).toBe("1.2 s");
    expect(formatDurationPrecise(4 * MIN + 5_250)).toBe("4 min 05.25 s");
    expect(formatDurationPrecise(2 * H + 3 * MIN + 4_500)).toBe("2 h 03 min 04.5 s");
    expect(formatDurationPrecise(3 * D + 4 * H)).toBe("3 d 04 h 00 min 00 s");
    expect(formatDurationPrecise(-1_500)).toBe("-1.5 s");
    expect(formatDurationPrecise(Number.NaN)).toBe("—");
  });

  it("briefly, two units at most, for table columns", () => {
    expect(formatDurationBrief(850)).toBe("850 ms");
    expect(formatDurationBrief(999.6)).toBe("1.0 s");
    expect(formatDurationBrief(12_345)).toBe("12.3 s");
    expect(formatDurationBrief(59_960)).toBe("1 min 00 s");
    expect(formatDurationBrief(4 * MIN + 5_000)).toBe("4 min 05 s");
    expect(formatDurationBrief(2 * H + 3 * MIN + 20 * S)).toBe("2 h 03 min");
    // A graph node's long-running task (it must fit whole there: test/e2e/console.test.ts).
    expect(formatDurationBrief(103 * MIN)).toBe("1 h 43 min");
    expect(formatDurationBrief(3 * D + 4 * H + 10 * MIN)).toBe("3 d 4 h");
    expect(formatDurationBrief(Number.POSITIVE_INFINITY)).toBe("—");
  });
});
