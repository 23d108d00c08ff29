/**
 * Time axis of the console's Gantt view: "nice" tick steps, tick labels readable from
 * sub-second to multi-day runs, and duration formatting. Pure: no clock reads (every time is
 * an argument), no DOM; wall-clock labels come from `Intl` in the requested IANA zone.
 */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

/** Default minimum distance between two ticks, px: room for a label like "Nov 24 06:00". */
export const MIN_TICK_SPACING_PX = 80;

/**
 * The tick steps the axis chooses from, ms, ascending. Every step under a day divides a day,
 * so wall-clock ticks land on round local times; longer ranges use multiples of a year.
 */
export const TICK_STEPS_MS: readonly number[] = [
  1,
  2,
  5,
  10,
  20,
  50,
  100,
  200,
  250,
  500,
  SECOND,
  2 * SECOND,
  5 * SECOND,
  10 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
  28 * DAY,
  91 * DAY,
  182 * DAY,
  YEAR,
];

/**
 * How tick labels read: `relative` = offset from the axis start ("0", "+250 ms", "+1.5 s",
 * "+1 min 30 s"); `absolute` = wall-clock time in the axis zone ("06:00", "Nov 24 06:00").
 */
export type TickLabelMode = "relative" | "absolute";

/** One tick of a {@link TimeAxis}. */
export interface Tick {
  /** Epoch ms. */
  ms: number;
  /** Distance from the axis' left edge, px. */
  x: number;
  label: string;
}

/** A linear mapping of [startMs, endMs] onto [0, widthPx], with its ticks. */
export interface TimeAxis {
  /** Epoch ms at x = 0. */
  startMs: number;
  /** Epoch ms at x = widthPx; always > startMs. */
  endMs: number;
  /** px. */
  widthPx: number;
  /** Distance between consecutive ticks, ms: one of {@link TICK_STEPS_MS} or a year multiple. */
  stepMs: number;
  labelMode: TickLabelMode;
  /** IANA zone of absolute labels ("UTC" by default). */
  timeZone: string;
  /** Ascending; consecutive ticks are at least `minSpacingPx` apart. */
  ticks: Tick[];
}

/** Options of {@link makeTimeAxis}. */
export interface TimeAxisOptions {
  /** Epoch ms of the left edge. */
  startMs: number;
  /** Epoch ms of the right edge; a range that is empty or reversed is widened to 1 ms. */
  endMs: number;
  /** Axis width, px (> 0; smaller values are treated as 1). */
  widthPx: number;
  /** IANA zone for absolute labels, e.g. "Europe/Paris"; default "UTC". */
  timeZone?: string;
  /** Minimum distance between ticks, px; default {@link MIN_TICK_SPACING_PX}. */
  minSpacingPx?: number;
  /**
   * Label style; default: `relative` for ranges under 2 minutes (a run's first seconds read
   * best as offsets), `absolute` otherwise.
   */
  labelMode?: TickLabelMode;
}

/** Ranges shorter than this get relative labels by default, ms. */
const RELATIVE_LABELS_BELOW_MS = 2 * MINUTE;

/**
 * Smallest nice step (ms) that keeps ticks at least `minSpacingPx` apart when `spanMs` is
 * drawn over `widthPx`.
 */
export function chooseTickStep(spanMs: number, widthPx: number, minSpacingPx: number): number {
  const needed = (Math.max(spanMs, 1) / Math.max(widthPx, 1)) * Math.max(minSpacingPx, 0);
  for (const step of TICK_STEPS_MS) if (step >= needed) return step;
  return Math.ceil(needed / YEAR) * YEAR;
}

/**
 * Builds the axis of a range: chooses the step ({@link chooseTickStep}), places ticks
 * (relative mode: at start + k·step; absolute mode: on round local times of the zone, e.g.
 * every hour on the hour, days at local midnight, weeks on Mondays) and labels them.
 * @throws RangeError when `timeZone` is not a zone `Intl` knows.
 */
export function makeTimeAxis(opts: TimeAxisOptions): TimeAxis {
  const startMs = opts.startMs;
  const endMs = opts.endMs > startMs ? opts.endMs : startMs + 1;
  const widthPx = Math.max(opts.widthPx, 1);
  const timeZone = opts.timeZone ?? "UTC";
  const minSpacingPx = opts.minSpacingPx ?? MIN_TICK_SPACING_PX;
  const span = endMs - startMs;
  const stepMs = chooseTickStep(span, widthPx, minSpacingPx);
  const labelMode = opts.labelMode ?? (span < RELATIVE_LABELS_BELOW_MS ? "relative" : "absolute");
  const pxPerMs = widthPx / span;
  // Validate the zone up front so a bad zone fails the same way whatever the range.
  wallClock(startMs, timeZone);

  const times =
    labelMode === "relative"
      ? relativeTickTimes(startMs, endMs, stepMs)
      : absoluteTickTimes(startMs, endMs, stepMs, timeZone);
  const ticks: Tick[] = [];
  let previous: WallClock | undefined;
  for (const ms of times) {
    const x = (ms - startMs) * pxPerMs;
    const last = ticks[ticks.length - 1];
    // DST shifts can bring two wall-clock ticks closer than a step: drop the second one.
    if (last && x - last.x < minSpacingPx - 1e-6) continue;
    if (labelMode === "relative") {
      ticks.push({ ms, x, label: relativeLabel(ms - startMs, stepMs) });
    } else {
      const clock = wallClock(ms, timeZone);
      ticks.push({ ms, x, label: absoluteLabel(clock, previous, stepMs) });
      previous = clock;
    }
  }
  return { startMs, endMs, widthPx, stepMs, labelMode, timeZone, ticks };
}

/** Position of an epoch-ms time on the axis, px from its left edge (may be < 0 or > width). */
export function xOf(axis: TimeAxis, ms: number): number {
  return ((ms - axis.startMs) * axis.widthPx) / (axis.endMs - axis.startMs);
}

/** Epoch ms at a position on the axis, px from its left edge (inverse of {@link xOf}). */
export function msAt(axis: TimeAxis, x: number): number {
  return axis.startMs + (x * (axis.endMs - axis.startMs)) / axis.widthPx;
}

function relativeTickTimes(startMs: number, endMs: number, stepMs: number): number[] {
  const out: number[] = [];
  for (let k = 0; startMs + k * stepMs <= endMs; k++) out.push(startMs + k * stepMs);
  return out;
}

function absoluteTickTimes(startMs: number, endMs: number, stepMs: number, zone: string): number[] {
  const out: number[] = [];
  const localStart = startMs + offsetMs(startMs, zone);
  const localEnd = endMs + offsetMs(endMs, zone);
  // Weeks start on Monday: 1970-01-05 is the first Monday after the epoch.
  const origin = stepMs >= 7 * DAY && stepMs % (7 * DAY) === 0 ? 4 * DAY : 0;
  let local = Math.ceil((localStart - origin) / stepMs) * stepMs + origin;
  for (; local <= localEnd; local += stepMs) {
    const ms = localToUtc(local, zone);
    if (ms < startMs || ms > endMs) continue;
    if (out.length > 0 && ms <= (out[out.length - 1] as number)) continue;
    out.push(ms);
  }
  return out;
}

/** Wall-clock fields of an instant in a zone (month 1–12, hour 0–23). */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
}

/**
 * Wall-clock time of epoch `ms` in IANA `zone`, via `Intl.DateTimeFormat`.
 * @throws RangeError when the zone is unknown.
 */
export function wallClock(ms: number, zone: string): WallClock {
  const fields: Record<string, number> = {};
  for (const part of formatterFor(zone).formatToParts(ms)) {
    if (part.type !== "literal") fields[part.type] = Number(part.value);
  }
  return {
    year: fields.year ?? 1970,
    month: fields.month ?? 1,
    day: fields.day ?? 1,
    hour: (fields.hour ?? 0) % 24,
    minute: fields.minute ?? 0,
    second: fields.second ?? 0,
    millisecond: ((ms % SECOND) + SECOND) % SECOND,
  };
}

/** UTC offset of `zone` at epoch `ms`, ms (local = utc + offset). */
function offsetMs(ms: number, zone: string): number {
  const c = wallClock(ms, zone);
  const asUtc = Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute, c.second, c.millisecond);
  return asUtc - ms;
}

/** Epoch ms of a local time expressed as "ms since the local epoch" in `zone`. */
function localToUtc(local: number, zone: string): number {
  const guess = local - offsetMs(local, zone);
  return local - offsetMs(guess, zone);
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/**
 * Absolute label: time of day at the step's precision, with the date in front on the first
 * tick and whenever the day changes; steps of a day or more show the date only.
 */
function absoluteLabel(c: WallClock, previous: WallClock | undefined, stepMs: number): string {
  const date = `${MONTHS[c.month - 1] ?? "?"} ${c.day}`;
  if (stepMs >= DAY) {
    return previous && previous.year === c.year ? date : `${date} ${c.year}`;
  }
  let time = `${pad(c.hour)}:${pad(c.minute)}`;
  if (stepMs < MINUTE) time += `:${pad(c.second)}`;
  if (stepMs < SECOND) time += `.${pad(c.millisecond, 3)}`;
  const sameDay =
    previous !== undefined &&
    previous.year === c.year &&
    previous.month === c.month &&
    previous.day === c.day;
  return sameDay ? time : `${date} ${time}`;
}

/** Label of an offset (a multiple of the step): "0", "+250 ms", "+1.25 s", "+1 h 30 min". */
function relativeLabel(offset: number, stepMs: number): string {
  if (offset === 0) return "0";
  if (offset < SECOND) return `+${offset} ms`;
  if (stepMs < SECOND && offset < MINUTE) {
    // As many decimals as the step needs, so neighbouring ticks never read the same.
    const decimals = stepMs % 100 === 0 ? 1 : stepMs % 10 === 0 ? 2 : 3;
    return `+${trimZeros((offset / SECOND).toFixed(decimals))} s`;
  }
  return `+${exactUnits(offset)}`;
}

/** "1 d 2 h 3 min 4.5 s" with zero parts left out; for offsets that are round in their step. */
function exactUnits(ms: number): string {
  const parts: string[] = [];
  const d = Math.floor(ms / DAY);
  const h = Math.floor((ms % DAY) / HOUR);
  const m = Math.floor((ms % HOUR) / MINUTE);
  const s = (ms % MINUTE) / SECOND;
  if (d) parts.push(`${d} d`);
  if (h) parts.push(`${h} h`);
  if (m) parts.push(`${m} min`);
  if (s) parts.push(`${trimZeros(s.toFixed(3))} s`);
  return parts.join(" ");
}

function trimZeros(fixed: string): string {
  return fixed.includes(".") ? fixed.replace(/\.?0+$/, "") : fixed;
}

/**
 * A duration in full, to the millisecond, for hovers: "850 ms", "1.234 s", "4 min 05.25 s",
 * "2 h 03 min 04.5 s", "3 d 04 h 00 min 00 s". Rounded to whole ms; negative durations get a
 * leading "-"; a non-finite value gives "—".
 */
export function formatDurationPrecise(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms < 0) return `-${formatDurationPrecise(-ms)}`;
  const total = Math.round(ms);
  if (total < SECOND) return `${total} ms`;
  const seconds = (total % MINUTE) / SECOND;
  if (total < MINUTE) return `${trimZeros(seconds.toFixed(3))} s`;
  const [whole = "0", frac] = trimZeros(seconds.toFixed(3)).split(".");
  const sec = `${pad(Number(whole))}${frac ? `.${frac}` : ""} s`;
  const m = Math.floor((total % HOUR) / MINUTE);
  if (total < HOUR) return `${m} min ${sec}`;
  const h = Math.floor((total % DAY) / HOUR);
  if (total < DAY) return `${h} h ${pad(m)} min ${sec}`;
  return `${Math.floor(total / DAY)} d ${pad(h)} h ${pad(m)} min ${sec}`;
}

/**
 * A duration in at most two units, for table columns: "850 ms", "12.3 s", "4 min 05 s",
 * "2 h 03 min", "3 d 4 h". Rounds to the last unit shown (59.96 s reads "1 min 00 s");
 * negative durations get a leading "-"; a non-finite value gives "—".
 */
export function formatDurationBrief(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms < 0) return `-${formatDurationBrief(-ms)}`;
  const millis = Math.round(ms);
  if (millis < SECOND) return `${millis} ms`;
  const tenths = Math.round(ms / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)} s`;
  const seconds = Math.round(ms / SECOND);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${pad(seconds % 60)} s`;
  const minutes = Math.round(ms / MINUTE);
  if (minutes < 24 * 60) return `${Math.floor(minutes / 60)} h ${pad(minutes % 60)} min`;
  const hours = Math.round(ms / HOUR);
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}
