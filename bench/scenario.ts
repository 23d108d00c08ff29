/**
 * What every benchmark scenario shares: its options (from bench/run.ts's command line), its
 * result, and the setup helpers of the workflow scenarios (hop.ts, throughput.ts, makespan.ts).
 * Each scenario starts its own standalone (fresh temp data dir), runs, stops it, and returns a
 * JSON-able result plus printable tables.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { WorkflowDefinitionBody } from "../lib/import/wfcommons.js";
import { readWfcommonsFile, WFCOMMONS_DIR } from "../lib/import/wfcommons-file.js";

/** Options of a run, parsed by bench/run.ts; each scenario reads the ones it knows. */
export interface ScenarioOptions {
  /** Take a CPU profile of the run window (--profile). */
  profile: boolean;
  /** Worker slots override (comma list for throughput). */
  workers?: number[];
  /** Run the worker slots in this many `shoal worker` processes instead of in-process. */
  externalProcesses?: number;
  /** schedules scenario: how many schedules (default 20,000; the goal is 100,000). */
  schedules?: number;
  /** schedules scenario: sweeper counts, one run each (default 1,2). */
  sweepers?: number[];
  /** load scenario: runs of the burst (--runs, default 10,000). */
  runs?: number;
  /** load scenario: minutes of the sustained phase (--minutes, default 10). */
  minutes?: number;
  /** load scenario: runs/s of the sustained phase (--rate; default 80 % of the burst's). */
  rate?: number;
}

/** A scenario's outcome: `summary` goes to the JSON file, `tables` are printed in order. */
export interface ScenarioResult {
  name: string;
  summary: Record<string, unknown>;
  tables: string[];
}

/** A shipped trace (examples/wfcommons/, gzipped), or one from SHOAL_WFCOMMONS_DIR. */
export function loadTrace(file: string): unknown {
  const dir = process.env.SHOAL_WFCOMMONS_DIR;
  if (dir && existsSync(join(dir, file))) return readWfcommonsFile(join(dir, file));
  return readWfcommonsFile(join(WFCOMMONS_DIR, `${file}.gz`));
}

/** A short unique suffix for workflow names (base-36 epoch ms). */
export const stamp = () => Date.now().toString(36);

/** Task code → its upstream codes. */
export function upstreamMap(def: WorkflowDefinitionBody): Map<string, string[]> {
  return new Map(def.tasks.map((t) => [t.code, t.upstream]));
}
