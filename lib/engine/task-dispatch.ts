/**
 * Sending ready worker tasks: the task instance items (if absent) and the task messages, in
 * DolphinScheduler's dispatch order, through the task-group gate when a task names a group, and
 * through a sweeper timer when a retry waits longer than SQS's 15-minute message delay. Part of
 * the dispatcher's "effects before commit": every step is idempotent when the decision is redone.
 */

import pLimit from "p-limit";
import type { WorkerTaskDefinition } from "../core/model.js";
import { ParamError } from "../core/params.js";
import { compareDispatch } from "../core/priority.js";
import type { TaskOutcome } from "../core/progress.js";
import type { TaskMessage } from "../queue/messages.js";
import type { InstanceRecord, TaskInstanceRecord } from "../store/records.js";
import type { TaskGroupWaiter } from "../store/task-groups.js";
import type { LoadedDefinition } from "./definitions.js";
import { baseTimeOf, type EngineDeps, taskParams } from "./engine-deps.js";
import { releaseTaskTimer } from "./timers.js";
import { withUpstreamOutputs } from "./upstream-outputs.js";

/** SQS DelaySeconds maximum. */
export const MAX_SQS_DELAY_SECONDS = 900;

/** What a waiting task (task group or long retry) needs to be sent later. */
export interface PendingSend {
  message: TaskMessage;
  workerGroup: string;
  /** When the task may start, epoch ms. */
  releaseAt: number;
}

type Order = { index: number; attempt: number; delaySeconds: number };

/** What sending a waiting task needs (the sweeper has it too). */
export type SendDeps = Pick<EngineDeps, "store" | "queues" | "timers" | "now">;

/**
 * Writes the task instances (if absent) and sends them, highest priority first.
 * @returns outcomes of tasks that failed before reaching a worker (bad parameter expression,
 *   unknown task group), for the caller to apply.
 */
export async function dispatchTasks(
  deps: EngineDeps,
  inst: InstanceRecord,
  def: LoadedDefinition,
  orders: readonly Order[],
): Promise<TaskOutcome[]> {
  if (orders.length === 0) return [];
  inst = await withUpstreamOutputs(
    deps.store,
    inst,
    def,
    orders.map((o) => o.index),
  );
  const now = deps.now();
  const tasks = def.definition.tasks;
  const key = (o: Order) => ({
    instancePriority: inst.priority,
    instanceCreatedAt: inst.createdAt,
    taskPriority: tasks[o.index]?.priority ?? "MEDIUM",
    code: tasks[o.index]?.code ?? "",
  });
  const sorted = [...orders].sort((a, b) => compareDispatch(key(a), key(b)));
  const direct: Array<{ message: TaskMessage; workerGroup: string; delaySeconds: number }> = [];
  const directPuts: TaskInstanceRecord[] = [];
  const held: Array<{ record: TaskInstanceRecord; pending: PendingSend; index: number }> = [];
  const unresolved: Array<{ record: TaskInstanceRecord; index: number; error: string }> = [];
  for (const o of sorted) {
    const defined = tasks[o.index] as WorkerTaskDefinition;
    // A run-time worker group replaces "default" (DolphinScheduler: tasks on the default group
    // follow the group the run was started with).
    const task =
      inst.workerGroup && defined.workerGroup === "default"
        ? { ...defined, workerGroup: inst.workerGroup }
        : defined;
    const record: TaskInstanceRecord = {
      instanceId: inst.instanceId,
      workflow: inst.workflow,
      code: task.code,
      attempt: o.attempt,
      type: task.type,
      // A delayed retry, or a task waiting for its task group, waits as SUBMITTED.
      state: o.delaySeconds > 0 || task.taskGroup ? "SUBMITTED" : "DISPATCHED",
      priority: task.priority,
      workerGroup: task.workerGroup,
      submittedAt: now,
      ...(task.taskGroup ? { taskGroup: task.taskGroup } : {}),
      // Kept so that `shoal explain` can say when a delayed retry may start.
      ...(o.delaySeconds > 0 ? { dueAt: now + o.delaySeconds * 1000 } : {}),
    };
    let params: Record<string, string>;
    try {
      params = taskParams(inst, def, o.index, o.attempt);
    } catch (e) {
      if (!(e instanceof ParamError)) throw e;
      unresolved.push({ record, index: o.index, error: e.message });
      continue;
    }
    const message: TaskMessage = {
      instanceId: inst.instanceId,
      workflow: inst.workflow,
      version: inst.version,
      code: task.code,
      attempt: o.attempt,
      instancePriority: inst.priority,
      dryRun: inst.dryRun,
      submittedAt: now,
      task,
      params,
      baseTime: baseTimeOf(inst),
      ...(inst.timezone ? { timezone: inst.timezone } : {}),
    };
    if (task.taskGroup || o.delaySeconds > MAX_SQS_DELAY_SECONDS) {
      const pending = {
        message,
        workerGroup: task.workerGroup,
        releaseAt: now + o.delaySeconds * 1000,
      };
      held.push({ record, pending, index: o.index });
    } else {
      directPuts.push(record);
      direct.push({ message, workerGroup: task.workerGroup, delaySeconds: o.delaySeconds });
    }
  }
  const failed: TaskOutcome[] = [];
  await Promise.all([
    // Items and messages go out together: a worker that gets the message first creates the
    // item with its claim (same fields), and the put then finds it there. Both are done before
    // the instance write that records the decision.
    pLimit(32).map(directPuts, (r) => deps.store.putTaskInstance(r)), // false = there already
    deps.queues.sendTasks(direct),
    pLimit(16).map(unresolved, async (u) => {
      await failBeforeStart(deps, u.record, u.error);
      failed.push({ index: u.index, attempt: u.record.attempt, state: "FAILURE" });
    }),
    // A task-group waiter or a timer refers to the item: it is written first.
    pLimit(16).map(held, async ({ record, pending, index }) => {
      await deps.store.putTaskInstance(record);
      const task = tasks[index] as WorkerTaskDefinition; // group fields only
      if (!task.taskGroup) {
        await sendPending(deps, pending);
        return;
      }
      const waiter: TaskGroupWaiter = {
        group: task.taskGroup,
        instanceId: inst.instanceId,
        code: task.code,
        attempt: record.attempt,
        taskGroupPriority: task.taskGroupPriority,
        instancePriority: inst.priority,
        taskPriority: task.priority,
        // Stable across a redone dispatch (the waiter's key); older instances first, as DS.
        queuedAt: inst.createdAt,
        payload: JSON.stringify(pending),
      };
      const got = await deps.gate.acquire(waiter);
      if (got === "unknown-group") {
        await failBeforeStart(deps, record, `task group '${task.taskGroup}' does not exist`);
        failed.push({ index, attempt: record.attempt, state: "FAILURE" });
      } else if (got === "acquired") await grantTaskGroupSlot(deps, waiter);
      // "waiting": the gate sends it when a slot frees (grantTaskGroupSlot)
    }),
  ]);
  return failed;
}

async function failBeforeStart(deps: EngineDeps, record: TaskInstanceRecord, error: string) {
  const now = deps.now();
  const failed: TaskInstanceRecord = { ...record, state: "FAILURE", endedAt: now, error };
  if (!(await deps.store.putTaskInstance(failed))) {
    await deps.store.updateTask(record, ["SUBMITTED", "DISPATCHED"], {
      state: "FAILURE",
      endedAt: now,
      error,
    });
  }
}

/**
 * Sends a task whose turn has come: at once (with the rest of its delay, up to 15 minutes), or
 * through a sweeper timer set 15 minutes before it may start.
 */
export async function sendPending(deps: SendDeps, p: PendingSend): Promise<void> {
  const waitMs = p.releaseAt - deps.now();
  const m = p.message;
  if (waitMs > MAX_SQS_DELAY_SECONDS * 1000) {
    const dueAt = p.releaseAt - MAX_SQS_DELAY_SECONDS * 1000;
    await deps.timers.putTimer(releaseTaskTimer(m, dueAt, JSON.stringify(p)));
    return;
  }
  await deps.queues.sendTasks([
    {
      message: m,
      workerGroup: p.workerGroup,
      delaySeconds: Math.max(0, Math.ceil(waitMs / 1000)),
    },
  ]);
}

/**
 * The gate's callback when a task-group slot goes to a waiting task: the task moves from
 * SUBMITTED to DISPATCHED and its message is sent. Idempotent, because a grant may finish what a
 * crashed granter began: a task already DISPATCHED is sent again (its worker's claim fences the
 * duplicate), a RUNNING one keeps the slot without a send.
 * @returns false when the task no longer waits (stopped, paused, finished): the gate frees the
 *   slot again.
 */
export async function grantTaskGroupSlot(deps: SendDeps, w: TaskGroupWaiter): Promise<boolean> {
  const p = JSON.parse(w.payload) as PendingSend;
  const key = { instanceId: w.instanceId, code: w.code, attempt: w.attempt };
  // DISPATCHED marks "holds a slot and was sent" (also for a delayed retry): the sweeper's
  // reconcile frees the slot of a holder still SUBMITTED after its grace period.
  const moved = await deps.store.updateTask(key, ["SUBMITTED"], { state: "DISPATCHED" });
  if (!moved) {
    // A grant finishing what a crashed granter began: DISPATCHED may not have been sent yet, so
    // send it (again: a duplicate message is fenced by the worker's claim). RUNNING was sent;
    // anything else (stopped, paused, finished) no longer wants the slot.
    const t = await deps.store.getTaskInstance(key.instanceId, key.code, key.attempt);
    if (t?.state === "RUNNING") return true;
    if (t?.state !== "DISPATCHED") return false;
  }
  await sendPending(deps, p);
  return true;
}
