/**
 * The dispatcher's decisions, pure: which tasks are ready, what a task outcome changes, when an
 * instance is over. An instance's progress is one character per task index (so a 10,000-task
 * DAG fits in a single DynamoDB item), plus attempt counters for tasks that ran more than once.
 * Given the same progress and outcomes it always decides the same, which is what makes a
 * redelivered event harmless (docs/architecture.md).
 */
import type { Dag } from "./dag.js";
import type { FailureStrategy, TaskState } from "./model.js";
import { type RetryPolicy, retryDelaySeconds, shouldRetry } from "./retry.js";

/** One character per task in `Progress.slots`. */
export const SLOT = {
  /** Not part of this run (start-tasks scope); counts as satisfied for downstream tasks. */
  OUT: ".",
  WAITING: "-",
  /** Submitted, dispatched, running or waiting for a retry. */
  ACTIVE: "D",
  SUCCESS: "S",
  FAILURE: "F",
  KILLED: "K",
  FORCED_SUCCESS: "f",
} as const;

/** Failovers of one task before it counts as failed. */
export const MAX_FAILOVERS = 5;

const SATISFIED = new Set<string>([SLOT.OUT, SLOT.SUCCESS, SLOT.FORCED_SUCCESS]);

/** Persisted DAG progress of a workflow instance. */
export interface Progress {
  slots: string;
  /** Task index → [current attempt, retries used]; only for tasks past their first attempt. */
  attempts: Record<string, [number, number]>;
}

/** A task attempt that ended (from a worker's state-change event). */
export interface TaskOutcome {
  index: number;
  attempt: number;
  state: TaskState;
}

/** A task attempt to create and send to a worker. */
export interface DispatchOrder {
  index: number;
  attempt: number;
  /** Seconds to wait before a worker may take it (retry interval). */
  delaySeconds: number;
}

/** What the dispatcher needs besides the progress. */
export interface AdvanceContext {
  dag: Dag;
  policies: readonly RetryPolicy[];
  failureStrategy: FailureStrategy;
  /** A stop was accepted: nothing new starts, no retries. */
  stopping: boolean;
}

export interface AdvanceResult {
  progress: Progress;
  dispatch: DispatchOrder[];
  /** Set when the instance is over. */
  finalState?: "SUCCESS" | "FAILURE" | "STOPPED";
  /** False when the outcomes were all stale or duplicates: nothing to write. */
  changed: boolean;
}

/** Current attempt number of a task (1 before any retry). */
export function attemptOf(progress: Progress, index: number): number {
  return progress.attempts[index]?.[0] ?? 1;
}

/**
 * Progress of a new instance: the tasks in scope whose upstreams are satisfied are dispatched.
 * @param inScope one flag per task index (Dag.scope()).
 */
export function startProgress(ctx: AdvanceContext, inScope: readonly boolean[]): AdvanceResult {
  const slots = inScope.map((s) => (s ? SLOT.WAITING : SLOT.OUT));
  const progress: Progress = { slots: slots.join(""), attempts: {} };
  return advance(ctx, progress, slots, [], true);
}

/** Applies task outcomes (stale attempts and duplicates are ignored) and dispatches what became ready. */
export function applyOutcomes(
  ctx: AdvanceContext,
  progress: Progress,
  outcomes: readonly TaskOutcome[],
): AdvanceResult {
  const slots = progress.slots.split("");
  const attempts = { ...progress.attempts };
  const next: Progress = { slots: progress.slots, attempts };
  const dispatch: DispatchOrder[] = [];
  const touched: number[] = [];
  let changed = false;
  for (const o of outcomes) {
    if (slots[o.index] !== SLOT.ACTIVE || attemptOf(next, o.index) !== o.attempt) continue;
    const retriesUsed = attempts[o.index]?.[1] ?? 0;
    switch (o.state) {
      case "SUCCESS":
      case "FORCED_SUCCESS":
        slots[o.index] = o.state === "SUCCESS" ? SLOT.SUCCESS : SLOT.FORCED_SUCCESS;
        touched.push(o.index);
        break;
      case "FAILURE": {
        const policy = ctx.policies[o.index] ?? { retries: 0, retryIntervalSeconds: 0 };
        // Under END, once a task has failed for good nothing new starts: no retries either.
        const ended =
          ctx.failureStrategy === "END" &&
          slots.some((x) => x === SLOT.FAILURE || x === SLOT.KILLED);
        if (!ctx.stopping && !ended && shouldRetry(policy, retriesUsed)) {
          attempts[o.index] = [o.attempt + 1, retriesUsed + 1];
          dispatch.push({
            index: o.index,
            attempt: o.attempt + 1,
            delaySeconds: retryDelaySeconds(policy, retriesUsed + 1),
          });
        } else slots[o.index] = SLOT.FAILURE;
        break;
      }
      case "NEED_FAULT_TOLERANCE":
        // Failover: a new attempt elsewhere, not counted against retries (DolphinScheduler),
        // up to MAX_FAILOVERS: a task that kills every worker it runs on must end some time.
        if (ctx.stopping) slots[o.index] = SLOT.KILLED;
        else if (
          ctx.failureStrategy === "END" &&
          slots.some((x) => x === SLOT.FAILURE || x === SLOT.KILLED)
        ) {
          slots[o.index] = SLOT.KILLED; // END after a failure: nothing new starts
        } else if (o.attempt - retriesUsed > MAX_FAILOVERS) slots[o.index] = SLOT.FAILURE;
        else {
          attempts[o.index] = [o.attempt + 1, retriesUsed];
          dispatch.push({ index: o.index, attempt: o.attempt + 1, delaySeconds: 0 });
        }
        break;
      case "KILLED":
      case "PAUSED":
        slots[o.index] = SLOT.KILLED;
        break;
      default:
        continue; // not an outcome (SUBMITTED, RUNNING…)
    }
    changed = true;
  }
  if (!changed) return { progress, dispatch: [], changed: false };
  const result = advance(ctx, next, slots, touched, false);
  result.dispatch.unshift(...dispatch);
  return result;
}

/**
 * Marks newly ready tasks ACTIVE and decides whether the instance is over.
 * @param from tasks whose downstream to look at, or every task when `all`.
 */
function advance(
  ctx: AdvanceContext,
  progress: Progress,
  slots: string[],
  from: readonly number[],
  all: boolean,
): AdvanceResult {
  const dispatch: DispatchOrder[] = [];
  const failed = slots.some((s) => s === SLOT.FAILURE || s === SLOT.KILLED);
  const frozen = ctx.stopping || (failed && ctx.failureStrategy === "END");
  if (!frozen) {
    const candidates = all
      ? ctx.dag.codes.map((_, i) => i)
      : from.flatMap((i) => ctx.dag.downstream[i] ?? []);
    for (const c of candidates) {
      if (slots[c] !== SLOT.WAITING) continue;
      const ups = ctx.dag.upstream[c] ?? [];
      if (ups.every((u) => SATISFIED.has(slots[u] as string))) {
        slots[c] = SLOT.ACTIVE;
        dispatch.push({ index: c, attempt: attemptOf(progress, c), delaySeconds: 0 });
      }
    }
  }
  const out: AdvanceResult = {
    progress: { slots: slots.join(""), attempts: progress.attempts },
    dispatch,
    changed: true,
  };
  if (!slots.includes(SLOT.ACTIVE)) {
    out.finalState = ctx.stopping ? "STOPPED" : failed ? "FAILURE" : "SUCCESS";
  }
  return out;
}

/** Indices of the tasks currently active (to kill on stop). */
export function activeTasks(progress: Progress): number[] {
  const out: number[] = [];
  for (let i = 0; i < progress.slots.length; i++)
    if (progress.slots[i] === SLOT.ACTIVE) out.push(i);
  return out;
}

/** Counts for progress lines: done, active, failed, total in scope. */
export function progressCounts(progress: Progress): {
  done: number;
  active: number;
  failed: number;
  total: number;
} {
  let done = 0;
  let active = 0;
  let failed = 0;
  let total = 0;
  for (const s of progress.slots) {
    if (s === SLOT.OUT) continue;
    total++;
    if (s === SLOT.SUCCESS || s === SLOT.FORCED_SUCCESS) done++;
    else if (s === SLOT.ACTIVE) active++;
    else if (s === SLOT.FAILURE || s === SLOT.KILLED) failed++;
  }
  return { done, active, failed, total };
}
