/**
 * Side effects of the dispatcher's decisions on things other than the instance item: child
 * instances (stop, report to the parent), task-group slots, SKIPPED task instances. Each is
 * idempotent, so a decision redone after a lost write repeats them harmlessly.
 */
import pLimit from "p-limit";
import { subInstanceId } from "../core/ids.js";
import { isFinalInstanceState, type TaskDefinition } from "../core/model.js";
import { attemptOf, type Progress, SLOT, type TaskOutcome } from "../core/progress.js";
import type { InstanceRecord } from "../store/records.js";
import { controlCommand } from "./commands.js";
import type { LoadedDefinition } from "./definitions.js";
import type { EngineDeps } from "./engine-deps.js";
import { submitHalt } from "./halt-gate.js";
import { mirrorChildState } from "./logic-tasks.js";
import { grantTaskGroupSlot } from "./task-dispatch.js";

/**
 * A paused SUB_WORKFLOW task is not active, but its child instance waits PAUSED: when the
 * parent stops or times out, the child is stopped too (else it would wait for ever).
 */
export async function stopPausedChildren(
  deps: EngineDeps,
  inst: InstanceRecord,
  def: LoadedDefinition,
): Promise<void> {
  for (let i = 0; i < inst.progress.slots.length; i++) {
    if (inst.progress.slots[i] !== SLOT.PAUSED || def.kinds[i] !== "SUB_WORKFLOW") continue;
    const code = def.dag.codes[i] as string;
    const childId = subInstanceId(inst.instanceId, code, attemptOf(inst.progress, i));
    const child = await deps.store.getInstance(childId);
    if (!child || isFinalInstanceState(child.state)) continue;
    const stop = { ...controlCommand("STOP", child, deps.now()), type: "STOP" as const };
    await submitHalt(deps, stop, "dispatcher");
  }
}

/** Frees the task-group slots of attempts that ended, handing them to the next waiters. */
export async function releaseGroups(
  deps: EngineDeps,
  inst: InstanceRecord,
  def: LoadedDefinition,
  outcomes: readonly TaskOutcome[],
): Promise<void> {
  for (const o of outcomes) {
    const task = def.definition.tasks[o.index];
    if (!task?.taskGroup) continue;
    if (o.state === "RUNNING" || o.state === "SUBMITTED" || o.state === "DISPATCHED") continue;
    await deps.gate.release(
      task.taskGroup,
      { instanceId: inst.instanceId, code: task.code, attempt: o.attempt },
      (w) => grantTaskGroupSlot(deps, w),
    );
  }
}

/** Task instances for tasks a branch decision skipped, so that the API shows them SKIPPED. */
export async function recordSkipped(
  deps: EngineDeps,
  inst: InstanceRecord,
  def: LoadedDefinition,
  before: string,
  after: Progress,
): Promise<void> {
  const skipped: number[] = [];
  for (let i = 0; i < after.slots.length; i++) {
    if (after.slots[i] === SLOT.SKIPPED && before[i] !== SLOT.SKIPPED) skipped.push(i);
  }
  const now = deps.now();
  await pLimit(16).map(skipped, async (i) => {
    const task = def.definition.tasks[i] as TaskDefinition;
    await deps.store.putTaskInstance({
      instanceId: inst.instanceId,
      workflow: inst.workflow,
      code: task.code,
      attempt: attemptOf(after, i),
      type: task.type,
      state: "SKIPPED",
      priority: task.priority,
      workerGroup: task.workerGroup,
      submittedAt: now,
      endedAt: now,
    });
  });
}

/** A sub-workflow instance that ended or paused reports to its parent task attempt. */
export async function notifyParent(deps: EngineDeps, inst: InstanceRecord): Promise<void> {
  if (!inst.parent) return;
  const state = mirrorChildState(inst.state);
  if (!state) return;
  await deps.queues.sendToDispatcher([
    {
      kind: "task",
      instanceId: inst.parent.instanceId,
      code: inst.parent.code,
      attempt: inst.parent.attempt,
      state,
      seq: inst.rev,
      ...(state === "FAILURE" ? { error: `sub-workflow instance ${inst.instanceId} failed` } : {}),
    },
  ]);
}
