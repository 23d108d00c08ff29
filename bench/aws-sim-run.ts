/**
 * Runs one workflow on the simulated deployment (aws-sim-deploy.ts) through its API, and the
 * figures the AWS simulation takes from the result: hops of a chain, the dispatcher's event rate.
 */
import { setTimeout as delay } from "node:timers/promises";
import { FINAL_STATES, type InstanceView, ms } from "./api.js";
import type { Deployment } from "./aws-sim-deploy.js";
import type { InvocationRecord } from "./aws-sim-esm.js";
import { stamp } from "./scenario.js";
import { WORKFLOW } from "./schedules-config.js";
import { createSchedules } from "./schedules-create.js";
import { round } from "./stats.js";

export interface SimRun {
  instance: InstanceView;
  state: string;
  /** The POST, epoch ms (taken right before it). */
  postMs: number;
  /** POST → instance endedAt, ms. */
  wallMs: number;
  /** First task startedAt → last task endedAt, ms. */
  spanMs: number;
  /** Dispatcher invocations on the events queue during the run. */
  dispatcherCalls: InvocationRecord[];
  /** Function instances started (cold starts) during the run. */
  coldStarts: { dispatcher: number; worker: number };
}

/** Sends an API request to `d`. @returns its JSON body. @throws Error on a status ≥ 300. */
export async function ok(
  d: Deployment,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const r = await d.request(method, path, body);
  if (r.status >= 300) {
    throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  }
  return (r.body ?? {}) as Record<string, unknown>;
}

/**
 * PUTs `definition` as `name`, POSTs a run and polls (every `pollMs`, one Query per poll) until it
 * is final. @throws Error after `deadlineMs`, or when the API refuses a request.
 */
export async function runOnSim(
  d: Deployment,
  name: string,
  definition: unknown,
  opts: { deadlineMs: number; pollMs?: number },
): Promise<SimRun> {
  await ok(d, "PUT", `/v1/workflows/${encodeURIComponent(name)}`, definition);
  await delay(300);
  d.reset();
  const cold0 = { dispatcher: d.dispatcher.instances, worker: d.worker.instances };
  const postMs = Date.now();
  const { instanceId } = (await ok(d, "POST", `/v1/workflows/${encodeURIComponent(name)}/runs`, {
    /* defaults */
  })) as { instanceId: string };
  const deadline = postMs + opts.deadlineMs;
  for (;;) {
    const page = (await ok(
      d,
      "GET",
      `/v1/instances?workflow=${encodeURIComponent(name)}&limit=1`,
    )) as { items?: Array<{ state: string }> };
    const state = page.items?.[0]?.state;
    if (state && FINAL_STATES.has(state)) break;
    if (Date.now() > deadline)
      throw new Error(`${name} not final after ${opts.deadlineMs} ms (${state})`);
    await delay(opts.pollMs ?? 100);
  }
  const instance = (await ok(d, "GET", `/v1/instances/${instanceId}`)) as unknown as InstanceView;
  const starts = instance.tasks.map((t) => ms(t.startedAt)).filter(Number.isFinite);
  const ends = instance.tasks.map((t) => ms(t.endedAt)).filter(Number.isFinite);
  return {
    instance,
    state: instance.state,
    postMs,
    wallMs: ms(instance.endedAt) - postMs,
    spanMs: Math.max(...ends) - Math.min(...starts),
    dispatcherCalls: d.dispatcher.invocations.filter((c) => c.queue.endsWith(".fifo")),
    coldStarts: {
      dispatcher: d.dispatcher.instances - cold0.dispatcher,
      worker: d.worker.instances - cold0.worker,
    },
  };
}

/** Hops of a chain `t1 → t2 → …`: child startedAt − parent endedAt, ms. */
export function chainHops(instance: InstanceView, n: number): number[] {
  const byCode = new Map(instance.tasks.map((t) => [t.code, t]));
  const hops: number[] = [];
  for (let i = 2; i <= n; i++) {
    hops.push(ms(byCode.get(`t${i}`)?.startedAt) - ms(byCode.get(`t${i - 1}`)?.endedAt));
  }
  return hops;
}

/**
 * Events per second the dispatcher handled for the run's one instance (one FIFO group): messages
 * of its invocations ÷ the time from the first invocation's start to the last one's end.
 */
export function dispatcherEventRate(calls: readonly InvocationRecord[]): {
  events: number;
  invocations: number;
  perSecond: number;
  meanBatch: number;
} {
  if (calls.length === 0) return { events: 0, invocations: 0, perSecond: 0, meanBatch: 0 };
  const events = calls.reduce((a, c) => a + c.messages, 0);
  const from = Math.min(...calls.map((c) => c.startMs));
  const to = Math.max(...calls.map((c) => c.endMs));
  return {
    events,
    invocations: calls.length,
    perSecond: round((events * 1000) / Math.max(1, to - from), 1),
    meanBatch: round(events / calls.length, 2),
  };
}

/**
 * The dispatcher's rate per instance with a backlog: a fan-out of `m` children whose end events
 * pile up in the instance's FIFO group while the events mapping is paused, then drain. @returns
 * the drain's rate (events ÷ first invocation start → last invocation end).
 */
export async function dispatcherBacklog(
  d: Deployment,
  m: number,
): Promise<ReturnType<typeof dispatcherEventRate> & { pausedMs: number }> {
  const name = `sim-backlog-${m}-${Date.now().toString(36)}`;
  const children = Array.from({ length: m }, (_, i) => ({
    code: `c${i + 1}`,
    type: "SHELL" as const,
    upstream: ["root"],
    command: "true",
  }));
  await ok(d, "PUT", `/v1/workflows/${name}`, {
    description: "aws-sim dispatcher backlog",
    tasks: [{ code: "root", type: "SHELL" as const, upstream: [], command: "true" }, ...children],
  });
  const { instanceId } = (await ok(d, "POST", `/v1/workflows/${name}/runs`, {})) as {
    instanceId: string;
  };
  const view = async () =>
    (await ok(d, "GET", `/v1/instances/${instanceId}`)) as unknown as InstanceView;
  const until = async (what: string, done: (v: InstanceView) => boolean) => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (done(await view())) return;
      if (Date.now() > deadline) throw new Error(`backlog run: ${what} not reached in 120 s`);
      await delay(200);
    }
  };
  const kids = (v: InstanceView) => v.tasks.filter((t) => t.code !== "root");
  await until("all children submitted", (v) => kids(v).length === m);
  const events = d.esms.events;
  if (!events) throw new Error("no events mapping");
  const pausedAt = Date.now();
  events.pause();
  await until("all children ended", (v) => kids(v).every((t) => t.endedAt !== undefined));
  d.dispatcher.invocations.length = 0;
  events.resume();
  const pausedMs = Date.now() - pausedAt;
  await until("instance final", (v) => FINAL_STATES.has(v.state));
  const calls = d.dispatcher.invocations.filter((c) => c.queue.endsWith(".fifo"));
  return { ...dispatcherEventRate(calls), pausedMs };
}

/** A chain `t1 → t2 → … → tn` of SHELL tasks `true` (the hop's DAG). */
export function chain(n: number) {
  return {
    description: "aws-sim hop chain",
    tasks: Array.from({ length: n }, (_, i) => ({
      code: `t${i + 1}`,
      type: "SHELL" as const,
      upstream: i === 0 ? [] : [`t${i}`],
      command: "true",
    })),
  };
}

/** One sweeper invocation (as its one-minute rule starts it) over `n` schedules due in 5 s. */
export async function sweepSchedules(d: Deployment, n: number) {
  for (const e of Object.values(d.esms)) await e.stop();
  await d.request("PUT", `/v1/workflows/${WORKFLOW}`, chain(1));
  const rt = d.newRuntime();
  await createSchedules(rt, n, Date.now() + 5_000, []);
  // functions/sweeper: a one-minute period and look-ahead, leases of 50 s.
  const scheduler = rt.scheduleSweeper(`sim:${stamp()}`, 60_000, 60_000, 50_000);
  const t0 = Date.now();
  const r = await scheduler.sweep();
  const sweepMs = Date.now() - t0;
  await scheduler.stop();
  const shards = Math.max(1, r.shards.length);
  return {
    due: n,
    fired: r.fired,
    skipped: r.skipped,
    queued: r.queued,
    sweepMs,
    shards,
    firesPerSecond: round((r.fired * 1000) / sweepMs, 1),
    firesPerSecondPerShard: round((r.fired * 1000) / sweepMs / shards, 1),
  };
}
