/**
 * 3. Makespan ÷ critical path on Montage and Epigenomics (WfCommons traces) at time scale 0.01,
 * with the ideal makespan the worker slots allow and the realized critical path.
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
import { percentile, round, summarize, table } from "./stats.js";
import { dispatchDelays, runWorkflow } from "./workflow-run.js";
import {
  compact,
  cpuLine,
  latencyTable,
  profileTable,
  REQUEST_HEADER,
  requestRows,
} from "./workflow-run-report.js";

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
