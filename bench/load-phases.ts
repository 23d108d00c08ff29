/**
 * The load scenario's phases (bench/load.ts): submitting runs (a burst at a fixed concurrency,
 * or an open-loop arrival rate), each retried after `Retry-After` when refused as the issue asks
 * of a client; a reader timing GETs meanwhile; and the wait until every accepted run finished.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { FINAL_STATES } from "./api.js";
import { count, emptyCounts, type LoadClient, type OutcomeCounts } from "./load-client.js";
import { load1 } from "./load-procs.js";
import { percentile, round, type Summary, summarize } from "./stats.js";

/** What submitting a set of runs came to. */
export interface Submission {
  counts: OutcomeCounts;
  /** Accepted instance ids. */
  ids: string[];
  /** Runs that needed at least one retry (were refused at least once). */
  retriedRuns: number;
  /** Runs that were lost (no 202 in the end). */
  lostRuns: number;
  /** Latency of the answered POSTs, ms (accepted and refused apart). */
  acceptedMs: Summary;
  refusedMs: Summary;
  /** First POST sent → last run accepted, ms. */
  spanMs: number;
  /** Epoch ms of the first POST. */
  startedAt: number;
}

/** Submits one run until it is accepted (retrying refusals after Retry-After) or lost. */
async function submitOne(
  client: LoadClient,
  workflow: string,
  s: Submission,
  latency: { accepted: number[]; refused: number[] },
  stopRetryingAt: number,
): Promise<void> {
  let retried = false;
  for (;;) {
    const o = await client.send("POST", `/v1/workflows/${encodeURIComponent(workflow)}/runs`, {});
    count(s.counts, o);
    if (o.kind === "ok" && o.status === 202) {
      latency.accepted.push(o.ms);
      s.ids.push((JSON.parse(o.body) as { instanceId: string }).instanceId);
      if (retried) s.retriedRuns++;
      return;
    }
    if (o.kind !== "refused" || Date.now() > stopRetryingAt) {
      s.lostRuns++;
      if (retried) s.retriedRuns++;
      return;
    }
    latency.refused.push(o.ms);
    retried = true;
    // Retry-After, with some jitter so that refused clients do not come back in one wave.
    await delay(o.retryAfterS * 1000 * (1 + Math.random() * 0.5));
  }
}

/** An empty submission; pass it to {@link burst} or {@link sustained} to read its `ids` while it runs. */
export function newSubmission(): Submission {
  return {
    counts: emptyCounts(),
    ids: [],
    retriedRuns: 0,
    lostRuns: 0,
    acceptedMs: summarize([]),
    refusedMs: summarize([]),
    spanMs: 0,
    startedAt: Date.now(),
  };
}

/** Phase 1: `n` runs of `workflow`, `concurrency` of them in flight, until every one is answered. */
export async function burst(
  client: LoadClient,
  workflow: string,
  n: number,
  concurrency: number,
  s: Submission = newSubmission(),
): Promise<Submission> {
  s.startedAt = Date.now();
  const latency = { accepted: [] as number[], refused: [] as number[] };
  const t0 = performance.now();
  let next = 0;
  // A client gives up retrying after an hour: a run still refused then is lost.
  const stopRetryingAt = Date.now() + 3_600_000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        await submitOne(client, workflow, s, latency, stopRetryingAt);
      }
    }),
  );
  s.spanMs = Math.round(performance.now() - t0);
  s.acceptedMs = summarize(latency.accepted);
  s.refusedMs = summarize(latency.refused);
  return s;
}

/**
 * Phase 2: runs arrive at `rate` per second for `minutes` (open loop, fixed interval: an arrival
 * never waits for an earlier one's answer). @returns once every arrival was answered.
 */
export async function sustained(
  client: LoadClient,
  workflow: string,
  rate: number,
  minutes: number,
  s: Submission = newSubmission(),
): Promise<Submission & { arrivals: number; arrivalsMs: number }> {
  s.startedAt = Date.now();
  const latency = { accepted: [] as number[], refused: [] as number[] };
  const durationMs = minutes * 60_000;
  const t0 = performance.now();
  const pending: Promise<void>[] = [];
  let sent = 0;
  const stopRetryingAt = Date.now() + durationMs + 3_600_000;
  for (;;) {
    const elapsed = performance.now() - t0;
    const due = Math.min(
      Math.floor((elapsed / 1000) * rate),
      Math.floor((durationMs / 1000) * rate),
    );
    while (sent < due) {
      sent++;
      pending.push(submitOne(client, workflow, s, latency, stopRetryingAt));
    }
    if (elapsed >= durationMs) break;
    await delay(10);
  }
  const arrivalsMs = Math.round(performance.now() - t0);
  await Promise.all(pending);
  s.spanMs = Math.round(performance.now() - t0);
  s.acceptedMs = summarize(latency.accepted);
  s.refusedMs = summarize(latency.refused);
  return { ...s, arrivals: sent, arrivalsMs };
}

/** Latency percentiles, ms. */
export interface Latency {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

function latency(values: readonly number[]): Latency {
  return {
    n: values.length,
    p50: round(percentile(values, 50), 1),
    p95: round(percentile(values, 95), 1),
    p99: round(percentile(values, 99), 1),
    max: round(values.length ? Math.max(...values) : Number.NaN, 1),
  };
}

/** Read latency by request kind, and the reads that were not a 200. */
export interface ReadFigures {
  all: Latency;
  byKind: Record<string, Latency>;
  /** Reads answered other than 200 (refused, 5xx, dropped, timeout), by kind of outcome. */
  failed: Record<string, number>;
  /** Under 100 ms at p99 (the goal). */
  p99Under100: boolean;
}

/**
 * A reader: one GET every `everyMs`, in turn `GET /v1/instances?limit=20`, `GET
 * /v1/instances/{id}` (of a random accepted run) and `GET /v1/health`, each timed; on its own
 * keep-alive pool, so it never waits for a socket behind the writers. `stop()` returns the figures.
 */
export function startReader(
  client: LoadClient,
  ids: () => readonly string[],
  everyMs = 100,
): { stop(): Promise<ReadFigures> } {
  const samples: Record<string, number[]> = { list: [], instance: [], health: [] };
  const failed: Record<string, number> = {};
  let running = true;
  let i = 0;
  const loop = (async () => {
    while (running) {
      const tick = performance.now();
      const known = ids();
      const kind = (["list", "instance", "health"] as const)[i++ % 3] as string;
      const path =
        kind === "list"
          ? "/v1/instances?limit=20"
          : kind === "instance" && known.length
            ? `/v1/instances/${known[Math.floor(Math.random() * known.length)]}`
            : "/v1/health";
      const k = path === "/v1/health" ? "health" : kind;
      const o = await client.send("GET", path);
      if (o.kind === "ok" && o.status === 200) samples[k]?.push(o.ms);
      else {
        const key = `${k} ${o.kind}${"status" in o ? ` ${o.status}` : ""}`;
        failed[key] = (failed[key] ?? 0) + 1;
      }
      await delay(Math.max(0, everyMs - (performance.now() - tick)));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const all = latency(Object.values(samples).flat());
      return {
        all,
        byKind: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, latency(v)])),
        failed,
        p99Under100: all.p99 < 100,
      };
    },
  };
}

/** Where the accepted runs of a phase stand. */
export interface Progress {
  accepted: number;
  finished: number;
  success: number;
  /** FAILURE or STOPPED. */
  failedRuns: number;
  /** Accepted, no instance listed yet (the dispatcher has not created it) or not final. */
  unfinished: number;
  /** Latest endedAt of the finished ones, epoch ms. */
  lastEndedAt: number;
  /** Earliest createdAt, epoch ms. */
  firstCreatedAt: number;
}

/** Lists every instance of `workflow` (pages of 200) and counts where the accepted ones stand. */
export async function progress(
  client: LoadClient,
  workflow: string,
  accepted: readonly string[],
): Promise<Progress> {
  const want = new Set(accepted);
  let success = 0;
  let failedRuns = 0;
  let lastEndedAt = 0;
  let firstCreatedAt = Number.POSITIVE_INFINITY;
  let token: string | undefined;
  do {
    const q = `workflow=${encodeURIComponent(workflow)}&limit=200${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`;
    const o = await client.send("GET", `/v1/instances?${q}`);
    if (o.kind !== "ok") {
      await delay(1_000); // refused or failed: the next poll counts again
      return progress(client, workflow, accepted);
    }
    const page = JSON.parse(o.body) as {
      items: Array<{ instanceId: string; state: string; createdAt: string; endedAt?: string }>;
      nextToken?: string;
    };
    for (const it of page.items) {
      if (!want.has(it.instanceId)) continue;
      firstCreatedAt = Math.min(firstCreatedAt, Date.parse(it.createdAt));
      if (!FINAL_STATES.has(it.state)) continue;
      if (it.state === "SUCCESS") success++;
      else failedRuns++;
      if (it.endedAt) lastEndedAt = Math.max(lastEndedAt, Date.parse(it.endedAt));
    }
    token = page.nextToken;
  } while (token);
  const finished = success + failedRuns;
  return {
    accepted: want.size,
    finished,
    success,
    failedRuns,
    unfinished: want.size - finished,
    lastEndedAt,
    firstCreatedAt,
  };
}

/**
 * Phase 3: polls {@link progress} every `everyMs` until every accepted run is final or
 * `boundMs` passed. @returns the last progress, how long it took, and the load average then.
 */
export async function waitFinished(
  client: LoadClient,
  workflow: string,
  accepted: readonly string[],
  boundMs: number,
  everyMs = 5_000,
): Promise<{ progress: Progress; waitedMs: number; withinBound: boolean; load1: number }> {
  const t0 = performance.now();
  for (;;) {
    const p = await progress(client, workflow, accepted);
    const waitedMs = Math.round(performance.now() - t0);
    if (p.unfinished === 0 || waitedMs > boundMs)
      return { progress: p, waitedMs, withinBound: p.unfinished === 0, load1: load1() };
    await delay(everyMs);
  }
}

/** Runs per second over a span, rounded. */
export function perSecond(n: number, ms: number): number {
  return ms > 0 ? round(n / (ms / 1000), 1) : Number.NaN;
}
