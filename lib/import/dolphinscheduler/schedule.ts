/**
 * A DolphinScheduler schedule as the body of Shoal's `POST /v1/schedules`. DolphinScheduler's
 * crontab is Quartz (`sec min hour day-of-month month day-of-week [year]`, `?` in one day field,
 * day of week 1 = Sunday … 7 = Saturday; parsed with cron-utils `CronType.QUARTZ`), evaluated in
 * `timezoneId` (`QuartzCornTriggerBuilder`); `startTime`/`endTime` are `yyyy-MM-dd HH:mm:ss` in
 * the DolphinScheduler server's zone. Shoal's cron is cron-parser's: 5 fields, or 6 with seconds
 * first, day of week 0 = Sunday … 6 = Saturday. The execution type of the workflow becomes the
 * schedule's overlap policy (the same four values); `warningType` and `warningGroupId` its
 * `alerts` (alerts.ts).
 */
import { DateTime } from "luxon";
import { OVERLAP_POLICIES } from "../../core/fire-decisions.js";
import { FAILURE_STRATEGIES } from "../../core/model.js";
import { checkTiming } from "../../core/schedule-check.js";
import { isTimeZone } from "../../core/time-zones.js";
import { scheduleAlerts } from "./alerts.js";
import type { DsSchedule } from "./export-format.js";
import { workerGroupName } from "./names.js";
import type { NoteBook } from "./notes.js";
import { priorityOf } from "./task-common.js";

/** A converted Quartz expression: Shoal's cron, and the years it was limited to, if any. */
export interface ConvertedCron {
  cron: string;
  /** The Quartz year field, when it limited the years (`2026`, `2026-2028`). */
  years?: { from: number; to: number };
}

/** Quartz day-of-week numbers (1 = SUN … 7 = SAT) in `field` as cron-parser's (0 … 6). */
function dayOfWeek(field: string): string {
  if (field === "?" || field === "*") return "*";
  if (field === "L") return "6";
  return field
    .split(",")
    .map((part) => {
      const [range, step] = part.split("/");
      // Numbers of the range (`2-6`, `6#3`, `6L`) move down by one; the step does not.
      const moved = (range as string).replace(/^(\d+)|(?<=-)(\d+)/g, (d) => String(Number(d) - 1));
      return step === undefined ? moved : `${moved}/${step}`;
    })
    .join(",");
}

/**
 * Shoal's cron for a Quartz expression, or the reason it has none (as one sentence).
 * Seconds are kept as a sixth field unless they are `0`; a year field other than `*` becomes a
 * range of years (limits of the schedule's start and end).
 */
export function quartzToCron(quartz: string): ConvertedCron | { problem: string } {
  const f = quartz.trim().split(/\s+/);
  if (f.length !== 6 && f.length !== 7) {
    return { problem: `'${quartz}' is not a Quartz cron of 6 or 7 fields` };
  }
  const [sec, min, hour, dom, month, dow, year] = f as [
    string,
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  const out: ConvertedCron = {
    cron: [
      ...(sec === "0" ? [] : [sec]),
      min,
      hour,
      dom === "?" ? "*" : dom,
      month,
      dayOfWeek(dow),
    ].join(" "),
  };
  if (year !== undefined && year !== "*" && year !== "?") {
    const m = /^(\d{4})(?:-(\d{4}))?$/.exec(year);
    if (!m) return { problem: `its year field '${year}' is not one year or a range of years` };
    out.years = { from: Number(m[1]), to: Number(m[2] ?? m[1]) };
  }
  return out;
}

/**
 * An instant (ISO-8601 UTC) from DolphinScheduler's `yyyy-MM-dd HH:mm:ss` in `zone`, or
 * undefined when the text is not one.
 */
export function dsTime(text: string, zone: string): string | undefined {
  if (text.trim() === "") return undefined;
  const dt = DateTime.fromFormat(text.trim(), "yyyy-MM-dd HH:mm:ss", { zone });
  return dt.isValid ? (dt.toUTC().toISO() ?? undefined) : undefined;
}

/** Options of {@link convertSchedule}. */
export interface ScheduleOptions {
  /** Zone of the DolphinScheduler server, in which start and end times were written. */
  serverTimezone?: string;
  /** A task's timeout alerts its alert group (alerts.ts timeoutAlertFails): add that rule. */
  taskTimeoutAlerts?: boolean;
}

/**
 * The schedule body for workflow `workflow`, or undefined (with a note) when the cron cannot be
 * converted or can never fire. The state is the export's (DolphinScheduler exports every
 * schedule OFFLINE).
 */
export function convertSchedule(
  s: DsSchedule,
  workflow: string,
  executionType: string,
  notes: NoteBook,
  opts: ScheduleOptions = {},
): Record<string, unknown> | undefined {
  const cron = quartzToCron(s.crontab);
  if ("problem" in cron) {
    notes.add(
      "not-converted",
      `schedule not converted: the crontab ${cron.problem}; create it with \`shoal schedule create ${workflow} --cron …\``,
    );
    return undefined;
  }
  const body: Record<string, unknown> = { workflow, cron: cron.cron };
  let zone = "UTC";
  if (s.timezoneId !== "") {
    if (isTimeZone(s.timezoneId)) {
      body.timezone = s.timezoneId;
      zone = s.timezoneId;
    } else
      notes.add(
        "approximated",
        `schedule: time zone '${s.timezoneId}' is not an IANA zone name Shoal accepts: the schedule uses the workflow's zone, else UTC`,
      );
  }
  const serverZone = opts.serverTimezone ?? zone;
  const start = dsTime(s.startTime, serverZone);
  const end = dsTime(s.endTime, serverZone);
  let startMs = start ? Date.parse(start) : undefined;
  let endMs = end ? Date.parse(end) : undefined;
  if (cron.years) {
    const from = DateTime.fromObject({ year: cron.years.from }, { zone }).toMillis();
    const to = DateTime.fromObject({ year: cron.years.to + 1 }, { zone }).toMillis() - 1000;
    startMs = Math.max(startMs ?? from, from);
    endMs = Math.min(endMs ?? to, to);
    notes.add(
      "approximated",
      `schedule: the Quartz year field (${cron.years.from}–${cron.years.to}) becomes the schedule's start and end`,
    );
  }
  if (startMs !== undefined) body.startTime = new Date(startMs).toISOString();
  if (endMs !== undefined) body.endTime = new Date(endMs).toISOString();
  const priority = priorityOf(s.priority);
  if (priority) body.priority = priority;
  if ((FAILURE_STRATEGIES as readonly string[]).includes(s.failureStrategy))
    body.failureStrategy = s.failureStrategy;
  if (s.workerGroup !== "default" && s.workerGroup !== "")
    body.workerGroup = workerGroupName(s.workerGroup);
  if (
    (OVERLAP_POLICIES as readonly string[]).includes(executionType) &&
    executionType !== "PARALLEL"
  ) {
    body.overlapPolicy = executionType;
  }
  body.state = s.releaseState === "ONLINE" ? "ONLINE" : "OFFLINE";
  const alerts = scheduleAlerts(s, notes, opts.taskTimeoutAlerts === true);
  if (alerts.length > 0) body.alerts = alerts;
  if (s.tenantCode !== "" && s.tenantCode !== "default") {
    notes.add(
      "not-converted",
      `schedule tenant '${s.tenantCode}': Shoal runs tasks as the worker's user`,
    );
  }
  if (s.environmentCode !== "-1" && s.environmentCode !== "" && s.environmentCode !== "0") {
    notes.add(
      "not-converted",
      `schedule environment ${s.environmentCode}: Shoal has no environments`,
    );
  }
  const problems = checkTiming({
    cron: cron.cron,
    timezone: zone,
    ...(startMs !== undefined ? { startTime: startMs } : {}),
    ...(endMs !== undefined ? { endTime: endMs } : {}),
  });
  if (problems.length > 0) {
    const why = problems.map((p) => `${p.path}: ${p.message}`).join("; ");
    notes.add(
      "not-converted",
      `schedule not converted: Quartz '${s.crontab}' as '${cron.cron}': ${why}`,
    );
    return undefined;
  }
  return body;
}
