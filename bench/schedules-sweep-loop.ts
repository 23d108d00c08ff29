/**
 * The schedules scenario's sweep loops: each schedule sweeper swept on a timer as `shoal sweeper`
 * does, every sweep recorded, and the overlaps of two sweepers on one shard counted.
 */
import type { ScheduleSweeper } from "../lib/engine/schedule-sweeper.js";
import { epochNow } from "./instrumentation.js";
import { SWEEP_MS } from "./schedules-config.js";

/** One sweep: which sweeper, its epoch ms span, the shards it swept (none when it failed). */
export interface SweepRecord {
  sweeper: number;
  t0: number;
  t1: number;
  shards: string[];
}

/**
 * Sweeps every `periodMs` from `phaseMs` on, skipping ticks while a sweep runs (as standalone's
 * timer does). @returns stop(): waits for the sweep under way, then releases the leases.
 */
export function startLoop(
  k: number,
  sweeper: ScheduleSweeper,
  phaseMs: number,
  out: SweepRecord[],
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    if (stopped || running) return;
    const t0 = epochNow();
    running = sweeper
      .sweep()
      .then(
        (r) => void out.push({ sweeper: k, t0, t1: epochNow(), shards: r.shards }),
        () => void out.push({ sweeper: k, t0, t1: epochNow(), shards: [] }),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(() => {
    tick();
    timer = setInterval(tick, SWEEP_MS);
  }, phaseMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
      await sweeper.stop();
    },
  };
}

/** Sweeps of one shard by different sweepers whose time spans overlap. */
export function overlappingShardSweeps(sweeps: SweepRecord[]): number {
  let n = 0;
  for (let i = 0; i < sweeps.length; i++) {
    const a = sweeps[i] as SweepRecord;
    for (let j = i + 1; j < sweeps.length; j++) {
      const b = sweeps[j] as SweepRecord;
      if (a.sweeper === b.sweeper || a.t1 <= b.t0 || b.t1 <= a.t0) continue;
      if (a.shards.some((s) => b.shards.includes(s))) n++;
    }
  }
  return n;
}
