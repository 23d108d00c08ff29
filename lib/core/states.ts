/**
 * Transition tables of the workflow-instance and task-instance state machines. They follow
 * DolphinScheduler's `WorkflowExecutionStatus` / `TaskExecutionStatus`; a transition missing here
 * is a bug or a stale message, and `assert…` throws for it.
 */
import { IllegalTransitionError } from "./errors.js";
import type { InstanceState, TaskState } from "./model.js";

const INSTANCE: Record<InstanceState, readonly InstanceState[]> = {
  SUBMITTED: ["RUNNING", "STOPPING", "STOPPED", "SUCCESS", "FAILURE"],
  RUNNING: ["PAUSING", "STOPPING", "SUCCESS", "FAILURE"],
  // A resume while still pausing goes straight back to RUNNING.
  PAUSING: ["PAUSED", "RUNNING", "STOPPING", "SUCCESS", "FAILURE"],
  // A workflow timeout ends a paused instance too.
  PAUSED: ["RUNNING", "STOPPING", "STOPPED", "FAILURE"],
  STOPPING: ["STOPPED"],
  // Final states only leave through rerun / recover-failed, which start a new round.
  STOPPED: ["RUNNING"],
  SUCCESS: ["RUNNING"],
  FAILURE: ["RUNNING"],
};

const TASK: Record<TaskState, readonly TaskState[]> = {
  // FAILURE before it starts: a parameter expression or task group that cannot be resolved.
  SUBMITTED: ["DISPATCHED", "RUNNING", "KILLED", "PAUSED", "FAILURE"],
  DISPATCHED: ["RUNNING", "SUCCESS", "KILLED", "PAUSED", "NEED_FAULT_TOLERANCE"],
  RUNNING: ["SUCCESS", "FAILURE", "KILLED", "NEED_FAULT_TOLERANCE"],
  FAILURE: ["FORCED_SUCCESS"],
  KILLED: ["FORCED_SUCCESS"],
  PAUSED: [],
  // OUT parameters the instance cannot hold any more fail the task after the fact.
  SUCCESS: ["FAILURE"],
  NEED_FAULT_TOLERANCE: [],
  FORCED_SUCCESS: [],
  SKIPPED: [],
};

/** Whether an instance may move from `from` to `to`. */
export function canTransitionInstance(from: InstanceState, to: InstanceState): boolean {
  return INSTANCE[from].includes(to);
}

/** Whether a task instance may move from `from` to `to`. */
export function canTransitionTask(from: TaskState, to: TaskState): boolean {
  return TASK[from].includes(to);
}

/** @throws IllegalTransitionError when the table does not allow it. */
export function assertInstanceTransition(from: InstanceState, to: InstanceState): void {
  if (!canTransitionInstance(from, to)) throw new IllegalTransitionError("instance", from, to);
}

/** @throws IllegalTransitionError when the table does not allow it. */
export function assertTaskTransition(from: TaskState, to: TaskState): void {
  if (!canTransitionTask(from, to)) throw new IllegalTransitionError("task", from, to);
}

/** The task states a given state may be reached from (used to build write conditions). */
export function taskStatesLeadingTo(to: TaskState): TaskState[] {
  return (Object.keys(TASK) as TaskState[]).filter((from) => TASK[from].includes(to));
}
