/**
 * What stop, pause, END-after-failure and the workflow timeout do to the tasks that are active:
 * tasks no worker took yet are ended here with a conditional write (KILLED, or PAUSED so a
 * resume starts them again); running worker tasks get `killRequested` and a `killReason` (their
 * worker kills the process group at its next lease renewal and records the reason as the
 * attempt's error) or, for a pause, run to the end; sub-workflows get
 * the same command; logic tasks waiting in the dispatcher end at once.
 */
import pLimit from "p-limit";
import { subInstanceId } from "../core/ids.js";
import { isFinalTaskState, isWorkerTaskType, type TaskDefinition } from "../core/model.js";
import { activeTasks, attemptOf, type Progress, SLOT, type TaskOutcome } from "../core/progress.js";
import type { InstanceRecord } from "../store/records.js";
import { attemptRef } from "../store/worker-leases.js";
import { controlCommand, getStartCommand } from "./commands.js";
import type { LoadedDefinition } from "./definitions.js";
import type { EngineDeps } from "./engine-deps.js";
import { PAUSED_BEFORE_START, submitHalt } from "./halt-gate.js";
import { mirrorChildState } from "./logic-tasks.js";

/** "kill": stop, END, timeout; "pause": pause. */
export type HaltMode = "kill" | "pause";

/**
 * Why active tasks are halted: a stop request, a pause request, the workflow timeout, or a task
 * that failed for good under the END failure strategy (DolphinScheduler's END kills the running
 * siblings).
 */
export type HaltCause = "stop" | "pause" | "timeout" | "end";

/**
 * The sentence a halted attempt records as its `error` (and a running one gets as its
 * `killReason`, which its worker hands to the task plugin): what `shoal attempts`, `get instance`
 * and the API show. Uses what the instance knows: the workflow timeout's length, the tasks that
 * failed for good under END (the FAILURE slots of `progress`).
 */
export function haltSentence(
  cause: HaltCause,
  inst: InstanceRecord,
  def: LoadedDefinition,
  progress: Progress,
): string {
  switch (cause) {
    case "stop":
      return "killed: the instance was stopped";
    case "pause":
      return PAUSED_BEFORE_START;
    case "timeout": {
      const limit = def.definition.timeoutSeconds;
      return inst.error && /timed out/.test(inst.error)
        ? `killed: ${inst.error}`
        : `killed: the workflow timed out${limit !== undefined ? ` after ${limit}s` : ""}`;
    }
    case "end": {
      const failed: string[] = [];
      for (let i = 0; i < progress.slots.length; i++) {
        if (progress.slots[i] === SLOT.FAILURE) failed.push(`'${def.dag.codes[i] ?? i}'`);
      }
      if (failed.length === 0) return "killed: another task failed and the failure strategy is END";
      const who = failed.length === 1 ? `task ${failed[0]}` : `tasks ${failed.join(", ")}`;
      return `killed: ${who} failed and the failure strategy is END`;
    }
  }
}

/**
 * Halts the active tasks of `progress`.
 * @returns outcomes known at once (tasks ended here); the rest report through events.
 */
export async function haltActive(
  deps: EngineDeps,
  inst: InstanceRecord,
  def: LoadedDefinition,
  progress: Progress,
  cause: HaltCause,
): Promise<TaskOutcome[]> {
  const outcomes: TaskOutcome[] = [];
  const now = deps.now();
  const mode: HaltMode = cause === "pause" ? "pause" : "kill";
  const why = haltSentence(cause, inst, def, progress);
  await pLimit(16).map(activeTasks(progress), async (index) => {
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
          error: why,
        });
        outcomes.push({ index, attempt, state: "KILLED" });
      }
      return;
    }
    const state = mode === "pause" ? "PAUSED" : "KILLED";
    const ended = await deps.store.updateTask(
      key,
      ["SUBMITTED", "DISPATCHED"],
      { state, endedAt: now, error: why },
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
      const running = await deps.store.updateTask(key, ["RUNNING"], {
        killRequested: true,
        killReason: why,
      });
      // An attempt handed to its worker's lease learns of the stop from that lease's renewal
      // (lib/engine/worker-lease.ts); one that is not sees `killRequested` when it is handed over.
      // A lease gone or dead: its attempts are failed over, which ends this one as well.
      if (running?.workerLease !== undefined) {
        await deps.store.requestWorkerKill(running.workerLease, attemptRef(key), why);
      }
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
  } else if (!(await getStartCommand(deps.store, childId))) {
    return mode === "pause" ? "PAUSED" : "KILLED"; // never started
  }
  const target = {
    instanceId: childId,
    workflow: child?.workflow ?? "",
    version: child?.version ?? 0,
    rev: child?.rev ?? 0,
  };
  const type = mode === "pause" ? "PAUSE" : "STOP";
  await submitHalt(deps, { ...controlCommand(type, target, deps.now()), type }, "dispatcher");
  return undefined;
}
