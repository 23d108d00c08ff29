/**
 * Schedule timing: when a schedule's nominal fire times fall (DolphinScheduler's timing, which
 * runs on Quartz cron triggers; here cron-parser syntax), checked and computed without a clock.
 *
 * A timing is exactly one of:
 * - `cron`: 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first, with
 *   cron-parser v5 semantics (lists, ranges, steps, names, `L`, `#`, and its day rule: when both
 *   day-of-month and day-of-week are restricted — written as anything but `*` or `?` — a day
 *   matching either fires); evaluated on the wall clock of `timezone`;
 * - `rate`: `"N seconds|minutes|hours|days"` (N ≥ 1; the singular unit only when N = 1), elapsed
 *   time anchored at `anchor`, blind to time zones and DST (as EventBridge's `rate()`);
 * - `at`: one instant.
 *
 * Every fire lies in [startTime, endTime] when those are set.
 *
 * DST rule (cron only). A wall-clock time the cron names can be missing or repeated in the zone:
 * - skipped (spring forward, e.g. 02:30 on a day clocks jump 02:00 → 03:00): it fires once, at
 *   the first valid instant after it — the transition itself (03:00 local). Several skipped
 *   times (02:00, 02:30) and the transition's own wall time (03:00) make one fire;
 * - repeated (fall back, 01:30 happens twice): it fires once, at the first occurrence.
 * cron-parser 5.10.5 iterating in the zone itself does neither (checked): a skipped 02:30 fires
 * at 03:30 in New York and Berlin, Lord Howe's 02:15 inside its 30-minute gap does not fire at
 * all, and hourly or half-hourly crons fire twice in the repeated hour (a daily 01:30 once). So
 * cron-parser iterates the wall clock (in UTC, which has no DST) and each wall time is mapped to
 * an instant here, with luxon's zone offsets.
 *
 * Pure: no clock reads, times are epoch milliseconds passed in.
 */

import { type CronExpression, CronExpressionParser } from "cron-parser";
import { IANAZone } from "luxon";
import {
  cronShapeProblem,
  cronSyntaxProblem,
  HASH_SEED,
  isInstant,
  parseRate,
} from "./schedule-syntax.js";

/** How a schedule is timed (the API's schedule fields, with instants as epoch ms). */
export interface ScheduleTiming {
  /** 5 fields, or 6 with seconds first (cron-parser semantics), on `timezone`'s wall clock. */
  cron?: string;
  /** `"N seconds|minutes|hours|days"`, N ≥ 1 (`"1 minute"` or `"1 minutes"`; `"5 minutes"`). */
  rate?: string;
  /** One fire at this instant, epoch ms. */
  at?: number;
  /** IANA zone name for `cron` (`"UTC"` when undefined). `rate` and `at` ignore it. */
  timezone: string;
  /** First instant a fire may have, epoch ms (inclusive). */
  startTime?: number;
  /** Last instant a fire may have, epoch ms (inclusive). */
  endTime?: number;
  /** rate: fires at anchor + k·period for every integer k (no drift); default startTime ?? 0. */
  anchor?: number;
}

const _SECOND = 1000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** Wall-clock iterations without a fire before the cron iterator gives up (a safety net). */
const MAX_BARREN_STEPS = 100_000;

/** A timing reduced to what iteration needs. */
type Compiled =
  | { kind: "cron"; cron: CronExpression; zone: IANAZone }
  | { kind: "rate"; periodMs: number; anchor: number }
  | { kind: "at"; at: number };

/** Zone names that passed isIanaZone (bounded; starts over when full). */
const knownZones = new Set<string>();

/** Whether `name` is an IANA zone name luxon (Intl) knows; offset names like "+05:00" are not. */
function isIanaZone(name: unknown): name is string {
  if (typeof name !== "string" || !/^[A-Za-z]/.test(name)) return false;
  if (knownZones.has(name)) return true;
  // luxon asks Intl with a new DateTimeFormat (tens of µs): remember the names that passed.
  if (!IANAZone.isValidZone(name)) return false;
  if (knownZones.size >= 1000) knownZones.clear();
  knownZones.add(name);
  return true;
}

/**
 * The timing reduced for iteration.
 * @throws RangeError naming the first problem when the timing is not valid (see checkTiming).
 */
function compile(t: ScheduleTiming): Compiled {
  const given = [t.cron, t.rate, t.at].filter((v) => v !== undefined).length;
  if (given !== 1) throw new RangeError("exactly one of cron, rate or at must be given");
  for (const key of ["startTime", "endTime"] as const) {
    if (t[key] !== undefined && !isInstant(t[key])) {
      throw new RangeError(`${key} is not a valid instant`);
    }
  }
  if (t.cron !== undefined) {
    const zoneName = t.timezone ?? "UTC";
    if (!isIanaZone(zoneName)) throw new RangeError(`unknown time zone '${zoneName}'`);
    const shape = cronShapeProblem(t.cron);
    if (shape) throw new RangeError(shape);
    try {
      // Iteration runs over the wall clock read as UTC (see cronFires); it resets the date.
      const cron = CronExpressionParser.parse(t.cron.trim(), {
        tz: "UTC",
        currentDate: 0,
        hashSeed: HASH_SEED,
      });
      return { kind: "cron", cron, zone: IANAZone.create(zoneName) };
    } catch (e) {
      throw new RangeError(cronSyntaxProblem(t.cron) ?? (e as Error).message);
    }
  }
  if (t.rate !== undefined) {
    const rate = parseRate(t.rate);
    if ("problem" in rate) throw new RangeError(rate.problem);
    const anchor = t.anchor ?? t.startTime ?? 0;
    if (!isInstant(anchor)) throw new RangeError("anchor is not a valid instant");
    return { kind: "rate", periodMs: rate.periodMs, anchor };
  }
  if (!isInstant(t.at)) throw new RangeError("at is not a valid instant");
  return { kind: "at", at: t.at };
}

/** Hours remembered per zone as having one offset throughout (null: it changes within). */
const steadyHours = new Map<string, Map<number, number | null>>();
/** Bound of each zone's memo; it starts over when full. */
const STEADY_HOURS_MAX = 50_000;

/** luxon's offset of the zone at `instant`, ms (luxon gives minutes, fractional for LMT). */
function exactOffsetMs(zone: IANAZone, instant: number): number {
  return Math.round(zone.offset(instant) * 60_000);
}

/**
 * The zone's UTC offset at `instant`, ms. Each luxon lookup formats a date through Intl (µs), so
 * hours with one offset at both ends are remembered: offsets change at most once an hour.
 */
function offsetMs(zone: IANAZone, instant: number): number {
  let memo = steadyHours.get(zone.name);
  if (!memo) {
    memo = new Map();
    steadyHours.set(zone.name, memo);
  }
  const hour = Math.floor(instant / HOUR);
  let steady = memo.get(hour);
  if (steady === undefined) {
    const start = exactOffsetMs(zone, hour * HOUR);
    steady = start === exactOffsetMs(zone, (hour + 1) * HOUR - 1) ? start : null;
    if (memo.size >= STEADY_HOURS_MAX) memo.clear();
    memo.set(hour, steady);
  }
  return steady ?? exactOffsetMs(zone, instant);
}

/** The wall-clock time of `instant` in the zone, as epoch ms of that wall time read as UTC. */
function wallOf(zone: IANAZone, instant: number): number {
  return instant + offsetMs(zone, instant);
}

/**
 * The instant a wall-clock time fires at (`wall` is that wall time read as UTC, ms): itself when
 * it occurs once, its first occurrence when repeated, and when skipped the first valid instant
 * after it — the transition, the first instant whose wall time is not before `wall`.
 */
function resolveWall(zone: IANAZone, wall: number): number {
  // Offsets a day either side: the instants with this wall time lie within [wall − 14 h,
  // wall + 12 h] (offsets span UTC−12…UTC+14), so with one transition nearby these are the
  // only candidates; the earlier instant that really has its offset is the first occurrence.
  const before = offsetMs(zone, wall - DAY);
  const after = offsetMs(zone, wall + DAY);
  const early = wall - Math.max(before, after);
  const late = wall - Math.min(before, after);
  const earlyOk = offsetMs(zone, early) === Math.max(before, after);
  if (earlyOk) return early;
  if (before !== after) {
    if (offsetMs(zone, late) === Math.min(before, after)) return late;
    // Neither: skipped by a forward shift (before < after) — fires at the transition.
    if (before < after) return firstWallReaching(zone, wall, early, late);
  }
  // Several transitions within a day of it (rare, historical): every offset in force around
  // it is a candidate; if none holds, it is skipped and fires where the wall clock reaches it.
  const offsets = new Set<number>();
  for (let h = -16; h <= 16; h++) offsets.add(offsetMs(zone, wall + h * HOUR));
  let first: number | undefined;
  for (const off of offsets) {
    const instant = wall - off;
    if (offsetMs(zone, instant) === off && (first === undefined || instant < first)) {
      first = instant;
    }
  }
  if (first !== undefined) return first;
  let lo = wall - 16 * HOUR;
  while (wallOf(zone, lo + HOUR) < wall) lo += HOUR;
  return firstWallReaching(zone, wall, lo, lo + HOUR);
}

/**
 * The first instant in (lo, hi] whose wall time is not before `wall`, by bisection; the wall
 * clock must be before `wall` at `lo`, reach it by `hi`, and not step back in between.
 */
function firstWallReaching(zone: IANAZone, wall: number, lo: number, hi: number): number {
  let l = lo;
  let h = hi;
  while (h - l > 1) {
    const mid = Math.floor((l + h) / 2);
    if (wallOf(zone, mid) < wall) l = mid;
    else h = mid;
  }
  return h;
}

/**
 * Where wall-clock iteration starts so that every wall time after it fires strictly after
 * `afterMs`: the wall time of `afterMs`, or — when `afterMs` is in the second pass of a repeated
 * period — the end of that period, since its wall times fired in the first pass.
 */
function startWall(zone: IANAZone, afterMs: number): number {
  const wall = wallOf(zone, afterMs);
  const firstPass = resolveWall(zone, wall);
  if (firstPass >= afterMs) return wall;
  // Bisect for the fall-back transition between the two passes.
  const firstOffset = offsetMs(zone, firstPass);
  let lo = firstPass;
  let hi = afterMs;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetMs(zone, mid) === firstOffset) lo = mid;
    else hi = mid;
  }
  // The repeated wall times end where the first pass would have reached at the transition.
  return hi + firstOffset - 1;
}

/** Cron fires strictly after `afterMs` (an integer), ascending, per the DST rule. */
function* cronFires(
  c: { cron: CronExpression; zone: IANAZone },
  afterMs: number,
): Generator<number> {
  const iterator = c.cron;
  iterator.reset(new Date(startWall(c.zone, afterMs)));
  let last = afterMs;
  let barren = 0;
  while (barren < MAX_BARREN_STEPS) {
    let wall: number;
    try {
      wall = iterator.next().getTime();
    } catch {
      // cron-parser's loop limit (no match within its search) or the end of luxon's range.
      return;
    }
    const instant = resolveWall(c.zone, wall);
    if (instant > last) {
      barren = 0;
      last = instant;
      yield instant;
    } else barren++;
    // A skipped wall time: the rest of the gap, up to the transition's own wall time, maps to
    // the same instant; continue after it.
    const landed = wallOf(c.zone, instant);
    if (landed > wall) iterator.reset(new Date(landed));
  }
}

/** Fires of a compiled timing strictly after `afterMs` (an integer), ascending, unbounded. */
function* fires(c: Compiled, afterMs: number): Generator<number> {
  if (c.kind === "at") {
    if (c.at > afterMs) yield c.at;
    return;
  }
  if (c.kind === "cron") {
    yield* cronFires(c, afterMs);
    return;
  }
  // The first k with anchor + k·period > afterMs; the check covers rounding of the division.
  for (let k = Math.floor((afterMs - c.anchor) / c.periodMs) + 1; ; k++) {
    const at = c.anchor + k * c.periodMs;
    if (at > afterMs) yield at;
  }
}

/**
 * Nominal fire times of `t` in (fromMs, toMs], ascending, at most `limit` (the earliest ones).
 * @throws RangeError when the timing is invalid or fromMs is not finite.
 */
function collect(t: ScheduleTiming, fromMs: number, toMs: number, limit: number): number[] {
  const c = compile(t);
  if (!Number.isFinite(fromMs)) throw new RangeError(`afterMs must be finite (got ${fromMs})`);
  if (Number.isNaN(toMs)) throw new RangeError("toMs must be a number");
  const out: number[] = [];
  if (!(limit >= 1)) return out;
  const until = Math.min(toMs, t.endTime ?? Number.POSITIVE_INFINITY);
  if (limit === Number.POSITIVE_INFINITY && until === Number.POSITIVE_INFINITY) {
    throw new RangeError("an unbounded count needs an end (toMs or endTime)");
  }
  // Fires are whole ms: "after x" is "after floor(x)", and "≥ startTime" is "after startTime − 1".
  let after = Math.floor(fromMs);
  if (t.startTime !== undefined) after = Math.max(after, t.startTime - 1);
  for (const at of fires(c, after)) {
    if (at > until) break;
    out.push(at);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * The next `count` nominal fire times strictly after `afterMs` (epoch ms), ascending; fewer when
 * the timing ends (`at` gives its one instant, endTime cuts, a cron has no further match). None
 * is before startTime or after endTime. `rate` fires at anchor + k·period (no drift); `cron`
 * follows the DST rule in the module comment.
 * @throws RangeError when the timing is not valid (checkTiming lists why) or afterMs is not finite.
 */
export function nextFireTimes(t: ScheduleTiming, afterMs: number, count: number): number[] {
  return collect(t, afterMs, Number.POSITIVE_INFINITY, count);
}

/**
 * The nominal fire times in (fromMs, toMs] (epoch ms), ascending, at most `limit` — the earliest
 * ones, so `length === limit` means there may be more. Same rules as nextFireTimes.
 * @throws RangeError when the timing is not valid or fromMs is not finite.
 */
export function fireTimesBetween(
  t: ScheduleTiming,
  fromMs: number,
  toMs: number,
  limit: number,
): number[] {
  return collect(t, fromMs, toMs, limit);
}

/**
 * Days exceedsFireCount looks at, at most: a cron firing more than limit / 1000 times a day is
 * refused at once; a sparser one costs no more to list (a few µs a fire) than to count this way.
 */
const COUNTED_DAYS = 1000;

/**
 * Whether (fromMs, toMs] certainly holds more than `limit` nominal fire times of `t` (same rules
 * as fireTimesBetween), decided without listing them, so that a range far too large is refused
 * in milliseconds rather than after listing `limit + 1` times. `false` means "not known to": list
 * them. A `rate` is counted exactly, by arithmetic. A `cron` counts, day by day (at most
 * {@link COUNTED_DAYS} days), the whole days of the zone's wall clock inside the range whose offset does
 * not change and whose date the cron matches, each with all its fires per day (seconds × minutes
 * × hours): a lower bound. A cron with `L` or `#` in its day fields is not counted.
 * @throws RangeError when the timing is not valid.
 */
export function exceedsFireCount(
  t: ScheduleTiming,
  fromMs: number,
  toMs: number,
  limit: number,
): boolean {
  const c = compile(t);
  const after = Math.max(
    Math.floor(fromMs),
    t.startTime !== undefined ? t.startTime - 1 : -Infinity,
  );
  const until = Math.min(toMs, t.endTime ?? Number.POSITIVE_INFINITY);
  if (!(until > after)) return false;
  if (c.kind === "at") return limit < 1 && c.at > after && c.at <= until;
  if (until === Number.POSITIVE_INFINITY) return true;
  if (c.kind === "rate") {
    const count =
      Math.floor((until - c.anchor) / c.periodMs) - Math.floor((after - c.anchor) / c.periodMs);
    return count > limit;
  }
  const f = c.cron.fields;
  const perDay = f.second.values.length * f.minute.values.length * f.hour.values.length;
  const matchesDay = dayMatcher(f);
  if (!matchesDay) return false;
  const months = new Set(f.month.values as number[]);
  let count = 0;
  // Whole wall-clock days, from the first starting after `after`, while they end by `until`. One
  // offset lookup a day: a day whose offset at its last instant is the one at its start is whole
  // and steady (offsets change at most once a day), and the next day starts right after it.
  let day = Math.floor(wallOf(c.zone, after) / DAY) * DAY + DAY;
  let start = resolveWall(c.zone, day);
  let offset = exactOffsetMs(c.zone, start);
  for (let n = 0; n < COUNTED_DAYS && count <= limit; n++) {
    const end = start + DAY - 1;
    if (end > until) break;
    const endOffset = exactOffsetMs(c.zone, end);
    // Steady, inside the range, and starting at its wall midnight (not at a gap's end).
    if (endOffset === offset && start > after && start + offset === day) {
      const date = new Date(day);
      if (months.has(date.getUTCMonth() + 1) && matchesDay(date)) count += perDay;
    }
    day += DAY;
    start = day - endOffset;
    offset = exactOffsetMs(c.zone, start);
    if (offset !== endOffset) {
      start = resolveWall(c.zone, day);
      offset = exactOffsetMs(c.zone, start);
    }
  }
  return count > limit;
}

/**
 * Whether a date (its wall clock read as UTC) matches a cron's day fields, by cron-parser's rule
 * (both restricted: either matches); undefined when they use `L` or `#`.
 */
function dayMatcher(f: CronExpression["fields"]): ((date: Date) => boolean) | undefined {
  const dom = f.dayOfMonth;
  const dow = f.dayOfWeek;
  if (dom.hasLastChar || dow.hasLastChar || dow.nthDay > 0) return undefined;
  const doms = new Set(dom.values as number[]);
  // cron-parser allows 7 for Sunday besides 0.
  const dows = new Set((dow.values as number[]).map((d) => d % 7));
  const byDom = (d: Date) => doms.has(d.getUTCDate());
  const byDow = (d: Date) => dows.has(d.getUTCDay());
  if (dom.isWildcard && dow.isWildcard) return () => true;
  if (dow.isWildcard) return byDom;
  if (dom.isWildcard) return byDow;
  return (d) => byDom(d) || byDow(d);
}
