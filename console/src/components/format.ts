/** Times and durations as the console's tables show them (the API's instants are ISO-8601 UTC). */
import { formatDurationBrief } from "../model/time-axis";

/** `2026-11-24 06:00:00` in the browser's zone; `-` for none. */
export function formatInstant(iso: string | undefined): string {
  if (!iso) return "-";
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A duration from `start` to `end` (or `now` while running), briefly: `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`. */
export function formatSpan(
  start: string | undefined,
  end: string | undefined,
  now: number,
): string {
  if (!start) return "-";
  const ms = (end ? Date.parse(end) : now) - Date.parse(start);
  return Number.isFinite(ms) && ms >= 0 ? formatDurationBrief(ms) : "-";
}
