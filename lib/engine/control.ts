/**
 * Control commands of one instance (DolphinScheduler's STOP, PAUSE, RECOVER_SUSPENDED_PROCESS,
 * REPEAT_RUNNING, START_FAILURE_TASK_PROCESS) and the workflow timeout, each one instance step
 * (lib/engine/instance-step.ts).
 */
import { type InstanceState, isFinalInstanceState } from "../core/model.js";
import { recoverProgress, rerunProgress, resumeProgress } from "../core/progress.js";
import { assertInstanceTransition } from "../core/states.js";
import type { CommandRecord, InstanceRecord } from "../store/records.js";
import { getStartCommand } from "./commands.js";
import { RetryLater } from "./errors.js";
import { haltActive } from "./halts.js";
import { notifyParent, stopPausedChildren } from "./instance-effects.js";
import type { InstanceSteps } from "./instance-step.js";
import { publishChanges } from "./state-change-events.js";

/** STOP, PAUSE, RESUME, RERUN and RECOVER_FAILED of one instance. */
export async function controlInstance(d: InstanceSteps, cmd: CommandRecord): Promise<void> {
  const id = cmd.instanceId;
  d.forget(id);
  let inst = await d.deps.store.getInstance(id);
  if (!inst) {
    // Its start is still to come (retry later), or it was dropped (nothing to control).
    const start = await getStartCommand(d.deps.store, id);
    if (start?.state === "PENDING") throw new RetryLater();
    return;
  }
  const def = await d.definition(inst);
  const final = isFinalInstanceState(inst.state);
  switch (cmd.type) {
    case "STOP":
    case "PAUSE": {
      if (final) return notifyParent(d.deps, inst);
      const target: InstanceState = cmd.type === "STOP" ? "STOPPING" : "PAUSING";
      if (cmd.type === "PAUSE" && inst.state !== "RUNNING") return; // pausing or halted already
      if (inst.state !== target && !(cmd.type === "STOP" && inst.state === "STOPPING")) {
        // Recorded first: from here on no decision dispatches anything new.
        const halted: InstanceRecord = { ...inst, state: target, rev: inst.rev + 1 };
        assertInstanceTransition(inst.state, target);
        if (!(await d.write(halted))) throw new RetryLater();
        await publishChanges(d.deps, inst, halted, def, []);
        inst = halted;
      }
      if (cmd.type === "STOP") await stopPausedChildren(d.deps, inst, def);
      const cause = cmd.type === "STOP" ? "stop" : "pause";
      const outcomes = await haltActive(d.deps, inst, def, inst.progress, cause);
      await d.applyAndCommit(inst, def, outcomes);
      return;
    }
    case "RESUME": {
      if (inst.state !== "PAUSED" && inst.state !== "PAUSING") return;
      const running = { ...inst, state: "RUNNING" as const };
      const result = resumeProgress(d.context(running, def), inst.progress);
      if (!(await d.commit(inst, def, result, { state: "RUNNING" }))) throw new RetryLater();
      return;
    }
    case "RERUN":
    case "RECOVER_FAILED": {
      if (!final) return;
      if (cmd.type === "RECOVER_FAILED" && inst.state === "SUCCESS") return;
      const patch: Partial<InstanceRecord> = {
        ...(await d.runPatch(inst, def, "RUNNING")),
        commandType: cmd.type,
        runs: (inst.runs ?? 1) + 1,
        ...(cmd.type === "RERUN" ? { outputs: {}, outputSlots: "", outputBytes: 0 } : {}),
      };
      const ctx = d.context({ ...inst, ...patch }, def);
      const result =
        cmd.type === "RERUN"
          ? rerunProgress(ctx, inst.progress)
          : recoverProgress(ctx, inst.progress);
      if (!(await d.commit(inst, def, result, patch))) throw new RetryLater();
      return;
    }
  }
}

/** The workflow's `timeoutSeconds` ran out: active tasks are killed and it ends FAILURE. */
export async function handleTimeout(
  d: InstanceSteps,
  instanceId: string,
  deadlineAt: number,
): Promise<void> {
  d.forget(instanceId);
  const inst = await d.deps.store.getInstance(instanceId);
  if (!inst || isFinalInstanceState(inst.state) || inst.timedOutAt !== undefined) return;
  // A rerun moved the deadline: this timer belongs to an earlier run.
  if (inst.deadlineAt !== deadlineAt || d.deps.now() < deadlineAt) return;
  const def = await d.definition(inst);
  const limit = def.definition.timeoutSeconds ?? 0;
  const patch: Partial<InstanceRecord> = {
    timedOutAt: d.deps.now(),
    error: `the workflow timed out after ${limit}s`,
  };
  const halted = { ...inst, ...patch };
  await stopPausedChildren(d.deps, inst, def);
  const outcomes = await haltActive(d.deps, halted, def, inst.progress, "timeout");
  await d.applyAndCommit(inst, def, outcomes, patch);
}
