/**
 * From a metered run's counts (cost-run.ts) to what AWS would bill and the tables of
 * `npm run bench -- cost` (pure).
 */
import type { CostCounts } from "./cost-meter.js";
import { perMillionTasks, type Usage } from "./cost-prices.js";

/** Lambda memory sizes of the CDK stack (cdk/shoal.ts, cdk/handler-function.ts), GB. */
export const LAMBDA_GB = { dispatcher: 0.5, worker: 1, api: 0.5, trigger: 0.5 } as const;

/** CloudWatch Logs counts 26 bytes per log event on top of its message (CloudWatch pricing). */
export const LOG_EVENT_OVERHEAD_BYTES = 26;

/** Sum of counts whose label matches `re`. */
export function sum(counts: CostCounts, re: RegExp): number {
  let n = 0;
  for (const [k, v] of Object.entries(counts)) if (re.test(k)) n += v;
  return n;
}

/** What one run would be billed, before prices (see cost-prices.ts `Usage`), plus its parts. */
export interface Metered extends Usage {
  /** Reported by the backend (ReturnConsumedCapacity): table writes, index writes, reads. */
  reported: { tableWrites: number; indexWrites: number; reads: number };
  /** Computed table units of successful writes (comparable with the reported ones). */
  computedOkTableWrites: number;
  computedIndexWrites: number;
  failedConditionalWrites: number;
  dispatcherInvocations: number;
  workerInvocations: number;
  triggerInvocations: number;
  /** The tasks' own compute at the worker's memory size, GB-s (not in the totals). */
  taskComputeGbSeconds: number;
}

/** Usage of a run from its counts; `taskMs` is the tasks' own run time (left out of GB-s). */
export function meter(counts: CostCounts, tasks: number, taskMs: number): Metered {
  const c = (k: string) => counts[k] ?? 0;
  const dispatcherInvocations = c("lambda.dispatcher.calls");
  const workerInvocations = c("lambda.worker.calls");
  // The TriggersOnShoalEvents rule invokes the trigger function once per instance event.
  const triggerInvocations = c("events.instance");
  // Handler time without the meter's own reads (cost-meter.ts), and without the task's run.
  const workerMs = Math.max(0, c("lambda.worker.ms") - c("meter.ms.worker") - taskMs);
  const dispatcherMs = Math.max(0, c("lambda.dispatcher.ms") - c("meter.ms.dispatcher"));
  return {
    tasks,
    writeUnits: sum(counts, /^ddb\.cmp\.w\.[^.]+$/),
    readUnits: sum(counts, /^ddb\.cmp\.r\./),
    sqsStandardRequests: sum(counts, /^sqs\.std\./),
    sqsFifoRequests: sum(counts, /^sqs\.fifo\./),
    lambdaInvocations:
      dispatcherInvocations + workerInvocations + c("lambda.api.calls") + triggerInvocations,
    lambdaGbSeconds:
      (dispatcherMs / 1000) * LAMBDA_GB.dispatcher + (workerMs / 1000) * LAMBDA_GB.worker,
    eventEntries: c("events.billed"),
    logBytes: c("logs.bytes") + LOG_EVENT_OVERHEAD_BYTES * c("logs.lines"),
    reported: {
      tableWrites: sum(counts, /^ddb\.rep\.w\.[^/]+$/),
      indexWrites: sum(counts, /^ddb\.rep\.w\.[^/]+\/.+$/),
      reads: sum(counts, /^ddb\.rep\.r\./),
    },
    computedOkTableWrites: sum(counts, /^ddb\.cmp\.wok\./),
    computedIndexWrites: sum(counts, /^ddb\.cmp\.w\.[^./]+\/[^.]+$/),
    failedConditionalWrites: sum(counts, /^ddb\.fail\./),
    dispatcherInvocations,
    workerInvocations,
    triggerInvocations,
    taskComputeGbSeconds: (taskMs / 1000) * LAMBDA_GB.worker,
  };
}

/** Write units by table and GSI (`tasks`, `tasks/leases`, …), computed. */
export function writeUnitsBySource(counts: CostCounts): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(counts)) {
    const m = /^ddb\.cmp\.w\.([^.]+)$/.exec(k);
    if (m?.[1]) out[m[1]] = (out[m[1]] ?? 0) + v;
  }
  return out;
}

/** Table write units by table and operation (`instances.UpdateItem`), computed. */
export function writeUnitsByOperation(counts: CostCounts): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(counts)) {
    const m = /^ddb\.cmp\.w\.([^./]+\.[A-Za-z]+)$/.exec(k);
    if (m?.[1]) out[m[1]] = v;
  }
  return out;
}

/** Whether reported and computed units agree (null when the backend reported none of that kind). */
export function agreement(reported: number, computed: number): string {
  if (reported === 0) return "not reported";
  const d = Math.abs(reported - computed) / Math.max(reported, computed);
  return d < 0.005 ? "agree" : `differ ${(d * 100).toFixed(1)} %`;
}

/** $ per 1M tasks of a run, by driver and in all. */
export const dollars = (m: Metered) => perMillionTasks(m);

/** `x` per task, rounded to 2 decimals. */
export const perTask = (x: number, tasks: number): number =>
  Math.round((x / Math.max(1, tasks)) * 100) / 100;

/** Tasks of a DAG from which more than one task depends: the fan-outs a state machine would need. */
export function fanOuts(
  tasks: ReadonlyArray<{ code: string; upstream: readonly string[] }>,
): number {
  const children = new Map<string, number>();
  for (const t of tasks) for (const u of t.upstream) children.set(u, (children.get(u) ?? 0) + 1);
  const roots = tasks.filter((t) => t.upstream.length === 0).length;
  return [...children.values()].filter((n) => n > 1).length + (roots > 1 ? 1 : 0);
}
