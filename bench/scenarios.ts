/**
 * The benchmark scenarios. Each starts its own standalone (fresh temp data dir), runs, stops it,
 * and returns a JSON-able result plus printable tables.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { convertWfcommons, type WorkflowDefinitionBody } from "../lib/import/wfcommons.js";
import { readWfcommonsFile, WFCOMMONS_DIR } from "../lib/import/wfcommons-file.js";
import { dispatcherCycle, hopAnatomy } from "./anatomy.js";
import { type InstanceView, ms } from "./api.js";
import { startHarness } from "./harness.js";
import { percentile, round, summarize, table } from "./stats.js";
import { dispatchDelays, type RunReport, runWorkflow } from "./workflow-run.js";

export interface ScenarioOptions {
  profile: boolean;
  /** Worker slots override (comma list for throughput). */
  workers?: number[];
  /** Run the worker slots in this many `shoal worker` processes instead of in-process. */
  externalProcesses?: number;
  /** schedules scenario: how many schedules (default 20,000; the goal is 100,000). */
  schedules?: number;
  /** schedules scenario: sweeper counts, one run each (default 1,2). */
  sweepers?: number[];
}

export interface ScenarioResult {
  name: string;
  summary: Record<string, unknown>;
  tables: string[];
}

/** A shipped trace (examples/wfcommons/, gzipped), or one from SHOAL_WFCOMMONS_DIR. */
function loadTrace(file: string): unknown {
  const dir = process.env.SHOAL_WFCOMMONS_DIR;
  if (dir && existsSync(join(dir, file))) return readWfcommonsFile(join(dir, file));
  return readWfcommonsFile(join(WFCOMMONS_DIR, `${file}.gz`));
}

const stamp = () => Date.now().toString(36);

function upstreamMap(def: WorkflowDefinitionBody): Map<string, string[]> {
  return new Map(def.tasks.map((t) => [t.code, t.upstream]));
}

/** Compact view of a run for the JSON file (without the instance's task list). */
function compact(r: RunReport): Record<string, unknown> {
  const { instance: _omit, trace: _trace, ...rest } = r;
  return rest;
}

function requestRows(label: string, r: RunReport): Array<Array<string | number>> {
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

function cpuLine(r: RunReport): string {
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

function latencyTable(r: RunReport, top = 10): string {
  const rows: Array<Array<string | number>> = [
    ["operation", "count", "mean ms", "p50", "p90", "p99", "max", "sum ms"],
  ];
  for (const [op, s] of Object.entries(r.latencyByOperation).slice(0, top)) {
    rows.push([op, s.n, s.mean, s.p50, s.p90, s.p99, s.max, s.totalMs]);
  }
  return table(rows);
}

function profileTable(r: RunReport): string[] {
  if (!r.profile) return [];
  const p = r.profile;
  const rows: Array<Array<string | number>> = [["main thread time by owner", "ms", "%"]];
  for (const o of p.byOwner.slice(0, 14)) rows.push([o.owner, o.ms, o.pct]);
  const fns: Array<Array<string | number>> = [["busiest functions (self time)", "ms", "%"]];
  for (const f of p.topFunctions.slice(0, 12)) fns.push([f.fn.slice(0, 110), f.ms, f.pct]);
  return [`CPU profile ${p.file} (${p.totalMs} ms)`, table(rows), table(fns)];
}

// ---------------------------------------------------------------------------------------------

/** 1. Hop latency over a 100-task chain of no-op SHELL tasks. */
export async function hop(opts: ScenarioOptions): Promise<ScenarioResult> {
  const workers = opts.workers?.[0] ?? 2;
  const n = 100;
  const tasks = Array.from({ length: n }, (_, i) => ({
    code: `t${i + 1}`,
    type: "SHELL" as const,
    upstream: i === 0 ? [] : [`t${i}`],
    command: "true",
  }));
  const h = await startHarness(workers);
  try {
    // Idle request rate first (sweeper ticks, long polls), to separate it from per-task counts.
    await new Promise((r) => setTimeout(r, 1_000)); // the pollers' first receives
    h.instr.reset();
    await new Promise((r) => setTimeout(r, 5_000));
    const idleUsage = h.instr.usage();
    const idleRate = round(h.instr.counter.total() / (idleUsage.wallMs / 1000), 2);
    const idleCounts = h.instr.counts();

    const r = await runWorkflow(
      h,
      `bench-hop-${stamp()}`,
      { description: "hop benchmark", tasks },
      {
        deadlineMs: 120_000,
        profile: opts.profile,
        trace: !opts.profile,
      },
    );
    const anatomy = r.trace
      ? hopAnatomy(r.instance, n, r.trace.requests, r.trace.offset)
      : undefined;
    const byCode = new Map(r.instance.tasks.map((t) => [t.code, t]));
    const hops: number[] = [];
    const endToSubmit: number[] = [];
    const submitToStart: number[] = [];
    const runTimes: number[] = [];
    for (let i = 1; i <= n; i++) {
      const t = byCode.get(`t${i}`);
      if (!t) throw new Error(`task t${i} missing from the instance`);
      runTimes.push(ms(t.endedAt) - ms(t.startedAt));
      if (i === 1) continue;
      const p = byCode.get(`t${i - 1}`);
      hops.push(ms(t.startedAt) - ms(p?.endedAt));
      endToSubmit.push(ms(t.submittedAt) - ms(p?.endedAt));
      submitToStart.push(ms(t.startedAt) - ms(t.submittedAt));
    }
    const hopS = summarize(hops);
    const summary = {
      workers,
      state: r.state,
      hopMs: { median: hopS.p50, p90: hopS.p90, max: hopS.max, mean: hopS.mean },
      parentEndToChildSubmittedMs: summarize(endToSubmit),
      childSubmittedToStartedMs: summarize(submitToStart),
      taskRunMs: summarize(runTimes),
      idle: {
        requestsPerSecond: idleRate,
        counts: idleCounts,
        cpuMainPct: round(idleUsage.cpuMainPct, 1),
      },
      ...(anatomy ? { anatomy } : {}),
      run: compact(r),
    };
    const tables = [
      `== hop: 100-task chain of 'true', ${workers} worker slots — ${r.state}, wall ${r.wallMs} ms (POST → SUCCESS), span ${r.spanMs} ms`,
      table([
        ["figure (ms)", "median", "p90", "max", "mean"],
        ["hop = child.startedAt − parent.endedAt (99)", hopS.p50, hopS.p90, hopS.max, hopS.mean],
        ["  parent.endedAt → child.submittedAt", ...pick(summarize(endToSubmit))],
        ["  child.submittedAt → child.startedAt", ...pick(summarize(submitToStart))],
        ["task run (startedAt → endedAt) of 'true'", ...pick(summarize(runTimes))],
      ]),
      ...(anatomy
        ? [
            `anatomy of a hop (${anatomy.hopsAnalysed} hops; each step from the previous step's end to this request's return; ~${anatomy.concurrentRequestsPerHop} other requests in flight per hop):`,
            table([
              ["step (ms)", "elapsed p50", "p90", "mean", "its request p50", "p90"],
              ...anatomy.steps.flatMap((st) => [
                [
                  st.name,
                  st.elapsed.p50,
                  st.elapsed.p90,
                  st.elapsed.mean,
                  st.requestLatency.p50,
                  st.requestLatency.p90,
                ],
                ...Object.entries(st.nested).map(([op, x]) => [
                  `    inside: ${op} (${x.perHop} per hop)`,
                  Number.NaN,
                  Number.NaN,
                  Number.NaN,
                  x.p50,
                  x.p90,
                ]),
              ]),
              [
                "worker: receive → claim timestamp (child.startedAt)",
                anatomy.tail.p50,
                anatomy.tail.p90,
                anatomy.tail.mean,
                Number.NaN,
                Number.NaN,
              ],
            ]),
          ]
        : []),
      cpuLine(r),
      `idle standalone: ${idleRate} requests/s (${Object.entries(idleCounts)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")} in 5 s)`,
      table([REQUEST_HEADER, ...requestRows("hop", r)]),
      latencyTable(r),
      ...profileTable(r),
    ];
    return { name: "hop", summary, tables };
  } finally {
    await h.stop();
  }
}

function pick(s: ReturnType<typeof summarize>): number[] {
  return [s.p50, s.p90, s.max, s.mean];
}

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

/** List scheduling with zero overhead: the makespan `workers` slots allow at best (greedy). */
export function idealMakespan(def: WorkflowDefinitionBody, workers: number): number {
  const n = def.tasks.length;
  const index = new Map(def.tasks.map((t, i) => [t.code, i]));
  const dur = def.tasks.map((t) => Number(/^sleep ([\d.]+)$/.exec(t.command)?.[1] ?? 0));
  const children: number[][] = Array.from({ length: n }, () => []);
  const pending = def.tasks.map((t, i) => {
    for (const u of t.upstream) children[index.get(u) as number]?.push(i);
    return t.upstream.length;
  });
  const ready: number[] = [];
  for (let i = 0; i < n; i++) if (pending[i] === 0) ready.push(i);
  const running: Array<{ end: number; i: number }> = [];
  let now = 0;
  let done = 0;
  while (done < n) {
    while (running.length < workers && ready.length > 0) {
      const i = ready.shift() as number;
      running.push({ end: now + (dur[i] ?? 0), i });
    }
    running.sort((a, b) => a.end - b.end);
    const next = running.shift();
    if (!next) throw new Error("deadlock in simulation");
    now = next.end;
    done++;
    for (const c of children[next.i] ?? []) if (--(pending[c] as number) === 0) ready.push(c);
  }
  return now;
}

/** Tasks on the (weighted) critical path. */
function criticalPathTasks(def: WorkflowDefinitionBody): number {
  const dur = new Map(
    def.tasks.map((t) => [t.code, Number(/^sleep ([\d.]+)$/.exec(t.command)?.[1] ?? 0)]),
  );
  const finish = new Map<string, { end: number; hops: number }>();
  // Definitions from the converter are in spec order, not necessarily topological: iterate.
  const remaining = [...def.tasks];
  while (remaining.length) {
    const before = remaining.length;
    for (let k = remaining.length - 1; k >= 0; k--) {
      const t = remaining[k] as (typeof remaining)[number];
      if (!t.upstream.every((u) => finish.has(u))) continue;
      let best = { end: 0, hops: 0 };
      for (const u of t.upstream) {
        const f = finish.get(u) as { end: number; hops: number };
        if (f.end > best.end || (f.end === best.end && f.hops > best.hops)) best = f;
      }
      finish.set(t.code, { end: best.end + (dur.get(t.code) ?? 0), hops: best.hops + 1 });
      remaining.splice(k, 1);
    }
    if (remaining.length === before) throw new Error("cycle");
  }
  let top = { end: 0, hops: 0 };
  for (const f of finish.values())
    if (f.end > top.end || (f.end === top.end && f.hops > top.hops)) top = f;
  return top.hops;
}

/**
 * The chain that decided the makespan: from the last task to end, back through its latest-ending
 * parent, to a root. gapMs = startedAt − parent.endedAt (0 for the root: measured from first start).
 */
function realizedPath(
  instance: InstanceView,
  upstream: ReadonlyMap<string, readonly string[]>,
): Array<{ code: string; gapMs: number; runMs: number }> {
  const byCode = new Map(instance.tasks.map((t) => [t.code, t]));
  let cur = instance.tasks.reduce((a, b) => (ms(b.endedAt) > ms(a.endedAt) ? b : a));
  const out: Array<{ code: string; gapMs: number; runMs: number }> = [];
  for (;;) {
    const ups = (upstream.get(cur.code) ?? [])
      .map((u) => byCode.get(u))
      .filter((t) => t !== undefined);
    const parent = ups.length
      ? ups.reduce((a, b) => (ms(b.endedAt) > ms(a.endedAt) ? b : a))
      : undefined;
    out.unshift({
      code: cur.code,
      gapMs: parent ? ms(cur.startedAt) - ms(parent.endedAt) : 0,
      runMs: ms(cur.endedAt) - ms(cur.startedAt),
    });
    if (!parent) break;
    cur = parent;
  }
  return out;
}

/** 3. Makespan ÷ critical path on Montage and Epigenomics at time scale 0.01. */
export async function makespan(opts: ScenarioOptions): Promise<ScenarioResult> {
  const cases = [
    {
      label: "montage",
      file: "montage-chameleon-2mass-005d-001.json",
      workers: opts.workers?.[0] ?? 64,
    },
    {
      label: "epigenomics",
      file: "epigenomics-chameleon-ilmn-6seq-50k-001.json",
      workers: opts.workers?.[1] ?? opts.workers?.[0] ?? 128,
    },
  ];
  const rows: Array<Array<string | number>> = [
    [
      "workflow",
      "tasks",
      "workers",
      "state",
      "critical path ms",
      "ideal with workers ms",
      "makespan ms",
      "makespan ÷ CP",
      "wall ms (POST→SUCCESS)",
      "wall ÷ CP",
      "CP tasks",
      "overhead/CP task ms",
      "ready→start p50",
      "p90",
      "max",
      "run overhead p50 ms",
    ],
  ];
  const summaries: Record<string, unknown> = {};
  const extra: string[] = [];
  const reqRows: Array<Array<string | number>> = [];
  for (const c of cases) {
    const conv = convertWfcommons(loadTrace(c.file), { timeScale: 0.01, source: c.file });
    const def = conv.definition;
    const cpMs = conv.criticalPathSeconds * 1000;
    const idealMs = idealMakespan(def, c.workers) * 1000;
    const cpTasks = criticalPathTasks(def);
    const h = await startHarness(c.workers);
    try {
      const r = await runWorkflow(h, `bench-${c.label}-${stamp()}`, def, {
        deadlineMs: 170_000,
        profile: opts.profile,
        trace: !opts.profile,
      });
      const delays = dispatchDelays(r.instance, upstreamMap(def));
      const cycle = r.trace ? dispatcherCycle(r.trace.calls, r.trace.requests) : undefined;
      const path = realizedPath(r.instance, upstreamMap(def));
      const sleepMs = (code: string) =>
        Number(
          /^sleep ([\d.]+)$/.exec(def.tasks.find((t) => t.code === code)?.command ?? "")?.[1] ?? 0,
        ) * 1000;
      const pathGaps = path.slice(1).reduce((a, p) => a + p.gapMs, 0);
      const pathRuns = path.reduce((a, p) => a + p.runMs, 0);
      const pathSleeps = path.reduce((a, p) => a + sleepMs(p.code), 0);
      const sleepOf = new Map(
        def.tasks.map((t) => [t.code, Number(/^sleep ([\d.]+)$/.exec(t.command)?.[1] ?? 0) * 1000]),
      );
      const runOverhead = r.instance.tasks.map(
        (t) => ms(t.endedAt) - ms(t.startedAt) - (sleepOf.get(t.code) ?? 0),
      );
      const ratio = round(r.spanMs / cpMs, 2);
      rows.push([
        c.label,
        conv.taskCount,
        c.workers,
        r.state,
        round(cpMs, 0),
        round(idealMs, 0),
        r.spanMs,
        ratio,
        r.wallMs,
        round(r.wallMs / cpMs, 2),
        cpTasks,
        round((r.spanMs - cpMs) / cpTasks, 1),
        percentile(delays, 50),
        percentile(delays, 90),
        Math.max(...delays),
        percentile(runOverhead, 50),
      ]);
      reqRows.push(...requestRows(c.label, r));
      extra.push(
        `${c.label}: realized critical path (last task back through its latest-ending parent): ${path.length} tasks; ` +
          `makespan ${r.spanMs} ms = ${round(pathGaps, 0)} ms waiting between parent end and child start ` +
          `+ ${round(pathRuns, 0)} ms running (of which ${round(pathSleeps, 0)} ms sleep, ${round(pathRuns - pathSleeps, 0)} ms run overhead)`,
        table([
          ["task on path", "ready→start ms", "run ms", "sleep ms"],
          ...path.map((p) => [p.code.slice(0, 40), p.gapMs, p.runMs, round(sleepMs(p.code), 0)]),
        ]),
        `${c.label}: ${cpuLine(r)}`,
        ...(cycle
          ? [
              `${c.label}: dispatcher ${cycle.invocations} invocations at ${cycle.eventsPerSecond} events/s; handler p50 ${cycle.handler.p50} ms (mean ${cycle.handler.mean}), ` +
                `gap to next p50 ${cycle.gap.p50} ms (mean ${cycle.gap.mean}); delete sent ${cycle.deleteStartDelay.p50} ms after the handler, takes ${cycle.deleteLatency.p50} ms`,
            ]
          : []),
        latencyTable(r, 8),
        ...profileTable(r),
      );
      summaries[c.label] = {
        tasks: conv.taskCount,
        workers: c.workers,
        state: r.state,
        criticalPathMs: cpMs,
        idealMakespanWithWorkersMs: round(idealMs, 0),
        makespanMs: r.spanMs,
        makespanOverCriticalPath: ratio,
        wallMs: r.wallMs,
        wallOverCriticalPath: round(r.wallMs / cpMs, 2),
        criticalPathTasks: cpTasks,
        readyToStartMs: summarize(delays),
        realizedCriticalPath: {
          tasks: path.length,
          waitingMs: round(pathGaps, 0),
          runningMs: round(pathRuns, 0),
          sleepMs: round(pathSleeps, 0),
        },
        ...(cycle ? { dispatcherCycle: cycle } : {}),
        runOverheadMs: summarize(runOverhead),
        run: compact(r),
      };
    } finally {
      await h.stop();
    }
  }
  return {
    name: "makespan",
    summary: summaries,
    tables: [
      "== makespan: WfCommons traces at time scale 0.01 (makespan = last endedAt − first startedAt)",
      table(rows),
      table([REQUEST_HEADER, ...reqRows]),
      ...extra,
    ],
  };
}
