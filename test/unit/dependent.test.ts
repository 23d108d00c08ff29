import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import {
  businessLookback,
  candidateIn,
  combine,
  type DateInterval,
  DEPENDENT_DATE_VALUES,
  type Dependence,
  type DependentCandidate,
  type DependentItem,
  type DependResult,
  dateIntervals,
  evaluateDependence,
  isDependentDateValue,
  itemResult,
} from "../../lib/core/dependent.js";

const ms = (iso: string, zone = "UTC") => DateTime.fromISO(iso, { zone }).toMillis();

/** Intervals as "start/end" in UTC, minutes precision, for readable expectations. */
function show(intervals: DateInterval[]): string[] {
  const f = (t: number) => DateTime.fromMillis(t, { zone: "UTC" }).toFormat("yyyy-MM-dd'T'HH:mm");
  return intervals.map((i) => `${f(i.startMs)}/${f(i.endMs)}`);
}

/** Whole UTC days from `first` (yyyy-MM-dd), `count` of them. */
function utcDays(first: string, count: number): string[] {
  const start = DateTime.fromISO(first, { zone: "UTC" });
  return Array.from({ length: count }, (_, i) => {
    const a = start.plus({ days: i });
    return `${a.toFormat("yyyy-MM-dd'T'HH:mm")}/${a.plus({ days: 1 }).toFormat("yyyy-MM-dd'T'HH:mm")}`;
  });
}

const at = (value: string, base: string, zone?: string) =>
  show(dateIntervals(value, ms(base), zone));

describe("DEPENDENT_DATE_VALUES", () => {
  it("lists DolphinScheduler's date values per cycle", () => {
    expect(DEPENDENT_DATE_VALUES).toEqual({
      hour: ["currentHour", "last1Hour", "last2Hours", "last3Hours", "last24Hours"],
      day: ["today", "last1Days", "last2Days", "last3Days", "last7Days"],
      week: [
        "thisWeek",
        "lastWeek",
        "lastMonday",
        "lastTuesday",
        "lastWednesday",
        "lastThursday",
        "lastFriday",
        "lastSaturday",
        "lastSunday",
      ],
      month: ["thisMonth", "thisMonthBegin", "lastMonth", "lastMonthBegin", "lastMonthEnd"],
    });
    expect(isDependentDateValue("day", "last7Days")).toBe(true);
    expect(isDependentDateValue("hour", "last7Days")).toBe(false);
  });

  it("every listed value has intervals", () => {
    for (const values of Object.values(DEPENDENT_DATE_VALUES)) {
      for (const v of values)
        expect(dateIntervals(v, ms("2026-05-20T10:00")).length).toBeGreaterThan(0);
    }
  });
});

describe("dateIntervals: hour cycle", () => {
  it("currentHour and the last 1/2/3 hours, across a year boundary", () => {
    const base = "2026-01-01T00:30";
    expect(at("currentHour", base)).toEqual(["2026-01-01T00:00/2026-01-01T01:00"]);
    expect(at("last1Hour", base)).toEqual(["2025-12-31T23:00/2026-01-01T00:00"]);
    expect(at("last2Hours", base)).toEqual([
      "2025-12-31T22:00/2025-12-31T23:00",
      "2025-12-31T23:00/2026-01-01T00:00",
    ]);
    expect(at("last3Hours", base)).toEqual([
      "2025-12-31T21:00/2025-12-31T22:00",
      "2025-12-31T22:00/2025-12-31T23:00",
      "2025-12-31T23:00/2026-01-01T00:00",
    ]);
  });

  it("last24Hours: yesterday 01:00 to today 01:00, whatever the base hour (DolphinScheduler)", () => {
    for (const base of ["2026-03-15T00:10", "2026-03-15T10:30", "2026-03-15T23:59"]) {
      const r = at("last24Hours", base);
      expect(r).toHaveLength(24);
      expect(r[0]).toBe("2026-03-14T01:00/2026-03-14T02:00");
      expect(r[23]).toBe("2026-03-15T00:00/2026-03-15T01:00");
    }
  });
});

describe("dateIntervals: day cycle", () => {
  const base = "2026-01-02T10:00";

  it("today and the whole days before it, across a year boundary", () => {
    expect(at("today", base)).toEqual(utcDays("2026-01-02", 1));
    expect(at("last1Days", base)).toEqual(utcDays("2026-01-01", 1));
    expect(at("last2Days", base)).toEqual(utcDays("2025-12-31", 2));
    expect(at("last3Days", base)).toEqual(utcDays("2025-12-30", 3));
    expect(at("last7Days", base)).toEqual(utcDays("2025-12-26", 7));
  });

  it("a base at midnight belongs to its own day", () => {
    expect(at("today", "2026-01-02T00:00")).toEqual(utcDays("2026-01-02", 1));
    expect(at("last1Days", "2026-01-02T00:00")).toEqual(utcDays("2026-01-01", 1));
  });
});

describe("dateIntervals: week cycle (weeks start on Monday)", () => {
  it("thisWeek runs from Monday to the base day", () => {
    expect(at("thisWeek", "2026-03-08T12:00")).toEqual(utcDays("2026-03-02", 7)); // a Sunday
    expect(at("thisWeek", "2026-03-09T12:00")).toEqual(utcDays("2026-03-09", 1)); // a Monday
    expect(at("thisWeek", "2026-03-11T12:00")).toEqual(utcDays("2026-03-09", 3)); // a Wednesday
  });

  it("lastWeek is Monday to Sunday of the week before", () => {
    expect(at("lastWeek", "2026-03-08T12:00")).toEqual(utcDays("2026-02-23", 7)); // Sunday base
    expect(at("lastWeek", "2026-03-09T00:00")).toEqual(utcDays("2026-03-02", 7)); // Monday base
  });

  it("lastMonday … lastSunday pick one day of last week, across a year boundary", () => {
    const base = "2026-01-01T08:00"; // a Thursday; last week is 2025-12-22 … 2025-12-28
    const names = DEPENDENT_DATE_VALUES.week.slice(2);
    expect(names.map((n) => at(n, base))).toEqual([
      utcDays("2025-12-22", 1),
      utcDays("2025-12-23", 1),
      utcDays("2025-12-24", 1),
      utcDays("2025-12-25", 1),
      utcDays("2025-12-26", 1),
      utcDays("2025-12-27", 1),
      utcDays("2025-12-28", 1),
    ]);
    // On a Sunday "last week" is still the week before the current Monday-based one.
    expect(at("lastSunday", "2026-03-08T12:00")).toEqual(utcDays("2026-03-01", 1));
  });
});

describe("dateIntervals: month cycle", () => {
  it("this month from the 1st to the base day, and its first day", () => {
    expect(at("thisMonth", "2026-01-15T09:00")).toEqual(utcDays("2026-01-01", 15));
    expect(at("thisMonth", "2026-01-01T09:00")).toEqual(utcDays("2026-01-01", 1));
    expect(at("thisMonthBegin", "2026-01-15T09:00")).toEqual(utcDays("2026-01-01", 1));
  });

  it("last month, its first and its last day, across a year boundary", () => {
    const base = "2026-01-15T09:00";
    expect(at("lastMonth", base)).toEqual(utcDays("2025-12-01", 31));
    expect(at("lastMonthBegin", base)).toEqual(utcDays("2025-12-01", 1));
    expect(at("lastMonthEnd", base)).toEqual(utcDays("2025-12-31", 1));
  });

  it("handles February and leap years", () => {
    expect(at("lastMonth", "2024-03-01T00:00")).toEqual(utcDays("2024-02-01", 29));
    expect(at("lastMonthEnd", "2024-03-31T23:59")).toEqual(utcDays("2024-02-29", 1));
    expect(at("lastMonthEnd", "2026-03-31T12:00")).toEqual(utcDays("2026-02-28", 1));
    expect(at("lastMonthBegin", "2026-03-31T12:00")).toEqual(utcDays("2026-02-01", 1));
  });
});

describe("dateIntervals: time zones and errors", () => {
  it("computes days in the given zone", () => {
    // 2026-01-01T16:30Z is 2026-01-02 00:30 in Shanghai (UTC+8).
    expect(at("today", "2026-01-01T16:30", "Asia/Shanghai")).toEqual([
      "2026-01-01T16:00/2026-01-02T16:00",
    ]);
    expect(at("lastMonthEnd", "2026-01-01T16:30", "Asia/Shanghai")).toEqual([
      "2025-12-30T16:00/2025-12-31T16:00",
    ]);
  });

  it("keeps calendar days and whole hours across a DST change", () => {
    const zone = "America/New_York"; // 2026-03-08 02:00 EST → 03:00 EDT
    const day = dateIntervals("today", ms("2026-03-08T12:00", zone), zone);
    expect(day).toHaveLength(1);
    expect(((day[0]?.endMs ?? 0) - (day[0]?.startMs ?? 0)) / 3_600_000).toBe(23);
    const hours = dateIntervals("last24Hours", ms("2026-03-09T12:00", zone), zone);
    expect(hours).toHaveLength(24);
    for (const [i, h] of hours.entries()) {
      expect(h.endMs - h.startMs).toBe(3_600_000);
      if (i > 0) expect(h.startMs).toBe(hours[i - 1]?.endMs);
    }
    expect(hours[23]?.endMs).toBe(ms("2026-03-09T01:00", zone));
  });

  it("throws for unknown values, zones and times", () => {
    expect(() => dateIntervals("yesterday", 0)).toThrow("unknown dependent date value 'yesterday'");
    expect(() => dateIntervals("thisMonthEnd", 0)).toThrow(/unknown dependent date value/);
    expect(() => dateIntervals("today", 0, "Mars/Olympus")).toThrow(/time zone 'Mars\/Olympus'/);
    expect(() => dateIntervals("today", Number.NaN)).toThrow(/cannot place NaN/);
  });
});

describe("itemResult", () => {
  const item: DependentItem = { workflow: "etl", cycle: "day", dateValue: "last2Days" };
  const base = ms("2026-01-03T06:00");
  const intervals = dateIntervals("last2Days", base); // 2026-01-01 and 2026-01-02
  const inst = (
    day: string,
    state: string,
    extra: Partial<DependentCandidate> = {},
  ): DependentCandidate => ({ state, scheduleTime: ms(day), createdAt: ms(day), ...extra });

  it("waits while an interval has no instance", () => {
    expect(itemResult(item, intervals, [])).toBe("WAITING");
    expect(itemResult(item, intervals, [inst("2026-01-01T01:00", "SUCCESS")])).toBe("WAITING");
  });

  it("succeeds when every interval's instance succeeded", () => {
    const c = [inst("2026-01-01T01:00", "SUCCESS"), inst("2026-01-02T01:00", "SUCCESS")];
    expect(itemResult(item, intervals, c)).toBe("SUCCESS");
  });

  it("maps instance states: FAILURE and STOPPED fail, the rest waits", () => {
    const ok = inst("2026-01-01T01:00", "SUCCESS");
    for (const [state, want] of [
      ["FAILURE", "FAILURE"],
      ["STOPPED", "FAILURE"],
      ["SUBMITTED", "WAITING"],
      ["RUNNING", "WAITING"],
      ["PAUSING", "WAITING"],
      ["PAUSED", "WAITING"],
      ["STOPPING", "WAITING"],
    ] as const) {
      expect(itemResult(item, intervals, [ok, inst("2026-01-02T01:00", state)]), state).toBe(want);
    }
  });

  it("fails on any failed interval even while another waits", () => {
    expect(itemResult(item, intervals, [inst("2026-01-02T01:00", "FAILURE")])).toBe("FAILURE");
  });

  it("uses the latest instance of an interval", () => {
    const c = [
      inst("2026-01-01T01:00", "SUCCESS"),
      inst("2026-01-02T01:00", "FAILURE"),
      inst("2026-01-02T05:00", "SUCCESS"),
    ];
    expect(itemResult(item, intervals, c)).toBe("SUCCESS");
    const rerunFailed = [...c, inst("2026-01-02T09:00", "FAILURE")];
    expect(itemResult(item, intervals, rerunFailed)).toBe("FAILURE");
  });

  it("places instances by schedule time, else start time, else creation time", () => {
    const day2 = intervals[1] as DateInterval;
    const scheduled = {
      state: "SUCCESS",
      scheduleTime: ms("2026-01-02T01:00"),
      createdAt: ms("2026-01-05"),
    };
    const started = {
      state: "SUCCESS",
      startedAt: ms("2026-01-02T02:00"),
      createdAt: ms("2026-01-05"),
    };
    const created = { state: "SUCCESS", createdAt: ms("2026-01-02T03:00") };
    expect(candidateIn(day2, [scheduled])).toBe(scheduled);
    expect(candidateIn(day2, [scheduled, started])).toBe(started);
    expect(candidateIn(day2, [scheduled, started, created])).toBe(created);
    // A late backfill of that day counts for it, not for the day it ran.
    expect(
      candidateIn(intervals[0] as DateInterval, [scheduled, started, created]),
    ).toBeUndefined();
  });

  it("treats intervals as half-open and breaks ties by creation time", () => {
    const day1 = intervals[0] as DateInterval;
    const atStart = { state: "SUCCESS", scheduleTime: day1.startMs, createdAt: 1 };
    const atEnd = { state: "FAILURE", scheduleTime: day1.endMs, createdAt: 2 };
    expect(candidateIn(day1, [atStart, atEnd])).toBe(atStart);
    const twin = { state: "FAILURE", scheduleTime: day1.startMs, createdAt: 3 };
    expect(candidateIn(day1, [twin, atStart])).toBe(twin);
  });

  it("with a task, its latest attempt decides", () => {
    const taskItem: DependentItem = { ...item, task: "load" };
    const ok = inst("2026-01-01T01:00", "SUCCESS", { taskState: "SUCCESS" });
    const cases: [string, Partial<DependentCandidate>, DependResult][] = [
      ["RUNNING", { taskState: "SUCCESS" }, "SUCCESS"],
      ["FAILURE", { taskState: "FORCED_SUCCESS" }, "SUCCESS"],
      ["RUNNING", { taskState: "FAILURE" }, "FAILURE"],
      ["RUNNING", { taskState: "KILLED" }, "FAILURE"],
      ["RUNNING", { taskState: "FAILURE", taskRetryPending: true }, "WAITING"],
      ["FAILURE", { taskState: "FAILURE", taskRetryPending: true }, "FAILURE"],
      ["RUNNING", { taskState: "RUNNING" }, "WAITING"],
      ["RUNNING", {}, "WAITING"],
      ["PAUSED", { taskState: "PAUSED" }, "WAITING"],
      ["SUCCESS", {}, "FAILURE"],
      ["SUCCESS", { taskState: "SKIPPED" }, "FAILURE"],
      ["STOPPED", { taskState: "NEED_FAULT_TOLERANCE" }, "FAILURE"],
    ];
    for (const [state, extra, want] of cases) {
      const c = [ok, inst("2026-01-02T01:00", state, extra)];
      expect(itemResult(taskItem, intervals, c), `${state} ${JSON.stringify(extra)}`).toBe(want);
    }
  });

  it("fails with no intervals at all (DolphinScheduler starts from FAILED)", () => {
    expect(itemResult(item, [], [inst("2026-01-02T01:00", "SUCCESS")])).toBe("FAILURE");
  });
});

describe("combine", () => {
  const S = "SUCCESS";
  const W = "WAITING";
  const F = "FAILURE";
  // [a, b, AND, OR] for every pair (DolphinScheduler's getDependResultForRelation).
  const table: [DependResult, DependResult, DependResult, DependResult][] = [
    [S, S, S, S],
    [S, W, W, S],
    [S, F, F, S],
    [W, S, W, S],
    [W, W, W, W],
    [W, F, F, W],
    [F, S, F, S],
    [F, W, F, W],
    [F, F, F, F],
  ];

  it("follows the AND and OR truth tables", () => {
    for (const [a, b, and, or] of table) {
      expect(combine("AND", [a, b]), `${a} AND ${b}`).toBe(and);
      expect(combine("OR", [a, b]), `${a} OR ${b}`).toBe(or);
    }
  });

  it("passes a single result through and handles empty lists as DolphinScheduler", () => {
    for (const r of [S, W, F] as const) {
      expect(combine("AND", [r])).toBe(r);
      expect(combine("OR", [r])).toBe(r);
    }
    expect(combine("AND", [])).toBe(S);
    expect(combine("OR", [])).toBe(F);
  });

  it("decides on any member, whatever its position", () => {
    expect(combine("AND", [S, S, W, S, F])).toBe(F);
    expect(combine("OR", [F, F, W, F, S])).toBe(S);
    expect(combine("OR", [F, W, F])).toBe(W);
  });
});

describe("evaluateDependence", () => {
  const item = (workflow: string): DependentItem => ({
    workflow,
    cycle: "day",
    dateValue: "today",
  });
  const dep: Dependence = {
    relation: "AND",
    groups: [
      { relation: "OR", items: [item("a"), item("b")] },
      { relation: "AND", items: [item("c"), item("d")] },
    ],
  };

  it("combines items per group, then groups", () => {
    const results = (r: Record<string, DependResult>) => (i: DependentItem) =>
      r[i.workflow] ?? "WAITING";
    expect(
      evaluateDependence(dep, results({ a: "FAILURE", b: "SUCCESS", c: "SUCCESS", d: "SUCCESS" })),
    ).toBe("SUCCESS");
    expect(
      evaluateDependence(dep, results({ a: "FAILURE", b: "FAILURE", c: "SUCCESS", d: "SUCCESS" })),
    ).toBe("FAILURE");
    expect(evaluateDependence(dep, results({ a: "SUCCESS", c: "SUCCESS" }))).toBe("WAITING");
    expect(
      evaluateDependence(
        { ...dep, relation: "OR" },
        results({ a: "FAILURE", b: "FAILURE", c: "SUCCESS", d: "SUCCESS" }),
      ),
    ).toBe("SUCCESS");
  });

  it("asks once for every item, in order", () => {
    const seen: string[] = [];
    evaluateDependence(dep, (i) => {
      seen.push(i.workflow);
      return "SUCCESS";
    });
    expect(seen).toEqual(["a", "b", "c", "d"]);
  });

  it("works end to end with dateIntervals and itemResult", () => {
    const base = ms("2026-01-02T03:00");
    const instances: Record<string, DependentCandidate[]> = {
      a: [{ state: "SUCCESS", scheduleTime: ms("2026-01-02T01:00"), createdAt: 0 }],
      c: [{ state: "SUCCESS", scheduleTime: ms("2026-01-02T02:00"), createdAt: 0 }],
      d: [{ state: "RUNNING", scheduleTime: ms("2026-01-02T02:30"), createdAt: 0 }],
    };
    const judge = (i: DependentItem) =>
      itemResult(i, dateIntervals(i.dateValue, base), instances[i.workflow] ?? []);
    expect(evaluateDependence(dep, judge)).toBe("WAITING");
    instances.d = [{ state: "SUCCESS", scheduleTime: ms("2026-01-02T02:30"), createdAt: 0 }];
    expect(evaluateDependence(dep, judge)).toBe("SUCCESS");
  });
});

describe("businessLookback", () => {
  it("spans the earliest start and the latest end of all intervals", () => {
    const dep: Dependence = {
      relation: "AND",
      groups: [
        { relation: "AND", items: [{ workflow: "a", cycle: "hour", dateValue: "currentHour" }] },
        {
          relation: "OR",
          items: [
            { workflow: "b", cycle: "day", dateValue: "last7Days" },
            { workflow: "c", cycle: "month", dateValue: "lastMonthEnd" },
          ],
        },
      ],
    };
    const r = businessLookback(dep, ms("2026-01-02T10:30"));
    expect(r).toEqual({ fromMs: ms("2025-12-26T00:00"), toMs: ms("2026-01-02T11:00") });
    const month: Dependence = {
      relation: "AND",
      groups: [
        { relation: "AND", items: [{ workflow: "m", cycle: "month", dateValue: "lastMonth" }] },
      ],
    };
    expect(businessLookback(month, ms("2026-03-10T00:00"), "Asia/Shanghai")).toEqual({
      fromMs: ms("2026-02-01T00:00", "Asia/Shanghai"),
      toMs: ms("2026-03-01T00:00", "Asia/Shanghai"),
    });
  });

  it("gives the empty span at base for a dependence without items, and throws for bad values", () => {
    expect(businessLookback({ relation: "AND", groups: [] }, 5)).toEqual({ fromMs: 5, toMs: 5 });
    const bad: Dependence = {
      relation: "AND",
      groups: [{ relation: "AND", items: [{ workflow: "x", cycle: "day", dateValue: "someday" }] }],
    };
    expect(() => businessLookback(bad, 0)).toThrow(/someday/);
  });
});
