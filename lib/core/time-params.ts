/**
 * DolphinScheduler's built-in time parameters (docs/en/guide/parameter/built-in.md and
 * `TimePlaceholderUtils` in dolphinscheduler-task-api): `$[pattern]`, `$[pattern±N]` and the
 * date functions, evaluated against a base time (the instance's schedule time, or its start
 * time) in an IANA time zone. Pure: the base time is an argument, never a clock read.
 */

import { DateTime, IANAZone } from "luxon";
import { ShoalError } from "./errors.js";

/**
 * A parameter problem (bad time expression, bad zone): one sentence naming what is wrong. Not
 * retryable. Callers turn it into a task's failure or a rendering's `error`; the API never
 * answers it as such (it is not a `RequestError`). `cause`: the problem it rewords.
 */
export class ParamError extends ShoalError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
  }
}

/** Zone used when none is given. */
export const DEFAULT_ZONE = "UTC";

/**
 * Pattern fields accepted, as SimpleDateFormat letters and run lengths. One letter means "no
 * padding", two or more pad; `yy` is the two-digit year (Java semantics).
 */
const FIELD_RUNS: Record<string, readonly number[]> = {
  y: [2, 4],
  M: [1, 2],
  d: [1, 2],
  H: [1, 2],
  m: [1, 2],
  s: [1, 2],
  S: [3],
};

/** Unquoted literal characters besides non-ASCII text such as 年月日. */
const LITERALS = new Set(["-", ":", "/", " ", ".", "_", "T"]);

type PatternToken = { field: string; count: number } | { literal: string };

/** One day in minutes: offsets that are whole days move the calendar date, not the clock. */
const DAY_MINUTES = 24 * 60;
/** Java `int` range, which DolphinScheduler's offset arithmetic runs in. */
const INT_MAX = 2 ** 31 - 1;

const FUNCTIONS = new Set([
  "add_months",
  "this_day",
  "last_day",
  "year_week",
  "month_first_day",
  "month_last_day",
  "week_first_day",
  "week_last_day",
]);

function fail(expr: string, problem: string): never {
  throw new ParamError(`time expression $[${expr}] is not valid: ${problem}`);
}

/**
 * The DateTime of `baseMs` in `zone`; throws ParamError when the zone is not an IANA name.
 * Luxon would otherwise return an invalid DateTime that formats as "Invalid DateTime".
 */
export function zonedBase(baseMs: number, zone: string = DEFAULT_ZONE): DateTime {
  if (!IANAZone.isValidZone(zone)) {
    throw new ParamError(`time zone "${zone}" is not a valid IANA time zone name`);
  }
  if (!Number.isFinite(baseMs)) {
    throw new ParamError(`base time ${baseMs} is not a finite epoch-millisecond value`);
  }
  return DateTime.fromMillis(baseMs, { zone });
}

/**
 * Splits a SimpleDateFormat-style pattern into fields and literals. `'…'` quotes literal text
 * (`''` is a quote), as in Java, so `yyyy-MM-dd'T'HH` works; unquoted `T` is also a literal.
 */
function parsePattern(expr: string, pattern: string): PatternToken[] {
  if (pattern === "") fail(expr, "the date pattern is empty");
  const tokens: PatternToken[] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i] as string;
    if (c === "'") {
      if (pattern[i + 1] === "'") {
        tokens.push({ literal: "'" });
        i += 2;
        continue;
      }
      const close = pattern.indexOf("'", i + 1);
      if (close < 0) fail(expr, `the quote at position ${i} of "${pattern}" is not closed`);
      tokens.push({ literal: pattern.slice(i + 1, close) });
      i = close + 1;
      continue;
    }
    const runs = FIELD_RUNS[c];
    if (runs) {
      let j = i;
      while (pattern[j] === c) j++;
      const count = j - i;
      if (!runs.includes(count)) {
        fail(expr, `"${c.repeat(count)}" is not a supported pattern field`);
      }
      tokens.push({ field: c, count });
      i = j;
      continue;
    }
    if (LITERALS.has(c) || c.charCodeAt(0) > 0x7f) {
      tokens.push({ literal: c });
      i++;
      continue;
    }
    fail(
      expr,
      `"${c}" is not supported in a date pattern (use yyyy, yy, MM, M, dd, d, HH, H, mm, m, ss, s, SSS and - : / . _ T space)`,
    );
  }
  return tokens;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** Formats like SimpleDateFormat, field by field (luxon's own `T` token means localized time). */
function formatTokens(dt: DateTime, tokens: readonly PatternToken[]): string {
  let out = "";
  for (const t of tokens) {
    if ("literal" in t) {
      out += t.literal;
      continue;
    }
    switch (t.field) {
      case "y":
        out += t.count === 2 ? pad(dt.year % 100, 2) : pad(dt.year, t.count);
        break;
      case "M":
        out += pad(dt.month, t.count);
        break;
      case "d":
        out += pad(dt.day, t.count);
        break;
      case "H":
        out += pad(dt.hour, t.count);
        break;
      case "m":
        out += pad(dt.minute, t.count);
        break;
      case "s":
        out += pad(dt.second, t.count);
        break;
      default:
        out += pad(dt.millisecond, t.count);
    }
  }
  return out;
}

/**
 * Integer arithmetic as DolphinScheduler's `calculate`: + - * / parentheses and unary signs,
 * Java `int` division (truncates toward zero); whitespace is ignored.
 *
 * @param expr the whole time expression, for error messages.
 * @param text the arithmetic to evaluate, e.g. `-12*1`.
 * @param shown how `text` is named in error messages.
 * @throws ParamError for other characters, unbalanced parentheses, division by zero, or a
 *   result outside the 32-bit range (where Java would silently wrap).
 */
export function evaluateInteger(expr: string, text: string, shown = `"${text}"`): number {
  const src = text.replace(/\s+/g, "");
  let pos = 0;
  const check = (n: number): number => {
    if (Math.abs(n) > INT_MAX) fail(expr, `${shown} overflows a 32-bit integer`);
    return n;
  };
  const primary = (): number => {
    const c = src[pos];
    if (c === "(") {
      pos++;
      const v = sum();
      if (src[pos] !== ")") fail(expr, `${shown} has an unclosed parenthesis`);
      pos++;
      return v;
    }
    if (c === "+" || c === "-") {
      pos++;
      const v = primary();
      return c === "-" ? -v : v;
    }
    const m = /^[0-9]+/.exec(src.slice(pos));
    if (!m) fail(expr, `${shown} is not an integer expression`);
    pos += m[0].length;
    return check(Number(m[0]));
  };
  const product = (): number => {
    let v = primary();
    for (let c = src[pos]; c === "*" || c === "/"; c = src[pos]) {
      pos++;
      const r = primary();
      if (c === "/" && r === 0) fail(expr, `${shown} divides by zero`);
      v = check(c === "*" ? v * r : Math.trunc(v / r));
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    for (let c = src[pos]; c === "+" || c === "-"; c = src[pos]) {
      pos++;
      const r = product();
      v = check(c === "+" ? v + r : v - r);
    }
    return v;
  };
  const v = sum();
  if (pos !== src.length) fail(expr, `${shown} is not an integer expression`);
  return v === 0 ? 0 : v; // no -0
}

/**
 * Where a `pattern±offset` expression splits: the leftmost + or - outside quotes followed by an
 * arithmetic tail that starts with a digit or "(". DolphinScheduler takes the last + (else the
 * last -); leftmost gives the same split for every documented form and rejects `yyyyMMdd+-1`
 * instead of printing it literally.
 */
function findOffsetSplit(expr: string): number {
  let quoted = false;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i];
    if (c === "'") quoted = !quoted;
    if (quoted || (c !== "+" && c !== "-")) continue;
    if (/^[0-9(][0-9+\-*/()\s]*$/.test(expr.slice(i + 1))) return i;
  }
  return -1;
}

/**
 * Offset in minutes for the text after the sign, as DolphinScheduler computes it: N alone is
 * days, `N/24` hours, `N/24/60` minutes — literally `60*24*(head)/rest` in integer arithmetic,
 * head being the text before the first "/".
 */
function offsetMinutes(expr: string, text: string): number {
  const slash = text.indexOf("/");
  const head = slash < 0 ? text : text.slice(0, slash);
  const rest = slash < 0 ? "" : text.slice(slash);
  return evaluateInteger(expr, `60*24*(${head})${rest}`, `the offset "${text}"`);
}

function splitArgs(expr: string, inner: string, name: string, min: number, max: number): string[] {
  const args = inner.split(",");
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : `${min} or ${max}`;
    fail(expr, `${name}() takes ${want} argument${max === 1 ? "" : "s"}, got ${args.length}`);
  }
  return args;
}

/** `this_day`, `month_first_day`, …: a pattern, an optional integer (default 0). */
function patternAndCount(expr: string, inner: string, name: string, required: boolean) {
  const args = splitArgs(expr, inner, name, required ? 2 : 1, 2);
  const tokens = parsePattern(expr, args[0] as string);
  const n = args[1] === undefined ? 0 : evaluateInteger(expr, args[1]);
  return { tokens, n };
}

/** Monday of the Monday-to-Sunday week of `dt`, time of day kept (DS DateUtils.getMonday). */
function monday(dt: DateTime): DateTime {
  return dt.minus({ days: dt.weekday - 1 });
}

/**
 * Week of year with weeks starting on `firstDay` (1 = Monday … 7 = Sunday) and week 1 the first
 * week with at least 4 days in the year (java.util.Calendar with minimalDaysInFirstWeek = 4, as
 * DolphinScheduler sets it). Returns the week's own year: DolphinScheduler prints the calendar
 * year instead, so 2025-12-29 (week 1 of 2026) comes out as "2025-01" there and "2026-01" here.
 */
export function yearWeek(dt: DateTime, firstDay: number): { year: number; week: number } {
  const date = dt.startOf("day");
  const weekStart = date.minus({ days: (date.weekday - firstDay + 7) % 7 });
  // A week belongs to the year holding its 4th day; week 1 is the one holding 4 January.
  const year = weekStart.plus({ days: 3 }).year;
  const jan4 = DateTime.fromObject({ year, month: 1, day: 4 }, { zone: dt.zone });
  const week1 = jan4.minus({ days: (jan4.weekday - firstDay + 7) % 7 });
  const days = Math.round(weekStart.diff(week1, "days").days);
  return { year, week: Math.floor(days / 7) + 1 };
}

function evaluateFunction(expr: string, name: string, inner: string, base: DateTime): string {
  switch (name) {
    case "add_months": {
      const { tokens, n } = patternAndCount(expr, inner, name, true);
      return formatTokens(base.plus({ months: n }), tokens);
    }
    case "this_day":
    case "last_day": {
      const tokens = parsePattern(expr, splitArgs(expr, inner, name, 1, 1)[0] as string);
      return formatTokens(name === "this_day" ? base : base.minus({ days: 1 }), tokens);
    }
    case "year_week": {
      const args = splitArgs(expr, inner, name, 1, 2);
      const pattern = args[0] as string;
      parsePattern(expr, pattern);
      const firstDay = args[1] === undefined ? 1 : evaluateInteger(expr, args[1]);
      if (firstDay < 1 || firstDay > 7) {
        fail(expr, `the first day of the week must be 1 (Monday) to 7 (Sunday), got ${firstDay}`);
      }
      const { year, week } = yearWeek(base, firstDay);
      // DolphinScheduler: "yyyy-ww" when the pattern has a "-", else "yyyyww".
      return `${year}${pattern.includes("-") ? "-" : ""}${pad(week, 2)}`;
    }
    case "month_first_day": {
      const { tokens, n } = patternAndCount(expr, inner, name, false);
      return formatTokens(base.set({ day: 1 }).plus({ months: n }), tokens);
    }
    case "month_last_day": {
      const { tokens, n } = patternAndCount(expr, inner, name, false);
      const month = base.plus({ months: n });
      return formatTokens(month.set({ day: month.daysInMonth ?? 28 }), tokens);
    }
    case "week_first_day": {
      const { tokens, n } = patternAndCount(expr, inner, name, false);
      return formatTokens(monday(base).plus({ weeks: n }), tokens);
    }
    default: {
      // week_last_day: the Sunday ending the Monday-to-Sunday week (DS DateUtils.getSunday).
      const { tokens, n } = patternAndCount(expr, inner, name, false);
      return formatTokens(monday(base).plus({ days: 6, weeks: n }), tokens);
    }
  }
}

/**
 * Evaluates the text between `$[` and `]`, relative to `baseMs` (epoch ms) in `zone` (IANA
 * name, default "UTC"). Forms (DolphinScheduler "Built-in Parameter"):
 * - `pattern` — e.g. `yyyyMMddHHmmss`, `yyyy-MM-dd`, `HH:mm:ss`;
 * - `pattern+N`, `pattern-N` (days), `pattern±7*N` (weeks), `pattern±N/24` (hours),
 *   `pattern±N/24/60` (minutes); N is an integer expression. Whole-day offsets move the
 *   calendar date in `zone` (so `-1` is always the previous date, DST or not; DS adds 1440
 *   minutes); other offsets move the instant;
 * - `add_months(p,N)`, `this_day(p)`, `last_day(p)` (the day before), `year_week(p)` /
 *   `year_week(p,D)` (D = 1 Monday … 7 Sunday; "2022-34", or "202234" when p has no "-"),
 *   `month_first_day(p,N)`, `month_last_day(p,N)` (N months away), `week_first_day(p,N)`,
 *   `week_last_day(p,N)` (Monday/Sunday, N weeks away). Time of day is kept.
 *
 * @throws ParamError naming the expression for anything else, and for an invalid zone.
 */
export function evaluateTimeExpression(expr: string, baseMs: number, zone?: string): string {
  const base = zonedBase(baseMs, zone);
  if (expr.trim() === "") fail(expr, "it is empty");
  const call = /^([A-Za-z_]+)\((.*)\)$/s.exec(expr);
  if (call) {
    const name = call[1] as string;
    if (!FUNCTIONS.has(name)) fail(expr, `${name}() is not a known function`);
    return evaluateFunction(expr, name, call[2] as string, base);
  }
  const split = findOffsetSplit(expr);
  if (split < 0) return formatTokens(base, parsePattern(expr, expr));
  const tokens = parsePattern(expr, expr.slice(0, split));
  const sign = expr[split] === "-" ? -1 : 1;
  const minutes = sign * offsetMinutes(expr, expr.slice(split + 1));
  const shifted =
    minutes % DAY_MINUTES === 0
      ? base.plus({ days: minutes / DAY_MINUTES })
      : base.plus({ minutes });
  return formatTokens(shifted, tokens);
}

/** What `builtinParams` needs to know about the run. */
export interface BuiltinContext {
  /** Schedule time of the instance (or its start time), epoch ms. */
  baseMs: number;
  /** IANA zone the dates are written in; default "UTC". */
  zone?: string;
  /** Workflow definition name. */
  workflow: string;
  /** Workflow instance id. */
  instanceId: string;
  /** Task definition code, when the parameters are for one task. */
  taskCode?: string;
  /** Attempt number of the task instance (1 for the first run). */
  attempt?: number;
}

/** Time built-ins by base time and zone: every task of an instance shares them. */
const timeCache = new Map<string, Record<string, string>>();
const TIME_CACHE_SIZE = 1_024;

/**
 * `system.datetime`, `system.biz.curdate`, `system.biz.date` of one base time (formatting them
 * costs ~0.2 ms, and a dispatcher asks for the same base time for each task of an instance).
 */
function timeBuiltins(baseMs: number, zone: string): Record<string, string> {
  const key = `${baseMs}|${zone}`;
  let cached = timeCache.get(key);
  if (!cached) {
    cached = {
      "system.datetime": evaluateTimeExpression("yyyyMMddHHmmss", baseMs, zone),
      "system.biz.curdate": evaluateTimeExpression("yyyyMMdd", baseMs, zone),
      "system.biz.date": evaluateTimeExpression("yyyyMMdd-1", baseMs, zone),
    };
    timeCache.set(key, cached);
    if (timeCache.size > TIME_CACHE_SIZE) timeCache.delete(timeCache.keys().next().value as string);
  }
  return cached;
}

/**
 * DolphinScheduler's basic built-in parameters: `system.datetime` (yyyyMMddHHmmss of the base
 * time), `system.biz.curdate` (yyyyMMdd of the base), `system.biz.date` (yyyyMMdd of the day
 * before), `system.workflow.instance.id`, `system.workflow.definition.name`, and with a task
 * `system.task.definition.name` (the task code) and `system.task.instance.attempt`.
 *
 * @throws ParamError for an invalid zone.
 */
export function builtinParams(ctx: BuiltinContext): Record<string, string> {
  const zone = ctx.zone ?? DEFAULT_ZONE;
  const out: Record<string, string> = {
    ...timeBuiltins(ctx.baseMs, zone),
    "system.workflow.instance.id": ctx.instanceId,
    "system.workflow.definition.name": ctx.workflow,
  };
  if (ctx.taskCode !== undefined) out["system.task.definition.name"] = ctx.taskCode;
  if (ctx.attempt !== undefined) out["system.task.instance.attempt"] = String(ctx.attempt);
  return out;
}
