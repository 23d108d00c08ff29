/**
 * The wide fan-out of the AWS simulation (aws-sim.ts): a root and its `n - 1` children, measured
 * in two phases so that each is timed with this machine's cores to itself, as on AWS the
 * dispatcher and the workers run on machines of their own:
 * 1. dispatch: once the root is claimed, the worker mapping is paused (receives already waiting
 *    may still take messages, which it holds); the phase ends when every child is on its task
 *    queue, waiting or held (POST → then: "dispatched");
 * 2. start: the mapping resumes (its scaling kept growing meanwhile, as Lambda's does while
 *    messages wait); the phase ends with the last child's claim (resume → then).
 * Each phase reports how busy this process's event loop was: near 1, the figure measures this
 * machine's core rather than the simulated latencies.
 */
import { setTimeout as delay } from "node:timers/promises";
import { workerSettings } from "../cdk/shoal-props.js";
import { FINAL_STATES, type InstanceView, ms } from "./api.js";
import { type Deployment, deployAwsSim } from "./aws-sim-deploy.js";
import { esmDrainMs } from "./aws-sim-esm.js";
import { AWS_LATENCY } from "./aws-sim-latency.js";
import { dispatcherEventRate, ok } from "./aws-sim-run.js";
import { stamp } from "./scenario.js";
import { round, summarize, table } from "./stats.js";

/** The tier the fan-out's tasks go to (their default priority). */
const TIER = "MEDIUM" as const;

/** A fan-out of `n` tasks: a root and its `n - 1` children (10,000 is the API's limit per DAG). */
export function fanoutDefinition(n: number) {
  const children = Array.from({ length: n - 1 }, (_, i) => ({
    code: `c${i + 1}`,
    type: "SHELL" as const,
    upstream: ["root"],
    command: "true",
  }));
  return {
    description: "aws-sim fan-out",
    tasks: [{ code: "root", type: "SHELL" as const, upstream: [], command: "true" }, ...children],
  };
}

/**
 * How long a poller's concurrency slot stays busy per batch, ms: the receive that brings it, the
 * hand-over and the invocation (the model's medians, aws-sim-latency.ts); the delete goes on
 * after the slot is free.
 */
export function pollerCycleMs(invocationMs: number): number {
  const p50 = (op: string) => AWS_LATENCY[op]?.p50 ?? 0;
  return invocationMs + p50("SQS.ReceiveMessage") + p50("Lambda.EsmInvoke");
}

/** What one fan-out run measured (ms from the POST unless said otherwise). */
export interface FanoutFigures {
  tasks: number;
  state: string;
  /** POST → every child on its task queue. */
  dispatchedMs: number;
  /** Resume of the worker mapping → the last child's claim. */
  startedAfterDispatchMs: number;
  /** POST → the last child's claim (the two phases and the pause between them). */
  lastClaimedMs: number;
  eventLoopUtilization: { dispatch: number; start: number };
  workerInvocationMs: ReturnType<typeof summarize>;
  /**
   * Lambda's scaling alone for 10,000 tasks (esmDrainMs), each poller busy for a receive, a
   * hand-over and the measured invocation p50 per batch ({@link pollerCycleMs}).
   */
  esmFloor10kMs: { cycleMs: number; stackConcurrency: number; maxConcurrency1000: number };
  dispatcher: ReturnType<typeof dispatcherEventRate>;
  workerPeakConcurrency: number | undefined;
  /** Requests per task, by `Service.Operation`. */
  requestsPerTask: Record<string, number>;
}

/** Polls `done` every `everyMs` until it holds. @throws Error after `deadlineMs`. */
async function until(
  what: string,
  deadlineMs: number,
  everyMs: number,
  done: () => Promise<boolean>,
) {
  const deadline = Date.now() + deadlineMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`fan-out: ${what} not reached in ${deadlineMs} ms`);
    await delay(everyMs);
  }
}

/**
 * Runs the two-phase fan-out of `n` tasks on `d` (see the file comment).
 * @param o.slots the worker tier's maximum concurrency, @param o.batch its batch size.
 * @throws Error when a phase does not end within 30 minutes.
 */
export async function runFanout(
  d: Deployment,
  n: number,
  o: { slots: number; batch: number },
): Promise<FanoutFigures> {
  const esm = d.esms[`tasks-${TIER}`];
  if (!esm) throw new Error(`no ${TIER} worker mapping`);
  const name = `sim-fanout-${n}-${stamp()}`;
  await ok(d, "PUT", `/v1/workflows/${name}`, fanoutDefinition(n));
  await delay(300);
  d.reset();
  const elu0 = performance.eventLoopUtilization();
  const postMs = Date.now();
  const { instanceId } = (await ok(d, "POST", `/v1/workflows/${name}/runs`, {})) as {
    instanceId: string;
  };
  const view = async () =>
    (await ok(d, "GET", `/v1/instances/${instanceId}`)) as unknown as InstanceView;
  const limit = 1_800_000;
  // Only the root exists until it ends: the view is small while this polls.
  await until("the root's claim", limit, 10, async () =>
    (await view()).tasks.some((t) => t.code === "root" && t.startedAt !== undefined),
  );
  esm.pause();
  try {
    await until("every child on its queue", limit, 20, async () => {
      return (await d.taskQueueDepth(TIER)) >= n - 1;
    });
  } catch (e) {
    esm.resume();
    throw e;
  }
  const dispatchedMs = Date.now() - postMs;
  const elu1 = performance.eventLoopUtilization();
  const resumeMs = Date.now();
  esm.resume();
  await until("the instance's end", limit, 500, async () => {
    const page = (await ok(d, "GET", `/v1/instances?workflow=${name}&limit=1`)) as {
      items?: Array<{ state: string }>;
    };
    return FINAL_STATES.has(page.items?.[0]?.state ?? "");
  });
  const elu2 = performance.eventLoopUtilization();
  const instance = await view();
  const kids = instance.tasks.filter((t) => t.code !== "root");
  const lastClaimed = Math.max(...kids.map((t) => ms(t.startedAt)));
  const workerInvocationMs = summarize(
    d.worker.invocations.filter((c) => !c.cold).map((c) => c.endMs - c.startMs),
  );
  const invocations10k = 10_000 / o.batch;
  const cycleMs = pollerCycleMs(workerInvocationMs.p50);
  return {
    tasks: n,
    state: instance.state,
    dispatchedMs,
    startedAfterDispatchMs: lastClaimed - resumeMs,
    lastClaimedMs: lastClaimed - postMs,
    eventLoopUtilization: {
      dispatch: round(performance.eventLoopUtilization(elu1, elu0).utilization, 2),
      start: round(performance.eventLoopUtilization(elu2, elu1).utilization, 2),
    },
    workerInvocationMs,
    esmFloor10kMs: {
      cycleMs,
      stackConcurrency: esmDrainMs(invocations10k, cycleMs, o.slots),
      maxConcurrency1000: esmDrainMs(invocations10k, cycleMs, 1_000),
    },
    dispatcher: dispatcherEventRate(
      d.dispatcher.invocations.filter((c) => c.queue.endsWith(".fifo")),
    ),
    workerPeakConcurrency: esm.peakInFlight,
    requestsPerTask: Object.fromEntries(
      [...d.counter.counts].map(([k, v]) => [k, round(v / n, 2)]),
    ),
  };
}

/** Tasks of the fan-out that measures a batch's invocation time (two batches of ten). */
const SMALL = 20;

/**
 * The construct's worker settings of the wide fan-out: what a team with wide DAGs of short tasks
 * would set (docs/aws.md "Worker capacity and priority under backlog").
 */
export const WIDE_WORKERS = {
  workerConcurrency: { HIGHEST: 300, HIGH: 300, MEDIUM: 300 },
  workerBatchSize: 10,
} as const;

/**
 * A 10,000-task fan-out on a deployment with {@link WIDE_WORKERS}, tasks as timers: two
 * {@link SMALL}-task fan-outs first (the first starts sandboxes; the second gives the worker
 * invocation's time on warm sandboxes and a machine that keeps up), then the 10,000.
 * The estimate of "every child started" on AWS is the dispatch measured plus Lambda's scaling at
 * that invocation time: this machine's one core cannot run 300 sandboxes' claims at AWS's pace
 * (its event loop's busy share says how far it was from that).
 * @param goalMs the goal for 10,000 tasks (aws-sim.ts GOALS).
 */
export async function wideFanout(
  seed: number,
  goalMs: number,
): Promise<{ summary: unknown; table: string }> {
  const settings = workerSettings(WIDE_WORKERS);
  const slots = settings.concurrency[TIER];
  const batch = settings.batchSize;
  const w = await deployAwsSim({ mode: "aws", seed, worker: WIDE_WORKERS, taskStandIns: true });
  try {
    // The first run starts sandboxes (cold starts); the second, on warm ones and small enough
    // for this machine to keep up (at 500 tasks every await already queued for hundreds of ms
    // behind the SDK work of the others), gives an invocation's time as a sandbox of its own
    // would see it.
    await runFanout(w, SMALL, { slots, batch });
    const small = await runFanout(w, SMALL, { slots, batch });
    const f = await runFanout(w, 10_000, { slots, batch });
    const { cycleMs, stackConcurrency: floorMs } = small.esmFloor10kMs;
    const estimateMs = f.dispatchedMs + floorMs;
    const verdict = (v: number) => (v <= goalMs ? "yes" : `no (×${(v / goalMs).toFixed(2)})`);
    const rows: Array<Array<string | number>> = [
      ["figure", "goal", "simulated", "met?"],
      [
        "POST → every child dispatched (on its task queue), ms",
        `≤ ${goalMs}`,
        f.dispatchedMs,
        verdict(f.dispatchedMs),
      ],
      [
        "  then every child started (claimed), ms, as this machine ran it",
        "",
        f.startedAfterDispatchMs,
        "",
      ],
      [
        "  busy share of this process's event loop, dispatch / start",
        "",
        `${f.eventLoopUtilization.dispatch} / ${f.eventLoopUtilization.start}`,
        "",
      ],
      [
        `  worker invocation p50 of ${batch} tasks, ms: a ${SMALL}-task fan-out on warm sandboxes / this one`,
        "",
        `${small.workerInvocationMs.p50} / ${f.workerInvocationMs.p50}`,
        "",
      ],
      [
        `  Lambda's scaling for 1,000 batches of ${cycleMs} ms (receive, hand-over, invocation; 5 pollers, +300 a minute), ms`,
        "",
        floorMs,
        "",
      ],
      [
        "POST → every child started, estimate for AWS (dispatched + that scaling), ms",
        `≤ ${goalMs}`,
        estimateMs,
        verdict(estimateMs),
      ],
    ];
    return {
      summary: {
        settings: WIDE_WORKERS,
        [`warm${SMALL}`]: small,
        fanout10k: f,
        scalingFloorMs: floorMs,
        estimateStartedMs: estimateMs,
      },
      table: `== aws-sim: a 10,000-task fan-out with workerConcurrency MEDIUM ${slots} and workerBatchSize ${batch} (tasks as timers)\n\n${table(rows)}`,
    };
  } finally {
    await w.stop();
  }
}
