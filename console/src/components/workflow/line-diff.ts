/** A unified line diff of two texts, for the versions view (jsdiff's `diffLines`). */
import { diffLines } from "diff";

/** One row of a unified diff: `+` added, `-` removed, ` ` unchanged, `…` unchanged lines left out. */
export interface DiffRow {
  mark: "+" | "-" | " " | "…";
  text: string;
}

/** Unchanged lines kept either side of a change (as `diff -u`). */
const CONTEXT = 3;

/**
 * The rows of a unified diff from `before` to `after`: changed lines with {@link CONTEXT} lines of
 * context around each change; longer unchanged runs are one `…` row saying how many lines it
 * stands for. Identical texts give no rows.
 */
export function unifiedRows(before: string, after: string): DiffRow[] {
  const rows: DiffRow[] = [];
  const parts = diffLines(before, after);
  if (parts.every((p) => !p.added && !p.removed)) return rows;
  parts.forEach((p, i) => {
    const lines = p.value.replace(/\n$/, "").split("\n");
    if (p.added || p.removed) {
      for (const text of lines) rows.push({ mark: p.added ? "+" : "-", text });
      return;
    }
    const head = i === 0 ? 0 : CONTEXT; // after a change
    const tail = i === parts.length - 1 ? 0 : CONTEXT; // before a change
    if (lines.length <= head + tail + 1) {
      for (const text of lines) rows.push({ mark: " ", text });
      return;
    }
    for (const text of lines.slice(0, head)) rows.push({ mark: " ", text });
    rows.push({ mark: "…", text: `${lines.length - head - tail} unchanged lines` });
    for (const text of lines.slice(lines.length - tail)) rows.push({ mark: " ", text });
  });
  return rows;
}
