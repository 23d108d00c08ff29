// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is Shoal's parameter syntax, not a JS template
/**
 * Time parameters in the run's zone: a task's parameters (`taskParams`) and its rendered command
 * (`substituteTask`) use the instance's `timezone`, DST days included; the workflow definition's
 * optional `timezone` is validated.
 */
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { statusOf } from "../../lib/api/http.js";
import { Dag } from "../../lib/core/dag.js";
import { RequestError } from "../../lib/core/errors.js";
import type { ShellTaskDefinition, WorkflowDefinition } from "../../lib/core/model.js";
import { checkTiming } from "../../lib/core/schedule-check.js";
import { zonedBase } from "../../lib/core/time-params.js";
import { isTimeZone, timeZoneProblem } from "../../lib/core/time-zones.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";
import type { LoadedDefinition } from "../../lib/engine/definitions.js";
import { taskParams, zoneOf } from "../../lib/engine/engine-deps.js";
import type { InstanceRecord } from "../../lib/store/records.js";
import { substituteJson, substituteTask } from "../../lib/tasks/substitute.js";
import { instanceRecord } from "../helpers/records.js";

const PARIS = "Europe/Paris";
const paris = (iso: string) => DateTime.fromISO(iso, { zone: PARIS }).toMillis();

function loaded(def: WorkflowDefinition): LoadedDefinition {
  return {
    name: "w",
    version: 1,
    definition: def,
    dag: new Dag(def.tasks),
    policies: [],
    kinds: def.tasks.map(() => "worker"),
  };
}

const DEF = loaded(
  parseWorkflowDefinition({
    params: { day: "$[yyyyMMdd]", hour: "$[HH:mm]", lastHour: "$[HH:mm-1/24]" },
    tasks: [{ code: "t", type: "SHELL", command: "echo $[yyyyMMdd] ${system.biz.date}" }],
  }),
);

const instance = (scheduleTime: number, timezone?: string) =>
  instanceRecord("i-1", {
    commandType: "SCHEDULED",
    createdAt: scheduleTime + 1_000,
    scheduleTime,
    ...(timezone ? { timezone } : {}),
    progress: { slots: "", attempts: {} },
  });

/** The parameters and the rendered command of task `t` of an instance. */
function render(inst: InstanceRecord) {
  const params = taskParams(inst, DEF, 0, 1);
  const task = substituteTask(
    DEF.definition.tasks[0] as ShellTaskDefinition,
    params,
    inst.scheduleTime as number,
    inst.timezone,
  ) as ShellTaskDefinition;
  return { params, command: task.command };
}

describe("time parameters in the instance's zone", () => {
  it("a Paris run at 00:30 on 2 November has the Paris date, not UTC's", () => {
    const at = paris("2026-11-02T00:30"); // 2026-11-01T23:30Z
    const { params, command } = render(instance(at, PARIS));
    expect(params).toMatchObject({
      "system.biz.curdate": "20261102",
      "system.biz.date": "20261101",
      "system.datetime": "20261102003000",
      day: "20261102",
      hour: "00:30",
      lastHour: "23:30",
    });
    expect(command).toBe("echo '20261102' '20261101'");
    // Without a zone: UTC, as before.
    const utc = render(instance(at));
    expect(utc.params["system.biz.curdate"]).toBe("20261101");
    expect(utc.command).toBe("echo '20261101' '20261031'");
  });

  it("keeps calendar days across the spring DST change (Paris, 29 March 2026)", () => {
    // 00:30 CET on the day the clocks skip 02:00 → 03:00.
    const { params, command } = render(instance(paris("2026-03-29T00:30"), PARIS));
    expect(params).toMatchObject({ day: "20260329", "system.biz.date": "20260328" });
    expect(command).toBe("echo '20260329' '20260328'");
    // 03:30 CEST, one elapsed hour after 01:30 CET: the hour before is 01:30 on the wall clock.
    const after = render(instance(paris("2026-03-29T03:30"), PARIS)).params;
    expect(after).toMatchObject({ hour: "03:30", lastHour: "01:30", day: "20260329" });
    // The day after the change: yesterday is the 23-hour day.
    expect(render(instance(paris("2026-03-30T00:10"), PARIS)).params["system.biz.date"]).toBe(
      "20260329",
    );
  });

  it("keeps calendar days across the autumn DST change (Paris, 25 October 2026)", () => {
    const first = Date.UTC(2026, 9, 25, 0, 30); // 02:30 CEST
    const second = Date.UTC(2026, 9, 25, 1, 30); // 02:30 CET, the repeated hour
    expect(render(instance(first, PARIS)).params).toMatchObject({
      hour: "02:30",
      day: "20261025",
    });
    expect(render(instance(second, PARIS)).params).toMatchObject({
      hour: "02:30",
      lastHour: "02:30",
      "system.biz.date": "20261024",
    });
    // 00:30 CEST on the 25-hour day, and the day after it.
    expect(render(instance(paris("2026-10-25T00:30"), PARIS)).command).toBe(
      "echo '20261025' '20261024'",
    );
    expect(render(instance(paris("2026-10-26T00:30"), PARIS)).command).toBe(
      "echo '20261026' '20261025'",
    );
  });

  it("renders JSON templates (LAMBDA, STEP_FUNCTIONS) in the zone too", () => {
    const at = paris("2026-11-02T00:30");
    expect(substituteJson('{"d": "$[yyyyMMdd]"}', {}, at, PARIS)).toBe('{"d": "20261102"}');
    expect(substituteJson('{"d": "$[yyyyMMdd]"}', {}, at)).toBe('{"d": "20261101"}');
  });

  it("zoneOf: the instance's zone, else UTC", () => {
    expect(zoneOf({ timezone: PARIS })).toBe(PARIS);
    expect(zoneOf({})).toBe("UTC");
  });
});

describe("the workflow definition's timezone", () => {
  const base = { tasks: [{ code: "t", type: "SHELL", command: "true" }] };

  it("accepts IANA zone names", () => {
    for (const zone of [PARIS, "UTC", "America/Argentina/Buenos_Aires", "Asia/Kolkata"]) {
      expect(parseWorkflowDefinition({ ...base, timezone: zone }).timezone).toBe(zone);
      expect(isTimeZone(zone)).toBe(true);
    }
    expect(parseWorkflowDefinition(base).timezone).toBeUndefined();
  });

  it("rejects anything else with a 400 naming the field", () => {
    for (const zone of ["Mars/Olympus", "+02:00", "", "CEST", 2]) {
      let err: unknown;
      try {
        parseWorkflowDefinition({ ...base, timezone: zone });
      } catch (e) {
        err = e;
      }
      expect(err, String(zone)).toBeInstanceOf(RequestError);
      expect(statusOf((err as RequestError).code)).toBe(400);
      expect((err as RequestError).details[0]?.path).toBe("timezone");
    }
    expect(isTimeZone("+02:00")).toBe(false);
  });

  it("refuses the abbreviations Intl knows but reads otherwise, and names the zone meant", () => {
    // Intl (and so luxon) takes each of these, with a meaning nobody writing it expects.
    const meant: Record<string, string> = {
      BST: "'BST' is an abbreviation (Intl reads it as Asia/Dhaka); did you mean Europe/London?",
      IST: "'IST' is an abbreviation (Intl reads it as Asia/Calcutta); did you mean Asia/Kolkata (India) or Europe/Dublin (Ireland)?",
      EST: "'EST' is an abbreviation (Intl reads it as America/Panama); did you mean America/New_York (America/Panama if the zone keeps no daylight saving time)?",
      PST: "'PST' is an abbreviation; did you mean America/Los_Angeles?",
      CST: "'CST' is an abbreviation; did you mean America/Chicago (or Asia/Shanghai for China Standard Time)?",
      CET: "'CET' is an abbreviation (Intl reads it as Europe/Brussels); did you mean Europe/Paris (or another city of the zone: Europe/Berlin, Europe/Madrid, …)?",
      EDT: "'EDT' is an abbreviation; did you mean America/New_York?",
      Japan: "'Japan' is a legacy alias; did you mean Asia/Tokyo?",
      utc: "did you mean UTC?",
    };
    for (const [zone, hint] of Object.entries(meant)) {
      expect(isTimeZone(zone), zone).toBe(false);
      expect(timeZoneProblem(zone)).toBe(
        `must be an IANA time zone name such as Europe/Paris or UTC: ${hint}`,
      );
      expect(() => parseWorkflowDefinition({ ...base, timezone: zone })).toThrow(
        expect.objectContaining({
          details: [{ path: "timezone", message: timeZoneProblem(zone) }],
        }),
      );
    }
    for (const zone of ["UTC", "GMT", "Etc/UTC", "Etc/GMT+5", "US/Eastern", "Asia/Calcutta"]) {
      expect(timeZoneProblem(zone), zone).toBeUndefined();
    }
    expect(timeZoneProblem("Mars/Olympus")).toBe(
      "must be an IANA time zone name such as Europe/Paris or UTC",
    );
    // Schedules and backfills (checkTiming) say the same.
    expect(checkTiming({ cron: "0 0 * * *", timezone: "BST" })).toEqual([
      { path: "timezone", message: `unknown time zone 'BST': ${meant.BST}` },
    ]);
    expect(checkTiming({ rate: "1 hour", timezone: "EST" })[0]?.path).toBe("timezone");
    // A zone stored before the rule still computes.
    expect(zonedBase(0, "EST").toISO()).toBe("1969-12-31T19:00:00.000-05:00");
  });
});
