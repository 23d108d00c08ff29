/**
 * Sending ready tasks: the task instance items (if absent) and the task messages, in
 * DolphinScheduler's dispatch order. Part of the dispatcher's "effects before commit".
 */
import { compareDispatch } from "../core/priority.js";
import type { TaskMessage } from "../queue/messages.js";
import type { Queues } from "../queue/sqs-queues.js";
import type { InstanceRecord, TaskInstanceRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { mapLimit } from "./concurrency.js";
import type { LoadedDefinition } from "./definitions.js";

/** Writes the task instances (if absent) and sends them, highest priority first. */
export async function dispatchTasks(
  deps: { store: Store; queues: Queues; now: () => number },
  inst: InstanceRecord,
  def: LoadedDefinition,
  orders: ReadonlyArray<{ index: number; attempt: number; delaySeconds: number }>,
): Promise<void> {
  if (orders.length === 0) return;
  const now = deps.now();
  const tasks = def.definition.tasks;
  const sorted = [...orders].sort((a, b) =>
    compareDispatch(
      {
        instancePriority: inst.priority,
        instanceCreatedAt: inst.createdAt,
        taskPriority: tasks[a.index]?.priority ?? "MEDIUM",
        code: tasks[a.index]?.code ?? "",
      },
      {
        instancePriority: inst.priority,
        instanceCreatedAt: inst.createdAt,
        taskPriority: tasks[b.index]?.priority ?? "MEDIUM",
        code: tasks[b.index]?.code ?? "",
      },
    ),
  );
  // Items and messages go out together: a worker that gets the message first creates the
  // item with its claim (same fields), and the put then finds it there. Both are done before
  // the instance write that records the decision.
  const puts = mapLimit(sorted, 32, async (o) => {
    const task = tasks[o.index];
    if (!task) return;
    const record: TaskInstanceRecord = {
      instanceId: inst.instanceId,
      workflow: inst.workflow,
      code: task.code,
      attempt: o.attempt,
      type: task.type,
      // A delayed retry waits as SUBMITTED; a task sent now is DISPATCHED.
      state: o.delaySeconds > 0 ? "SUBMITTED" : "DISPATCHED",
      priority: task.priority,
      workerGroup: task.workerGroup,
      submittedAt: now,
    };
    await deps.store.putTaskInstance(record); // false = there already: fine
  });
  const globals = def.definition.params;
  const sends = deps.queues.sendTasks(
    sorted.map((o) => {
      const task = tasks[o.index] as (typeof tasks)[number];
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
        // Precedence: startup > local > global (DolphinScheduler).
        params: { ...globals, ...task.params, ...inst.params },
      };
      return { message, workerGroup: task.workerGroup, delaySeconds: o.delaySeconds };
    }),
  );
  await Promise.all([puts, sends]);
}
