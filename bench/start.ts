/**
 * The `start` scenario: how long `shoal standalone` takes from its start to an API that answers
 * (startStandalone resolves then), with the examples loaded and 4 worker slots as a user starts
 * it, on a fresh data directory and again over the same one (a restart). Three rounds.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startStandalone } from "../lib/standalone/standalone.js";
import { benchBackend } from "./backend.js";
import type { ScenarioOptions, ScenarioResult } from "./scenario.js";
import { round, summarize } from "./stats.js";

const ROUNDS = 3;

/** Starts standalone `ROUNDS` times fresh and `ROUNDS` times over the data of the first. */
export async function start(_opts: ScenarioOptions): Promise<ScenarioResult> {
  const fresh: number[] = [];
  const restart: number[] = [];
  const once = async (dataDir: string): Promise<number> => {
    const t0 = performance.now();
    const sa = await startStandalone({
      port: 0,
      dataDir,
      workers: 4,
      examples: true,
      quiet: true,
      backend: benchBackend(),
    });
    const ms = performance.now() - t0;
    await sa.stop();
    return ms;
  };
  const kept = mkdtempSync(join(tmpdir(), "shoal-bench-start-"));
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const dir = i === 0 ? kept : mkdtempSync(join(tmpdir(), "shoal-bench-start-"));
      fresh.push(await once(dir));
      if (dir !== kept) rmSync(dir, { recursive: true, force: true });
      restart.push(await once(kept));
    }
  } finally {
    rmSync(kept, { recursive: true, force: true });
  }
  const f = summarize(fresh);
  const r = summarize(restart);
  return {
    name: "start",
    summary: { freshMs: f, restartMs: r },
    tables: [
      `== start: shoal standalone until its API answers (examples loaded, 4 worker slots), ${ROUNDS} rounds\n` +
        `fresh data dir: median ${round(f.p50, 0)} ms (max ${round(f.max, 0)}); restart over the same data: median ${round(r.p50, 0)} ms (max ${round(r.max, 0)})`,
    ],
  };
}
