/**
 * The dispatcher's decisions, pure: which tasks are ready, what a task outcome changes, when an
 * instance is over, and how pause, resume, rerun and recover-failed change the DAG's progress.
 * An instance's progress is one character per task index (so a 10,000-task DAG fits in a single
 * DynamoDB item), plus attempt counters for tasks that ran more than once. Given the same
 * progress and outcomes it always decides the same, which is what makes a redelivered event
 * harmless (docs/architecture.md).
 */
import type { Dag } from "./dag.js";
import type { FailureStrategy, TaskState } from "./model.js";
import { type RetryPolicy, retryDelaySeconds, shouldRetry } from "./retry.js";

/** One character per task in `Progress.slots`. */
export const SLOT = {
  /** Not part of this run (start-tasks scope); counts as satisfied for downstream tasks. */
  OUT: ".",
  WAITING: "-",
  /** Submitted, dispatched, running or waiting for a retry (or, for a logic task, deciding). */
  ACTIVE: "D",
  SUCCESS: "S",
  FAILURE: "F",
  KILLED: "K",
  FORCED_SUCCESS: "f",
  /** On a branch a CONDITIONS or SWITCH task did not take; satisfies its downstream. */
  SKIPPED: "s",
  /** Stopped by a pause; the attempt counter already names the attempt a resume starts. */
  PAUSED: "P",
  /**
   * Failed for good, but a downstream CONDITIONS task handles the failure: it neither fails
   * the instance nor ends it under END (DolphinScheduler's conditions node).
   */
  HANDLED: "h",
} as const;

/**
 * Failovers of one task attempt chain before it counts as failed. High, because a failover is
 * infrastructure churn (a worker killed, scaled in, out of memory) more often than a task that
 * kills every worker it runs on, and churn must not fail a user's instance: the fault injection
 * (`npm run chaos`, docs/reliability.md) saw up to 4 failovers of one task with a worker killed
 * every 2–5 s. A cap remains so that such a task ends some time (20 leases, 200 s standalone).
 */
export const MAX_FAILOVERS = 20;

/** Slots whose downstream tasks may run. */
export const SATISFIED = new Set<string>([
  SLOT.OUT,
  SLOT.SUCCESS,
  SLOT.FORCED_SUCCESS,
  SLOT.SKIPPED,
]);
/** Slots a CONDITIONS task waits for: finished, whatever the result. */
export const FINISHED = new Set<string>([...SATISFIED, SLOT.FAILURE, SLOT.KILLED, SLOT.HANDLED]);
const FAILED = new Set<string>([SLOT.FAILURE, SLOT.KILLED]);

/**
 * How a task index is run: "worker" (SHELL, HTTP, LAMBDA, STEP_FUNCTIONS) or by the dispatcher
 * itself (logic tasks).
 * CONDITIONS changes readiness (it waits for finished, not successful, upstreams).
 */
export type TaskKind = "worker" | "CONDITIONS" | "SWITCH" | "SUB_WORKFLOW" | "DEPENDENT";

/** Persisted DAG progress of a workflow instance. */
export interface Progress {
  slots: string;
  /**
   * Task index → [current attempt, retries used, failovers]; only for tasks past their first
   * attempt. The third entry is absent in items written before failovers were counted apart.
   */
  attempts: Record<string, [number, number, number?]>;
}

/** A task attempt that ended (from a task event on the events queue, or a logic task decision). */
export interface TaskOutcome {
  index: number;
  attempt: number;
  state: TaskState;
  /** CONDITIONS / SWITCH: indices of the branch targets not taken (become SKIPPED). */
  skip?: readonly number[];
}

/** A task attempt to create and send to a worker (or, for a logic task, to decide). */
export interface DispatchOrder {
  index: number;
  attempt: number;
  /** Seconds to wait before a worker may take it (retry interval). */
  delaySeconds: number;
}

/**
 * An instance-wide halt: "stop" (STOPPING: nothing new starts, ends STOPPED), "pause" (PAUSING:
 * nothing new starts, running tasks finish, ends PAUSED), "fail" (workflow timeout: nothing new
 * starts, ends FAILURE).
 */
export type Halt = "stop" | "pause" | "fail";

/** What the dispatcher needs besides the progress. */
export interface AdvanceContext {
  dag: Dag;
  policies: readonly RetryPolicy[];
  failureStrategy: FailureStrategy;
  /** Per task index; absent means every task runs on a worker. */
  kinds?: readonly TaskKind[];
  halt?: Halt;
}

export interface AdvanceResult {
  progress: Progress;
  dispatch: DispatchOrder[];
  /** Set when the instance is over (or, under a pause, has come to rest). */
  finalState?: "SUCCESS" | "FAILURE" | "STOPPED" | "PAUSED";
  /** False when the outcomes were all stale or duplicates: nothing to write. */
  changed: boolean;
  /**
   * A task just failed for good under END while others are active: the dispatcher kills them
   * (DolphinScheduler's END kills running siblings).
   */
  killActive?: boolean;
}

/** Current attempt number of a task (1 before any retry). */
export function attemptOf(progress: Progress, index: number): number {
  return progress.attempts[index]?.[0] ?? 1;
}

function countersOf(progress: Progress, index: number): [number, number, number] {
  const a = progress.attempts[index];
  if (!a) return [1, 0, 0];
  // Older items: every attempt past the first that was not a retry was a failover.
  return [a[0], a[1], a[2] ?? Math.max(0, a[0] - 1 - a[1])];
}

function kindOf(ctx: AdvanceContext, index: number): TaskKind {
  return ctx.kinds?.[index] ?? "worker";
}

/** Whether a failure of `index` is handled by a downstream CONDITIONS task. */
function failureHandled(ctx: AdvanceContext, index: number): boolean {
  return (ctx.dag.downstream[index] ?? []).some((d) => kindOf(ctx, d) === "CONDITIONS");
}

/**
 * Progress of a new instance: the tasks in scope whose upstreams are satisfied are dispatched.
 * @param inScope one flag per task index (Dag.scope()).
 */
export function startProgress(ctx: AdvanceContext, inScope: readonly boolean[]): AdvanceResult {
  const slots = inScope.map((s) => (s ? SLOT.WAITING : SLOT.OUT));
  const progress: Progress = { slots: slots.join(""), attempts: {} };
  return advance(ctx, progress, slots, [], true, false);
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
  const failedBefore = slots.some((x) => FAILED.has(x));
  const endedBefore = ctx.failureStrategy === "END" && failedBefore;
  let changed = false;
  for (const o of outcomes) {
    if (slots[o.index] !== SLOT.ACTIVE || attemptOf(next, o.index) !== o.attempt) continue;
    const [attempt, retriesUsed, failovers] = countersOf(next, o.index);
    const ended = ctx.failureStrategy === "END" && slots.some((x) => FAILED.has(x));
    switch (o.state) {
      case "SUCCESS":
      case "FORCED_SUCCESS":
        slots[o.index] = o.state === "SUCCESS" ? SLOT.SUCCESS : SLOT.FORCED_SUCCESS;
        touched.push(o.index);
        for (const s of skipBranches(ctx, slots, o.skip ?? [])) touched.push(s);
        break;
      case "FAILURE": {
        const policy = ctx.policies[o.index] ?? { retries: 0, retryIntervalSeconds: 0 };
        // Under END, once a task has failed for good nothing new starts: no retries either.
        if (
          ctx.halt !== "stop" &&
          ctx.halt !== "fail" &&
          !ended &&
          shouldRetry(policy, retriesUsed)
        ) {
          attempts[o.index] = [attempt + 1, retriesUsed + 1, failovers];
          if (ctx.halt === "pause")
            slots[o.index] = SLOT.PAUSED; // the retry waits for resume
          else {
            dispatch.push({
              index: o.index,
              attempt: attempt + 1,
              delaySeconds: retryDelaySeconds(policy, retriesUsed + 1),
            });
          }
        } else {
          slots[o.index] = failureHandled(ctx, o.index) ? SLOT.HANDLED : SLOT.FAILURE;
          touched.push(o.index);
        }
        break;
      }
      case "NEED_FAULT_TOLERANCE":
        // Failover: a new attempt elsewhere, not counted against retries (DolphinScheduler),
        // up to MAX_FAILOVERS: a task that kills every worker it runs on must end some time.
        if (ctx.halt === "stop" || ctx.halt === "fail" || ended) slots[o.index] = SLOT.KILLED;
        else if (failovers >= MAX_FAILOVERS) {
          slots[o.index] = failureHandled(ctx, o.index) ? SLOT.HANDLED : SLOT.FAILURE;
          touched.push(o.index);
        } else {
          attempts[o.index] = [attempt + 1, retriesUsed, failovers + 1];
          if (ctx.halt === "pause") slots[o.index] = SLOT.PAUSED;
          else dispatch.push({ index: o.index, attempt: attempt + 1, delaySeconds: 0 });
        }
        break;
      case "PAUSED":
        // A sub-workflow paused on its own (not by this instance's pause) keeps its parent
        // task active: the parent waits for the child's resume and result.
        if (kindOf(ctx, o.index) === "SUB_WORKFLOW" && ctx.halt !== "pause") continue;
        // A worker task's PAUSED attempt is over: resume starts the next one. A logic task
        // (sub-workflow, dependent) resumes the same attempt.
        if (kindOf(ctx, o.index) === "worker") {
          attempts[o.index] = [attempt + 1, retriesUsed, failovers];
          // Paused by its worker before it started, and the instance resumed since
          // (lib/engine/halt-gate.ts): the next attempt runs now.
          if (ctx.halt === undefined && !ended) {
            dispatch.push({ index: o.index, attempt: attempt + 1, delaySeconds: 0 });
            break;
          }
        }
        slots[o.index] = SLOT.PAUSED;
        break;
      case "KILLED":
        slots[o.index] = SLOT.KILLED;
        break;
      default:
        continue; // not an outcome (SUBMITTED, RUNNING…)
    }
    changed = true;
  }
  if (!changed) return { progress, dispatch: [], changed: false };
  const result = advance(ctx, next, slots, touched, false, endedBefore);
  result.dispatch.unshift(...dispatch);
  return result;
}

/**
 * Marks the branch targets not taken SKIPPED (when still waiting), then every waiting task all
 * of whose upstreams are SKIPPED (DolphinScheduler skips what only a skipped branch leads to).
 * @returns the indices newly skipped (their downstream may now be ready).
 */
function skipBranches(ctx: AdvanceContext, slots: string[], targets: readonly number[]): number[] {
  const skipped: number[] = [];
  const stack = targets.filter((t) => slots[t] === SLOT.WAITING);
  while (stack.length > 0) {
    const t = stack.pop() as number;
    if (slots[t] !== SLOT.WAITING) continue;
    slots[t] = SLOT.SKIPPED;
    skipped.push(t);
    for (const d of ctx.dag.downstream[t] ?? []) {
      if (slots[d] !== SLOT.WAITING) continue;
      if ((ctx.dag.upstream[d] ?? []).every((u) => slots[u] === SLOT.SKIPPED)) stack.push(d);
    }
  }
  return skipped;
}

function isReady(ctx: AdvanceContext, slots: readonly string[], c: number): boolean {
  const ups = ctx.dag.upstream[c] ?? [];
  const ok = kindOf(ctx, c) === "CONDITIONS" ? FINISHED : SATISFIED;
  return ups.every((u) => ok.has(slots[u] as string));
}

/**
 * Marks newly ready tasks ACTIVE and decides whether the instance is over.
 * @param from tasks whose downstream to look at, or every task when `all`.
 * @param endedBefore END had already stopped new work before these outcomes.
 */
function advance(
  ctx: AdvanceContext,
  progress: Progress,
  slots: string[],
  from: readonly number[],
  all: boolean,
  endedBefore: boolean,
): AdvanceResult {
  const dispatch: DispatchOrder[] = [];
  const failed = slots.some((s) => FAILED.has(s));
  const ended = failed && ctx.failureStrategy === "END";
  const frozen = ctx.halt !== undefined || ended;
  if (!frozen) {
    const candidates = all
      ? ctx.dag.codes.map((_, i) => i)
      : from.flatMap((i) => ctx.dag.downstream[i] ?? []);
    for (const c of candidates) {
      if (slots[c] !== SLOT.WAITING || !isReady(ctx, slots, c)) continue;
      slots[c] = SLOT.ACTIVE;
      dispatch.push({ index: c, attempt: attemptOf(progress, c), delaySeconds: 0 });
    }
  }
  const out: AdvanceResult = {
    progress: { slots: slots.join(""), attempts: progress.attempts },
    dispatch,
    changed: true,
  };
  const active = slots.includes(SLOT.ACTIVE);
  if (ended && !endedBefore && active && ctx.halt === undefined) out.killActive = true;
  if (!active) out.finalState = finalStateOf(ctx, slots, failed);
  return out;
}

function finalStateOf(
  ctx: AdvanceContext,
  slots: readonly string[],
  failed: boolean,
): AdvanceResult["finalState"] {
  if (ctx.halt === "stop") return "STOPPED";
  if (ctx.halt === "fail") return "FAILURE";
  const waiting = slots.some((s) => s === SLOT.WAITING || s === SLOT.PAUSED);
  if (ctx.halt === "pause" && waiting) return "PAUSED";
  // A task left waiting with nothing active could never run (its upstream failed): FAILURE.
  return failed || waiting ? "FAILURE" : "SUCCESS";
}

/**
 * The progress as it stands, with no outcome to apply: whether the instance is over (a stop or
 * pause with nothing active comes to rest at once).
 */
export function restProgress(ctx: AdvanceContext, progress: Progress): AdvanceResult {
  return advance(ctx, progress, progress.slots.split(""), [], false, true);
}

/**
 * Resume after a pause (DolphinScheduler RECOVER_SUSPENDED_PROCESS): PAUSED tasks wait again
 * with the attempt the pause recorded, and everything ready is dispatched.
 */
export function resumeProgress(ctx: AdvanceContext, progress: Progress): AdvanceResult {
  const slots = progress.slots.split("").map((s) => (s === SLOT.PAUSED ? SLOT.WAITING : s));
  return advance(ctx, progress, slots, [], true, false);
}

/**
 * Rerun of a finished instance (DolphinScheduler REPEAT_RUNNING): every task of the original
 * scope waits again, and each task that had an attempt gets the next attempt number (old
 * attempts stay readable); retries and failovers start from zero.
 */
export function rerunProgress(ctx: AdvanceContext, progress: Progress): AdvanceResult {
  const attempts: Progress["attempts"] = {};
  const slots = progress.slots.split("").map((s, i) => {
    if (s === SLOT.OUT) return s;
    if (s !== SLOT.WAITING) attempts[i] = [attemptOf(progress, i) + 1, 0, 0];
    else if (progress.attempts[i]) attempts[i] = progress.attempts[i];
    return SLOT.WAITING;
  });
  const next: Progress = { slots: progress.slots, attempts };
  return advance(ctx, next, slots, [], true, false);
}

/**
 * Recover-failed (DolphinScheduler START_FAILURE_TASK_PROCESS): FAILURE and KILLED tasks wait
 * again with a new attempt, then everything ready runs; successful and skipped tasks are kept.
 */
export function recoverProgress(ctx: AdvanceContext, progress: Progress): AdvanceResult {
  const attempts = { ...progress.attempts };
  const slots = progress.slots.split("").map((s, i) => {
    if (!FAILED.has(s) && s !== SLOT.PAUSED) return s;
    if (s !== SLOT.PAUSED) attempts[i] = [attemptOf(progress, i) + 1, 0, 0];
    return SLOT.WAITING;
  });
  return advance(ctx, { slots: progress.slots, attempts }, slots, [], true, false);
}

/**
 * Force-success of a failed task of a finished instance: the slot becomes FORCED_SUCCESS so a
 * later recover-failed runs its downstream.
 * @returns the new progress, or undefined when the task's current attempt is not failed.
 */
export function forceSuccessProgress(
  progress: Progress,
  index: number,
  attempt: number,
): Progress | undefined {
  const s = progress.slots[index];
  if (s !== SLOT.FAILURE && s !== SLOT.KILLED && s !== SLOT.HANDLED) return undefined;
  if (attemptOf(progress, index) !== attempt) return undefined;
  const slots = progress.slots.split("");
  slots[index] = SLOT.FORCED_SUCCESS;
  return { slots: slots.join(""), attempts: progress.attempts };
}

/** Indices of the tasks currently active (to kill on stop). */
export function activeTasks(progress: Progress): number[] {
  const out: number[] = [];
  for (let i = 0; i < progress.slots.length; i++)
    if (progress.slots[i] === SLOT.ACTIVE) out.push(i);
  return out;
}

/** Counts for progress lines: done (incl. skipped), active, failed, total in scope. */
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
    if (SATISFIED.has(s) || s === SLOT.HANDLED) done++;
    else if (s === SLOT.ACTIVE) active++;
    else if (FAILED.has(s)) failed++;
  }
  return { done, active, failed, total };
}
