/** Terminal formatting: aligned tables, durations, times and JSON. */

/** Renders rows under upper-case headers, columns padded to their widest cell (last column unpadded). */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

/** `12.3s`, `4m 05s`, `2h 03m 04s`: short, and sortable by eye within one unit. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "-";
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}h ${pad(m)}m ${pad(s)}s` : `${m}m ${pad(s)}s`;
}

/**
 * Duration between two API timestamps; a missing end means "still going" and counts up to
 * `now`. Returns `-` when there is no start.
 */
export function durationBetween(start?: string, end?: string, now = Date.now()): string {
  const from = start ? Date.parse(start) : Number.NaN;
  if (Number.isNaN(from)) return "-";
  const to = end ? Date.parse(end) : now;
  return formatDuration(to - from);
}

/** An API timestamp shortened to seconds (`2026-11-21T05:00:00Z`) for tables. */
export function formatTime(iso?: string): string {
  if (!iso) return "-";
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Pretty JSON as printed for a resource (2-space indent, like the AWS CLI). */
export function toJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/**
 * Keeps free text (descriptions, error messages) on one line of a table or tree: whitespace
 * runs become one space, and text longer than `max` characters ends in `…`.
 */
export function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
