/**
 * The report of a chaos run: one row per scenario (scenario | load | faults | invariants |
 * result), as a Markdown table (docs/reliability.md keeps the last ones), then each scenario's
 * checks with their figures and, for a failed one, its evidence.
 */
import type { ScenarioResult } from "./scenario.js";

/** Whether every check of a scenario held. */
export function passed(r: ScenarioResult): boolean {
  return r.checks.length > 0 && r.checks.every((c) => c.ok);
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The Markdown table of `results`. */
export function formatTable(results: ScenarioResult[]): string {
  const rows = results.map((r) => {
    const failed = r.checks.filter((c) => !c.ok);
    const invariants =
      failed.length === 0
        ? `${r.checks.length}/${r.checks.length} held`
        : `${r.checks.length - failed.length}/${r.checks.length} held; FAILED: ${failed.map((c) => `${c.name} (${c.detail})`).join("; ")}`;
    return `| ${cell(r.name)} | ${cell(r.load)} | ${cell(r.faults)} | ${cell(invariants)} | ${passed(r) ? "PASS" : "FAIL"} (${(r.durationMs / 1000).toFixed(0)} s) |`;
  });
  return [
    "| scenario | load | faults | invariants | result |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** Every check of every scenario, with figures, notes and (for failures) evidence. */
export function formatDetails(results: ScenarioResult[]): string {
  const out: string[] = [];
  for (const r of results) {
    out.push(`${r.name}: ${passed(r) ? "PASS" : "FAIL"}`);
    for (const c of r.checks) {
      out.push(`  ${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}`);
      if (!c.ok) for (const e of c.evidence ?? []) out.push(`         ${e}`);
    }
    for (const n of r.notes) out.push(`  note ${n}`);
    if (r.figures?.maxIdle.where)
      out.push(
        `  note longest silence of an instance: ${(r.figures.maxIdle.ms / 1000).toFixed(1)} s (${r.figures.maxIdle.where})`,
      );
  }
  return out.join("\n");
}
