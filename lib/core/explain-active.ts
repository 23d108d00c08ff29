/**
 * Explain's answers for tasks the dispatcher has started (slot ACTIVE) and finished ones: where
 * the current attempt is (a task-group queue, a retry interval, a worker group's queue
 * (explain-queued.ts), a worker, a child instance, a dependency check). Part of
 * lib/core/explain.ts; pure.
 */
import {
  type Decision,
  type ExplainAttempt,
  type ExplainFacts,
  iso,
  listed,
} from "./explain-facts.js";
import { queued } from "./explain-queued.js";
import { isFinalTaskState, isWorkerTaskType, type TaskDefinition } from "./model.js";
import { SLOT } from "./progress.js";
import { retryDelaySeconds } from "./retry.js";

/** A finished attempt (or slot): its end state, time and error. */
export function finished(a: ExplainAttempt | undefined, slot: string): Decision {
  const state = a?.state ?? (slot === SLOT.SUCCESS ? "SUCCESS" : "FAILURE");
  const at = a?.endedAt !== undefined ? ` at ${iso(a.endedAt)}` : "";
  const error = a?.error ? `: ${a.error}` : "";
  const handled = slot === SLOT.HANDLED ? " (handled by a downstream CONDITIONS task)" : "";
  return {
    reason: "FINISHED",
    message: `finished ${state}${at}${handled}${error}`,
    facts: {
      ...(a?.endedAt !== undefined ? { endedAt: iso(a.endedAt) } : {}),
      ...(a?.error ? { error: a.error } : {}),
    },
  };
}

/** A task the dispatcher started (slot ACTIVE): where its attempt is. */
export function active(
  f: ExplainFacts,
  index: number,
  task: TaskDefinition,
  a: ExplainAttempt | undefined,
  hold: Decision | undefined,
  /** The attempt before `a`, when `a` has no record yet (a logic task's retry). */
  previous?: ExplainAttempt,
): Decision {
  const worker = isWorkerTaskType(task.type);
  if (!a) {
    // A logic task's retry has no record while it waits for its interval (a sweeper timer).
    const retriesUsed = f.instance.progress.attempts[index]?.[1] ?? 0;
    if (!worker && previous && retriesUsed > 0) {
      const due =
        (previous.endedAt ?? previous.submittedAt) + retryDelaySeconds(task, retriesUsed) * 1000;
      if (due > f.now) {
        return {
          reason: "RETRY_DUE",
          message: `retry due at ${iso(due)} (attempt ${previous.attempt + 1})`,
          facts: { dueAt: iso(due), attempt: previous.attempt + 1 },
        };
      }
    }
    return worker
      ? { reason: "NOT_STARTED", message: "being sent to a worker by the dispatcher", facts: {} }
      : {
          reason: "DECIDING",
          message: `the dispatcher is deciding this ${task.type} task`,
          facts: {},
        };
  }
  if (isFinalTaskState(a.state) && a.state !== "NEED_FAULT_TOLERANCE")
    return finished(a, SLOT.SUCCESS);
  if (a.state === "NEED_FAULT_TOLERANCE") {
    return {
      reason: "FAILING_OVER",
      message: "its worker was lost: the dispatcher starts a new attempt",
      facts: { worker: a.worker, error: a.error },
    };
  }
  if (a.state === "RUNNING") return running(f, task, a);
  // SUBMITTED or DISPATCHED: not taken by a worker yet. A halt means it never will be.
  if (hold && hold.reason !== "INSTANCE_ENDED") return hold;
  if (a.state === "SUBMITTED" && a.taskGroup) return taskGroupWait(f, a);
  const due = dueAt(f, index, task, a);
  if (a.state === "SUBMITTED" && due !== undefined && due > f.now) {
    // The explanation carries the attempt (`flaky (SUBMITTED, attempt 2): retry due at …`).
    return {
      reason: "RETRY_DUE",
      message: `retry due at ${iso(due)}`,
      facts: { dueAt: iso(due), attempt: a.attempt },
    };
  }
  if (!worker)
    return {
      reason: "DECIDING",
      message: `the dispatcher is deciding this ${task.type} task`,
      facts: {},
    };
  return queued(f, a);
}

/** When a SUBMITTED retry may start: stored, or derived from the retry policy. */
function dueAt(
  f: ExplainFacts,
  index: number,
  task: TaskDefinition,
  a: ExplainAttempt,
): number | undefined {
  if (a.dueAt !== undefined) return a.dueAt;
  const retriesUsed = f.instance.progress.attempts[index]?.[1] ?? 0;
  if (a.attempt <= 1 || retriesUsed <= 0) return undefined;
  return a.submittedAt + retryDelaySeconds(task, retriesUsed) * 1000;
}

function running(f: ExplainFacts, task: TaskDefinition, a: ExplainAttempt): Decision {
  if (task.type === "SUB_WORKFLOW") {
    const child = f.children?.[task.code];
    const state = child?.state ?? "not started yet";
    return {
      reason: "WAITING_FOR_SUB_WORKFLOW",
      message: `SUB_WORKFLOW waiting for its child instance ${a.subInstanceId ?? "?"} (${state})`,
      facts: {
        subInstanceId: a.subInstanceId,
        workflow: task.workflow,
        ...(child?.state ? { childState: child.state } : {}),
      },
    };
  }
  if (task.type === "DEPENDENT") {
    const known = f.dependents?.[task.code];
    const items = known ?? task.dependence.groups.flatMap((g) => g.items);
    const waiting = known ? known.filter((i) => i.result === "WAITING") : items;
    const names = (waiting.length > 0 ? waiting : items).map(
      (i) =>
        `workflow '${i.workflow}'${i.task ? ` task '${i.task}'` : ""} (${i.cycle} ${i.dateValue})`,
    );
    return {
      reason: "WAITING_FOR_DEPENDENCY",
      message: `DEPENDENT waiting for ${listed(names)}; checked every ${task.checkIntervalSeconds} s`,
      facts: { items: known ?? items, checkIntervalSeconds: task.checkIntervalSeconds },
    };
  }
  if (!isWorkerTaskType(task.type)) {
    return {
      reason: "DECIDING",
      message: `the dispatcher is deciding this ${task.type} task`,
      facts: {},
    };
  }
  const since = a.startedAt !== undefined ? ` since ${iso(a.startedAt)}` : "";
  return {
    reason: "RUNNING",
    message: `running on worker ${a.worker ?? "?"}${since}`,
    facts: {
      worker: a.worker,
      ...(a.startedAt !== undefined ? { startedAt: iso(a.startedAt) } : {}),
    },
  };
}

function taskGroupWait(f: ExplainFacts, a: ExplainAttempt): Decision {
  const name = a.taskGroup as string;
  const g = f.taskGroups?.[name];
  if (!g) {
    return {
      reason: "TASK_GROUP_FULL",
      message: `waiting for a slot of task group '${name}'`,
      facts: { taskGroup: { name } },
    };
  }
  if (g.capacity === undefined) {
    return {
      reason: "TASK_GROUP_FULL",
      message: `waiting for task group '${name}', which does not exist (create it: shoal task-group put ${name} --capacity N)`,
      facts: { taskGroup: { name, exists: false } },
    };
  }
  const position = g.positions[`${a.code}#${a.attempt}`];
  const where =
    position !== undefined
      ? `position ${position} of ${g.waiting} waiting`
      : `${g.waiting} waiting`;
  const full = g.used >= g.capacity;
  return {
    reason: "TASK_GROUP_FULL",
    message: full
      ? `task group '${name}' is full (${g.used}/${g.capacity} slots used): ${where}`
      : `waiting for a slot of task group '${name}' (${g.used}/${g.capacity} used, being granted): ${where}`,
    facts: {
      taskGroup: {
        name,
        capacity: g.capacity,
        used: g.used,
        waiting: g.waiting,
        ...(position !== undefined ? { position } : {}),
      },
    },
  };
}
