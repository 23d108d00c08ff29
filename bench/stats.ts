/** Small statistics and formatting helpers for the benchmarks. */

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return values.reduce((a, b) => a + b, 0) / values.length;
}

export interface Summary {
  n: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    mean: round(mean(values), 2),
    p50: round(percentile(values, 50), 2),
    p90: round(percentile(values, 90), 2),
    p99: round(percentile(values, 99), 2),
    max: round(values.length ? Math.max(...values) : Number.NaN, 2),
  };
}

export function round(x: number, digits = 1): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A plain text table: first row is the header; numbers right-aligned. */
export function table(rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === "number" ? fmt(c) : c)));
  const widths: number[] = [];
  for (const r of cells) {
    r.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, c.length);
    });
  }
  const line = (r: string[], isHeader: boolean) =>
    r
      .map((c, i) => {
        const w = widths[i] ?? 0;
        const numeric = !isHeader && typeof rows[cells.indexOf(r)]?.[i] === "number";
        return numeric ? c.padStart(w) : c.padEnd(w);
      })
      .join("  ")
      .trimEnd();
  const out = [line(cells[0] ?? [], true), widths.map((w) => "-".repeat(w)).join("  ")];
  for (const r of cells.slice(1)) out.push(line(r, false));
  return out.join("\n");
}

export function fmt(x: number): string {
  if (Number.isNaN(x)) return "-";
  if (Number.isInteger(x)) return String(x);
  return Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2);
}
