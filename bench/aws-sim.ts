/**
 * Shoal on AWS, by simulation (docs/aws-simulation.md): the handlers run on a local backend with
 * AWS's latency on every DynamoDB and SQS call (aws-sim-latency.ts) and Lambda's SQS event source
 * mappings around them (aws-sim-esm.ts), deployed as cdk/shoal.ts configures the stack
 * (aws-sim-deploy.ts). Prints hop p50/p90, makespan ÷ critical path (Montage and Epigenomics at
 * time scale 1 and 0.01), the dispatcher's events per second per instance, schedule fires per
 * second per sweeper shard and the time to dispatch a wide fan-out, against the goals.
 *
 *   npm run bench -- aws-sim            (bench/run.ts)
 *   npx tsx bench/aws-sim.ts [--fanout=N] [--schedules=N] [--worker-slots=N] [--worker-batch=N]
 *     [--real-tasks] [--full] [--only=makespan,fanout,fanout-wide,dispatcher,schedules]
 */
import { pathToFileURL } from "node:url";
import { type ShoalProps, workerSettings } from "../cdk/shoal-props.js";
import { convertWfcommons } from "../lib/import/wfcommons.js";
import { type Deployment, deployAwsSim } from "./aws-sim-deploy.js";
import type { InvocationRecord } from "./aws-sim-esm.js";
import { runFanout, wideFanout } from "./aws-sim-fanout.js";
import type { LatencyLedger, LatencyMode } from "./aws-sim-latency.js";
import {
  chain,
  chainHops,
  dispatcherBacklog,
  dispatcherEventRate,
  runOnSim,
  sweepSchedules,
} from "./aws-sim-run.js";
import { loadTrace, type ScenarioOptions, type ScenarioResult, stamp } from "./scenario.js";
import { percentile, round, summarize, table } from "./stats.js";

/** The options aws-sim reads besides ScenarioOptions' own (bench/run.ts passes them). */
export interface AwsSimOptions extends ScenarioOptions {
  /** Tasks of the fan-out, its root included (default 500; the goal names 10,000). */
  awsSimFanout?: number;
  /** Schedules due in the sweeper measurement (default 1,000, in each mode). */
  awsSimSchedules?: number;
  /** Also run Epigenomics (at 0.01: minutes; at 1: over an hour on 6 slots) and the 10,000-task fan-out. */
  awsSimFull?: boolean;
  /** Seed of the latency draws (default 15). */
  awsSimSeed?: number;
  /**
   * Worker concurrency of the MEDIUM tier instead of the stack's 6, as the construct's
   * `workerConcurrency` would set it (HIGH and HIGHEST raised to at least as many).
   */
  awsSimWorkerSlots?: number;
  /** The construct's `workerBatchSize` (default 1): task messages per worker invocation. */
  awsSimWorkerBatch?: number;
  /**
   * SHELL `true`/`sleep` tasks as real processes instead of timers (bench/aws-sim-tasks.ts): each
   * spawn then takes this machine's one event loop, where on AWS each sandbox has its own CPU.
   */
  awsSimRealTasks?: boolean;
  /**
   * Parts to run (default all): makespan, fanout, fanout-wide, dispatcher, schedules (the hop,
   * with and without latency, always runs).
   */
  awsSimParts?: string[];
}

const GOALS = { hopP50Ms: 60, montageScale1: 1.1, fanout10kMs: 10_000 };
const TRACES = {
  montage: "montage-chameleon-2mass-005d-001.json",
  epigenomics: "epigenomics-chameleon-ilmn-6seq-50k-001.json",
};
/** The tier the benchmark's tasks go to (their default priority). */
const MEDIUM = "MEDIUM";

/** Per operation: calls, simulated p50 and the backend's own p50/mean (ms). */
function ledgerRows(ledger: LatencyLedger): Array<Array<string | number>> {
  return [...ledger.byOp.entries()]
    .sort((a, b) => b[1].backendMs.length - a[1].backendMs.length)
    .map(([op, e]) => [
      op,
      e.backendMs.length,
      percentile(e.simulatedMs, 50),
      percentile(e.backendMs, 50),
      round(summarize(e.backendMs).mean, 2),
    ]);
}

async function hopRun(d: Deployment, label: string) {
  const r = await runOnSim(d, `sim-hop-${label}-${stamp()}`, chain(100), { deadlineMs: 120_000 });
  const hops = chainHops(r.instance, 100);
  const warm = (c: InvocationRecord) => !c.cold;
  const took = (c: InvocationRecord) => c.endMs - c.startMs;
  return {
    state: r.state,
    hop: summarize(hops),
    run: r,
    workerInvocationMs: summarize(d.worker.invocations.filter(warm).map(took)),
    dispatcherInvocationMs: summarize(d.dispatcher.invocations.filter(warm).map(took)),
  };
}

/**
 * The construct's worker props the options ask for: `--worker-slots=N` is MEDIUM's concurrency
 * (HIGH and HIGHEST lifted to N when below it, which the construct requires), `--worker-batch`
 * the batch size.
 */
export function simWorkerProps(
  opts: Pick<AwsSimOptions, "awsSimWorkerSlots" | "awsSimWorkerBatch">,
): Pick<ShoalProps, "workerConcurrency" | "workerBatchSize"> {
  const n = opts.awsSimWorkerSlots;
  return {
    ...(n
      ? { workerConcurrency: { HIGHEST: Math.max(20, n), HIGH: Math.max(10, n), MEDIUM: n } }
      : {}),
    ...(opts.awsSimWorkerBatch ? { workerBatchSize: opts.awsSimWorkerBatch } : {}),
  };
}

/** The AWS simulation scenario (see the file comment). */
export async function awsSim(opts: AwsSimOptions): Promise<ScenarioResult> {
  const seed = opts.awsSimSeed ?? 15;
  const full = Boolean(opts.awsSimFull);
  const fanoutN = opts.awsSimFanout ?? (full ? 10_000 : 500);
  const scheduleN = opts.awsSimSchedules ?? 1_000;
  const tables: string[] = [];
  const summary: Record<string, unknown> = { seed };
  // Worker slots of the tasks' tier: the stack's (cdk/shoal-props.ts), unless overridden.
  const worker = simWorkerProps(opts);
  const slots = workerSettings(worker).concurrency[MEDIUM];
  const batch = workerSettings(worker).batchSize;
  const standIns = !opts.awsSimRealTasks;
  summary.worker = { mediumConcurrency: slots, batchSize: batch, taskStandIns: standIns };
  const deploy = (mode: LatencyMode) =>
    deployAwsSim({ mode, seed, worker, ...(standIns ? { taskStandIns: true } : {}) });

  // 1. Zero latency: the harness and backend alone.
  const zero = await deploy("zero");
  let zeroHop: Awaited<ReturnType<typeof hopRun>>;
  let zeroSweep: Awaited<ReturnType<typeof sweepSchedules>> | undefined;
  try {
    await hopRun(zero, "warm");
    zero.ledger.reset();
    zeroHop = await hopRun(zero, "zero");
    summary.zeroLatency = {
      hopMs: zeroHop.hop,
      workerInvocationMs: zeroHop.workerInvocationMs,
      dispatcherInvocationMs: zeroHop.dispatcherInvocationMs,
      backendMsByOperation: Object.fromEntries(
        ledgerRows(zero.ledger).map((r) => [r[0], { calls: r[1], p50: r[3], mean: r[4] }]),
      ),
    };
    tables.push(
      `== aws-sim, zero-latency mode (harness + backend only): hop p50 ${zeroHop.hop.p50} ms, p90 ${zeroHop.hop.p90} ms`,
      table([
        ["operation", "calls", "simulated p50", "backend p50 ms", "backend mean ms"],
        ...ledgerRows(zero.ledger),
      ]),
    );
    if (!opts.awsSimParts || opts.awsSimParts.includes("schedules"))
      zeroSweep = await sweepSchedules(zero, scheduleN);
  } finally {
    await zero.stop();
  }

  const part = (p: string) => !opts.awsSimParts || opts.awsSimParts.includes(p);
  // 2. AWS latency.
  const d = await deploy("aws");
  const rows: Array<Array<string | number>> = [["figure", "goal", "simulated", "met?"]];
  const verdict = (value: number, goal: number) =>
    value <= goal ? "yes" : `no (×${round(value / goal, 2)})`;
  try {
    const hopWarm = await hopRun(d, "aws");
    d.ledger.reset();
    const hop = await hopRun(d, "aws2");
    summary.hop = {
      hopMs: hop.hop,
      workerInvocationMs: hop.workerInvocationMs,
      dispatcherInvocationMs: hop.dispatcherInvocationMs,
      coldStartsFirstRun: hopWarm.run.coldStarts,
      netOfBackendP50Ms: round(hop.hop.p50 - zeroHop.hop.p50, 1),
    };
    rows.push([
      "hop p50 (100-task chain of 'true'), ms",
      `≤ ${GOALS.hopP50Ms}`,
      hop.hop.p50,
      verdict(hop.hop.p50, GOALS.hopP50Ms),
    ]);
    rows.push(["hop p90, ms", "", hop.hop.p90, ""]);
    rows.push([`  zero-latency hop p50 (harness + backend), ms`, "", zeroHop.hop.p50, ""]);
    rows.push([
      "  invocation p50, ms: worker / dispatcher (zero-latency: worker / dispatcher)",
      "",
      `${hop.workerInvocationMs.p50} / ${hop.dispatcherInvocationMs.p50} (${zeroHop.workerInvocationMs.p50} / ${zeroHop.dispatcherInvocationMs.p50})`,
      "",
    ]);
    const opTable = table([
      ["operation (hop run)", "calls", "simulated p50 ms", "backend p50 ms", "backend mean ms"],
      ...ledgerRows(d.ledger),
    ]);

    // Makespan ÷ critical path. Loaded when run: makespan.ts brings standalone's harness.
    if (part("makespan")) {
      const { idealMakespan } = await import("./makespan.js");
      const mk: Record<string, unknown> = {};
      const cases: Array<{ wf: keyof typeof TRACES; scale: number }> = [
        { wf: "montage", scale: 1 },
        { wf: "montage", scale: 0.01 },
        ...(full
          ? [
              { wf: "epigenomics" as const, scale: 0.01 },
              { wf: "epigenomics" as const, scale: 1 },
            ]
          : []),
      ];
      for (const c of cases) {
        const conv = convertWfcommons(loadTrace(TRACES[c.wf]), {
          timeScale: c.scale,
          source: c.wf,
        });
        const cpMs = conv.criticalPathSeconds * 1000;
        const idealMs = idealMakespan(conv.definition, slots) * 1000;
        const r = await runOnSim(
          d,
          `sim-${c.wf}-${String(c.scale).replace(".", "")}-${stamp()}`,
          conv.definition,
          {
            deadlineMs: c.wf === "epigenomics" ? 6 * 3_600_000 : 300_000,
            pollMs: 200,
          },
        );
        const ratio = round(r.spanMs / cpMs, 2);
        const rate = dispatcherEventRate(r.dispatcherCalls);
        mk[`${c.wf}@${c.scale}`] = {
          tasks: conv.taskCount,
          state: r.state,
          criticalPathMs: round(cpMs, 0),
          idealWithWorkerSlotsMs: round(idealMs, 0),
          makespanMs: r.spanMs,
          makespanOverCriticalPath: ratio,
          makespanOverIdeal: round(r.spanMs / idealMs, 2),
          dispatcher: rate,
          coldStarts: r.coldStarts,
        };
        rows.push([
          `${c.wf} @ ${c.scale}: makespan ÷ CP (${conv.taskCount} tasks, CP ${round(cpMs / 1000, 2)} s, ideal on ${slots} slots ${round(idealMs / 1000, 2)} s)`,
          c.wf === "montage" && c.scale === 1 ? `≤ ${GOALS.montageScale1}` : "",
          ratio,
          c.wf === "montage" && c.scale === 1 ? verdict(ratio, GOALS.montageScale1) : "",
        ]);
      }
      if (!full) {
        // Minutes to hours on the stack's worker slots: the bound those slots put on the ratio.
        for (const scale of [0.01, 1]) {
          const conv = convertWfcommons(loadTrace(TRACES.epigenomics), {
            timeScale: scale,
            source: "e",
          });
          const bound = idealMakespan(conv.definition, slots) / conv.criticalPathSeconds;
          mk[`epigenomics@${scale}`] = { lowerBoundOnSlots: round(bound, 2), slots, run: "--full" };
          rows.push([
            `epigenomics @ ${scale}: makespan ÷ CP ≥ ideal on ${slots} slots ÷ CP (not run: --full)`,
            "",
            `≥ ${round(bound, 2)}`,
            "",
          ]);
        }
      }
      summary.makespan = mk;
    }

    if (part("fanout")) {
      const f = await runFanout(d, fanoutN, { slots, batch });
      const scale = 10_000 / fanoutN;
      const scaled = fanoutN !== 10_000;
      const to10k = (v: number) => round(v * scale, 0);
      summary.fanout = {
        ...f,
        ...(scaled
          ? {
              extrapolatedTo10kDispatchedMs: to10k(f.dispatchedMs),
              extrapolatedTo10kStartedAfterDispatchMs: to10k(f.startedAfterDispatchMs),
            }
          : {}),
      };
      const figure = (v: number) => (scaled ? `${v} → ${to10k(v)}` : v);
      const how = scaled ? ` (× ${round(scale, 2)} for 10,000, linear)` : "";
      rows.push([
        `fan-out of ${fanoutN} tasks: POST → every child dispatched (on its task queue), ms${how}`,
        `≤ ${GOALS.fanout10kMs} (10,000)`,
        figure(f.dispatchedMs),
        verdict(to10k(f.dispatchedMs), GOALS.fanout10kMs),
      ]);
      rows.push([
        `  then every child started (claimed; the worker mapping resumed), ms${how}`,
        "",
        figure(f.startedAfterDispatchMs),
        "",
      ]);
      rows.push([
        "  busy share of this process's event loop, dispatch / start (near 1: this machine's CPU bounds it)",
        "",
        `${f.eventLoopUtilization.dispatch} / ${f.eventLoopUtilization.start}`,
        "",
      ]);
      rows.push([
        `  worker invocation p50 ${f.workerInvocationMs.p50} ms (${batch} per batch; a poller's cycle ${f.esmFloor10kMs.cycleMs} ms): Lambda's scaling alone needs, for 10,000, ms`,
        "",
        `${f.esmFloor10kMs.stackConcurrency} (max ${slots}); ${f.esmFloor10kMs.maxConcurrency1000} (max 1,000)`,
        "",
      ]);
      rows.push([
        "  dispatcher events/s per instance as the fan-out's ends arrived",
        "",
        `${f.dispatcher.perSecond} (${f.dispatcher.events} events, ${f.dispatcher.meanBatch}/batch)`,
        "",
      ]);
    }
    if (part("dispatcher")) {
      const b = await dispatcherBacklog(d, 150);
      summary.dispatcherBacklog = b;
      rows.push([
        `dispatcher events/s per instance, draining a backlog (${b.events} events in ${b.invocations} invocations, one FIFO group)`,
        "",
        b.perSecond,
        "",
      ]);
    }
    if (part("schedules")) {
      const sweep = await sweepSchedules(d, scheduleN);
      const zs = zeroSweep;
      summary.schedules = { aws: sweep, zeroLatency: zs };
      const perShard = sweep.firesPerSecondPerShard;
      rows.push([
        `schedule fires/s per sweeper shard (${sweep.fired} of ${scheduleN} fired in one sweep of ${sweep.shards} shards, ${sweep.sweepMs} ms)`,
        "",
        `${perShard}${zs ? ` (zero-latency: ${zs.firesPerSecondPerShard})` : ""}`,
        "",
      ]);
    }
    tables.push(
      `== aws-sim: Shoal on simulated AWS (seed ${seed}; latency per call from docs/aws-simulation.md; worker tier MEDIUM: ${slots} concurrent, ${batch} task${batch === 1 ? "" : "s"} per invocation; tasks ${standIns ? "as timers" : "as processes (--real-tasks)"})`,
      table(rows),
      opTable,
    );
  } finally {
    await d.stop();
  }
  // 3. The 10,000-task fan-out on raised worker settings.
  if (part("fanout-wide")) {
    const wide = await wideFanout(seed, GOALS.fanout10kMs);
    summary.fanoutWide = wide.summary;
    tables.push(wide.table);
  }
  return { name: "aws-sim", summary, tables };
}

/** `tsx bench/aws-sim.ts [--fanout=N] [--schedules=N] [--full] [--seed=N]` */
async function main(): Promise<void> {
  const o: AwsSimOptions = { profile: false };
  for (const a of process.argv.slice(2)) {
    const [k, v] = a.replace(/^--/, "").split("=");
    if (k === "fanout") o.awsSimFanout = Number(v);
    else if (k === "schedules") o.awsSimSchedules = Number(v);
    else if (k === "seed") o.awsSimSeed = Number(v);
    else if (k === "full") o.awsSimFull = true;
    else if (k === "worker-slots") o.awsSimWorkerSlots = Number(v);
    else if (k === "worker-batch") o.awsSimWorkerBatch = Number(v);
    else if (k === "real-tasks") o.awsSimRealTasks = true;
    else if (k === "only") o.awsSimParts = (v ?? "").split(",");
    else
      throw new Error(
        `unknown argument '${a}' (--fanout=N, --schedules=N, --seed=N, --worker-slots=N, --worker-batch=N, --real-tasks, --full, --only=makespan,fanout,fanout-wide,dispatcher,schedules)`,
      );
  }
  // Settings the construct refuses are refused here too, before anything is deployed.
  workerSettings(simWorkerProps(o));
  const t = Date.now();
  const r = await awsSim(o);
  process.stdout.write(
    `${r.tables.join("\n\n")}\n(aws-sim: ${Math.round((Date.now() - t) / 1000)} s)\n`,
  );
  process.stdout.write(`${JSON.stringify(r.summary)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main().then(
    () => setTimeout(() => process.exit(0), 200).unref(),
    (e) => {
      // Bad options are a line; anything else keeps its stack (this is a benchmark).
      const usage = e instanceof Error && /^(unknown argument|worker)/.test(e.message);
      process.stderr.write(
        `${usage ? `aws-sim: ${e.message}` : String((e as Error)?.stack ?? e)}\n`,
      );
      process.exit(usage ? 2 : 1);
    },
  );
}
