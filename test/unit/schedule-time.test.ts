import { CronExpressionParser } from "cron-parser";
import { DateTime, IANAZone } from "luxon";
import { describe, expect, it } from "vitest";
import { checkTiming } from "../../lib/core/schedule-check.js";
import {
  fireTimesBetween,
  nextFireTimes,
  type ScheduleTiming,
} from "../../lib/core/schedule-time.js";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const NY = "America/New_York";

/** Epoch ms of a local ISO time in a zone (an explicit offset in the string wins). */
function ms(localIso: string, zone = "UTC"): number {
  const dt = DateTime.fromISO(localIso, { zone, setZone: false });
  if (!dt.isValid) throw new Error(`bad ISO ${localIso}`);
  return dt.toMillis();
}

/** Local ISO with offset, for readable expectations. */
function local(instant: number, zone: string): string {
  return DateTime.fromMillis(instant, { zone }).toISO({ suppressMilliseconds: true }) as string;
}

function next(t: ScheduleTiming, afterIso: string, count: number): string[] {
  return nextFireTimes(t, ms(afterIso, t.timezone), count).map((x) => local(x, t.timezone));
}

describe("checkTiming", () => {
  const ok: ScheduleTiming[] = [
    { cron: "*/5 * * * *", timezone: "UTC" },
    { cron: "0 */10 * * * *", timezone: "Europe/Berlin" },
    { cron: "0 9 ? * MON-FRI", timezone: "Asia/Kolkata" },
    { cron: "0 0 L * *", timezone: "UTC" },
    { cron: "0 0 29 2 *", timezone: "UTC" },
    { cron: "0 0 30 2 1", timezone: "UTC" }, // day 30 never, but Mondays in February do
    { rate: "1 minute", timezone: "UTC" },
    { rate: "1 minutes", timezone: "UTC" },
    { rate: "5 minutes", timezone: "UTC" },
    { rate: "2 days", timezone: "UTC", startTime: 0 },
    { at: ms("2030-01-01T00:00Z"), timezone: "UTC" },
    { cron: "0 0 * * *", timezone: "UTC", startTime: 0, endTime: DAY },
  ];
  it.each(ok)("accepts %j", (t) => {
    expect(checkTiming(t)).toEqual([]);
  });

  const bad: Array<[ScheduleTiming, string, RegExp]> = [
    [{ cron: "61 * * * *", timezone: "UTC" }, "cron", /bad minute value '61' \(expected 0-59\)/],
    [{ cron: "0 61 * * * *", timezone: "UTC" }, "cron", /bad minute value '61'/],
    [{ cron: "60 * * * * *", timezone: "UTC" }, "cron", /bad second value '60'/],
    [{ cron: "* 24 * * *", timezone: "UTC" }, "cron", /bad hour value '24'/],
    [{ cron: "* * 0 * *", timezone: "UTC" }, "cron", /bad day of month value '0'/],
    [{ cron: "* * * 13 *", timezone: "UTC" }, "cron", /bad month value '13'/],
    [{ cron: "* * * * 8", timezone: "UTC" }, "cron", /bad day of week value '8'/],
    [{ cron: "x * * * *", timezone: "UTC" }, "cron", /bad minute value 'x'/],
    [{ cron: "5-1 * * * *", timezone: "UTC" }, "cron", /bad minute field '5-1'/],
    [{ cron: "*/0 * * * *", timezone: "UTC" }, "cron", /bad minute field '\*\/0'/],
    [{ cron: "* * * *", timezone: "UTC" }, "cron", /5 fields, or 6 with seconds first \(got 4\)/],
    [{ cron: "0 0 0 1 1 * 2030", timezone: "UTC" }, "cron", /\(got 7\)/],
    [{ cron: "@daily", timezone: "UTC" }, "cron", /\(got 1\)/],
    [{ cron: "", timezone: "UTC" }, "cron", /\(got 0\)/],
    [{ cron: "H * * * *", timezone: "UTC" }, "cron", /H \(hashed values\)/],
    [{ cron: "0 0 30 2 *", timezone: "UTC" }, "cron", /never fires/],
    [{ cron: "0 0 31 4,6 *", timezone: "UTC" }, "cron", /never fires/],
    [{ cron: "* * * * *", timezone: "Mars/Base" }, "timezone", /unknown time zone 'Mars\/Base'/],
    [{ cron: "* * * * *", timezone: "+05:00" }, "timezone", /unknown time zone/],
    [{ timezone: "UTC" }, "cron", /exactly one of cron, rate or at/],
    [{ cron: "* * * * *", rate: "1 minute", timezone: "UTC" }, "rate", /exactly one of/],
    [{ rate: "1 minute", at: 0, timezone: "UTC" }, "at", /exactly one of/],
    [{ rate: "5 minute", timezone: "UTC" }, "rate", /plural unit \('5 minutes'\)/],
    [{ rate: "0 minutes", timezone: "UTC" }, "rate", /at least 1/],
    [{ rate: "1.5 hours", timezone: "UTC" }, "rate", /N seconds\|minutes\|hours\|days/],
    [{ rate: "minutes", timezone: "UTC" }, "rate", /N seconds/],
    [{ rate: "2 weeks", timezone: "UTC" }, "rate", /N seconds/],
    [{ rate: "05 minutes", timezone: "UTC" }, "rate", /N seconds/],
    [{ at: Number.NaN, timezone: "UTC" }, "at", /not a valid instant/],
    [{ at: 1.5, timezone: "UTC" }, "at", /not a valid instant/],
    [{ at: 5, timezone: "UTC", startTime: 10 }, "at", /before startTime/],
    [{ at: 50, timezone: "UTC", endTime: 10 }, "at", /after endTime/],
    [{ cron: "* * * * *", timezone: "UTC", startTime: Number.NaN }, "startTime", /not a valid/],
    [{ cron: "* * * * *", timezone: "UTC", endTime: Number.POSITIVE_INFINITY }, "endTime", /valid/],
    [{ rate: "1 hour", timezone: "UTC", anchor: 0.5 }, "anchor", /not a valid instant/],
    [
      { cron: "* * * * *", timezone: "UTC", startTime: 10, endTime: 10 },
      "endTime",
      /endTime must be after startTime/,
    ],
    [
      {
        cron: "0 0 1 1 *",
        timezone: "UTC",
        startTime: ms("2024-02-01T00:00Z"),
        endTime: ms("2024-12-01T00:00Z"),
      },
      "cron",
      /never fires between startTime and endTime/,
    ],
    [
      { rate: "1 day", timezone: "UTC", startTime: 1000, endTime: 2000, anchor: 0 },
      "rate",
      /never fires between startTime and endTime/,
    ],
  ];
  it.each(bad)("rejects %j at %s", (t, path, message) => {
    const details = checkTiming(t);
    expect(details.length).toBeGreaterThan(0);
    const d = details.find((x) => x.path === path);
    expect(d?.message).toMatch(message);
    // One sentence, no field prefix (the API adds "path: ").
    expect(d?.message).not.toMatch(/\.\s+\S/);
  });

  it("lists every problem, one per field", () => {
    const details = checkTiming({
      cron: "61 * * * *",
      timezone: "Mars/Base",
      startTime: 10,
      endTime: 5,
    });
    expect(details.map((d) => d.path).sort()).toEqual(["cron", "endTime", "timezone"]);
  });
});

describe("nextFireTimes: cron basics", () => {
  const utc = (cron: string): ScheduleTiming => ({ cron, timezone: "UTC" });

  it("gives times strictly after afterMs, ascending, at most count", () => {
    expect(next(utc("*/15 * * * *"), "2024-05-01T10:15Z", 3)).toEqual([
      "2024-05-01T10:30:00Z",
      "2024-05-01T10:45:00Z",
      "2024-05-01T11:00:00Z",
    ]);
    expect(nextFireTimes(utc("*/15 * * * *"), ms("2024-05-01T10:14:59.999Z"), 1)).toEqual([
      ms("2024-05-01T10:15Z"),
    ]);
    // A fractional afterMs behaves as its floor (fires are whole milliseconds).
    expect(nextFireTimes(utc("* * * * * *"), 999.5, 1)).toEqual([1000]);
    expect(nextFireTimes(utc("* * * * *"), 0, 0)).toEqual([]);
    expect(nextFireTimes(utc("* * * * *"), 0, -1)).toEqual([]);
  });

  it("reads 6 fields as seconds first", () => {
    expect(next(utc("*/20 * * * * *"), "2024-05-01T10:00:00Z", 4)).toEqual([
      "2024-05-01T10:00:20Z",
      "2024-05-01T10:00:40Z",
      "2024-05-01T10:01:00Z",
      "2024-05-01T10:01:20Z",
    ]);
  });

  it("follows cron-parser's day rule: restricted day of month OR day of week", () => {
    // 2024-07: Monday the 1st, 8th, 15th…; day 10 is a Wednesday.
    expect(next(utc("0 12 10 * 1"), "2024-07-01T13:00Z", 3)).toEqual([
      "2024-07-08T12:00:00Z",
      "2024-07-10T12:00:00Z",
      "2024-07-15T12:00:00Z",
    ]);
    expect(next(utc("0 12 10 * *"), "2024-07-01T13:00Z", 2)).toEqual([
      "2024-07-10T12:00:00Z",
      "2024-08-10T12:00:00Z",
    ]);
    expect(next(utc("0 12 ? * MON"), "2024-07-01T13:00Z", 1)).toEqual(["2024-07-08T12:00:00Z"]);
  });

  it("supports L, #, names and leap days", () => {
    expect(next(utc("0 0 L * *"), "2024-01-15T00:00Z", 3)).toEqual([
      "2024-01-31T00:00:00Z",
      "2024-02-29T00:00:00Z",
      "2024-03-31T00:00:00Z",
    ]);
    expect(next(utc("0 9 * * 1#2"), "2024-01-01T00:00Z", 2)).toEqual([
      "2024-01-08T09:00:00Z",
      "2024-02-12T09:00:00Z",
    ]);
    expect(next(utc("0 9 * JUL FRI-SAT,SUN"), "2024-07-01T00:00Z", 3)).toEqual([
      "2024-07-05T09:00:00Z",
      "2024-07-06T09:00:00Z",
      "2024-07-07T09:00:00Z",
    ]);
    expect(next(utc("0 0 29 2 *"), "2024-03-01T00:00Z", 2)).toEqual([
      "2028-02-29T00:00:00Z",
      "2032-02-29T00:00:00Z",
    ]);
  });

  it("evaluates on the zone's wall clock", () => {
    expect(next({ cron: "30 9 * * *", timezone: "Asia/Kolkata" }, "2024-05-01T00:00", 2)).toEqual([
      "2024-05-01T09:30:00+05:30",
      "2024-05-02T09:30:00+05:30",
    ]);
    expect(nextFireTimes({ cron: "30 9 * * *", timezone: "Asia/Kolkata" }, 0, 1)).toEqual([
      ms("1970-01-01T04:00Z"),
    ]);
  });

  it("keeps fires within [startTime, endTime], both inclusive", () => {
    const t: ScheduleTiming = {
      cron: "0 * * * *",
      timezone: "UTC",
      startTime: ms("2024-05-01T10:00Z"),
      endTime: ms("2024-05-01T13:00Z"),
    };
    expect(nextFireTimes(t, 0, 10).map((x) => local(x, "UTC"))).toEqual([
      "2024-05-01T10:00:00Z",
      "2024-05-01T11:00:00Z",
      "2024-05-01T12:00:00Z",
      "2024-05-01T13:00:00Z",
    ]);
    expect(nextFireTimes(t, ms("2024-05-01T13:00Z"), 1)).toEqual([]);
  });

  it("throws RangeError on an invalid timing or an unbounded request", () => {
    expect(() => nextFireTimes({ cron: "61 * * * *", timezone: "UTC" }, 0, 1)).toThrow(RangeError);
    expect(() => nextFireTimes({ cron: "* * * * *", timezone: "Mars/Base" }, 0, 1)).toThrow(
      /unknown time zone/,
    );
    expect(() => nextFireTimes({ timezone: "UTC" }, 0, 1)).toThrow(/exactly one/);
    expect(() => nextFireTimes({ rate: "1 minute", timezone: "UTC" }, Number.NaN, 1)).toThrow(
      RangeError,
    );
    expect(() =>
      nextFireTimes({ rate: "1 minute", timezone: "UTC" }, 0, Number.POSITIVE_INFINITY),
    ).toThrow(/unbounded/);
  });
});

describe("nextFireTimes: the DST rule", () => {
  const ny = (cron: string): ScheduleTiming => ({ cron, timezone: NY });

  it("cron-parser alone differs (why the wall clock is mapped here)", () => {
    const iter = CronExpressionParser.parse("30 2 * * *", {
      tz: NY,
      currentDate: ms("2024-03-09T12:00", NY),
    });
    // cron-parser moves the skipped 02:30 to 03:30; the rule here says 03:00.
    expect(local(iter.next().getTime(), NY)).toBe("2024-03-10T03:30:00-04:00");
    expect(next(ny("30 2 * * *"), "2024-03-09T12:00", 1)).toEqual(["2024-03-10T03:00:00-04:00"]);
  });

  it("spring forward: a skipped time fires once at the transition (03:00 local)", () => {
    expect(next(ny("30 2 * * *"), "2024-03-09T12:00", 3)).toEqual([
      "2024-03-10T03:00:00-04:00",
      "2024-03-11T02:30:00-04:00",
      "2024-03-12T02:30:00-04:00",
    ]);
    // 02:00, 02:20 and 02:40 are all skipped: one fire.
    expect(next(ny("*/20 2 * * *"), "2024-03-09T12:00", 2)).toEqual([
      "2024-03-10T03:00:00-04:00",
      "2024-03-11T02:00:00-04:00",
    ]);
    // 02:00 and 02:30 skipped and 03:00 real: still one fire at 03:00.
    expect(next(ny("*/30 * * * *"), "2024-03-10T01:00", 4)).toEqual([
      "2024-03-10T01:30:00-05:00",
      "2024-03-10T03:00:00-04:00",
      "2024-03-10T03:30:00-04:00",
      "2024-03-10T04:00:00-04:00",
    ]);
    expect(next({ cron: "* * * * * *", timezone: NY }, "2024-03-10T01:59:58", 3)).toEqual([
      "2024-03-10T01:59:59-05:00",
      "2024-03-10T03:00:00-04:00",
      "2024-03-10T03:00:01-04:00",
    ]);
    expect(next({ cron: "30 2 * * *", timezone: "Europe/Berlin" }, "2024-03-30T12:00", 2)).toEqual([
      "2024-03-31T03:00:00+02:00",
      "2024-04-01T02:30:00+02:00",
    ]);
  });

  it("fall back: a repeated time fires once, at its first occurrence", () => {
    expect(next(ny("30 1 * * *"), "2024-11-02T12:00", 2)).toEqual([
      "2024-11-03T01:30:00-04:00",
      "2024-11-04T01:30:00-05:00",
    ]);
    expect(next(ny("*/30 * * * *"), "2024-11-03T00:30", 5)).toEqual([
      "2024-11-03T01:00:00-04:00",
      "2024-11-03T01:30:00-04:00",
      "2024-11-03T02:00:00-05:00",
      "2024-11-03T02:30:00-05:00",
      "2024-11-03T03:00:00-05:00",
    ]);
    expect(next({ cron: "30 2 * * *", timezone: "Europe/Berlin" }, "2024-10-26T12:00", 2)).toEqual([
      "2024-10-27T02:30:00+02:00",
      "2024-10-28T02:30:00+01:00",
    ]);
  });

  it("from inside the second pass, the repeated times have already fired", () => {
    expect(next(ny("*/30 * * * *"), "2024-11-03T01:10:00-05:00", 2)).toEqual([
      "2024-11-03T02:00:00-05:00",
      "2024-11-03T02:30:00-05:00",
    ]);
    // Chained one at a time, as the sweeper does: no repeat, no gap.
    const chain: string[] = [];
    let after = ms("2024-11-03T00:50", NY);
    for (let i = 0; i < 5; i++) {
      const [n] = nextFireTimes(ny("*/20 * * * *"), after, 1);
      chain.push(local(n as number, NY));
      after = n as number;
    }
    expect(chain).toEqual([
      "2024-11-03T01:00:00-04:00",
      "2024-11-03T01:20:00-04:00",
      "2024-11-03T01:40:00-04:00",
      "2024-11-03T02:00:00-05:00",
      "2024-11-03T02:20:00-05:00",
    ]);
  });

  it("Lord Howe's 30-minute shifts", () => {
    const lh = (cron: string): ScheduleTiming => ({ cron, timezone: "Australia/Lord_Howe" });
    // 2024-10-06 02:00 → 02:30: 02:15 does not exist (cron-parser drops it).
    expect(next(lh("15 2 * * *"), "2024-10-05T12:00", 2)).toEqual([
      "2024-10-06T02:30:00+11:00",
      "2024-10-07T02:15:00+11:00",
    ]);
    // 2025-04-06 02:00 → 01:30: 01:45 happens twice.
    expect(next(lh("45 1 * * *"), "2025-04-05T12:00", 2)).toEqual([
      "2025-04-06T01:45:00+11:00",
      "2025-04-07T01:45:00+10:30",
    ]);
  });

  it("Santiago's transitions at midnight", () => {
    const cl = (cron: string): ScheduleTiming => ({ cron, timezone: "America/Santiago" });
    // 2024-09-08 00:00 → 01:00: midnight is skipped.
    expect(next(cl("0 0 * * *"), "2024-09-06T12:00", 3)).toEqual([
      "2024-09-07T00:00:00-04:00",
      "2024-09-08T01:00:00-03:00",
      "2024-09-09T00:00:00-03:00",
    ]);
    // 2024-04-07 00:00 → 2024-04-06 23:00: 23:30 on the 6th happens twice.
    expect(next(cl("30 23 * * *"), "2024-04-05T12:00", 3)).toEqual([
      "2024-04-05T23:30:00-03:00",
      "2024-04-06T23:30:00-03:00",
      "2024-04-07T23:30:00-04:00",
    ]);
  });
});

describe("nextFireTimes: rate and at", () => {
  it("rate fires at anchor + k·period, with no drift", () => {
    const anchor = ms("2024-05-01T10:00:07Z");
    const t: ScheduleTiming = { rate: "15 minutes", timezone: "UTC", anchor };
    const times = nextFireTimes(t, ms("2024-05-02T00:00Z"), 200);
    expect(local(times[0] as number, "UTC")).toBe("2024-05-02T00:00:07Z");
    for (const x of times) expect((x - anchor) % (15 * MINUTE)).toBe(0);
    expect(times.at(-1)).toBe((times[0] as number) + 199 * 15 * MINUTE);
    // Strictly after: afterMs on a fire gives the next one.
    expect(nextFireTimes(t, anchor, 1)).toEqual([anchor + 15 * MINUTE]);
    // Times before the anchor are on the same lattice (no startTime).
    expect(nextFireTimes(t, anchor - HOUR - 1, 1)).toEqual([anchor - HOUR]);
  });

  it("rate units, singular and plural", () => {
    const first = (rate: string) => nextFireTimes({ rate, timezone: "UTC", anchor: 0 }, 0, 1);
    expect(first("1 second")).toEqual([1000]);
    expect(first("30 seconds")).toEqual([30_000]);
    expect(first("1 minute")).toEqual([MINUTE]);
    expect(first("1 minutes")).toEqual([MINUTE]);
    expect(first("2 hours")).toEqual([2 * HOUR]);
    expect(first("1 day")).toEqual([DAY]);
  });

  it("rate is elapsed time: 1 day is 24 h across DST, whatever the zone", () => {
    const anchor = ms("2024-03-09T12:00", NY);
    const times = nextFireTimes({ rate: "1 day", timezone: NY, anchor }, anchor, 2);
    expect(times.map((x) => local(x, NY))).toEqual([
      "2024-03-10T13:00:00-04:00",
      "2024-03-11T13:00:00-04:00",
    ]);
  });

  it("rate defaults its anchor to startTime (else 0) and keeps to the window", () => {
    const startTime = 1234;
    const t: ScheduleTiming = { rate: "1 second", timezone: "UTC", startTime, endTime: 5000 };
    expect(nextFireTimes(t, 0, 10)).toEqual([1234, 2234, 3234, 4234]);
    expect(nextFireTimes({ rate: "1 second", timezone: "UTC" }, 1500, 1)).toEqual([2000]);
    // An explicit anchor sets the phase; startTime only bounds.
    expect(nextFireTimes({ ...t, anchor: 0 }, 0, 10)).toEqual([2000, 3000, 4000, 5000]);
  });

  it("at gives its one instant when it is after afterMs and in the window", () => {
    const at = ms("2030-01-01T00:00Z");
    expect(nextFireTimes({ at, timezone: "UTC" }, 0, 5)).toEqual([at]);
    expect(nextFireTimes({ at, timezone: "UTC" }, at - 1, 5)).toEqual([at]);
    expect(nextFireTimes({ at, timezone: "UTC" }, at, 5)).toEqual([]);
    expect(nextFireTimes({ at, timezone: "UTC", endTime: at - 1 }, 0, 5)).toEqual([]);
    expect(nextFireTimes({ at, timezone: "UTC", startTime: at }, 0, 5)).toEqual([at]);
  });
});

describe("fireTimesBetween", () => {
  const t: ScheduleTiming = { cron: "0 * * * *", timezone: "UTC" };
  it("gives (from, to], at most limit, earliest first", () => {
    const from = ms("2024-05-01T10:00Z");
    const to = ms("2024-05-01T13:00Z");
    expect(fireTimesBetween(t, from, to, 100).map((x) => local(x, "UTC"))).toEqual([
      "2024-05-01T11:00:00Z",
      "2024-05-01T12:00:00Z",
      "2024-05-01T13:00:00Z",
    ]);
    expect(fireTimesBetween(t, from - 1, to, 2).map((x) => local(x, "UTC"))).toEqual([
      "2024-05-01T10:00:00Z",
      "2024-05-01T11:00:00Z",
    ]);
    expect(fireTimesBetween(t, to, from, 100)).toEqual([]);
    expect(fireTimesBetween(t, from, to, 0)).toEqual([]);
  });
  it("respects endTime and the DST rule", () => {
    const from = ms("2024-03-10T00:00", NY);
    const to = ms("2024-03-10T04:00", NY);
    const got = fireTimesBetween({ cron: "*/30 * * * *", timezone: NY }, from, to, 100);
    expect(got.map((x) => local(x, NY))).toEqual([
      "2024-03-10T00:30:00-05:00",
      "2024-03-10T01:00:00-05:00",
      "2024-03-10T01:30:00-05:00",
      "2024-03-10T03:00:00-04:00",
      "2024-03-10T03:30:00-04:00",
      "2024-03-10T04:00:00-04:00",
    ]);
    const ended = { cron: "*/30 * * * *", timezone: NY, endTime: ms("2024-03-10T03:00", NY) };
    expect(fireTimesBetween(ended, from, to, 100)).toHaveLength(4);
  });
});

// ---------------------------------------------------------------------------------------------
// An independent oracle: walk real time step by step (a minute, or a second for 6 fields) in the
// zone, read each instant's wall clock with luxon, and match every field by hand. A wall time
// fires at the first instant whose wall clock reaches it: a skipped one at the instant after the
// gap, a repeated one only in its first pass (walls not above the highest seen never fire).
// ---------------------------------------------------------------------------------------------

/** mulberry32: a small seeded PRNG, so every case is reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Field {
  text: string;
  values: Set<number>;
}

type Rand = () => number;
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

function stepped(lo: number, hi: number, step: number): number[] {
  const out: number[] = [];
  for (let v = lo; v <= hi; v += step) out.push(v);
  return out;
}

/** One list item (value, range, stepped range or start/step) holding `prefer` when given. */
function item(r: Rand, min: number, max: number, prefer?: number): [string, number[]] {
  const kind = int(r, 0, 3);
  const p = prefer ?? int(r, min, max);
  if (kind === 0) return [String(p), [p]];
  if (kind === 1) {
    const a = int(r, min, p);
    const b = int(r, p, max);
    return [`${a}-${b}`, stepped(a, b, 1)];
  }
  // Stepped forms start on p so that the step still reaches it.
  const step = int(r, 1, Math.max(1, Math.ceil((max - min) / 3)));
  if (kind === 2) {
    const b = int(r, p, max);
    return [`${p}-${b}/${step}`, stepped(p, b, step)];
  }
  return [`${p}/${step}`, stepped(p, max, step)];
}

/** A random field: `*`, `*\/s`, or a list of one to three items. */
function field(r: Rand, min: number, max: number, star: number, prefer?: number): Field {
  const roll = r();
  if (roll < star) return { text: "*", values: new Set(stepped(min, max, 1)) };
  if (roll < star + (1 - star) * 0.2) {
    const step = int(r, 2, Math.max(2, Math.floor((max - min) / 2)));
    return { text: `*/${step}`, values: new Set(stepped(min, max, step)) };
  }
  const n = int(r, 1, 3);
  const texts: string[] = [];
  const values = new Set<number>();
  for (let i = 0; i < n; i++) {
    const [t, vs] = item(r, min, max, i === 0 && r() < 0.7 ? prefer : undefined);
    // cron-parser refuses a value listed twice ("0-30,15"), day of week 7 and 0 included.
    const same = (v: number) => values.has(v) || (max === 7 && values.has((v + 7) % 14));
    if (vs.some(same)) continue;
    texts.push(t);
    for (const v of vs) values.add(v);
  }
  return { text: texts.join(","), values };
}

interface Cron {
  second?: Field;
  minute: Field;
  hour: Field;
  dom: Field;
  month: Field;
  dow: Field;
}

function cronText(c: Cron): string {
  const five = [c.minute, c.hour, c.dom, c.month, c.dow].map((f) => f.text).join(" ");
  return c.second ? `${c.second.text} ${five}` : five;
}

/** Whether a wall time (wall-clock fields read as UTC) matches, with cron-parser's day rule. */
function matches(c: Cron, wall: number): boolean {
  const d = new Date(wall);
  if (!(c.second ? c.second.values.has(d.getUTCSeconds()) : d.getUTCSeconds() === 0)) return false;
  if (!c.minute.values.has(d.getUTCMinutes()) || !c.hour.values.has(d.getUTCHours())) return false;
  if (!c.month.values.has(d.getUTCMonth() + 1)) return false;
  const dow = d.getUTCDay();
  const domOk = c.dom.values.has(d.getUTCDate());
  const dowOk = c.dow.values.has(dow) || (dow === 0 && c.dow.values.has(7));
  const domStar = c.dom.text === "*";
  const dowStar = c.dow.text === "*";
  if (domStar && dowStar) return true;
  if (domStar) return dowOk;
  if (dowStar) return domOk;
  return domOk || dowOk;
}

/** instant → wall clock (read as UTC) in a zone, luxon offsets cached per hour without a change. */
function wallClock(zoneName: string): (instant: number) => number {
  const zone = IANAZone.create(zoneName);
  const steady = new Map<number, number | null>();
  return (instant) => {
    const h = Math.floor(instant / HOUR);
    let off = steady.get(h);
    if (off === undefined) {
      const a = zone.offset(h * HOUR);
      off = a === zone.offset((h + 1) * HOUR - 1) ? a : null;
      steady.set(h, off);
    }
    return instant + (off ?? zone.offset(instant)) * MINUTE;
  };
}

/** What the seeded cases exercised: fires of skipped wall times, repeats left out. */
const seen = { skippedFires: 0, repeatsLeftOut: 0 };

function oracle(c: Cron, zone: string, after: number, end: number): number[] {
  const step = c.second ? 1000 : MINUTE;
  const wallOf = wallClock(zone);
  const out: number[] = [];
  let maxWall = Number.NEGATIVE_INFINITY;
  // Start well before `after` so the walls already seen (a first pass) are known.
  for (
    let i = Math.floor((after - (c.second ? 3 * HOUR : DAY)) / step) * step;
    i <= end;
    i += step
  ) {
    const wall = wallOf(i);
    if (wall <= maxWall) {
      if (i > after && matches(c, wall)) seen.repeatsLeftOut++;
      continue;
    }
    let fires = false;
    const from = maxWall === Number.NEGATIVE_INFINITY ? wall : maxWall + step;
    for (let w = from; w <= wall && !fires; w += step) fires = matches(c, w);
    if (fires && i > after && !matches(c, wall)) seen.skippedFires++;
    maxWall = wall;
    if (fires && i > after) out.push(i);
  }
  return out;
}

/** DST transitions of a zone in [from, to), to the second (at most one per 6 hours). */
function transitions(zoneName: string, from: number, to: number): number[] {
  const zone = IANAZone.create(zoneName);
  const out: number[] = [];
  for (let h = from; h < to; h += 6 * HOUR) {
    if (zone.offset(h) === zone.offset(h + 6 * HOUR)) continue;
    let lo = h;
    let hi = h + 6 * HOUR;
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (zone.offset(mid) === zone.offset(lo)) lo = mid;
      else hi = mid;
    }
    out.push(hi);
  }
  return out;
}

const ZONES = [
  NY,
  "Europe/Berlin",
  "Australia/Lord_Howe",
  "Asia/Kolkata",
  "America/Santiago",
  "Pacific/Chatham",
  "UTC",
];
const RANGE_FROM = ms("2024-01-01T00:00Z");
const RANGE_TO = ms("2027-01-01T00:00Z");

interface Case {
  cron: Cron;
  zone: string;
  after: number;
  end: number;
}

function makeCases(seed: number, count: number): Case[] {
  const r = prng(seed);
  const shifts = new Map(ZONES.map((z) => [z, transitions(z, RANGE_FROM, RANGE_TO)]));
  const cases: Case[] = [];
  while (cases.length < count) {
    const zone = ZONES[int(r, 0, ZONES.length - 1)] as string;
    const list = shifts.get(zone) ?? [];
    const seconds = r() < 0.25;
    const pivot =
      list.length > 0 && r() < 0.85
        ? (list[int(r, 0, list.length - 1)] as number)
        : RANGE_FROM + Math.floor(r() * (RANGE_TO - RANGE_FROM - 30 * DAY));
    // Start near the transition (inside a gap or a second pass) or some days before it.
    const after = seconds
      ? pivot + int(r, -3 * 3600, 3600) * 1000 + int(r, 0, 999)
      : r() < 0.4
        ? pivot + int(r, -90, 90) * MINUTE + int(r, 0, 59_999)
        : pivot - int(r, 0, 2 * 24 * 60) * MINUTE;
    const end = after + (seconds ? 5 * HOUR : 4 * DAY);
    // Fields lean towards the wall clock just before the pivot (the transition), so that the
    // DST cases are hit often.
    const near = new Date(wallClock(zone)(pivot - 1));
    const cron: Cron = {
      minute: field(r, 0, 59, seconds ? 0.4 : 0.1),
      hour: field(r, 0, 23, seconds ? 0.5 : 0.3, r() < 0.75 ? near.getUTCHours() : undefined),
      dom: field(r, 1, 31, 0.5, near.getUTCDate()),
      month: field(r, 1, 12, 0.7, near.getUTCMonth() + 1),
      dow: field(r, 0, 7, 0.5, near.getUTCDay()),
    };
    if (seconds) cron.second = field(r, 0, 59, 0.2);
    // cron-parser refuses an explicit day of month no month has ("0 0 31 4 *"); so does checkTiming.
    const problems = checkTiming({ cron: cronText(cron), timezone: zone });
    if (problems.length > 0) {
      expect(problems[0]?.message).toMatch(/never fires/);
      continue;
    }
    cases.push({ cron, zone, after, end });
  }
  return cases;
}

describe("nextFireTimes agrees with a minute/second walk of wall-clock time (seeded)", () => {
  const cases = makeCases(20240310, 200);
  it.each(cases.map((c, i) => [i, cronText(c.cron), c.zone, new Date(c.after).toISOString(), c]))(
    "#%i '%s' in %s after %s",
    (_i, text, zone, _after, c) => {
      const { after, end } = c as Case;
      const t: ScheduleTiming = { cron: text as string, timezone: zone as string };
      const want = oracle((c as Case).cron, zone as string, after, end);
      const got = fireTimesBetween(t, after, end, 1_000_000);
      expect(got.map((x) => local(x, zone as string))).toEqual(
        want.map((x) => local(x, zone as string)),
      );
      // The first few, unbounded: the window's, then anything beyond it.
      const head = nextFireTimes(t, after, want.length + 1);
      expect(head.slice(0, want.length)).toEqual(want.slice(0, head.length));
      if (head.length > want.length) expect(head[want.length]).toBeGreaterThan(end);
      // Chained one at a time from each fire (as the sweeper advances): the same sequence.
      const picks = want.length <= 200 ? want : want.filter((_, k) => k % 50 === 0);
      for (const f of picks) {
        const k = want.indexOf(f);
        if (k + 1 < want.length) expect(nextFireTimes(t, f, 1)).toEqual([want[k + 1]]);
      }
    },
  );
  it("the cases above crossed skipped and repeated wall times", () => {
    expect(seen.skippedFires).toBeGreaterThanOrEqual(15);
    expect(seen.repeatsLeftOut).toBeGreaterThanOrEqual(15);
  });
});
