/**
 * 6. Schedule firing: N one-time (`at`) schedules of one ONLINE workflow, all due at the same
 * instant T0, fired by S schedule sweepers (lib/engine/schedule-sweeper.ts) in this process, each
 * sweeping every 1 s with a 1 s look-ahead, as `shoal sweeper` does. The emulators run in their
 * own processes, as in standalone; no dispatcher runs, so the START commands and their delayed
 * signals pile up unconsumed (the figure is the sweepers' firing alone).
 *
 * The goal it checks (issue): 100,000 schedules spread over the shards, due in one minute, all
 * fired within 5 s of their nominal time. Figures: creation rate, fires/s, lateness from the fire
 * ledger (actualTime − nominalTime: when the sweeper decided, up to the look-ahead early) and from
 * this process's clock (when the fire record, the signal and the schedule update were written),
 * T0 → last fire, AWS requests per fire, CPU of the bench process and of each emulator process.
 * A run ends when every schedule has its fire record, or when nothing moved for a while and the
 * due index lists nothing more: dynalite loses some index entries of schedules due at one instant
 * (see schedules-ledger.ts dynaliteIndexPrefix), and those never fire; the figures say how many.
 *
 * The parts: settings (schedules-config.ts), creating schedules (schedules-create.ts), watching
 * the sweepers (schedules-instrument.ts, schedules-sweep-loop.ts), one run (schedules-run.ts),
 * the ledger read back (schedules-ledger.ts), the figures (schedules-figures.ts) and the tables
 * (schedules-tables.ts).
 */
import type { ScenarioOptions, ScenarioResult } from "./scenario.js";
import { DEFAULT_SCHEDULES, GOAL_SCHEDULES } from "./schedules-config.js";
import type { ScheduleRunFigures } from "./schedules-figures.js";
import { runOnce } from "./schedules-run.js";
import { scheduleTables } from "./schedules-tables.js";

/**
 * The scenario: `opts.schedules` schedules (default 20,000), once per sweeper count in
 * `opts.sweepers` (default 1 and 2), each on fresh emulators. With `opts.profile`, CPU profiles
 * of the bench process (firing window) and of both emulator processes (their whole life).
 */
export async function schedules(opts: ScenarioOptions): Promise<ScenarioResult> {
  const n = opts.schedules ?? DEFAULT_SCHEDULES;
  const runs: ScheduleRunFigures[] = [];
  for (const s of opts.sweepers ?? [1, 2]) runs.push(await runOnce(n, s, opts.profile));
  const best = runs.reduce((a, b) => (b.firesPerSecond > a.firesPerSecond ? b : a));
  const goalMet = n >= GOAL_SCHEDULES && runs.some((r) => r.complete && r.withinGoalPct === 100);
  const tables = scheduleTables(n, runs, best, goalMet);
  return {
    name: "schedules",
    summary: { schedules: n, goalMet, bestFiresPerSecond: best.firesPerSecond, runs },
    tables,
  };
}
