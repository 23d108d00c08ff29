/**
 * The dispatcher (DolphinScheduler's master): claims commands, creates workflow instances,
 * dispatches ready tasks in priority order, decides logic tasks, and advances the DAG on
 * task events. Events of one instance arrive one batch at a time (FIFO message group =
 * instance id); every write is conditioned anyway (instance `rev`, task `attribute_not_exists`/
 * expected state), and side effects happen before the instance write that records them, so a
 * redelivered or repeated message redoes the same idempotent effects and changes nothing twice.
 * Nothing lives only in memory: a dispatcher killed anywhere is replaced by the next delivery.
 */

import type { SQSBatchResponse, SQSRecord } from "aws-lambda";
import { isFinalInstanceState, isLogicTaskType, type TaskDefinition } from "../core/model.js";
import {
  type AdvanceResult,
  activeTasks,
  applyOutcomes,
  attemptOf,
  forceSuccessProgress,
  SLOT,
  startProgress,
  type TaskOutcome,
} from "../core/progress.js";
import { runTypeOf } from "../core/run-type.js";
import { type DispatcherMessage, type TaskEvent, taskEventsOf } from "../queue/messages.js";
import type { CommandRecord, InstanceRecord } from "../store/records.js";
import { commandSignal } from "./commands.js";
import { controlInstance, handleTimeout } from "./control.js";
import type { LoadedDefinition } from "./definitions.js";
import { RetryLater } from "./errors.js";
import { notifyParent, releaseGroups } from "./instance-effects.js";
import { haltOf, InstanceSteps, type StepDeps } from "./instance-step.js";
import { finishLogicRecord, runLogicTask } from "./logic-tasks.js";
import { publishChanges } from "./state-change-events.js";
import { retryWhileUnreachable, type STORE_RETRY_MS } from "./store-retry.js";
import { legacyOutputBytes, legacyOutputSlots } from "./upstream-outputs.js";

export interface DispatcherDeps extends StepDeps {
  /** A claim older than this is taken over (the claimer died), ms. */
  commandClaimStaleMs: number;
  /**
   * How long giving back a claim is tried while the store is out of reach, ms (default
   * {@link STORE_RETRY_MS}).
   */
  claimReleaseRetryMs?: number;
}

/**
 * All OUT parameters one instance keeps, JSON bytes: a task's message carries every ancestor's
 * (SQS takes 256 KB a message), and a task over it fails.
 */
export const MAX_INSTANCE_OUTPUT_BYTES = 200 * 1024;

/** A command may start this much before its `notBefore` (SQS delays are whole seconds), ms. */
const EARLY_TOLERANCE_MS = 50;

export class Dispatcher {
  /** Decide-then-commit of one instance, shared with the control commands. */
  private readonly steps: InstanceSteps;

  constructor(readonly deps: DispatcherDeps) {
    this.steps = new InstanceSteps(deps);
  }

  /**
   * Handles an SQS batch from the events FIFO queue. Groups are handled in parallel, each in
   * order; after a failure the rest of that group is reported failed too, so FIFO order holds.
   */
  async handleBatch(records: readonly SQSRecord[]): Promise<SQSBatchResponse> {
    const groups = new Map<string, SQSRecord[]>();
    for (const r of records) {
      const g = r.attributes.MessageGroupId ?? "";
      const list = groups.get(g) ?? [];
      groups.set(g, list);
      list.push(r);
    }
    const failures: string[] = [];
    await Promise.all(
      [...groups.values()].map(async (list) => {
        let i = 0;
        try {
          while (i < list.length) {
            const first = JSON.parse((list[i] as SQSRecord).body) as DispatcherMessage;
            if (first.kind === "command") {
              await this.handleCommand(first.commandId);
              i++;
              continue;
            }
            if (first.kind === "timeout") {
              await handleTimeout(this.steps, first.instanceId, first.deadlineAt);
              i++;
              continue;
            }
            if (first.kind === "check") {
              await this.handleCheck(first.instanceId, first.code, first.attempt);
              i++;
              continue;
            }
            // Consecutive task events of one instance are applied with one instance write.
            const events: TaskEvent[] = [];
            const from = i;
            while (i < list.length) {
              const e = JSON.parse((list[i] as SQSRecord).body) as DispatcherMessage;
              if ((e.kind !== "task" && e.kind !== "tasks") || e.instanceId !== first.instanceId)
                break;
              events.push(...taskEventsOf(e));
              i++;
            }
            try {
              await this.handleTaskEvents(first.instanceId, events);
            } catch (err) {
              i = from;
              throw err;
            }
          }
        } catch (err) {
          if (!(err instanceof RetryLater)) {
            this.deps.log?.("dispatcher: message failed", {
              error: String((err as Error)?.stack ?? err),
            });
          }
          for (; i < list.length; i++) failures.push((list[i] as SQSRecord).messageId);
        }
      }),
    );
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  }

  /** Claims and executes a command; a command already done is a no-op. */
  async handleCommand(commandId: string): Promise<void> {
    const now = this.deps.now();
    let cmd: CommandRecord | undefined;
    try {
      cmd = await this.deps.store.claimCommand(commandId, now, this.deps.commandClaimStaleMs);
    } catch (e) {
      // The claim may have landed although its answer did not (the store died meanwhile).
      await this.giveClaimBack(commandId, now);
      throw e;
    }
    if (!cmd) {
      const existing = await this.deps.store.getCommand(commandId);
      // Claimed by a live dispatcher (a duplicate signal): let that one finish, check again later.
      if (existing?.state === "PENDING") throw new RetryLater();
      return;
    }
    if (cmd.notBefore !== undefined && cmd.notBefore > now + EARLY_TOLERANCE_MS) {
      // Signalled ahead of its time (schedule look-ahead, a re-signal): wait for it.
      await this.deps.store.releaseCommandClaim(commandId, now);
      await this.deps.queues.sendDelayedSignal(commandSignal(cmd), (cmd.notBefore - now) / 1000);
      return;
    }
    try {
      await this.execute(cmd);
    } catch (e) {
      await this.giveClaimBack(commandId, now);
      throw e;
    }
    await this.deps.store.completeCommand(commandId, this.deps.now());
  }

  /**
   * Gives back this dispatcher's claim (`claimedAt` = `claimedAt`; a no-op when it did not land),
   * so the redelivery runs the command at once instead of once the claim is stale (60 s). Tried
   * again while the store is out of reach (lib/engine/store-retry.ts); never throws.
   */
  private async giveClaimBack(commandId: string, claimedAt: number): Promise<void> {
    const { log } = this.deps;
    await retryWhileUnreachable(() => this.deps.store.releaseCommandClaim(commandId, claimedAt), {
      now: this.deps.now,
      ...(this.deps.claimReleaseRetryMs !== undefined
        ? { retryMs: this.deps.claimReleaseRetryMs }
        : {}),
      onLanded: (tries) =>
        log?.("dispatcher: command claim given back after the store came back", {
          commandId,
          tries,
        }),
    }).catch((e) =>
      log?.("dispatcher: command claim not given back; it goes stale in time", {
        commandId,
        error: String(e),
      }),
    );
  }

  private async execute(cmd: CommandRecord): Promise<void> {
    const { commandId } = cmd;
    switch (cmd.type) {
      case "START_WORKFLOW":
      case "SCHEDULED":
      case "BACKFILL":
        if (!(await this.startable(cmd))) {
          // The workflow was deleted after the run was accepted: nothing can start.
          this.deps.log?.("dispatcher: run dropped, its workflow was deleted", {
            commandId,
            workflow: cmd.workflow,
          });
          break;
        }
        await this.startInstance(cmd);
        break;
      case "STOP":
      case "PAUSE":
      case "RESUME":
      case "RERUN":
      case "RECOVER_FAILED":
        await controlInstance(this.steps, cmd);
        break;
      default:
        this.deps.log?.("dispatcher: unsupported command", { commandId, type: cmd.type });
    }
  }

  /**
   * Whether a start command may (still) start its run: its definition version exists and the
   * workflow was not deleted meanwhile (a deleted workflow keeps its versions for the instances
   * that ran them, so the head decides). An unfinished instance prevents a delete, so a start
   * being redone after a crash always finds its workflow.
   */
  private async startable(cmd: CommandRecord): Promise<boolean> {
    const [def, head] = await Promise.all([
      this.deps.definitions.get(cmd.workflow, cmd.version),
      this.deps.store.getWorkflowHead(cmd.workflow),
    ]);
    return def !== undefined && head !== undefined && !head.deleted;
  }

  private async startInstance(cmd: CommandRecord): Promise<void> {
    const run = cmd.run;
    if (!run) throw new Error(`command ${cmd.commandId} has no run request`);
    const def = await this.steps.definition(cmd);
    let inst = await this.deps.store.getInstance(cmd.instanceId);
    if (!inst) {
      const failureStrategy = run.failureStrategy ?? def.definition.failureStrategy;
      const fresh: InstanceRecord = {
        instanceId: cmd.instanceId,
        workflow: cmd.workflow,
        version: cmd.version,
        state: "SUBMITTED",
        priority: run.priority ?? def.definition.priority,
        failureStrategy,
        commandType: cmd.type,
        params: run.params,
        dryRun: run.dryRun,
        ...(run.workerGroup ? { workerGroup: run.workerGroup } : {}),
        ...(run.startTasks ? { startTasks: run.startTasks } : {}),
        taskScope: run.taskScope,
        createdAt: cmd.createdAt,
        ...(cmd.scheduleTime !== undefined ? { scheduleTime: cmd.scheduleTime } : {}),
        // Time parameters: the schedule's, backfill's or parent's zone, else the workflow's.
        ...((cmd.timezone ?? def.definition.timezone)
          ? { timezone: cmd.timezone ?? def.definition.timezone }
          : {}),
        ...(cmd.scheduleId ? { scheduleId: cmd.scheduleId } : {}),
        ...(cmd.backfillId ? { backfillId: cmd.backfillId } : {}),
        ...(cmd.triggerId ? { triggerId: cmd.triggerId } : {}),
        ...(cmd.triggerCause ? { triggerCause: cmd.triggerCause } : {}),
        ...(cmd.parent ? { parent: cmd.parent } : {}),
        ...(cmd.depth ? { depth: cmd.depth } : {}),
        runType: runTypeOf(cmd),
        runs: 1,
        progress: { slots: "", attempts: {} },
        rev: 1,
      };
      const ctx = this.steps.context(fresh, def);
      fresh.progress = startProgress(ctx, def.dag.scope(run.startTasks, run.taskScope)).progress;
      // Record the intent first; a crash after this redoes the dispatch below from it.
      if (await this.deps.store.putInstance(fresh)) inst = fresh;
      else inst = await this.deps.store.getInstance(cmd.instanceId);
      if (!inst) throw new Error(`instance ${cmd.instanceId} vanished`);
    }
    if (inst.state !== "SUBMITTED") return; // started already (a repeated command)
    // Dispatch every ACTIVE task of the recorded progress (idempotent when repeated).
    const started: AdvanceResult = {
      progress: inst.progress,
      dispatch: activeTasks(inst.progress).map((index) => ({
        index,
        attempt: attemptOf(inst.progress, index),
        delaySeconds: 0,
      })),
      changed: true,
    };
    const patch = await this.steps.runPatch(inst, def, "RUNNING");
    if (!(await this.steps.commit(inst, def, started, patch))) throw new RetryLater();
  }

  /** A logic task's timer fired: a DEPENDENT re-check, or the end of a logic task's retry interval. */
  async handleCheck(instanceId: string, code: string, attempt: number): Promise<void> {
    const inst = await this.steps.load(instanceId, true);
    if (!inst || isFinalInstanceState(inst.state) || haltOf(inst)) return;
    const def = await this.steps.definition(inst);
    const index = def.dag.indexOf(code);
    if (index === undefined || def.kinds[index] === "worker") return;
    if (inst.progress.slots[index] !== SLOT.ACTIVE || attemptOf(inst.progress, index) !== attempt)
      return;
    const outcome = await runLogicTask(this.deps, inst, def, inst.progress, { index, attempt });
    if (outcome) await this.steps.applyAndCommit(inst, def, [outcome]);
  }

  /**
   * Applies task events of one instance. With `cacheInstances` (one dispatcher
   * process, standalone) the instance comes from memory; a copy that is stale all the same only
   * makes the conditional write fail, and then it is read again and the decision redone.
   */
  async handleTaskEvents(instanceId: string, events: readonly TaskEvent[]): Promise<void> {
    for (let round = 0; round < 3; round++) {
      const inst = await this.steps.load(instanceId, round === 0);
      if (!inst) throw new RetryLater();
      const def = await this.steps.definition(inst);
      if (isFinalInstanceState(inst.state)) {
        if (await this.applyForcedSuccess(inst, def, events)) return;
        continue;
      }
      const outcomes: TaskOutcome[] = [];
      // The values stay on the task items (upstream-outputs.ts): the instance names the attempts.
      const outputSlots = (inst.outputSlots ?? legacyOutputSlots(inst, def)).split("");
      let outputBytes = inst.outputBytes ?? legacyOutputBytes(inst);
      let outputsChanged = false;
      for (const e of events) {
        const index = def.dag.indexOf(e.code);
        if (index === undefined) continue;
        const live =
          inst.progress.slots[index] === SLOT.ACTIVE &&
          attemptOf(inst.progress, index) === e.attempt;
        let state = e.state;
        const task = def.definition.tasks[index] as TaskDefinition;
        if (live && state === "SUCCESS" && e.outputs && Object.keys(e.outputs).length > 0) {
          const bytes = Buffer.byteLength(JSON.stringify({ [e.code]: e.outputs }));
          if (outputBytes + bytes <= MAX_INSTANCE_OUTPUT_BYTES) {
            while (outputSlots.length <= index) outputSlots.push("0");
            outputSlots[index] = "1";
            outputBytes += bytes;
            outputsChanged = true;
          } else {
            state = "FAILURE";
            await this.deps.store.updateTask(
              { instanceId, code: e.code, attempt: e.attempt },
              ["SUCCESS"],
              {
                state: "FAILURE",
                error: `the instance's OUT parameters would exceed ${MAX_INSTANCE_OUTPUT_BYTES} bytes`,
              },
            );
          }
        }
        if (live && isLogicTaskType(task.type) && state !== "PAUSED") {
          // A sub-workflow's report: its record shows the mirrored result.
          await finishLogicRecord(this.deps, instanceId, e.code, e.attempt, state, e.error);
        }
        outcomes.push({ index, attempt: e.attempt, state });
      }
      await releaseGroups(this.deps, inst, def, outcomes);
      const result = applyOutcomes(this.steps.context(inst, def), inst.progress, outcomes);
      const patch = outputsChanged ? { outputSlots: outputSlots.join(""), outputBytes } : {};
      if (await this.steps.commit(inst, def, result, patch, outcomes)) return;
      this.steps.forget(instanceId);
    }
    throw new RetryLater();
  }

  /** FORCED_SUCCESS of a failed task of a finished instance (the API's force-success). */
  private async applyForcedSuccess(
    inst: InstanceRecord,
    def: LoadedDefinition,
    events: readonly TaskEvent[],
  ): Promise<boolean> {
    // Reports lost in a crash after the final write are made again.
    await notifyParent(this.deps, inst);
    await this.deps.onInstanceFinished?.(inst);
    let progress = inst.progress;
    const forced: TaskOutcome[] = [];
    for (const e of events) {
      const index = def.dag.indexOf(e.code);
      if (e.state !== "FORCED_SUCCESS" || index === undefined) continue;
      const changed = forceSuccessProgress(progress, index, e.attempt);
      if (!changed) continue;
      progress = changed;
      forced.push({ index, attempt: e.attempt, state: "FORCED_SUCCESS" });
    }
    if (progress === inst.progress) return true;
    const next = { ...inst, progress, rev: inst.rev + 1 };
    if (!(await this.steps.write(next))) return false;
    await publishChanges(this.deps, inst, next, def, forced);
    return true;
  }
}
