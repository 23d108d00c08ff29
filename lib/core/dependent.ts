/**
 * The DEPENDENT logic task: it waits until instances of other workflows for the same date/hour
 * cycle have succeeded (DolphinScheduler's dependent node, docs "Task > Dependent").
 *
 * Sources: `DependentUtils.getDateIntervalList`, `DependentDateUtils` and
 * `DependentUtils.getDependResultForRelation` in dolphinscheduler-task-api, the master's
 * `DependentExecute`, and the UI's date list (`use-dependent.ts`). Pure: the base time and the
 * candidate instances are arguments; the dispatcher queries and schedules the re-checks.
 */
import { DateTime } from "luxon";

/** Granularity of a dependent item (DolphinScheduler's `cycle`). */
export const DEPENDENT_CYCLES = ["hour", "day", "week", "month"] as const;
export type DependentCycle = (typeof DEPENDENT_CYCLES)[number];

/** How a group combines its items, and the dependence its groups. */
export type DependentRelation = "AND" | "OR";

/** One thing to wait for: `workflow` (or its task `task`) in the period `dateValue` names. */
export interface DependentItem {
  workflow: string;
  /** A task code of `workflow`; absent: the workflow instance's own state counts. */
  task?: string;
  cycle: DependentCycle;
  /** One of {@link DEPENDENT_DATE_VALUES}[cycle]. */
  dateValue: string;
}

export interface DependentGroup {
  relation: DependentRelation;
  items: DependentItem[];
}

/** A DEPENDENT task's condition: groups of items, AND/OR inside each group and across groups. */
export interface Dependence {
  relation: DependentRelation;
  groups: DependentGroup[];
}

/** DolphinScheduler's `DependResult` (FAILED is called FAILURE here, like the task state). */
export type DependResult = "SUCCESS" | "FAILURE" | "WAITING";

/**
 * The date values DolphinScheduler offers per cycle, in its UI's order (`use-dependent.ts`).
 * The backend's `getDateIntervalList` also knows `thisMonthEnd`, which the UI does not offer
 * (for a daily run it names a day still to come); Shoal leaves it out too.
 */
export const DEPENDENT_DATE_VALUES: Readonly<Record<DependentCycle, readonly string[]>> = {
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
};

/** A half-open period [startMs, endMs), epoch milliseconds. */
export interface DateInterval {
  startMs: number;
  endMs: number;
}

/** Whether `dateValue` is one DolphinScheduler offers for `cycle`. */
export function isDependentDateValue(cycle: DependentCycle, dateValue: string): boolean {
  return DEPENDENT_DATE_VALUES[cycle].includes(dateValue);
}

const LAST_WEEKDAY: Record<string, number> = {
  lastMonday: 1,
  lastTuesday: 2,
  lastWednesday: 3,
  lastThursday: 4,
  lastFriday: 5,
  lastSaturday: 6,
  lastSunday: 7,
};

/**
 * The periods `dateValue` names relative to the business time `baseMs` (the depending
 * instance's schedule time, else its start time), as DolphinScheduler's `DependentDateUtils`
 * computes them, in the IANA time zone `zone` (default UTC; DolphinScheduler uses the server's).
 * One interval per hour or per day, oldest first: each must have a successful instance.
 *
 * - `currentHour`: the hour of base. `last1Hour`/`last2Hours`/`last3Hours`: the 1/2/3 whole hours
 *   before it.
 * - `last24Hours`: the 24 hours that end at 01:00 of base's day, whatever base's hour
 *   (DolphinScheduler's `getSpecialLastDayInterval`: "yesterday 1:00 - today 1:00").
 * - `today`: base's day. `last1Days`/`last2Days`/`last3Days`/`last7Days`: the 1/2/3/7 whole days
 *   before it.
 * - `thisWeek`: Monday of base's week up to base's day (weeks start on Monday).
 *   `lastWeek`: Monday to Sunday of the week before. `lastMonday` … `lastSunday`: that day of it.
 * - `thisMonth`: the 1st of base's month up to base's day. `thisMonthBegin`: the 1st.
 *   `lastMonth`: every day of the month before; `lastMonthBegin`/`lastMonthEnd`: its first/last day.
 *
 * Days are calendar days in `zone` (23 or 25 hours across a DST change).
 * @throws Error for an unknown `dateValue`, an unknown zone or a base time that is not a date.
 */
export function dateIntervals(dateValue: string, baseMs: number, zone = "UTC"): DateInterval[] {
  const base = DateTime.fromMillis(baseMs, { zone });
  if (!base.isValid) {
    throw new Error(`cannot place ${baseMs} in time zone '${zone}': ${base.invalidExplanation}`);
  }
  const hour = base.startOf("hour");
  const day = base.startOf("day");
  const monday = base.startOf("week"); // ISO week: Monday
  const month = base.startOf("month");
  const lastMonth = month.minus({ months: 1 });

  switch (dateValue) {
    case "currentHour":
      return hours(hour, 1);
    case "last1Hour":
      return hours(hour.minus({ hours: 1 }), 1);
    case "last2Hours":
      return hours(hour.minus({ hours: 2 }), 2);
    case "last3Hours":
      return hours(hour.minus({ hours: 3 }), 3);
    case "last24Hours":
      return hours(day.plus({ hours: 1 }).minus({ hours: 24 }), 24);
    case "today":
      return days(day, 1);
    case "last1Days":
      return days(day.minus({ days: 1 }), 1);
    case "last2Days":
      return days(day.minus({ days: 2 }), 2);
    case "last3Days":
      return days(day.minus({ days: 3 }), 3);
    case "last7Days":
      return days(day.minus({ days: 7 }), 7);
    case "thisWeek":
      return days(monday, base.weekday);
    case "lastWeek":
      return days(monday.minus({ weeks: 1 }), 7);
    case "thisMonth":
      return days(month, base.day);
    case "thisMonthBegin":
      return days(month, 1);
    case "lastMonth":
      return days(lastMonth, lastMonth.daysInMonth ?? 0);
    case "lastMonthBegin":
      return days(lastMonth, 1);
    case "lastMonthEnd":
      return days(month.minus({ days: 1 }), 1);
  }
  const weekday = LAST_WEEKDAY[dateValue];
  if (weekday !== undefined) return days(monday.minus({ weeks: 1 }).plus({ days: weekday - 1 }), 1);
  throw new Error(`unknown dependent date value '${dateValue}'`);
}

/** `count` consecutive hours from `start` (elapsed hours, so a DST change never skips one). */
function hours(start: DateTime, count: number): DateInterval[] {
  return Array.from({ length: count }, (_, i) => {
    const from = start.plus({ hours: i });
    return { startMs: from.toMillis(), endMs: from.plus({ hours: 1 }).toMillis() };
  });
}

/** `count` consecutive calendar days from the day `start` begins. */
function days(start: DateTime, count: number): DateInterval[] {
  return Array.from({ length: count }, (_, i) => {
    const from = start.plus({ days: i });
    return { startMs: from.toMillis(), endMs: from.plus({ days: 1 }).toMillis() };
  });
}

/** What {@link itemResult} needs to know about an instance of the item's workflow. */
export interface DependentCandidate {
  /** Instance state (SUBMITTED … FAILURE, docs/api.md "States"). */
  state: string;
  /** Epoch ms the schedule fired for (scheduled and backfill runs). */
  scheduleTime?: number;
  /** Epoch ms the instance started running. */
  startedAt?: number;
  /** Epoch ms the instance was created. */
  createdAt: number;
  /** State of the latest attempt of `item.task` in this instance; absent when it has none. */
  taskState?: string;
  /**
   * True when that attempt failed and a retry is scheduled: DolphinScheduler then waits
   * (`retryTimes < maxRetryTimes` in a running instance) instead of failing the dependence.
   */
  taskRetryPending?: boolean;
}

/** The time that places an instance in a cycle: schedule time, else start time, else creation. */
export function businessTime(candidate: DependentCandidate): number {
  return candidate.scheduleTime ?? candidate.startedAt ?? candidate.createdAt;
}

/**
 * The instance that stands for `interval`: the one whose business time lies in it, the latest
 * when several (the later-created on a tie), undefined when none does.
 */
export function candidateIn<C extends DependentCandidate>(
  interval: DateInterval,
  candidates: readonly C[],
): C | undefined {
  let best: C | undefined;
  for (const c of candidates) {
    const t = businessTime(c);
    if (t < interval.startMs || t >= interval.endMs) continue;
    if (!best) {
      best = c;
      continue;
    }
    const bt = businessTime(best);
    if (t > bt || (t === bt && c.createdAt > best.createdAt)) best = c;
  }
  return best;
}

/** Instance states that never change again (model.ts `isFinalInstanceState`). */
const FINAL_INSTANCE = new Set(["STOPPED", "SUCCESS", "FAILURE"]);

/**
 * Result of one dependent item over its `intervals` (from {@link dateIntervals}), given the
 * instances of `item.workflow` near them. Per interval, the instance {@link candidateIn} picks:
 * - none: WAITING. DolphinScheduler 3.x also waits (1.x failed at once); it re-checks every
 *   check interval (10 s by default) with no limit but the task's own timeout, and by default
 *   ("failure policy: Failure") fails the task only on a FAILURE result. Shoal likewise waits
 *   until the DEPENDENT task's timeout.
 * - without `item.task`: instance SUCCESS → SUCCESS; FAILURE or STOPPED → FAILURE; any other
 *   state → WAITING.
 * - with `item.task`, its latest attempt decides whatever the instance's state, as in
 *   DolphinScheduler: SUCCESS or FORCED_SUCCESS → SUCCESS; FAILURE or KILLED → FAILURE (WAITING
 *   while `taskRetryPending` in an instance that is not final); anything else, or no attempt →
 *   WAITING, or FAILURE once the instance is final (the task will never run in it).
 *
 * Across intervals: any FAILURE → FAILURE, all SUCCESS → SUCCESS, else WAITING (DolphinScheduler
 * returns the first interval's result that is not SUCCESS, so it may wait on an early interval
 * while a later one has already failed). No intervals → FAILURE, as DolphinScheduler's loop
 * starts from FAILED.
 */
export function itemResult(
  item: DependentItem,
  intervals: readonly DateInterval[],
  candidates: readonly DependentCandidate[],
): DependResult {
  if (intervals.length === 0) return "FAILURE";
  return combine(
    "AND",
    intervals.map((interval) => {
      const instance = candidateIn(interval, candidates);
      if (!instance) return "WAITING";
      return item.task === undefined ? instanceResult(instance) : taskResult(instance);
    }),
  );
}

function instanceResult(instance: DependentCandidate): DependResult {
  if (instance.state === "SUCCESS") return "SUCCESS";
  if (instance.state === "FAILURE" || instance.state === "STOPPED") return "FAILURE";
  return "WAITING";
}

function taskResult(instance: DependentCandidate): DependResult {
  const final = FINAL_INSTANCE.has(instance.state);
  switch (instance.taskState) {
    case "SUCCESS":
    case "FORCED_SUCCESS":
      return "SUCCESS";
    case "FAILURE":
    case "KILLED":
      return instance.taskRetryPending && !final ? "WAITING" : "FAILURE";
    default:
      return final ? "FAILURE" : "WAITING";
  }
}

/**
 * Combines results under a relation (DolphinScheduler's
 * `DependentUtils.getDependResultForRelation`). AND: any FAILURE → FAILURE, all SUCCESS (or none
 * at all) → SUCCESS, else WAITING. OR: any SUCCESS → SUCCESS, all FAILURE (or none at all) →
 * FAILURE, else WAITING.
 */
export function combine(
  relation: DependentRelation,
  results: readonly DependResult[],
): DependResult {
  if (relation === "AND") {
    if (results.includes("FAILURE")) return "FAILURE";
    return results.includes("WAITING") ? "WAITING" : "SUCCESS";
  }
  if (results.includes("SUCCESS")) return "SUCCESS";
  return results.includes("WAITING") ? "WAITING" : "FAILURE";
}

/**
 * The whole dependence: each group combines its items' results under its relation, then the
 * groups combine under `dep.relation`. `itemResults` is called once for every item, in order.
 */
export function evaluateDependence(
  dep: Dependence,
  itemResults: (item: DependentItem) => DependResult,
): DependResult {
  return combine(
    dep.relation,
    dep.groups.map((group) => combine(group.relation, group.items.map(itemResults))),
  );
}

/**
 * The span of business time every item's intervals cover: the earliest start and the latest end,
 * epoch ms (half-open), for bounding the query of candidate instances. A dependence without items
 * gives the empty span [baseMs, baseMs).
 * @throws Error as {@link dateIntervals} does.
 */
export function businessLookback(
  dep: Dependence,
  baseMs: number,
  zone = "UTC",
): { fromMs: number; toMs: number } {
  let fromMs = Number.POSITIVE_INFINITY;
  let toMs = Number.NEGATIVE_INFINITY;
  for (const group of dep.groups) {
    for (const item of group.items) {
      for (const interval of dateIntervals(item.dateValue, baseMs, zone)) {
        fromMs = Math.min(fromMs, interval.startMs);
        toMs = Math.max(toMs, interval.endMs);
      }
    }
  }
  return fromMs <= toMs ? { fromMs, toMs } : { fromMs: baseMs, toMs: baseMs };
}
