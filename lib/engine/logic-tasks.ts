/**
 * Logic tasks, decided by the dispatcher itself (DolphinScheduler runs them in the master):
 * CONDITIONS and SWITCH decide at once; SUB_WORKFLOW starts a child instance and waits for its
 * report without holding anything; DEPENDENT checks other workflows' instances and, while it
 * waits, sets a sweeper timer to check again. Each returns the outcome to apply now, or
 * undefined while it waits. Effects are idempotent (deterministic ids, conditional writes).
 */
import { subInstanceId } from "../core/ids.js";
import type {
  DependentTaskDefinition,
  InstanceState,
  RunRequest,
  SubWorkflowTaskDefinition,
  SwitchTaskDefinition,
  TaskDefinition,
  TaskState,
} from "../core/model.js";
import { ParamError } from "../core/params.js";
import { type Progress, SLOT, type TaskOutcome } from "../core/progress.js";
import { type DryRunSwitchResult, dryRunSwitch, outParamSetters } from "../core/switch-dry-run.js";
import { evaluateSwitch } from "../core/switch-expression.js";
import type { InstanceRecord, TaskInstanceRecord } from "../store/records.js";
import { controlCommand, startCommand, submitCommand } from "./commands.js";
import type { LoadedDefinition } from "./definitions.js";
import { checkDependence } from "./dependent-checks.js";
import { ancestorsOf, baseTimeOf, type EngineDeps, taskParams, zoneOf } from "./engine-deps.js";
import { logicCheckTimer } from "./timers.js";
import { withUpstreamOutputs } from "./upstream-outputs.js";

/** Sub-workflows nest at most this deep (a workflow that starts itself would never end). */
export const MAX_SUB_WORKFLOW_DEPTH = 8;

/** Worker id shown on task instances the dispatcher runs. */
export const DISPATCHER_WORKER = "dispatcher";

type Order = { index: number; attempt: number };

/**
 * Decides (or starts) one logic task attempt.
 * @param progress the progress in which the task just became ACTIVE.
 */
export async function runLogicTask(
  deps: EngineDeps,
  inst: InstanceRecord,
  def: LoadedDefinition,
  progress: Progress,
  order: Order,
): Promise<TaskOutcome | undefined> {
  const task = def.definition.tasks[order.index] as TaskDefinition;
  switch (task.type) {
    case "CONDITIONS": {
      const ups = def.dag.upstream[order.index] ?? [];
      const ok = ups.every((u) => {
        const s = progress.slots[u];
        return s !== SLOT.FAILURE && s !== SLOT.KILLED && s !== SLOT.HANDLED;
      });
      const taken = ok ? task.successNext : task.failedNext;
      const other = ok ? task.failedNext : task.successNext;
      await record(deps, inst, task, order.attempt, "SUCCESS", { branch: taken });
      return {
        ...order,
        state: "SUCCESS",
        skip: other.map((c) => def.dag.indexOf(c) as number),
      };
    }
    case "SWITCH":
      return runSwitch(deps, inst, def, task, order);
    case "SUB_WORKFLOW":
      return runSubWorkflow(deps, inst, def, task, order);
    case "DEPENDENT":
      return runDependent(deps, inst, task, order);
    default:
      throw new Error(`${task.type} is not a logic task`);
  }
}

/** Writes a logic task's attempt in its final (or running) state; idempotent. */
async function record(
  deps: EngineDeps,
  inst: InstanceRecord,
  task: TaskDefinition,
  attempt: number,
  state: TaskState,
  extra: Partial<TaskInstanceRecord> = {},
): Promise<void> {
  const now = deps.now();
  const final = state !== "RUNNING";
  const item: TaskInstanceRecord = {
    instanceId: inst.instanceId,
    workflow: inst.workflow,
    code: task.code,
    attempt,
    type: task.type,
    state,
    priority: task.priority,
    workerGroup: task.workerGroup,
    submittedAt: now,
    startedAt: now,
    worker: DISPATCHER_WORKER,
    ...(final ? { endedAt: now } : {}),
    ...extra,
  };
  if (await deps.store.putTaskInstance(item)) return;
  if (!final) {
    // A retry written SUBMITTED while it waited (recordLogicRetry) starts now; one already
    // running is left as it is.
    await deps.store.updateTask(
      { instanceId: inst.instanceId, code: task.code, attempt },
      ["SUBMITTED"],
      { state: "RUNNING", startedAt: now, worker: DISPATCHER_WORKER, ...extra },
    );
    return;
  }
  await deps.store.updateTask(
    { instanceId: inst.instanceId, code: task.code, attempt },
    ["SUBMITTED", "DISPATCHED", "RUNNING"],
    { state, endedAt: now, ...extra },
  );
}

/**
 * The attempt of a logic task that waits for its retry interval (on a timer, not in a queue),
 * written SUBMITTED with its `dueAt` (epoch ms) so that the instance shows it waiting, as a
 * worker task's delayed retry is shown. Idempotent (`attribute_not_exists`).
 */
export async function recordLogicRetry(
  deps: EngineDeps,
  inst: InstanceRecord,
  task: TaskDefinition,
  attempt: number,
  dueAt: number,
): Promise<void> {
  await deps.store.putTaskInstance({
    instanceId: inst.instanceId,
    workflow: inst.workflow,
    code: task.code,
    attempt,
    type: task.type,
    state: "SUBMITTED",
    priority: task.priority,
    workerGroup: task.workerGroup,
    submittedAt: deps.now(),
    dueAt,
  });
}

/** Finishes a logic task's record when its outcome arrives later (sub-workflow, dependent). */
export async function finishLogicRecord(
  deps: EngineDeps,
  instanceId: string,
  code: string,
  attempt: number,
  state: TaskState,
  error?: string,
): Promise<void> {
  await deps.store.updateTask(
    { instanceId, code, attempt },
    ["SUBMITTED", "DISPATCHED", "RUNNING"],
    {
      state,
      endedAt: deps.now(),
      ...(error ? { error } : {}),
    },
  );
}

async function runSwitch(
  deps: EngineDeps,
  inst: InstanceRecord,
  def: LoadedDefinition,
  task: SwitchTaskDefinition,
  order: Order,
): Promise<TaskOutcome> {
  let result: DryRunSwitchResult;
  inst = await withUpstreamOutputs(deps.store, inst, def, [order.index]);
  try {
    const params = taskParams(inst, def, order.index, order.attempt);
    if (inst.dryRun) {
      // Upstream tasks set no OUT parameters in a dry run: a choice that needs one takes every
      // branch it may take, with a warning naming what it depends on.
      const setters = outParamSetters(def.definition.tasks, ancestorsOf(def.dag, order.index));
      result = dryRunSwitch(task.cases, task.defaultNext, params, setters);
    } else {
      const r = evaluateSwitch(task.cases, task.defaultNext, params);
      result = "error" in r ? r : { next: [r.next], matched: r.matched };
    }
  } catch (e) {
    if (!(e instanceof ParamError)) throw e;
    result = { error: e.message };
  }
  if ("error" in result) {
    await record(deps, inst, task, order.attempt, "FAILURE", { error: result.error });
    return { ...order, state: "FAILURE" };
  }
  const targets = new Set([
    ...task.cases.map((c) => c.next),
    ...(task.defaultNext ? [task.defaultNext] : []),
  ]);
  for (const next of result.next) targets.delete(next);
  await record(deps, inst, task, order.attempt, "SUCCESS", {
    branch: result.next,
    // for the task's log (`shoal logs`): which case decided
    ...(result.matched !== undefined ? { switchCase: result.matched } : {}),
    ...(result.warning ? { warning: result.warning } : {}),
  });
  return {
    ...order,
    state: "SUCCESS",
    skip: [...targets].map((c) => def.dag.indexOf(c) as number),
  };
}

/** Child instance state → the SUB_WORKFLOW task's state (undefined while it runs). */
export function mirrorChildState(state: InstanceState): TaskState | undefined {
  switch (state) {
    case "SUCCESS":
      return "SUCCESS";
    case "FAILURE":
      return "FAILURE";
    case "STOPPED":
      return "KILLED";
    case "PAUSED":
      return "PAUSED";
    default:
      return undefined;
  }
}

async function runSubWorkflow(
  deps: EngineDeps,
  inst: InstanceRecord,
  def: LoadedDefinition,
  task: SubWorkflowTaskDefinition,
  order: Order,
): Promise<TaskOutcome | undefined> {
  const childId = subInstanceId(inst.instanceId, task.code, order.attempt);
  const child = await deps.store.getInstance(childId);
  if (child) {
    const mirrored = mirrorChildState(child.state);
    if (mirrored === "PAUSED") {
      // Resumed parent: resume the child where it paused (same attempt, same child).
      await submitCommand(deps, controlCommand("RESUME", child, deps.now()), "dispatcher");
      return undefined;
    }
    if (mirrored) {
      await finishLogicRecord(deps, inst.instanceId, task.code, order.attempt, mirrored);
      return { ...order, state: mirrored };
    }
    return undefined; // still running: it reports when it ends
  }
  const fail = async (error: string): Promise<TaskOutcome> => {
    await record(deps, inst, task, order.attempt, "FAILURE", { error });
    return { ...order, state: "FAILURE" };
  };
  const depth = (inst.depth ?? 0) + 1;
  if (depth > MAX_SUB_WORKFLOW_DEPTH) {
    return fail(`sub-workflows nest deeper than ${MAX_SUB_WORKFLOW_DEPTH} levels`);
  }
  const head = await deps.store.getWorkflowHead(task.workflow);
  if (!head || head.deleted) return fail(`workflow '${task.workflow}' does not exist`);
  if (head.releaseState !== "ONLINE") return fail(`workflow '${task.workflow}' is OFFLINE`);
  let params: Record<string, string>;
  inst = await withUpstreamOutputs(deps.store, inst, def, [order.index]);
  try {
    const all = taskParams(inst, def, order.index, order.attempt);
    // The task's own parameters (resolved) become the child's startup parameters.
    params = Object.fromEntries(Object.keys(task.params).map((k) => [k, all[k] ?? ""]));
  } catch (e) {
    if (!(e instanceof ParamError)) throw e;
    return fail(e.message);
  }
  await record(deps, inst, task, order.attempt, "RUNNING", { subInstanceId: childId });
  const run: RunRequest = {
    params,
    priority: inst.priority,
    taskScope: "DOWNSTREAM",
    dryRun: inst.dryRun,
  };
  const cmd = startCommand(
    childId,
    task.workflow,
    head.latestVersion,
    run,
    {
      commandType: "START_WORKFLOW",
      parent: { instanceId: inst.instanceId, code: task.code, attempt: order.attempt },
      depth,
      // Part of the same run: its events carry the trigger chain on (lib/core/trigger-events.ts).
      ...(inst.triggerCause ? { triggerCause: inst.triggerCause } : {}),
      ...(inst.scheduleTime !== undefined ? { scheduleTime: inst.scheduleTime } : {}),
      // The child's dates are the parent's: same nominal time, same zone.
      timezone: zoneOf(inst),
    },
    deps.now(),
  );
  await submitCommand(deps, cmd, "dispatcher");
  return undefined;
}

/**
 * Checks a DEPENDENT task: decided → its outcome; still waiting → a timer to check again after
 * `checkIntervalSeconds`, until its `timeoutSeconds` (if any) runs out.
 */
export async function runDependent(
  deps: EngineDeps,
  inst: InstanceRecord,
  task: DependentTaskDefinition,
  order: Order,
): Promise<TaskOutcome | undefined> {
  const now = deps.now();
  if (inst.dryRun) {
    await record(deps, inst, task, order.attempt, "SUCCESS");
    return { ...order, state: "SUCCESS" };
  }
  const existing = await deps.store.getTaskInstance(inst.instanceId, task.code, order.attempt);
  const startedAt = existing?.startedAt ?? now;
  const result = await checkDependence(deps, task, baseTimeOf(inst), zoneOf(inst));
  if (result !== "WAITING") {
    await record(
      deps,
      inst,
      task,
      order.attempt,
      result,
      result === "FAILURE" ? { error: "a dependency failed" } : {},
    );
    return { ...order, state: result };
  }
  if (task.timeoutSeconds !== undefined && now - startedAt >= task.timeoutSeconds * 1000) {
    await record(deps, inst, task, order.attempt, "FAILURE", {
      error: `dependencies not met within ${task.timeoutSeconds}s`,
    });
    return { ...order, state: "FAILURE" };
  }
  if (!existing || existing.state === "SUBMITTED") {
    await record(deps, inst, task, order.attempt, "RUNNING");
  }
  const attempt = { instanceId: inst.instanceId, code: task.code, attempt: order.attempt };
  await deps.timers.putTimer(logicCheckTimer(attempt, now + task.checkIntervalSeconds * 1000));
  return undefined;
}
