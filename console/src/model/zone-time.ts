/**
 * Times as the scheduling pages show them: in a schedule's own IANA zone (the wall clock its cron
 * is read on), relative to now ("in 3 min"), and a fire's lateness ("0.8 s late"). Pure
 * functions, so they are unit-tested without a browser.
 */
// `.js`: the unit tests compile this file under the root (node16) configuration too.
import { formatDurationBrief } from "./time-axis.js";

const pad = (n: number) => String(n).padStart(2, "0");

/** The parts of an instant on a zone's wall clock (the zone's offset included, in minutes). */
function wallParts(ms: number, timeZone: string) {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "longOffset",
  }).formatToParts(ms);
  const get = (t: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === t)?.value ?? "";
  // "GMT-05:00", or "GMT" for a zero offset.
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(get("timeZoneName"));
  const offset = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  return {
    date: `${get("year")}-${get("month")}-${get("day")}`,
    time: `${get("hour")}:${get("minute")}:${get("second")}`,
    offset,
  };
}

/** `+05:30` from minutes east of UTC. */
function formatOffset(minutes: number): string {
  const a = Math.abs(minutes);
  return `${minutes < 0 ? "-" : "+"}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

/**
 * An instant on `timeZone`'s wall clock with its offset: `2026-11-22 02:30:00 -05:00` (the
 * CLI's form); `-` for none. An unknown zone falls back to UTC rather than throwing.
 */
export function formatInZone(iso: string | undefined, timeZone: string): string {
  if (!iso) return "-";
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return "-";
  try {
    const p = wallParts(ms, timeZone);
    return `${p.date} ${p.time} ${formatOffset(p.offset)}`;
  } catch {
    return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} +00:00`;
  }
}

/**
 * The instant at which `timeZone`'s wall clock reads `local` (`2026-11-22T02:30`, a
 * `datetime-local` value), as ISO-8601 UTC; `""` for an empty or bad value. In a DST gap the
 * offset before the gap is used; in a fold, the first of the two instants.
 */
export function wallToInstant(local: string, timeZone: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local);
  if (!m) return "";
  const [y, mo, d, h, mi, sec] = m.slice(1).map((x) => Number(x ?? 0));
  const asUtc = Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 1, h ?? 0, mi ?? 0, sec ?? 0);
  try {
    // The zone's offsets a day before and a day after: near a DST change they differ, and a
    // wall time in a fold reads right with both (take the first), one in a gap with neither
    // (take the offset before the gap).
    const offsetAt = (ms: number) => wallParts(ms, timeZone).offset * 60_000;
    const candidates = [asUtc - offsetAt(asUtc - 86_400_000), asUtc - offsetAt(asUtc + 86_400_000)];
    const reads = candidates.filter((c) => c + offsetAt(c) === asUtc);
    return new Date(reads.length ? Math.min(...reads) : Math.max(...candidates)).toISOString();
  } catch {
    return new Date(asUtc).toISOString();
  }
}

/** The `datetime-local` value (`2026-11-22T02:30`) of an instant on `timeZone`'s wall clock. */
export function instantToWall(iso: string | undefined, timeZone: string): string {
  if (!iso) return "";
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return "";
  try {
    const p = wallParts(ms, timeZone);
    return `${p.date}T${p.time.slice(0, 5)}`;
  } catch {
    return new Date(ms).toISOString().slice(0, 16);
  }
}

/** How far an instant is from now, in words: `in 3 min`, `in 12 s`, `5 h ago`, `now`. */
export function formatRelative(iso: string | undefined, now: number): string {
  if (!iso) return "";
  const ms = Date.parse(iso) - now;
  if (Number.isNaN(ms)) return "";
  const a = Math.abs(ms);
  if (a < 1_000) return "now";
  const units: [number, string][] = [
    [86_400_000, "d"],
    [3_600_000, "h"],
    [60_000, "min"],
    [1_000, "s"],
  ];
  const [size, unit] = units.find(([u]) => a >= u) ?? [1_000, "s"];
  const text = `${Math.floor(a / size)} ${unit}`;
  return ms > 0 ? `in ${text}` : `${text} ago`;
}

/**
 * How soon a schedule's next fire is: `in 3 min`, or `due` once its time has passed and the
 * sweeper's decision has not been read yet (the page shows the answer of its last poll).
 */
export function formatNextFire(iso: string | undefined, now: number): string {
  if (!iso) return "";
  return Date.parse(iso) - now <= -1_000 ? "due" : formatRelative(iso, now);
}

/**
 * When to ask for the schedules again: soon after the earliest next fire shown (the list then
 * changes), between 2 s and `slowest` ms; `slowest` when nothing is online.
 */
export function nextPollMs(
  schedules: { state: string; nextFireTime?: string }[],
  now: number,
  slowest: number,
): number {
  const next = schedules
    .filter((s) => s.state === "ONLINE" && s.nextFireTime)
    .map((s) => Date.parse(s.nextFireTime ?? "") - now + 1_000);
  if (next.length === 0) return slowest;
  return Math.min(slowest, Math.max(2_000, Math.min(...next)));
}

/**
 * A fire's lateness (`latenessMs`) in words: `on time` (0: taken early by the sweeper's
 * look-ahead), `40 ms late`, `0.8 s late`, `2 min 05 s late`.
 */
export function formatLateness(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return "on time";
  if (ms < 100) return `${Math.round(ms)} ms late`;
  if (ms < 60_000) return `${(Math.round(ms / 100) / 10).toFixed(1)} s late`;
  return `${formatDurationBrief(ms)} late`;
}
