/**
 * How the workflow scenarios (hop.ts, throughput.ts, makespan.ts) print a run's report
 * (workflow-run.ts `RunReport`): request counts per task, CPU, request latency and the CPU
 * profile, and the compact view of a run kept in the JSON file.
 */
import { round, table } from "./stats.js";
import type { RunReport } from "./workflow-run.js";

/** Compact view of a run for the JSON file (without the instance's task list). */
export function compact(r: RunReport): Record<string, unknown> {
  const { instance: _omit, trace: _trace, ...rest } = r;
  return rest;
}

/** One row under REQUEST_HEADER: a run's requests in all, per task, idle, and its top five operations per task. */
export function requestRows(label: string, r: RunReport): Array<Array<string | number>> {
  const q = r.requests;
  const top = Object.entries(q.byOperation)
    .slice(0, 5)
    .map(([op, n]) => `${op.replace(/^(DynamoDB|SQS)\./, "")} ${round(n / r.tasks, 2)}`)
    .join(", ");
  return [
    [
      label,
      r.tasks,
      q.total,
      q.perTask,
      q.dynamodbPerTask,
      q.sqsPerTask,
      q.background.sweeper + q.background.emptyLongPolls,
      q.background.benchPolls,
      q.enginePerTask,
      top,
    ],
  ];
}

/** Header of the request-count table (rows from requestRows). */
export const REQUEST_HEADER = [
  "run",
  "tasks",
  "requests",
  "per task",
  "DynamoDB/task",
  "SQS/task",
  "idle (sweeper + expired long polls)",
  "bench polls",
  "engine/task",
  "top operations per task",
];

/** One line: CPU of each process (% of one core), event-loop utilisation and dispatcher batching. */
export function cpuLine(r: RunReport): string {
  return (
    `CPU (% of one core): main thread ${r.cpu.cpuMainPct}%, task processes ${r.cpu.cpuChildrenPct}%, ` +
    (r.cpu.cpuDynamoEmulatorPct !== undefined
      ? `dynalite process ${r.cpu.cpuDynamoEmulatorPct}%, fauxqs process ${r.cpu.cpuSqsEmulatorPct}%, `
      : "emulators in the main thread, ") +
    `other processes on the machine ${r.cpu.otherProcessesPct}%, ` +
    `event loop utilisation ${r.cpu.eventLoopUtilization} over ${r.cpu.wallMs} ms; ` +
    `dispatcher: ${r.dispatcher.messages} events in ${r.dispatcher.batches} invocations (mean ${r.dispatcher.meanBatch}, max ${r.dispatcher.maxBatch})`
  );
}

/** Client-side request latency of the `top` busiest operations, ms. */
export function latencyTable(r: RunReport, top = 10): string {
  const rows: Array<Array<string | number>> = [
    ["operation", "count", "mean ms", "p50", "p90", "p99", "max", "sum ms"],
  ];
  for (const [op, s] of Object.entries(r.latencyByOperation).slice(0, top)) {
    rows.push([op, s.n, s.mean, s.p50, s.p90, s.p99, s.max, s.totalMs]);
  }
  return table(rows);
}

/** The run's CPU profile by owner and busiest functions; nothing without --profile. */
export function profileTable(r: RunReport): string[] {
  if (!r.profile) return [];
  const p = r.profile;
  const rows: Array<Array<string | number>> = [["main thread time by owner", "ms", "%"]];
  for (const o of p.byOwner.slice(0, 14)) rows.push([o.owner, o.ms, o.pct]);
  const fns: Array<Array<string | number>> = [["busiest functions (self time)", "ms", "%"]];
  for (const f of p.topFunctions.slice(0, 12)) fns.push([f.fn.slice(0, 110), f.ms, f.pct]);
  return [`CPU profile ${p.file} (${p.totalMs} ms)`, table(rows), table(fns)];
}
