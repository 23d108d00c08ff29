/**
 * Transition table of the workflow-instance state machine, after DolphinScheduler's
 * `WorkflowExecutionStatus`; a transition missing here is a bug or a stale message, and
 * `assertInstanceTransition` throws for it. Task-instance transitions have no table: each write
 * names the states it may start from in its condition (`updateTask(key, from, …)`, the table in
 * docs/architecture.md §3), which is where they are enforced.
 */
import { IllegalTransitionError } from "./errors.js";
import type { InstanceState } from "./model.js";

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

/** Whether an instance may move from `from` to `to`. */
export function canTransitionInstance(from: InstanceState, to: InstanceState): boolean {
  return INSTANCE[from].includes(to);
}

/** @throws IllegalTransitionError when the table does not allow it. */
export function assertInstanceTransition(from: InstanceState, to: InstanceState): void {
  if (!canTransitionInstance(from, to)) throw new IllegalTransitionError("instance", from, to);
}
