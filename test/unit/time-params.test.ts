import { describe, expect, it } from "vitest";
import {
  evaluateTimeExpression as at,
  builtinParams,
  ParamError,
} from "../../lib/core/time-params.js";

/** Friday 2022-08-26 10:30:15.123 UTC: the date DolphinScheduler's built-in.md examples use. */
const BASE = Date.UTC(2022, 7, 26, 10, 30, 15, 123);
/** The same local date in Asia/Shanghai (UTC+8): 2022-08-26 02:30:15, still the 25th in UTC. */
const BASE_SHANGHAI = Date.UTC(2022, 7, 25, 18, 30, 15, 123);
const SHANGHAI = "Asia/Shanghai";
const NEW_YORK = "America/New_York";

describe("documented examples (built-in.md), in UTC and in Asia/Shanghai", () => {
  // Outputs that hold a date only: identical for both bases in their zones.
  const dates: Array<[string, string]> = [
    ["yyyyMMdd", "20220826"],
    ["yyyy-MM-dd", "2022-08-26"],
    ["add_months(yyyyMMdd,12*1)", "20230826"],
    ["add_months(yyyyMMdd,-12*1)", "20210826"],
    ["add_months(yyyyMMdd,1)", "20220926"],
    ["add_months(yyyyMMdd,-1)", "20220726"],
    ["yyyyMMdd+7*1", "20220902"],
    ["yyyyMMdd-7*1", "20220819"],
    ["yyyyMMdd+1", "20220827"],
    ["yyyyMMdd-1", "20220825"],
    ["this_day(yyyy-MM-dd)", "2022-08-26"],
    ["last_day(yyyy-MM-dd)", "2022-08-25"],
    ["year_week(yyyy-MM-dd)", "2022-34"],
    ["year_week(yyyy-MM-dd,5)", "2022-35"],
    ["month_first_day(yyyy-MM-dd,-1)", "2022-07-01"],
    ["week_first_day(yyyy-MM-dd,-1)", "2022-08-15"],
    ["week_last_day(yyyy-MM-dd,-1)", "2022-08-21"],
  ];
  it.each(dates)("$[%s] = %s", (expr, want) => {
    expect(at(expr, BASE)).toBe(want);
    expect(at(expr, BASE, "UTC")).toBe(want);
    expect(at(expr, BASE_SHANGHAI, SHANGHAI)).toBe(want);
  });

  it("month_last_day: 2022-08-28 with N=-1 gives 2022-07-31", () => {
    expect(at("month_last_day(yyyy-MM-dd,-1)", Date.UTC(2022, 7, 28, 10))).toBe("2022-07-31");
    expect(at("month_last_day(yyyy-MM-dd,-1)", Date.UTC(2022, 7, 27, 18), SHANGHAI)).toBe(
      "2022-07-31",
    );
  });

  it("formats times of day in the zone, with hour and minute offsets", () => {
    const cases: Array<[string, string, string]> = [
      ["yyyyMMddHHmmss", "20220826103015", "20220826023015"],
      ["HHmmss", "103015", "023015"],
      ["HH:mm:ss", "10:30:15", "02:30:15"],
      ["HHmmss+1/24", "113015", "033015"],
      ["HHmmss-1/24", "093015", "013015"],
      ["HHmmss+1/24/60", "103115", "023115"],
      ["HHmmss-1/24/60", "102915", "022915"],
    ];
    for (const [expr, utc, shanghai] of cases) {
      expect(at(expr, BASE)).toBe(utc);
      expect(at(expr, BASE_SHANGHAI, SHANGHAI)).toBe(shanghai);
    }
    // The same instant, read in UTC, is still the 25th.
    expect(at("yyyyMMdd", BASE_SHANGHAI)).toBe("20220825");
  });
});

describe("patterns", () => {
  it("accepts SimpleDateFormat fields and the literal separators", () => {
    expect(at("yyyy-MM-dd HH:mm:ss.SSS", BASE)).toBe("2022-08-26 10:30:15.123");
    expect(at("yyyy/MM/dd_HH", BASE)).toBe("2022/08/26_10");
    expect(at("yyyy-MM-ddTHH:mm:ss", BASE)).toBe("2022-08-26T10:30:15");
    expect(at("yyyy-MM-dd'T'HH:mm", BASE)).toBe("2022-08-26T10:30");
    expect(at("yyyy'' MM", BASE)).toBe("2022' 08");
    expect(at("yy", BASE)).toBe("22");
    expect(at("yyyy年MM月dd日", BASE)).toBe("2022年08月26日");
  });

  it("pads two-letter fields and not one-letter ones", () => {
    const early = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
    expect(at("yyyyMMddHHmmssSSS", early)).toBe("20260102030405006");
    expect(at("M/d H:m:s", early)).toBe("1/2 3:4:5");
  });

  it("rejects unsupported letters and separators with one sentence naming the expression", () => {
    for (const [expr, fragment] of [
      ["EEE", '"E" is not supported'],
      ["yyyyMMdd hh", '"h" is not supported'],
      ["yyy", '"yyy" is not a supported pattern field'],
      ["MMM", '"MMM" is not a supported pattern field'],
      ["yyyy,MM", '"," is not supported'],
      ["yyyy'T", "is not closed"],
      ["yyyyMMdd+N", '"+" is not supported'],
      ["yyyyMMdd+-1", '"+" is not supported'],
    ] as const) {
      expect(() => at(expr, BASE)).toThrow(ParamError);
      expect(() => at(expr, BASE)).toThrow(`time expression $[${expr}] is not valid: `);
      expect(() => at(expr, BASE)).toThrow(fragment);
    }
  });

  it("rejects empty expressions and unknown functions", () => {
    expect(() => at("", BASE)).toThrow("$[] is not valid: it is empty");
    expect(() => at("  ", BASE)).toThrow(ParamError);
    expect(() => at("timestamp(yyyyMMdd)", BASE)).toThrow("timestamp() is not a known function");
    expect(() => at("add_months(yyyyMMdd)", BASE)).toThrow("takes 2 arguments, got 1");
    expect(() => at("this_day(yyyyMMdd,1)", BASE)).toThrow("takes 1 argument, got 2");
    expect(() => at("add_months(yyyyMMdd,x)", BASE)).toThrow('"x" is not an integer expression');
  });
});

describe("offsets", () => {
  it("evaluates integer arithmetic as DolphinScheduler (Java int division)", () => {
    expect(at("yyyyMMdd+7*2", BASE)).toBe("20220909");
    expect(at("yyyyMMdd-(1+1)", BASE)).toBe("20220824");
    expect(at("HHmm+1/48", BASE)).toBe("1100"); // 60*24*1/48 = 30 minutes
    expect(at("HHmm-90/24/60", BASE)).toBe("0900");
    expect(at("yyyy-MM-dd-1", BASE)).toBe("2022-08-25");
    expect(at("add_months(yyyyMMdd, -2 * 6)", BASE)).toBe("20210826");
    expect(() => at("yyyyMMdd+1/0", BASE)).toThrow('the offset "1/0" divides by zero');
    expect(() => at("yyyyMMdd+99999999999", BASE)).toThrow("overflows a 32-bit integer");
    expect(() => at("yyyyMMdd+(1", BASE)).toThrow("unclosed parenthesis");
  });

  it("crosses month, leap-day and year ends", () => {
    expect(at("yyyyMMdd-1", Date.UTC(2026, 2, 1, 12))).toBe("20260228");
    expect(at("yyyyMMdd-1", Date.UTC(2024, 2, 1, 12))).toBe("20240229");
    expect(at("yyyyMMdd+1", Date.UTC(2026, 11, 31, 12))).toBe("20270101");
    expect(at("yyyyMMdd-1", Date.UTC(2026, 0, 1, 12))).toBe("20251231");
    expect(at("yyyyMMdd-7*1", Date.UTC(2026, 0, 3, 12))).toBe("20251227");
    expect(at("yyyyMMddHH-1/24", Date.UTC(2026, 0, 1, 0, 30))).toBe("2025123123");
    expect(at("add_months(yyyyMMdd,1)", Date.UTC(2026, 0, 31))).toBe("20260228");
    expect(at("add_months(yyyy-MM-dd,-1)", Date.UTC(2026, 2, 31))).toBe("2026-02-28");
    expect(at("add_months(yyyyMMdd,-12*1)", Date.UTC(2024, 1, 29))).toBe("20230228");
    expect(at("month_last_day(yyyyMMdd,1)", Date.UTC(2026, 0, 31))).toBe("20260228");
    expect(at("month_first_day(yyyyMMdd,1)", Date.UTC(2026, 11, 15))).toBe("20270101");
    expect(at("month_last_day(yyyyMMdd)", Date.UTC(2024, 1, 10))).toBe("20240229");
    expect(at("week_first_day(yyyyMMdd,0)", Date.UTC(2026, 0, 1))).toBe("20251229");
    expect(at("week_last_day(yyyyMMdd,0)", Date.UTC(2026, 11, 28))).toBe("20270103");
  });

  it("keeps the time of day in the date functions", () => {
    expect(at("add_months(yyyy-MM-dd HH:mm,1)", BASE)).toBe("2022-09-26 10:30");
    expect(at("month_first_day(yyyy-MM-dd HH:mm)", BASE)).toBe("2022-08-01 10:30");
    expect(at("week_last_day(yyyy-MM-dd HH:mm,1)", BASE)).toBe("2022-09-04 10:30");
  });

  it("moves whole days by the calendar on DST days (America/New_York)", () => {
    // 2026-03-09 00:30 EDT, the day after spring-forward (a 23-hour day).
    const afterSpring = Date.UTC(2026, 2, 9, 4, 30);
    expect(at("yyyyMMddHHmm", afterSpring, NEW_YORK)).toBe("202603090030");
    expect(at("yyyyMMdd-1", afterSpring, NEW_YORK)).toBe("20260308");
    expect(at("last_day(yyyyMMdd)", afterSpring, NEW_YORK)).toBe("20260308");
    expect(at("yyyyMMddHHmm-24/24", afterSpring, NEW_YORK)).toBe("202603080030");
    // Hours are instants: 23 hours back lands on the same wall time across the short day.
    expect(at("yyyyMMddHHmm-23/24", afterSpring, NEW_YORK)).toBe("202603080030");
    // 2026-03-08 03:30 EDT: one and two hours back cross the 02:00 gap.
    const springGap = Date.UTC(2026, 2, 8, 7, 30);
    expect(at("HHmm-1/24", springGap, NEW_YORK)).toBe("0130");
    expect(at("HHmm-2/24", springGap, NEW_YORK)).toBe("0030");
    // 2026-11-01 23:30 EST, the evening of fall-back (a 25-hour day).
    const fallEvening = Date.UTC(2026, 10, 2, 4, 30);
    expect(at("yyyyMMdd-1", fallEvening, NEW_YORK)).toBe("20261031");
    expect(at("yyyyMMddHH-1/24", fallEvening, NEW_YORK)).toBe("2026110122");
    expect(at("yyyyMMddHH-24/24", fallEvening, NEW_YORK)).toBe("2026103123");
    expect(
      builtinParams({ baseMs: afterSpring, zone: NEW_YORK, workflow: "w", instanceId: "i" })[
        "system.biz.date"
      ],
    ).toBe("20260308");
  });
});

describe("year_week", () => {
  it("numbers ISO-like weeks (at least 4 days in week 1) with the week's own year", () => {
    expect(at("year_week(yyyy-MM-dd)", Date.UTC(2026, 10, 20))).toBe("2026-47");
    expect(at("year_week(yyyyMMdd)", BASE)).toBe("202234");
    expect(at("year_week(yyyy-MM-dd)", Date.UTC(2026, 0, 5))).toBe("2026-02");
    expect(at("year_week(yyyy-MM-dd)", Date.UTC(2025, 11, 29))).toBe("2026-01");
    expect(at("year_week(yyyy-MM-dd)", Date.UTC(2021, 0, 1))).toBe("2020-53");
    expect(at("year_week(yyyy-MM-dd)", Date.UTC(2026, 11, 31))).toBe("2026-53");
  });

  it("starts weeks on the given day (1 = Monday … 7 = Sunday)", () => {
    expect(at("year_week(yyyy-MM-dd,7)", Date.UTC(2022, 7, 28))).toBe("2022-35");
    expect(at("year_week(yyyy-MM-dd,7)", Date.UTC(2022, 7, 27))).toBe("2022-34");
    expect(at("year_week(yyyy-MM-dd,1)", Date.UTC(2022, 7, 28))).toBe("2022-34");
    expect(() => at("year_week(yyyy-MM-dd,0)", BASE)).toThrow("must be 1 (Monday) to 7 (Sunday)");
    expect(() => at("year_week(yyyy-MM-dd,8)", BASE)).toThrow(ParamError);
  });

  it("uses the zone's date", () => {
    // Sunday 2022-08-28 20:00 UTC is Monday the 29th in Shanghai: a new week.
    expect(at("year_week(yyyy-MM-dd)", Date.UTC(2022, 7, 28, 20))).toBe("2022-34");
    expect(at("year_week(yyyy-MM-dd)", Date.UTC(2022, 7, 28, 20), SHANGHAI)).toBe("2022-35");
  });
});

describe("zones and base time", () => {
  it("rejects a zone that is not an IANA name", () => {
    expect(() => at("yyyyMMdd", BASE, "Mars/Olympus")).toThrow(ParamError);
    expect(() => at("yyyyMMdd", BASE, "Mars/Olympus")).toThrow(
      'time zone "Mars/Olympus" is not a valid IANA time zone name',
    );
    expect(() =>
      builtinParams({ baseMs: BASE, zone: "nope", workflow: "w", instanceId: "i" }),
    ).toThrow(ParamError);
  });

  it("rejects a base time that is not a number of milliseconds", () => {
    expect(() => at("yyyyMMdd", Number.NaN)).toThrow(ParamError);
  });
});

describe("builtinParams", () => {
  it("gives DolphinScheduler's system parameters for a workflow", () => {
    expect(builtinParams({ baseMs: BASE, workflow: "etl", instanceId: "wi-1" })).toEqual({
      "system.datetime": "20220826103015",
      "system.biz.curdate": "20220826",
      "system.biz.date": "20220825",
      "system.workflow.instance.id": "wi-1",
      "system.workflow.definition.name": "etl",
    });
  });

  it("adds the task parameters when given, in the zone", () => {
    expect(
      builtinParams({
        baseMs: BASE_SHANGHAI,
        zone: SHANGHAI,
        workflow: "etl",
        instanceId: "wi-1",
        taskCode: "load",
        attempt: 2,
      }),
    ).toEqual({
      "system.datetime": "20220826023015",
      "system.biz.curdate": "20220826",
      "system.biz.date": "20220825",
      "system.workflow.instance.id": "wi-1",
      "system.workflow.definition.name": "etl",
      "system.task.definition.name": "load",
      "system.task.instance.attempt": "2",
    });
  });

  it("crosses month and year ends for system.biz.date", () => {
    const p = builtinParams({ baseMs: Date.UTC(2027, 0, 1, 0, 5), workflow: "w", instanceId: "i" });
    expect(p["system.biz.date"]).toBe("20261231");
    expect(p["system.biz.curdate"]).toBe("20270101");
  });
});
