/**
 * Where a hop's time goes, and what one dispatcher cycle costs, from the request trace the
 * harness records (client-side times of every AWS request, attributed to components).
 */
import { type InstanceView, ms } from "./api.js";
import type { Component, TraceEntry } from "./instrumentation.js";
import { round, type Summary, summarize } from "./stats.js";

interface Step {
  name: string;
  /** Which request ends the step. */
  component: Component;
  op: string;
  receiveWithMessages?: boolean;
}

/**
 * The requests every hop of a chain must wait for, in order (each step ends when its request
 * returns). What else a component does inside a step (the dispatcher's GetItem and PutItem
 * before or beside its send...) is reported as nested requests, so the analysis does not depend
 * on how the engine orders its other requests.
 */
const HOP_STEPS: Step[] = [
  { name: "worker: final UpdateItem (result)", component: "worker", op: "DynamoDB.UpdateItem" },
  { name: "worker: SendMessageBatch (event)", component: "worker", op: "SQS.SendMessageBatch" },
  {
    name: "events queue: dispatcher receive returns",
    component: "dispatcher-poller",
    op: "SQS.ReceiveMessage",
    receiveWithMessages: true,
  },
  {
    name: "dispatcher: handler until its SendMessageBatch (task) returns",
    component: "dispatcher",
    op: "SQS.SendMessageBatch",
  },
  {
    name: "task queue: worker receive returns",
    component: "worker-poller",
    op: "SQS.ReceiveMessage",
    receiveWithMessages: true,
  },
];

export interface HopAnatomy {
  /** Per step: time from the previous step's end (the hop's start for the first) to this one's end. */
  steps: Array<{
    name: string;
    elapsed: Summary;
    requestLatency: Summary;
    /** Other requests of the same component that started inside the step: op → latency, and how many per hop. */
    nested: Record<string, Summary & { perHop: number }>;
  }>;
  /** Last step's end → child.startedAt (worker handler until it takes the claim timestamp). */
  tail: Summary;
  /** Requests not on the path but in flight during hops (pollers' deletes and short receives, the instance write...). */
  concurrentRequestsPerHop: number;
  hopsAnalysed: number;
}

/**
 * @param offset Date.now() − trace clock, ms (the engine's timestamps are Date.now()).
 */
export function hopAnatomy(
  instance: InstanceView,
  n: number,
  trace: TraceEntry[],
  offset: number,
): HopAnatomy {
  const byCode = new Map(instance.tasks.map((t) => [t.code, t]));
  const sorted = [...trace]
    .map((e) => ({ ...e, t0: e.t0 + offset, t1: e.t1 + offset }))
    .sort((a, b) => a.t0 - b.t0);
  const elapsed: number[][] = HOP_STEPS.map(() => []);
  const latency: number[][] = HOP_STEPS.map(() => []);
  const nested: Array<Map<string, number[]>> = HOP_STEPS.map(() => new Map());
  const tail: number[] = [];
  let concurrent = 0;
  let analysed = 0;
  for (let i = 2; i <= n; i++) {
    const parent = byCode.get(`t${i - 1}`);
    const child = byCode.get(`t${i}`);
    const start = ms(parent?.endedAt);
    const end = ms(child?.startedAt);
    if (!Number.isFinite(start) || !Number.isFinite(end)) continue;
    // Timestamps are whole ms: allow 1 ms of slack at the start.
    let cursor = start - 1;
    const found: typeof sorted = [];
    let ok = true;
    for (const step of HOP_STEPS) {
      const e = sorted.find(
        (x) =>
          x.component === step.component &&
          x.op === step.op &&
          (step.receiveWithMessages ? x.got && x.t1 >= cursor : x.t0 >= cursor - 0.5) &&
          !found.includes(x),
      );
      if (!e || e.t1 > end + 1) {
        ok = false;
        break;
      }
      found.push(e);
      cursor = e.t1;
    }
    if (!ok) continue;
    analysed++;
    let prev = start;
    found.forEach((e, k) => {
      elapsed[k]?.push(e.t1 - prev);
      latency[k]?.push(e.t1 - e.t0);
      for (const x of sorted) {
        if (x === e || x.component !== e.component || x.t0 < prev - 0.5 || x.t0 > e.t1) continue;
        const m = nested[k] as Map<string, number[]>;
        const list = m.get(x.op) ?? [];
        m.set(x.op, list);
        list.push(x.t1 - x.t0);
      }
      prev = e.t1;
    });
    tail.push(end - prev);
    concurrent += sorted.filter(
      (x) =>
        x.t0 < end &&
        x.t1 > start &&
        !found.includes(x) &&
        !(x.op === "SQS.ReceiveMessage" && x.t1 - x.t0 > 1000),
    ).length;
  }
  return {
    steps: HOP_STEPS.map((s, k) => ({
      name: s.name,
      elapsed: summarize(elapsed[k] ?? []),
      requestLatency: summarize(latency[k] ?? []),
      nested: Object.fromEntries(
        [...(nested[k] ?? new Map<string, number[]>())].map(([op, list]) => [
          op,
          { ...summarize(list), perHop: round(list.length / Math.max(1, analysed), 2) },
        ]),
      ),
    })),
    tail: summarize(tail),
    concurrentRequestsPerHop: round(concurrent / Math.max(1, analysed), 1),
    hopsAnalysed: analysed,
  };
}

export interface DispatcherCycle {
  invocations: number;
  eventsPerSecond: number;
  /** Handler run time (GetItem instance, decide, writes, sends). */
  handler: Summary;
  /** Handler end → next handler start (delete of the message, which unlocks the FIFO group, and the next receive). */
  gap: Summary;
  /** Handler end → DeleteMessageBatch on the events queue sent (Deleter's 2 ms coalescing timer + queueing). */
  deleteStartDelay: Summary;
  deleteLatency: Summary;
}

/** Cycle of the dispatcher on one instance: invoke → handle → delete → receive → invoke. */
export function dispatcherCycle(
  calls: Array<{ component: Component; t0: number; t1: number; n: number }>,
  trace: TraceEntry[],
): DispatcherCycle {
  const d = calls.filter((c) => c.component === "dispatcher").sort((a, b) => a.t0 - b.t0);
  const deletes = trace
    .filter((e) => e.component === "dispatcher-poller" && e.op === "SQS.DeleteMessageBatch")
    .sort((a, b) => a.t0 - b.t0);
  const handler: number[] = [];
  const gap: number[] = [];
  const delStart: number[] = [];
  const delLatency: number[] = [];
  for (let i = 0; i < d.length; i++) {
    const c = d[i] as (typeof d)[number];
    handler.push(c.t1 - c.t0);
    const next = d[i + 1];
    if (next) gap.push(next.t0 - c.t1);
    const del = deletes.find((e) => e.t0 >= c.t1 - 0.01);
    if (del && (!next || del.t0 <= next.t0)) {
      delStart.push(del.t0 - c.t1);
      delLatency.push(del.t1 - del.t0);
    }
  }
  const first = d[0];
  const last = d[d.length - 1];
  const span = first && last ? (last.t1 - first.t0) / 1000 : Number.NaN;
  const events = d.reduce((a, c) => a + c.n, 0);
  return {
    invocations: d.length,
    eventsPerSecond: round(events / span, 1),
    handler: summarize(handler),
    gap: summarize(gap),
    deleteStartDelay: summarize(delStart),
    deleteLatency: summarize(delLatency),
  };
}
