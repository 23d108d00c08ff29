/**
 * What stop, pause, END-after-failure and the workflow timeout do to the tasks that are active:
 * tasks no worker took yet are ended here with a conditional write (KILLED, or PAUSED so a
 * resume starts them again); running worker tasks get `killRequested` (their worker kills the
 * process group at its next lease renewal) or, for a pause, run to the end; sub-workflows get
 * the same command; logic tasks waiting in the dispatcher end at once.
 */
import { subInstanceId } from "../core/ids.js";
import type { CommandType } from "../core/model.js";
import { isFinalTaskState, isWorkerTaskType, type TaskDefinition } from "../core/model.js";
import { activeTasks, attemptOf, type Progress, type TaskOutcome } from "../core/progress.js";
import type { InstanceRecord } from "../store/records.js";
import { mapLimit } from "./concurrency.js";
import type { LoadedDefinition } from "./definitions.js";
import type { EngineDeps } from "./engine-deps.js";
import { mirrorChildState } from "./logic-tasks.js";

/** "kill": stop, END, timeout; "pause": pause. */
export type HaltMode = "kill" | "pause";

/**
 * Halts the active tasks of `progress`.
 * @returns outcomes known at once (tasks ended here); the rest report through events.
 */
export async function haltActive(
  deps: EngineDeps,
  inst: InstanceRecord,
  def: LoadedDefinition,
  progress: Progress,
  mode: HaltMode,
  reason: string,
): Promise<TaskOutcome[]> {
  const outcomes: TaskOutcome[] = [];
  const now = deps.now();
  await mapLimit(activeTasks(progress), 16, async (index) => {
    const task = def.definition.tasks[index] as TaskDefinition;
    const attempt = attemptOf(progress, index);
    const key = { instanceId: inst.instanceId, code: task.code, attempt };
    if (task.type === "SUB_WORKFLOW") {
      const o = await haltChild(deps, inst, task.code, attempt, mode);
      if (o) outcomes.push({ index, attempt, state: o });
      return;
    }
    if (!isWorkerTaskType(task.type)) {
      // A logic task waiting in the dispatcher (DEPENDENT): nothing runs anywhere.
      if (mode === "pause") outcomes.push({ index, attempt, state: "PAUSED" });
      else {
        await deps.store.updateTask(key, ["SUBMITTED", "DISPATCHED", "RUNNING"], {
          state: "KILLED",
          endedAt: now,
          error: reason,
        });
        outcomes.push({ index, attempt, state: "KILLED" });
      }
      return;
    }
    const state = mode === "pause" ? "PAUSED" : "KILLED";
    const ended = await deps.store.updateTask(
      key,
      ["SUBMITTED", "DISPATCHED"],
      { state, endedAt: now, error: reason },
      {
        // The put may have been lost with a crash: create it ended, so a late message is fenced.
        createWith: {
          ...key,
          workflow: inst.workflow,
          type: task.type,
          state: "SUBMITTED",
          priority: task.priority,
          workerGroup: task.workerGroup,
          submittedAt: now,
        },
      },
    );
    if (ended) {
      outcomes.push({ index, attempt, state });
      return;
    }
    if (mode === "kill") {
      const running = await deps.store.updateTask(key, ["RUNNING"], { killRequested: true });
      if (running) return;
    } else {
      const item = await deps.store.getTaskInstance(inst.instanceId, task.code, attempt);
      if (item?.state === "RUNNING") return; // a pause lets it finish
    }
    // Neither waiting nor running: over already (for instance ended by an earlier try of this
    // halt whose instance write was lost). Record what it ended as.
    const item = await deps.store.getTaskInstance(inst.instanceId, task.code, attempt);
    if (item && isFinalTaskState(item.state)) outcomes.push({ index, attempt, state: item.state });
  });
  return outcomes;
}

/** Sends stop or pause to a SUB_WORKFLOW task's child; returns its outcome when already known. */
async function haltChild(
  deps: EngineDeps,
  inst: InstanceRecord,
  code: string,
  attempt: number,
  mode: HaltMode,
) {
  const childId = subInstanceId(inst.instanceId, code, attempt);
  const child = await deps.store.getInstance(childId);
  if (child) {
    const mirrored = mirrorChildState(child.state);
    if (mirrored && (mirrored !== "PAUSED" || mode === "pause")) return mirrored;
  } else if (!(await deps.store.getCommand(`start:${childId}`))) {
    return mode === "pause" ? "PAUSED" : "KILLED"; // never started
  }
  const type: CommandType = mode === "pause" ? "PAUSE" : "STOP";
  const commandId = `${type.toLowerCase()}:${childId}:${child?.rev ?? 0}`;
  await deps.store.putCommand({
    commandId,
    type,
    instanceId: childId,
    workflow: child?.workflow ?? "",
    version: child?.version ?? 0,
    state: "PENDING",
    createdAt: deps.now(),
  });
  await deps.queues.sendEvents([{ kind: "command", commandId, instanceId: childId }]);
  return undefined;
}
