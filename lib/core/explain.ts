/**
 * "Why isn't my task running?", decided purely: from the facts the API gathers (the instance's
 * progress slots, the definition's DAG, the task instance records, task-group state, worker
 * heartbeats, queue depths, the pending command, child instances, dependent items) it names one
 * reason per task, says it in one sentence and returns the facts behind it
 * (`GET /v1/instances/{id}/explain`, `shoal explain`). DolphinScheduler has no such view; its
 * users read the master's log. Times in facts are ISO-8601; messages hold no relative time, so a
 * message changes only when the situation does (`shoal logs --follow` prints it on change).
 */

import { skipCause } from "./branches.js";
import { active, finished } from "./explain-active.js";
import {
  attemptIndex,
  currentAttempt,
  type Decision,
  type ExplainAttempt,
  type ExplainFacts,
  type ExplainReason,
  type Explanation,
  iso,
} from "./explain-facts.js";
import { type Blocker, blockerOf, skippedMessage, waitingMessage } from "./explain-waiting.js";
import { isFinalInstanceState, isWorkerTaskType, type TaskDefinition } from "./model.js";
import { attemptOf, SLOT } from "./progress.js";

export * from "./explain-facts.js";
export { ECS_SCALE_OUT_LATE_MS, WORKER_SILENCE_MS } from "./explain-queued.js";

/** What the API has to look up to explain the tasks `indexes`. */
export interface NeededFacts {
  workerGroups: Set<string>;
  /** Task groups with the attempts queued for them (`code#attempt`). */
  taskGroups: Map<string, Set<string>>;
  /** SUB_WORKFLOW task code → child instance id. */
  children: Map<string, string>;
  /** DEPENDENT task codes. */
  dependents: Set<string>;
}

/** The lookups explaining `indexes` (default: every task) needs beyond the records. */
export function neededFacts(
  f: Pick<ExplainFacts, "instance" | "tasks" | "attempts">,
  indexes?: readonly number[],
): NeededFacts {
  const out: NeededFacts = {
    workerGroups: new Set(),
    taskGroups: new Map(),
    children: new Map(),
    dependents: new Set(),
  };
  const byKey = attemptIndex(f.attempts);
  for (const i of indexes ?? f.tasks.map((_, i) => i)) {
    const task = f.tasks[i];
    const a = currentAttempt(f, i, byKey);
    if (!task || !a || f.instance.progress.slots[i] !== SLOT.ACTIVE) continue;
    if (a.state === "SUBMITTED" && a.taskGroup) {
      const set = out.taskGroups.get(a.taskGroup) ?? new Set<string>();
      set.add(`${a.code}#${a.attempt}`);
      out.taskGroups.set(a.taskGroup, set);
    } else if (
      (a.state === "SUBMITTED" || a.state === "DISPATCHED") &&
      isWorkerTaskType(task.type)
    ) {
      out.workerGroups.add(a.workerGroup);
    }
    if (task.type === "SUB_WORKFLOW" && a.subInstanceId)
      out.children.set(task.code, a.subInstanceId);
    if (task.type === "DEPENDENT" && a.state === "RUNNING") out.dependents.add(task.code);
  }
  return out;
}

/**
 * The tasks whose attempts explaining task `index` reads (by index): the task, its upstream
 * tasks, the failed task that blocks it when it waits, and the branch task that skipped it. The
 * API reads only these attempts for a single task (an instance may have thousands).
 */
export function explainReads(
  f: Pick<ExplainFacts, "instance" | "tasks" | "upstream">,
  index: number,
): Set<number> {
  const out = new Set<number>([index, ...(f.upstream[index] ?? [])]);
  const slots = f.instance.progress.slots;
  const indexOf = (code: string | undefined) => f.tasks.findIndex((t) => t.code === code);
  if (slots[index] === SLOT.WAITING) {
    const facts = { ...f, attempts: [], now: 0 } as ExplainFacts;
    const b = blockerOf(facts, index, new Map(), new Map());
    if (b) out.add(indexOf(b.code));
  } else if (slots[index] === SLOT.SKIPPED) {
    const cause = skipCause(f.tasks, f.upstream, slots, index);
    if (cause) out.add(indexOf(cause.by));
  }
  out.delete(-1);
  return out;
}

/**
 * Why task `index` is where it is.
 * @throws RangeError for an index outside the definition.
 */
export function explainTask(
  f: ExplainFacts,
  index: number,
  ctx: ExplainContext = explainContext(f),
): Explanation {
  const task = f.tasks[index];
  if (!task) throw new RangeError(`no task at index ${index}`);
  const a = currentAttempt(f, index, ctx.byKey);
  const slot = f.instance.progress.slots[index] ?? SLOT.OUT;
  const base = {
    code: task.code,
    type: task.type,
    state: a?.state ?? (slot === SLOT.OUT ? "NOT_IN_SCOPE" : "NOT_STARTED"),
    ...(a ? { attempt: a.attempt } : {}),
  } as const;
  return { ...base, ...decide(f, index, task, slot, a, ctx) };
}

/** Lookups shared by the explanations of one instance. */
export interface ExplainContext {
  byKey: Map<string, ExplainAttempt>;
  /** Blockers of waiting tasks, by index (lib/core/explain-waiting.ts). */
  memo: Map<number, Blocker | null>;
}

/**
 * The lookups the explanations of one instance share: its attempts by `code#attempt`, and the
 * blockers found so far. Build it once per set of facts (after `attempts` is final) and pass it
 * to every {@link explainTask} call on those facts; explainTask builds one when given none.
 */
export function explainContext(f: Pick<ExplainFacts, "attempts">): ExplainContext {
  return { byKey: attemptIndex(f.attempts), memo: new Map() };
}

/**
 * Explanations of the tasks that wait (or were skipped or left out): every task but those
 * running on a worker and those finished. A logic task that waits (SUB_WORKFLOW, DEPENDENT) is
 * listed although its state is RUNNING.
 */
export function explainInstance(f: ExplainFacts): Explanation[] {
  const ctx = explainContext(f);
  const out: Explanation[] = [];
  for (let i = 0; i < f.tasks.length; i++) {
    const e = explainTask(f, i, ctx);
    if (e.reason === "RUNNING" || e.reason === "FINISHED" || e.reason === "NOT_IN_SCOPE") continue;
    out.push(e);
  }
  return out;
}

/** The reason that holds the whole instance, when one does (not started, paused, ended…). */
export function instanceHold(
  f: Pick<ExplainFacts, "instance" | "pendingCommand" | "now">,
): { reason: ExplainReason; message: string; facts: Record<string, unknown> } | undefined {
  const { instance: inst, pendingCommand: cmd } = f;
  if (inst.state === undefined) {
    if (cmd?.notBefore !== undefined && cmd.notBefore > f.now) {
      return {
        reason: "NOT_BEFORE",
        message: `not before ${iso(cmd.notBefore)}: a scheduled run signalled ahead of its nominal time starts then`,
        facts: { notBefore: iso(cmd.notBefore) },
      };
    }
    return {
      reason: "INSTANCE_STARTING",
      message: "the instance has not started yet: its start command waits for the dispatcher",
      facts: cmd ? { command: { type: cmd.type, createdAt: iso(cmd.createdAt) } } : {},
    };
  }
  if (cmd && cmd.type !== "STOP" && cmd.type !== "PAUSE") {
    const what = cmd.type === "RECOVER_FAILED" ? "RECOVER_FAILED" : cmd.type;
    return {
      reason: "COMMAND_PENDING",
      message: `a ${what} of the instance, sent at ${iso(cmd.createdAt)}, waits for the dispatcher: this round has not started yet`,
      facts: {
        command: { type: cmd.type, createdAt: iso(cmd.createdAt) },
        instanceState: inst.state,
      },
    };
  }
  if (cmd?.type === "STOP" || inst.state === "STOPPING") {
    return {
      reason: "INSTANCE_STOPPING",
      message: "the instance is stopping: nothing new starts",
      facts: { instanceState: inst.state },
    };
  }
  if (inst.state === "PAUSED") {
    return {
      reason: "INSTANCE_PAUSED",
      message: `the instance is PAUSED: nothing starts until it is resumed (shoal resume ${inst.instanceId})`,
      facts: { instanceState: inst.state },
    };
  }
  if (cmd?.type === "PAUSE" || inst.state === "PAUSING") {
    return {
      reason: "INSTANCE_PAUSING",
      message: "the instance is pausing: running tasks finish, nothing new starts",
      facts: { instanceState: inst.state },
    };
  }
  if (inst.timedOutAt !== undefined && !isFinalInstanceState(inst.state)) {
    return {
      reason: "INSTANCE_TIMED_OUT",
      message: `the workflow timed out at ${iso(inst.timedOutAt)}: nothing new starts and the instance ends FAILURE`,
      facts: { timedOutAt: iso(inst.timedOutAt), instanceState: inst.state },
    };
  }
  if (isFinalInstanceState(inst.state)) {
    return {
      reason: "INSTANCE_ENDED",
      message: `the instance ended ${inst.state}`,
      facts: { instanceState: inst.state },
    };
  }
  return undefined;
}

function decide(
  f: ExplainFacts,
  index: number,
  task: TaskDefinition,
  slot: string,
  a: ExplainAttempt | undefined,
  ctx: ExplainContext,
): Decision {
  const hold = instanceHold(f);
  // A rerun, recover-failed or resume not carried out yet: the tasks it will run wait for it.
  if (hold?.reason === "COMMAND_PENDING" && rerunsSlot(f.pendingCommand?.type, slot)) return hold;
  switch (slot) {
    case SLOT.OUT:
      return notInScope(f);
    case SLOT.SKIPPED:
      return skippedMessage(f, index, ctx.byKey);
    case SLOT.SUCCESS:
    case SLOT.FAILURE:
    case SLOT.KILLED:
    case SLOT.FORCED_SUCCESS:
    case SLOT.HANDLED:
      return finished(a, slot);
    case SLOT.PAUSED:
      return (
        hold ?? {
          reason: "INSTANCE_PAUSED",
          message: "paused with the instance: it starts again when the instance is resumed",
          facts: {},
        }
      );
    case SLOT.WAITING:
      return waitingMessage(f, index, hold, ctx.byKey, ctx.memo);
    default:
      return active(f, index, task, a, hold, previousAttempt(f, index, task, a, ctx));
  }
}

/** The attempt before the current one, when the current one has no record yet. */
function previousAttempt(
  f: ExplainFacts,
  index: number,
  task: TaskDefinition,
  a: ExplainAttempt | undefined,
  ctx: ExplainContext,
): ExplainAttempt | undefined {
  if (a) return undefined;
  return ctx.byKey.get(`${task.code}#${attemptOf(f.instance.progress, index) - 1}`);
}

/** Whether a pending command of `type` starts the task in `slot` again. */
function rerunsSlot(type: string | undefined, slot: string): boolean {
  if (slot === SLOT.OUT) return false;
  switch (type) {
    case "RERUN":
      return true;
    case "RECOVER_FAILED":
      return ([SLOT.FAILURE, SLOT.KILLED, SLOT.PAUSED, SLOT.WAITING] as string[]).includes(slot);
    default:
      return slot === SLOT.PAUSED || slot === SLOT.WAITING;
  }
}

function notInScope(f: ExplainFacts): Decision {
  const starts = f.instance.startTasks ?? [];
  const scope = f.instance.taskScope ?? "DOWNSTREAM";
  const from = starts.map((s) => `'${s}'`).join(", ");
  return {
    reason: "NOT_IN_SCOPE",
    message: `not in this run's scope: the run started from ${from || "selected tasks"} (scope ${scope})`,
    facts: { startTasks: starts, taskScope: scope },
  };
}
