/**
 * The dispatcher (DolphinScheduler's master): claims commands, creates workflow instances,
 * dispatches ready tasks in priority order, decides logic tasks, and advances the DAG on task
 * state-change events. Events of one instance arrive one batch at a time (FIFO message group =
 * instance id); every write is conditioned anyway (instance `rev`, task `attribute_not_exists`/
 * expected state), and side effects happen before the instance write that records them, so a
 * redelivered or repeated message redoes the same idempotent effects and changes nothing twice.
 * Nothing lives only in memory: a dispatcher killed anywhere is replaced by the next delivery.
 */

import {
  type InstanceState,
  isFinalInstanceState,
  isLogicTaskType,
  type TaskDefinition,
} from "../core/model.js";
import {
  type AdvanceContext,
  type AdvanceResult,
  activeTasks,
  applyOutcomes,
  attemptOf,
  forceSuccessProgress,
  type Halt,
  restProgress,
  SLOT,
  startProgress,
  type TaskOutcome,
} from "../core/progress.js";
import { runTypeOf } from "../core/run-type.js";
import { assertInstanceTransition } from "../core/states.js";
import { type EventMessage, type TaskEvent, taskEventsOf } from "../queue/messages.js";
import type { CommandRecord, InstanceRecord } from "../store/records.js";
import { controlInstance, handleTimeout, RetryLater } from "./control.js";
import type { LoadedDefinition } from "./definitions.js";
import type { EngineDeps } from "./engine-deps.js";
import { haltActive } from "./halts.js";
import { notifyParent, recordSkipped, releaseGroups } from "./instance-effects.js";
import type { SqsBatchResponse, SqsRecord } from "./lambda-events.js";
import {
  finishLogicRecord,
  LOGIC_CHECK_TIMER,
  recordLogicRetry,
  runLogicTask,
} from "./logic-tasks.js";
import { isLiveOutcome, publishChanges } from "./state-change-events.js";
import { dispatchTasks } from "./task-dispatch.js";

export interface DispatcherDeps extends EngineDeps {
  /** A claim older than this is taken over (the claimer died), ms. */
  commandClaimStaleMs: number;
  /**
   * Keep instances in memory between events. Only where this process is the only dispatcher
   * (standalone): with several (Lambda), a stale copy could dispatch tasks after a stop or a
   * failure that another process recorded, before its conditional write fails.
   */
  cacheInstances?: boolean;
  /**
   * Called after an instance's final write (and again when a message about a final instance is
   * redelivered): serial schedules and backfills move on (lib/engine/scheduling.ts).
   */
  onInstanceFinished?: (inst: InstanceRecord) => Promise<void>;
}

/** Timer kind of a workflow timeout (lib/engine/sweeper.ts). */
export const INSTANCE_TIMEOUT_TIMER = "instance-timeout";

/** All OUT parameters one instance keeps, JSON bytes (the instance item must stay < 400 KB). */
export const MAX_INSTANCE_OUTPUT_BYTES = 200 * 1024;

/** A command may start this much before its `notBefore` (SQS delays are whole seconds), ms. */
const EARLY_TOLERANCE_MS = 50;

/** Instances a dispatcher keeps in memory between events (LRU). */
const INSTANCE_CACHE_SIZE = 1_000;

/** Rounds of "logic task decided → apply → more ready" in one step (each settles ≥ 1 task). */
const MAX_SETTLE_ROUNDS = 100_000;

function haltOf(inst: InstanceRecord): Halt | undefined {
  if (inst.state === "STOPPING") return "stop";
  if (inst.timedOutAt !== undefined) return "fail";
  if (inst.state === "PAUSING" || inst.state === "PAUSED") return "pause";
  return undefined;
}

export class Dispatcher {
  /** @internal In-memory instances (cacheInstances); control commands drop their entry. */
  readonly instances = new Map<string, InstanceRecord>();

  constructor(readonly deps: DispatcherDeps) {}

  /**
   * Handles an SQS batch from the events FIFO queue. Groups are handled in parallel, each in
   * order; after a failure the rest of that group is reported failed too, so FIFO order holds.
   */
  async handleBatch(records: readonly SqsRecord[]): Promise<SqsBatchResponse> {
    const groups = new Map<string, SqsRecord[]>();
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
            const first = JSON.parse((list[i] as SqsRecord).body) as EventMessage;
            if (first.kind === "command") {
              await this.handleCommand(first.commandId);
              i++;
              continue;
            }
            if (first.kind === "timeout") {
              await handleTimeout(this, first.instanceId, first.deadlineAt);
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
              const e = JSON.parse((list[i] as SqsRecord).body) as EventMessage;
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
          for (; i < list.length; i++) failures.push((list[i] as SqsRecord).messageId);
        }
      }),
    );
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  }

  /** @internal (lib/engine/control.ts) */
  context(inst: InstanceRecord, def: LoadedDefinition): AdvanceContext {
    const halt = haltOf(inst);
    return {
      dag: def.dag,
      policies: def.policies,
      failureStrategy: inst.failureStrategy,
      kinds: def.kinds,
      ...(halt ? { halt } : {}),
    };
  }

  /** @internal (lib/engine/control.ts) */
  async definition(inst: { workflow: string; version: number }): Promise<LoadedDefinition> {
    const def = await this.deps.definitions.get(inst.workflow, inst.version);
    if (!def) throw new Error(`definition ${inst.workflow} v${inst.version} is missing`);
    return def;
  }

  /** Claims and executes a command; a command already done is a no-op. */
  async handleCommand(commandId: string): Promise<void> {
    const now = this.deps.now();
    const cmd = await this.deps.store.claimCommand(commandId, now, this.deps.commandClaimStaleMs);
    if (!cmd) {
      const existing = await this.deps.store.getCommand(commandId);
      // Claimed by a live dispatcher (a duplicate signal): let that one finish, check again later.
      if (existing?.state === "PENDING") throw new RetryLater();
      return;
    }
    if (cmd.notBefore !== undefined && cmd.notBefore > now + EARLY_TOLERANCE_MS) {
      // Signalled ahead of its time (schedule look-ahead, a re-signal): wait for it.
      await this.deps.store.releaseCommandClaim(commandId, now);
      await this.deps.queues.sendDelayedSignal(
        { kind: "command", commandId, instanceId: cmd.instanceId },
        (cmd.notBefore - now) / 1000,
      );
      return;
    }
    try {
      await this.execute(cmd);
    } catch (e) {
      // Give the claim back, so the redelivery can run it at once instead of in 60 s.
      await this.deps.store.releaseCommandClaim(commandId, now).catch(() => {});
      throw e;
    }
    await this.deps.store.completeCommand(commandId, this.deps.now());
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
        await controlInstance(this, cmd);
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
    const def = await this.definition(cmd);
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
        ...(cmd.parent ? { parent: cmd.parent } : {}),
        ...(cmd.depth ? { depth: cmd.depth } : {}),
        runType: runTypeOf(cmd),
        runs: 1,
        progress: { slots: "", attempts: {} },
        rev: 1,
      };
      const ctx = this.context(fresh, def);
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
    const patch = await this.runPatch(inst, def, "RUNNING");
    if (!(await this.commit(inst, def, started, patch))) throw new RetryLater();
  }

  /** Fields a new run of an instance starts with: RUNNING, start time, workflow deadline timer. */
  /** @internal (lib/engine/control.ts) */
  async runPatch(
    inst: InstanceRecord,
    def: LoadedDefinition,
    state: InstanceState,
  ): Promise<Partial<InstanceRecord>> {
    const now = this.deps.now();
    const patch: Partial<InstanceRecord> = {
      state,
      startedAt: now,
      endedAt: undefined,
      timedOutAt: undefined,
      error: undefined,
      deadlineAt: undefined,
    };
    const limit = def.definition.timeoutSeconds;
    if (limit !== undefined) {
      patch.deadlineAt = now + limit * 1000;
      await this.deps.timers.putTimer({
        id: `timeout:${inst.instanceId}`,
        dueAt: patch.deadlineAt,
        kind: INSTANCE_TIMEOUT_TIMER,
        instanceId: inst.instanceId,
      });
    }
    return patch;
  }

  /** Applies outcomes the dispatcher found itself (halts, timeouts) and writes the result. */
  /** @internal (lib/engine/control.ts) */
  async applyAndCommit(
    inst: InstanceRecord,
    def: LoadedDefinition,
    outcomes: TaskOutcome[],
    patch: Partial<InstanceRecord> = {},
  ): Promise<void> {
    const ctx = this.context({ ...inst, ...patch }, def);
    await releaseGroups(this.deps, inst, def, outcomes);
    let result = applyOutcomes(ctx, inst.progress, outcomes);
    if (!result.changed) result = restProgress(ctx, inst.progress);
    if (!(await this.commit(inst, def, result, patch, outcomes))) throw new RetryLater();
  }

  /** A logic task's timer fired: a DEPENDENT re-check, or the end of a logic task's retry interval. */
  async handleCheck(instanceId: string, code: string, attempt: number): Promise<void> {
    const inst = await this.load(instanceId, true);
    if (!inst || isFinalInstanceState(inst.state) || haltOf(inst)) return;
    const def = await this.definition(inst);
    const index = def.dag.indexOf(code);
    if (index === undefined || def.kinds[index] === "worker") return;
    if (inst.progress.slots[index] !== SLOT.ACTIVE || attemptOf(inst.progress, index) !== attempt)
      return;
    const outcome = await runLogicTask(this.deps, inst, def, inst.progress, { index, attempt });
    if (outcome) await this.applyAndCommit(inst, def, [outcome]);
  }

  private async load(instanceId: string, cached: boolean): Promise<InstanceRecord | undefined> {
    const hit = cached && this.deps.cacheInstances ? this.instances.get(instanceId) : undefined;
    return hit ?? (await this.deps.store.getInstance(instanceId));
  }

  /**
   * Applies task state-change events of one instance. With `cacheInstances` (one dispatcher
   * process, standalone) the instance comes from memory; a copy that is stale all the same only
   * makes the conditional write fail, and then it is read again and the decision redone.
   */
  async handleTaskEvents(instanceId: string, events: readonly TaskEvent[]): Promise<void> {
    for (let round = 0; round < 3; round++) {
      const inst = await this.load(instanceId, round === 0);
      if (!inst) throw new RetryLater();
      const def = await this.definition(inst);
      if (isFinalInstanceState(inst.state)) {
        if (await this.applyForcedSuccess(inst, def, events)) return;
        continue;
      }
      const outcomes: TaskOutcome[] = [];
      const outputs = { ...(inst.outputs ?? {}) };
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
          outputs[e.code] = e.outputs;
          outputsChanged = true;
          if (Buffer.byteLength(JSON.stringify(outputs)) > MAX_INSTANCE_OUTPUT_BYTES) {
            delete outputs[e.code];
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
      const result = applyOutcomes(this.context(inst, def), inst.progress, outcomes);
      if (await this.commit(inst, def, result, outputsChanged ? { outputs } : {}, outcomes)) return;
      this.instances.delete(instanceId);
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
    if (!(await this.write(next))) return false;
    await publishChanges(this.deps, inst, next, def, forced);
    return true;
  }

  /**
   * Carries out a decision and records it with one conditional write: worker tasks are sent,
   * logic tasks decided (their outcomes applied in turn, until nothing more is decided at once),
   * END's failure kills the active siblings.
   * @param patch instance fields that change with this write (state of a control command…).
   * @param reported task outcomes `first` was computed from (their events are published).
   * @returns false when the instance changed meanwhile (nothing recorded).
   */
  /** @internal (lib/engine/control.ts) */
  async commit(
    inst: InstanceRecord,
    def: LoadedDefinition,
    first: AdvanceResult,
    patch: Partial<InstanceRecord> = {},
    reported: readonly TaskOutcome[] = [],
  ): Promise<boolean> {
    if (!first.changed && Object.keys(patch).length === 0) return true;
    const ended = reported.filter((o) => isLiveOutcome(inst.progress, o));
    const next: InstanceRecord = { ...inst, ...patch };
    const ctx = this.context(next, def);
    let result = first;
    let killed = false;
    // Only a CONDITIONS or SWITCH decision skips tasks: the slot scan runs just then.
    let branched = false;
    for (let round = 0; round < MAX_SETTLE_ROUNDS; round++) {
      const worker = result.dispatch.filter((o) => def.kinds[o.index] === "worker");
      const logic = result.dispatch.filter((o) => def.kinds[o.index] !== "worker");
      const now: TaskOutcome[] = await dispatchTasks(this.deps, next, def, worker);
      for (const o of logic) {
        if (o.delaySeconds > 0) {
          // A logic task's retry waits its interval on a timer, then is decided again; its
          // attempt is written first, so that the instance shows it waiting.
          const dueAt = this.deps.now() + o.delaySeconds * 1000;
          const task = def.definition.tasks[o.index] as TaskDefinition;
          await recordLogicRetry(this.deps, next, task, o.attempt, dueAt);
          await this.deps.timers.putTimer({
            id: `check:${next.instanceId}:${def.dag.codes[o.index]}:${o.attempt}`,
            dueAt,
            kind: LOGIC_CHECK_TIMER,
            instanceId: next.instanceId,
            code: def.dag.codes[o.index] as string,
            attempt: o.attempt,
          });
          continue;
        }
        const decided = await runLogicTask(this.deps, next, def, result.progress, o);
        if (decided) now.push(decided);
      }
      if (result.killActive && !killed) {
        killed = true;
        now.push(...(await haltActive(this.deps, next, def, result.progress, "end")));
      }
      if (now.length === 0) break;
      ended.push(...now.filter((o) => isLiveOutcome(result.progress, o)));
      await releaseGroups(this.deps, next, def, now);
      if (now.some((o) => o.skip?.length)) branched = true;
      const applied = applyOutcomes(ctx, result.progress, now);
      if (!applied.changed) break;
      result = applied;
    }
    if (branched) await recordSkipped(this.deps, next, def, inst.progress.slots, result.progress);
    next.progress = result.progress;
    next.rev = inst.rev + 1;
    const via = next.state;
    if (result.finalState) {
      next.state = result.finalState;
      if (result.finalState !== "PAUSED") next.endedAt = this.deps.now();
    }
    if (via !== inst.state) assertInstanceTransition(inst.state, via);
    if (next.state !== via) assertInstanceTransition(via, next.state);
    const ok = await this.write(next);
    if (ok) await publishChanges(this.deps, inst, next, def, ended);
    if (ok && next.state !== inst.state) await notifyParent(this.deps, next);
    if (ok && isFinalInstanceState(next.state) && !isFinalInstanceState(inst.state)) {
      await this.deps.onInstanceFinished?.(next);
    }
    return ok;
  }

  /** The conditional instance write; keeps the cache in step with what was written. */
  /** @internal (lib/engine/control.ts) */
  async write(next: InstanceRecord): Promise<boolean> {
    const ok = await this.deps.store.updateInstance(next);
    if (!ok || isFinalInstanceState(next.state)) {
      this.instances.delete(next.instanceId);
    } else if (this.deps.cacheInstances) {
      this.instances.delete(next.instanceId); // re-insert: most recent last (LRU)
      this.instances.set(next.instanceId, next);
      if (this.instances.size > INSTANCE_CACHE_SIZE) {
        this.instances.delete(this.instances.keys().next().value as string);
      }
    }
    return ok;
  }
}
