/**
 * Explain's answer for a worker task sent to its worker group's queues and not taken yet: no
 * worker serves the group (standalone, `shoal worker`, or an ECS service scaled to zero), every
 * slot of its workers is busy, its message was received by a worker and waits there for a slot,
 * or it waits in the queue (behind higher-priority tasks). Part of lib/core/explain.ts; pure.
 */
import {
  type Decision,
  type ExplainAttempt,
  type ExplainFacts,
  iso,
  type WorkerBeatFacts,
  type WorkerGroupFacts,
} from "./explain-facts.js";
import { PRIORITIES } from "./model.js";
import { priorityRank } from "./priority.js";

/**
 * A worker group none of whose workers recorded a heartbeat for this long has no worker, ms.
 * A worker writes its heartbeat on a timer every minute while it runs, busy or idle
 * (lib/engine/worker-heartbeat.ts HEARTBEAT_INTERVAL_MS), so a live worker's is at most about
 * 60 s old; 120 s leaves room for one failed or late write.
 */
export const WORKER_SILENCE_MS = 120_000;

/**
 * A task queued this long for an ECS group that still has no worker: the service should have
 * scaled out by now (a one-minute alarm, then a Fargate start of a minute or two), ms.
 */
export const ECS_SCALE_OUT_LATE_MS = 10 * 60_000;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The workers whose heartbeat is recent enough to count them as running. */
export function liveWorkers(g: WorkerGroupFacts, now: number): WorkerBeatFacts[] {
  return (g.heartbeat?.workers ?? []).filter((w) => now - w.at <= WORKER_SILENCE_MS);
}

/** A worker task in its worker group's queue (or received by a worker, not started yet). */
export function queued(f: ExplainFacts, a: ExplainAttempt): Decision {
  const group = a.workerGroup;
  const g = f.workerGroups?.[group] ?? {};
  const tier = f.instance.priority;
  const facts: Record<string, unknown> = { workerGroup: group, tier };
  if (g.queued === "missing") {
    // No queue, no worker: a worker's poller would have found (or, in standalone, made) them.
    return {
      reason: "NO_WORKER",
      message: `no worker has polled worker group '${group}' in the last ${WORKER_SILENCE_MS / 1000} s: the group has no task queues (a deployed stack makes them only for its workerGroups and ecsWorkerGroup)`,
      facts: { ...facts, queues: "missing", silenceSeconds: WORKER_SILENCE_MS / 1000 },
    };
  }
  facts.servedBy = g.lambda ? "lambda" : g.ecs ? "ecs" : "workers";
  const live = g.lambda ? [] : liveWorkers(g, f.now);
  if (!g.lambda) {
    if (g.heartbeat) {
      facts.lastPollAt = iso(g.heartbeat.lastPollAt);
      facts.lastWorker = g.heartbeat.worker;
    }
    if (live.length > 0) {
      facts.workers = live.map((w) => ({
        worker: w.worker,
        used: w.used,
        slots: w.slots,
        ...(w.held ? { held: w.held } : {}),
        at: iso(w.at),
      }));
    }
    const silent =
      !g.heartbeatsUnknown &&
      live.length === 0 &&
      (!g.heartbeat || f.now - g.heartbeat.lastPollAt > WORKER_SILENCE_MS);
    if (silent) return noWorker(f, a, g, facts);
  }
  const q = g.queued;
  const rank = priorityRank(tier);
  const ahead = PRIORITIES.filter((p) => priorityRank(p) < rank).reduce(
    (n, p) => n + (q?.[p] ?? 0),
    0,
  );
  const same = q?.[tier] ?? 0;
  if (q) {
    facts.queued = q;
    facts.higherPriorityQueued = ahead;
  }
  if (g.inFlight) facts.inFlight = g.inFlight;
  // Nothing of its tier is visible but some is in flight: a worker received its message
  // (prefetched) and holds it until a slot frees. Lambda runs what it receives at once.
  const received = !g.lambda && q !== undefined && same === 0 && (g.inFlight?.[tier] ?? 0) > 0;
  // A heartbeat without slots (written by an older worker) says nothing of how busy it is.
  const busy = live.length > 0 && live.every((w) => w.slots > 0 && w.used >= w.slots);
  if (busy) {
    const slots = live.reduce((n, w) => n + w.slots, 0);
    const who =
      live.length > 1
        ? `all ${slots} slots of the ${live.length} workers of group '${group}' are busy`
        : slots === 1
          ? `the only slot of worker ${live[0]?.worker} is busy`
          : `all ${slots} slots of worker ${live[0]?.worker} are busy`;
    const behind =
      ahead > 0 ? `, behind approximately ${plural(ahead, "higher-priority task")}` : "";
    return {
      reason: "WORKERS_BUSY",
      message: received
        ? `received by a worker of group '${group}', waiting for a free slot: ${who}${behind}`
        : `${who}: it waits in the queue for a free slot${behind}`,
      facts,
    };
  }
  if (ahead > 0) {
    return {
      reason: "QUEUED_BEHIND_HIGHER_PRIORITY",
      message: `queued behind approximately ${plural(ahead, "higher-priority task")} in worker group '${group}'`,
      facts,
    };
  }
  if (received) {
    return {
      reason: "QUEUED",
      message: `received by a worker of group '${group}', waiting for a free slot`,
      facts,
    };
  }
  const who = g.lambda ? `the Lambda worker of group '${group}'` : `a worker of group '${group}'`;
  // Counts are approximate and lag: "approximately 0 tasks wait" would contradict the task.
  if (same === 0) return { reason: "QUEUED", message: `queued for ${who}`, facts };
  return {
    reason: "QUEUED",
    message: `queued for ${who}: approximately ${plural(same, "task")} wait at its priority (${tier})`,
    facts,
  };
}

/** No worker of the group has recorded a heartbeat lately: what starts one. */
function noWorker(
  f: ExplainFacts,
  a: ExplainAttempt,
  g: WorkerGroupFacts,
  facts: Record<string, unknown>,
): Decision {
  const group = a.workerGroup;
  const seconds = WORKER_SILENCE_MS / 1000;
  const last = g.heartbeat
    ? ` (last poll at ${iso(g.heartbeat.lastPollAt)} by ${g.heartbeat.worker})`
    : "";
  const out = { ...facts, silenceSeconds: seconds };
  if (!g.ecs) {
    return {
      reason: "NO_WORKER",
      message: `no worker has polled worker group '${group}' in the last ${seconds} s${last}: start one with shoal worker --group ${group}`,
      facts: out,
    };
  }
  // The stack's ECS service scales on the queues' depth, to zero when idle: the queued
  // message itself starts a container (cdk/ecs-workers.ts).
  if (f.now - a.submittedAt <= ECS_SCALE_OUT_LATE_MS) {
    return {
      reason: "NO_WORKER",
      message: `worker group '${group}' is served by ECS, which runs no worker now (scaled to 0 while idle${last}): the queued task makes it start one, within a few minutes (a one-minute queue-depth alarm, then the container's start)`,
      facts: out,
    };
  }
  return {
    reason: "NO_WORKER",
    message: `no ECS worker of group '${group}' has polled in the last ${seconds} s${last} although the task has been queued since ${iso(a.submittedAt)}: the service did not scale out; see its events and stopped tasks in the ECS console`,
    facts: out,
  };
}
