/**
 * The last table of `npm run bench`: the headline figure of each scenario on each standalone
 * backend, next to each other, with the goals (docs/performance.md).
 */
import type { BackendKind } from "../lib/standalone/defaults.js";
import { table } from "./stats.js";

type Summaries = Partial<Record<BackendKind, Record<string, unknown>>>;

/** A number at `path` of a JSON summary, else undefined. */
function at(summary: unknown, path: readonly string[]): number | undefined {
  let v: unknown = summary;
  for (const k of path)
    v = v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return typeof v === "number" ? v : undefined;
}

/** The rows: label, goal, and where each backend's figure is in its scenario's summary. */
const ROWS: ReadonlyArray<{ label: string; goal: string; scenario: string; path: string[] }> = [
  {
    label: "start (fresh data dir), ms",
    goal: "≤ 1,000",
    scenario: "start",
    path: ["freshMs", "p50"],
  },
  { label: "start (restart), ms", goal: "≤ 1,000", scenario: "start", path: ["restartMs", "p50"] },
  { label: "hop median, ms", goal: "≤ 5", scenario: "hop", path: ["hopMs", "median"] },
  { label: "hop p90, ms", goal: "", scenario: "hop", path: ["hopMs", "p90"] },
  {
    label: "Seismology, best tasks/s",
    goal: "≥ 500",
    scenario: "throughput",
    path: ["best", "tasksPerSecond"],
  },
  {
    label: "Montage makespan ÷ critical path (scale 0.01)",
    goal: "≤ 1.10",
    scenario: "makespan",
    path: ["montage", "makespanOverCriticalPath"],
  },
  {
    label: "Epigenomics makespan ÷ critical path (scale 0.01)",
    goal: "≤ 1.10",
    scenario: "makespan",
    path: ["epigenomics", "makespanOverCriticalPath"],
  },
  {
    label: "schedules: best fires/s",
    goal: "",
    scenario: "schedules",
    path: ["bestFiresPerSecond"],
  },
];

/**
 * The side-by-side table, or undefined when fewer than one figure exists.
 * @param byScenario scenario name → backend → its summary.
 */
export function sideBySide(
  byScenario: Record<string, Summaries>,
  backends: readonly BackendKind[],
): string | undefined {
  const rows: Array<Array<string | number>> = [];
  for (const r of ROWS) {
    const s = byScenario[r.scenario];
    if (!s) continue;
    const figures = backends.map((b) => at(s[b], r.path));
    if (figures.every((f) => f === undefined)) continue;
    rows.push([r.label, r.goal, ...figures.map((f) => (f === undefined ? "-" : f))]);
  }
  const sched = byScenario.schedules;
  if (sched) {
    const last = backends.map((b) => {
      const runs = (sched[b] as { runs?: Array<{ t0ToLastFireMs?: number }> } | undefined)?.runs;
      const best = runs?.map((x) => x.t0ToLastFireMs ?? Number.POSITIVE_INFINITY);
      return best?.length ? Math.min(...best) : undefined;
    });
    if (last.some((x) => x !== undefined))
      rows.push([
        "schedules: last fire after T0, ms (all due at T0)",
        "≤ 30,000 (100,000)",
        ...last.map((x) => (x === undefined ? "-" : x)),
      ]);
  }
  if (rows.length === 0) return undefined;
  return `== standalone backends side by side (same run)\n${table([["figure", "goal", ...backends], ...rows])}`;
}
