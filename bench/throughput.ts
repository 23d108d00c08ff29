/**
 * 2. Throughput on Seismology (1,000 independent tasks and one joining them), every command
 * `true`, once per worker-slot count: tasks/s, the run's phases and the dispatcher's cycle.
 */
import { convertWfcommons, type WorkflowDefinitionBody } from "../lib/import/wfcommons.js";
import { dispatcherCycle } from "./anatomy.js";
import { type InstanceView, ms } from "./api.js";
import { startHarness } from "./harness.js";
import {
  loadTrace,
  type ScenarioOptions,
  type ScenarioResult,
  stamp,
  upstreamMap,
} from "./scenario.js";
import { round, summarize, table } from "./stats.js";
import { dispatchDelays, type RunReport, runWorkflow } from "./workflow-run.js";
import {
  compact,
  latencyTable,
  profileTable,
  REQUEST_HEADER,
  requestRows,
} from "./workflow-run-report.js";

/** Phases of a wide run: sources (no upstream) and joins (the rest). */
interface Phases {
  /** Instance createdAt → last source submittedAt: the dispatcher writing and sending the fan-out. */
  fanOutMs: number;
  /** First source start → last source end, and the sources' rate over it. */
  sourcesSpanMs: number;
  sourcesPerSecond: number;
  /** Last source end → first join start: the dispatcher working through the sources' events. */
  drainMs: number;
}

function phases(instance: InstanceView, upstream: ReadonlyMap<string, readonly string[]>): Phases {
  const sources = instance.tasks.filter((t) => (upstream.get(t.code) ?? []).length === 0);
  const joins = instance.tasks.filter((t) => (upstream.get(t.code) ?? []).length > 0);
  const first = Math.min(...sources.map((t) => ms(t.startedAt)));
  const last = Math.max(...sources.map((t) => ms(t.endedAt)));
  const span = last - first;
  return {
    fanOutMs: Math.max(...sources.map((t) => ms(t.submittedAt))) - ms(instance.createdAt),
    sourcesSpanMs: span,
    sourcesPerSecond: round(sources.length / (span / 1000), 1),
    drainMs: joins.length ? Math.min(...joins.map((t) => ms(t.startedAt))) - last : Number.NaN,
  };
}

/**
 * 2. Throughput: Seismology (1,000 independent tasks and 1 task that joins them), every command
 * `true`.
 */
export async function throughput(opts: ScenarioOptions): Promise<ScenarioResult> {
  const conv = convertWfcommons(loadTrace("seismology-chameleon-1000p-001.json"), { timeScale: 0 });
  const def: WorkflowDefinitionBody = {
    description: "seismology, every command 'true'",
    tasks: conv.definition.tasks.map((t) => ({ ...t, command: "true" })),
  };
  const up = upstreamMap(def);
  const workerList = opts.workers ?? [8, 16, 32];
  const runs: Array<{
    workers: number;
    r: RunReport;
    tasksPerSecond: number;
    delays: ReturnType<typeof summarize>;
    cycle: ReturnType<typeof dispatcherCycle> | undefined;
    phases: Phases;
  }> = [];
  for (const workers of workerList) {
    const h = await startHarness(
      workers,
      opts.externalProcesses ? { externalProcesses: opts.externalProcesses } : {},
    );
    try {
      const r = await runWorkflow(h, `bench-seismology-${workers}-${stamp()}`, def, {
        deadlineMs: 170_000,
        profile: opts.profile,
        pollMs: 200,
        trace: !opts.profile,
      });
      const tasksPerSecond = round(r.tasks / (r.spanMs / 1000), 1);
      const cycle = r.trace ? dispatcherCycle(r.trace.calls, r.trace.requests) : undefined;
      runs.push({
        workers,
        r,
        tasksPerSecond,
        delays: summarize(dispatchDelays(r.instance, up)),
        cycle,
        phases: phases(r.instance, up),
      });
    } finally {
      await h.stop();
    }
  }
  const best = runs.reduce((a, b) => (b.tasksPerSecond > a.tasksPerSecond ? b : a));
  const tables = [
    `== throughput: Seismology, ${conv.taskCount} tasks (${conv.taskCount - 1} independent + 1 joining them all), commands 'true'` +
      (opts.externalProcesses
        ? `, worker slots in ${opts.externalProcesses} separate 'shoal worker' process(es)`
        : ", built-in worker"),
    table([
      [
        "workers",
        "state",
        "tasks/s",
        "span ms",
        "wall ms (POST→SUCCESS)",
        "POST→first start",
        "last end→SUCCESS",
        "main CPU %",
        opts.externalProcesses ? "worker procs CPU %" : "children CPU %",
        "dynalite CPU %",
        "fauxqs CPU %",
        "others' CPU %",
        "ELU",
        "events/dispatcher call",
      ],
      ...runs.map(({ workers, r, tasksPerSecond }) => [
        workers,
        r.state,
        tasksPerSecond,
        r.spanMs,
        r.wallMs,
        r.firstStartMs,
        r.finishLagMs,
        r.cpu.cpuMainPct,
        r.cpu.cpuWorkerProcessesPct ?? r.cpu.cpuChildrenPct,
        r.cpu.cpuDynamoEmulatorPct ?? Number.NaN,
        r.cpu.cpuSqsEmulatorPct ?? Number.NaN,
        r.cpu.otherProcessesPct,
        r.cpu.eventLoopUtilization,
        r.dispatcher.meanBatch,
      ]),
    ]),
    `best: ${best.tasksPerSecond} tasks/s with ${best.workers} worker slots`,
    "phases (ms): fan-out = POST → last independent task submitted; sources = first start → last end of the independent tasks; drain = their last end → the join's start (the dispatcher working through their events)",
    table([
      ["workers", "fan-out ms", "sources span ms", "sources tasks/s", "drain ms"],
      ...runs.map(({ workers, phases: p }) => [
        workers,
        p.fanOutMs,
        p.sourcesSpanMs,
        p.sourcesPerSecond,
        p.drainMs,
      ]),
    ]),
    "dispatcher cycle on the instance (invoke → handle → delete → receive → invoke), ms:",
    table([
      [
        "workers",
        "invocations",
        "events/s",
        "handler p50",
        "p90",
        "mean",
        "gap to next p50",
        "p90",
        "mean",
        "delete sent after p50",
        "delete latency p50",
      ],
      ...runs
        .filter((x) => x.cycle)
        .map(({ workers, cycle: c }) => [
          workers,
          c?.invocations ?? 0,
          c?.eventsPerSecond ?? 0,
          c?.handler.p50 ?? 0,
          c?.handler.p90 ?? 0,
          c?.handler.mean ?? 0,
          c?.gap.p50 ?? 0,
          c?.gap.p90 ?? 0,
          c?.gap.mean ?? 0,
          c?.deleteStartDelay.p50 ?? 0,
          c?.deleteLatency.p50 ?? 0,
        ]),
    ]),
    table([
      REQUEST_HEADER,
      ...runs.flatMap(({ workers, r }) => requestRows(`${workers} workers`, r)),
    ]),
    `request latency, ${best.workers} workers:`,
    latencyTable(best.r),
    ...runs.flatMap(({ r }) => profileTable(r)),
  ];
  return {
    name: "throughput",
    summary: {
      tasks: conv.taskCount,
      ...(opts.externalProcesses ? { externalWorkerProcesses: opts.externalProcesses } : {}),
      best: { workers: best.workers, tasksPerSecond: best.tasksPerSecond, wallMs: best.r.wallMs },
      curve: runs.map(({ workers, r, tasksPerSecond, delays, cycle, phases: p }) => ({
        workers,
        state: r.state,
        tasksPerSecond,
        phases: p,
        dispatcherCycle: cycle,
        spanMs: r.spanMs,
        wallMs: r.wallMs,
        readyToStartMs: delays,
        run: compact(r),
      })),
    },
    tables,
  };
}
