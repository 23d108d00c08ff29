/**
 * The check of a schedule timing (schedule-time.ts) as the API and the CLI run it: every syntax
 * problem with its field as `path`, then whether a valid timing can fire at all.
 *
 * Pure: no clock reads.
 */
import type { ErrorDetail } from "./errors.js";
import { cronSyntaxProblem, isInstant, parseRate } from "./schedule-syntax.js";
import { fireTimesBetween, nextFireTimes, type ScheduleTiming } from "./schedule-time.js";
import { isTimeZone, zoneSuggestion } from "./time-zones.js";

/**
 * Problems with a timing, one per problem, with the field as `path` (`cron`, `rate`, `at`,
 * `timezone`, `startTime`, `endTime`, `anchor`) and a one-sentence message; empty when valid.
 * Besides syntax (field count, field values, rate form, zone name, instants as safe integers of
 * epoch ms, endTime after startTime) it reports a timing that can never fire: a cron no date
 * matches (`0 0 30 2 *`), or no fire between startTime and endTime.
 */
export function checkTiming(t: ScheduleTiming): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const kinds = (["cron", "rate", "at"] as const).filter((k) => t[k] !== undefined);
  if (kinds.length === 0) {
    details.push({ path: "cron", message: "exactly one of cron, rate or at is required" });
  } else if (kinds.length > 1) {
    details.push({
      path: kinds[1] as string,
      message: `exactly one of cron, rate or at may be given (got ${kinds.join(", ")})`,
    });
  }
  if (t.cron !== undefined) {
    const problem = cronSyntaxProblem(t.cron);
    if (problem) details.push({ path: "cron", message: problem });
  }
  if (t.rate !== undefined) {
    const rate = parseRate(t.rate);
    if ("problem" in rate) details.push({ path: "rate", message: rate.problem });
  }
  if (t.at !== undefined && !isInstant(t.at)) {
    details.push({ path: "at", message: "at is not a valid instant" });
  }
  // Stricter than what compile() accepts: stored zones keep working (time-params isTimeZone).
  const zone = t.timezone ?? "UTC";
  if (typeof zone !== "string" || !isTimeZone(zone)) {
    const hint = typeof zone === "string" ? zoneSuggestion(zone) : undefined;
    const message = `unknown time zone '${String(zone)}'${hint ? `: ${hint}` : ""}`;
    details.push({ path: "timezone", message });
  }
  for (const key of ["startTime", "endTime", "anchor"] as const) {
    if (t[key] !== undefined && !isInstant(t[key])) {
      details.push({ path: key, message: `${key} is not a valid instant` });
    }
  }
  const { startTime, endTime } = t;
  if (isInstant(startTime) && isInstant(endTime) && endTime <= startTime) {
    details.push({ path: "endTime", message: "endTime must be after startTime" });
  }
  if (details.length === 0) details.push(...neverFires(t));
  return details;
}

/** A valid timing's "never fires" problem, if any (at most one detail). */
function neverFires(t: ScheduleTiming): ErrorDetail[] {
  const { startTime, endTime } = t;
  if (t.at !== undefined) {
    if (startTime !== undefined && t.at < startTime) {
      return [{ path: "at", message: "at is before startTime, so it never fires" }];
    }
    if (endTime !== undefined && t.at > endTime) {
      return [{ path: "at", message: "at is after endTime, so it never fires" }];
    }
    return [];
  }
  const path = t.cron !== undefined ? "cron" : "rate";
  if (t.cron !== undefined) {
    // Any date a cron matches recurs (the calendar repeats every 400 years), so one fire
    // after 1970 on an unbounded timing shows it can fire at all.
    const unbounded: ScheduleTiming = { cron: t.cron, timezone: t.timezone };
    if (nextFireTimes(unbounded, 0, 1).length === 0) {
      return [{ path, message: "cron never fires: no date matches it" }];
    }
  }
  // With one bound open, a cron or rate fires forever on that side; with both, check.
  if (startTime !== undefined && endTime !== undefined) {
    if (fireTimesBetween(t, startTime - 1, endTime, 1).length === 0) {
      return [{ path, message: `${path} never fires between startTime and endTime` }];
    }
  }
  return [];
}
