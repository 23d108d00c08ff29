/** The tables the schedules scenario prints: one row per run (sweeper count), then each run's details. */
import { SCHEDULE_SHARDS } from "../lib/store/schedules.js";
import type { ProfileSummary } from "./profile.js";
import { GOAL_MS, GOAL_SCHEDULES, LOOKAHEAD_MS, SWEEP_MS } from "./schedules-config.js";
import type { ScheduleRunFigures } from "./schedules-figures.js";
import { round, type Summary, table } from "./stats.js";

function profileTables(title: string, p: ProfileSummary): string[] {
  return [
    `${title} (${p.totalMs} ms):`,
    table([
      ["time by owner", "ms", "%"],
      ...p.byOwner.slice(0, 10).map((o) => [o.owner, o.ms, o.pct]),
    ]),
    table([
      ["busiest functions (self time)", "ms", "%"],
      ...p.topFunctions.slice(0, 12).map((f) => [f.fn.slice(0, 110), f.ms, f.pct]),
    ]),
  ];
}

/** A table with one row per run: [header, cell] per column. */
type Column = [string, (r: ScheduleRunFigures) => string | number];
const perRun = (runs: ScheduleRunFigures[], cols: Column[]) =>
  table([cols.map((c) => c[0]), ...runs.map((r) => cols.map((c) => c[1](r)))]);
const secs = (ms: number) => round(ms / 1000, 1);
const pcts = (x: Summary) => `${x.p50} / ${x.p90} / ${x.p99} / ${x.max}`;

/**
 * Every table of the scenario, in print order: `n` schedules, the figures of each run, the best
 * run (highest fires/s) and whether the goal was met.
 */
export function scheduleTables(
  n: number,
  runs: ScheduleRunFigures[],
  best: ScheduleRunFigures,
  goalMet: boolean,
): string[] {
  return [
    `== schedules: ${n} one-time schedules of one ONLINE workflow, all due at T0; sweepers in this process every ${SWEEP_MS} ms with ${LOOKAHEAD_MS} ms look-ahead; ${SCHEDULE_SHARDS} shards; no dispatcher (START commands and their signals pile up)`,
    `schedules per shard: ${runs[0]?.perShard.join(", ")}`,
    perRun(runs, [
      ["sweepers", (r) => r.sweepers],
      ["created/s", (r) => r.creation.perSecond],
      ["create s", (r) => secs(r.creation.ms)],
      ["slack before T0 s", (r) => secs(r.creation.slackMs)],
      ["fired", (r) => r.ledgerChecked.fired],
      [
        "never fired (dynalite index clash / expected)",
        (r) =>
          `${r.neverFired.count} (${r.neverFired.sharingIndexEntry} / ${r.neverFired.expectedSharing})`,
      ],
      ["fires/s", (r) => r.firesPerSecond],
      ["T0→last fire s", (r) => secs(r.t0ToLastFireMs)],
      ["T0→last signal s", (r) => secs(r.t0ToLastSignalMs)],
      [`within ${GOAL_MS / 1000} s %`, (r) => r.withinGoalPct],
      ["requests/fire", (r) => r.requests.perFire],
      ["DynamoDB/fire", (r) => r.requests.dynamodbPerFire],
      ["SQS/fire", (r) => r.requests.sqsPerFire],
      ["mean in flight", (r) => r.meanInFlight],
    ]),
    "lateness, ms (p50 / p90 / p99 / max): ledger = fire.actualTime − nominal (decision time; negative = within the look-ahead); written = fire record written − nominal (this process's clock); signal = START signal accepted by SQS − nominal",
    perRun(runs, [
      ["sweepers", (r) => r.sweepers],
      ["ledger", (r) => pcts(r.ledgerLatenessMs)],
      ["written", (r) => pcts(r.writtenLatenessMs)],
      ["signal", (r) => pcts(r.signalLatenessMs)],
    ]),
    "CPU over the window (% of one core; 2 cores = 200 %), CPU ms per fire, and the fires/s those costs allow (ceiling: one process alone on a core; machine: all three on every core, nothing else running):",
    perRun(runs, [
      ["sweepers", (r) => r.sweepers],
      ["window s", (r) => secs(r.cpu.windowMs)],
      ["bench process", (r) => r.cpu.benchPct],
      ["dynalite process", (r) => r.cpu.dynalitePct],
      ["fauxqs process", (r) => r.cpu.fauxqsPct],
      ["others", (r) => r.cpu.othersPct],
      ["others before", (r) => r.cpu.othersBeforePct],
      ["bench ELU", (r) => r.cpu.eventLoopUtilization],
      ["ms/fire bench", (r) => r.cpu.perFireMs.bench],
      ["dynalite", (r) => r.cpu.perFireMs.dynalite],
      ["fauxqs", (r) => r.cpu.perFireMs.fauxqs],
      ["ceiling: bench", (r) => r.cpu.ceilingFiresPerSecond.bench],
      ["dynalite", (r) => r.cpu.ceilingFiresPerSecond.dynalite],
      ["machine", (r) => r.cpu.ceilingFiresPerSecond.machine],
    ]),
    perRun(runs, [
      ["sweepers", (r) => r.sweepers],
      ["sweeps", (r) => r.sweeps.count],
      ["sweep ms p50", (r) => r.sweeps.durationMs.p50],
      ["max", (r) => r.sweeps.durationMs.max],
      ["listDue queries", (r) => r.sweeps.listDueQueries],
      ["duplicate fire writes", (r) => r.sweeps.duplicateFireWrites],
      ["stale reads", (r) => r.sweeps.staleReads],
      ["lost updates", (r) => r.sweeps.lostUpdates],
      ["overlapping shard sweeps", (r) => r.sweeps.overlappingShardSweeps],
      ["signals queued", (r) => r.signalsQueued],
      ["ledger FIRED", (r) => r.ledgerChecked.fired],
      [
        "listFires sample ≠",
        (r) => `${r.ledgerChecked.mismatches}/${r.ledgerChecked.listFiresSample}`,
      ],
    ]),
    ...runs.flatMap((r) => runDetails(r)),
    goalMet
      ? `goal met: ${GOAL_SCHEDULES} fired within ${GOAL_MS / 1000} s of nominal`
      : `goal (${GOAL_SCHEDULES} fired within ${GOAL_MS / 1000} s) not met; at the best rate (${best.firesPerSecond} fires/s, ${best.sweepers} sweeper(s)) ${GOAL_SCHEDULES} take ≈ ${round(GOAL_SCHEDULES / best.firesPerSecond, 0)} s to fire and ≈ ${round(GOAL_SCHEDULES / best.creation.perSecond, 0)} s to create${n < GOAL_SCHEDULES ? ` (extrapolated from ${n})` : ""}; ${GOAL_MS / 1000} s needs ≥ ${GOAL_SCHEDULES / (GOAL_MS / 1000)} fires/s`,
  ];
}

/** One run's requests by operation, request latencies, errors and profiles. */
function runDetails(r: ScheduleRunFigures): string[] {
  const ops = Object.entries(r.requests.byOperationPerFire)
    .map(([k, v]) => `${k.replace(/^(DynamoDB|SQS)\./, "")} ${v}`)
    .join(", ");
  const errors = Object.keys(r.sweeps.errors).length
    ? `; sweeper errors: ${JSON.stringify(r.sweeps.errors)}`
    : "";
  const latency = Object.entries(r.latencyMs).map(([op, s]) => [
    op,
    s.n,
    s.mean,
    s.p50,
    s.p90,
    s.p99,
    s.max,
    s.totalMs,
  ]);
  return [
    `${r.sweepers} sweeper(s): requests per fire by operation: ${ops}${errors}`,
    table([
      ["request latency ms", "count", "mean", "p50", "p90", "p99", "max", "sum ms"],
      ...latency,
    ]),
    ...(r.profile
      ? profileTables(`bench process profile, firing window, ${r.sweepers} sweeper(s)`, r.profile)
      : []),
    ...Object.entries(r.emulatorProfiles ?? {}).flatMap(([k, p]) =>
      profileTables(
        `${k} process profile (its whole life: creation and firing), ${r.sweepers} sweeper(s)`,
        p,
      ),
    ),
  ];
}
