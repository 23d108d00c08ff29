/**
 * The dispatcher (DolphinScheduler's master): claims commands, creates workflow instances,
 * dispatches ready tasks in priority order, and advances the DAG on task state-change events.
 * Events of one instance arrive one batch at a time (FIFO message group = instance id); every
 * write is conditioned anyway (instance `rev`, task `attribute_not_exists`/expected state), and
 * side effects happen before the instance write that records them, so a redelivered or repeated
 * message redoes the same idempotent effects and changes nothing twice.
 */
import { isFinalTaskState } from "../core/model.js";
import {
  type AdvanceContext,
  type AdvanceResult,
  activeTasks,
  applyOutcomes,
  attemptOf,
  startProgress,
  type TaskOutcome,
} from "../core/progress.js";
import { assertInstanceTransition } from "../core/states.js";
import { type EventMessage, type TaskEvent, taskEventsOf } from "../queue/messages.js";
import type { Queues } from "../queue/sqs-queues.js";
import type { CommandRecord, InstanceRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { mapLimit } from "./concurrency.js";
import type { DefinitionCache, LoadedDefinition } from "./definitions.js";
import type { SqsBatchResponse, SqsRecord } from "./lambda-events.js";
import { dispatchTasks } from "./task-dispatch.js";

export interface DispatcherDeps {
  store: Store;
  queues: Queues;
  definitions: DefinitionCache;
  now: () => number;
  /** A claim older than this is taken over (the claimer died), ms. */
  commandClaimStaleMs: number;
  /**
   * Keep instances in memory between events. Only where this process is the only dispatcher
   * (standalone): with several (Lambda), a stale copy could dispatch tasks after a stop or a
   * failure that another process recorded, before its conditional write fails.
   */
  cacheInstances?: boolean;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** Thrown when a message cannot be applied yet (for example its instance is not written yet). */
class RetryLater extends Error {}

/** Instances a dispatcher keeps in memory between events (LRU). */
const INSTANCE_CACHE_SIZE = 1_000;

export class Dispatcher {
  private readonly instances = new Map<string, InstanceRecord>();

  constructor(private readonly deps: DispatcherDeps) {}

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
            // Consecutive task events of one instance are applied with one instance write.
            const events: TaskEvent[] = [];
            const from = i;
            while (i < list.length) {
              const e = JSON.parse((list[i] as SqsRecord).body) as EventMessage;
              if (e.kind === "command" || e.instanceId !== first.instanceId) break;
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

  private context(inst: InstanceRecord, def: LoadedDefinition): AdvanceContext {
    return {
      dag: def.dag,
      policies: def.policies,
      failureStrategy: inst.failureStrategy,
      stopping: inst.state === "STOPPING",
    };
  }

  private async definition(inst: { workflow: string; version: number }): Promise<LoadedDefinition> {
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
        if (!(await this.deps.definitions.get(cmd.workflow, cmd.version))) {
          // The workflow was deleted after the run was accepted: nothing can start.
          this.deps.log?.("dispatcher: run dropped, its definition is gone", {
            commandId,
            workflow: cmd.workflow,
          });
          break;
        }
        await this.startInstance(cmd);
        break;
      case "STOP":
        await this.stopInstance(cmd.instanceId);
        break;
      default:
        this.deps.log?.("dispatcher: unsupported command", { commandId, type: cmd.type });
    }
  }

  private async startInstance(cmd: CommandRecord): Promise<void> {
    const run = cmd.run;
    if (!run) throw new Error(`command ${cmd.commandId} has no run request`);
    const def = await this.definition(cmd);
    let inst = await this.deps.store.getInstance(cmd.instanceId);
    if (!inst) {
      const failureStrategy = run.failureStrategy ?? def.definition.failureStrategy;
      const dag = def.dag;
      const ctx: AdvanceContext = { dag, policies: def.policies, failureStrategy, stopping: false };
      const start = startProgress(ctx, dag.scope(run.startTasks, run.taskScope));
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
        ...(run.startTasks ? { startTasks: run.startTasks } : {}),
        taskScope: run.taskScope,
        createdAt: cmd.createdAt,
        progress: start.progress,
        rev: 1,
      };
      // Record the intent first; a crash after this redoes the dispatch below from it.
      if (await this.deps.store.putInstance(fresh)) inst = fresh;
      else inst = await this.deps.store.getInstance(cmd.instanceId);
      if (!inst) throw new Error(`instance ${cmd.instanceId} vanished`);
    }
    if (inst.state !== "SUBMITTED") return; // started already (a repeated command)
    // Dispatch every ACTIVE task of the recorded progress (idempotent when repeated).
    const orders = activeTasks(inst.progress).map((index) => ({
      index,
      attempt: attemptOf(inst.progress, index),
      delaySeconds: 0,
    }));
    await dispatchTasks(this.deps, inst, def, orders);
    const next: InstanceRecord = {
      ...inst,
      state: "RUNNING",
      startedAt: this.deps.now(),
      rev: inst.rev + 1,
    };
    assertInstanceTransition(inst.state, next.state);
    if (!(await this.write(next))) throw new RetryLater();
  }

  private async stopInstance(instanceId: string): Promise<void> {
    this.instances.delete(instanceId);
    let inst = await this.deps.store.getInstance(instanceId);
    if (!inst) {
      // Its start is still to come (retry later), or it was dropped (nothing to stop).
      const start = await this.deps.store.getCommand(`start:${instanceId}`);
      if (start?.state === "PENDING") throw new RetryLater();
      return;
    }
    if (inst.state === "STOPPED" || inst.state === "SUCCESS" || inst.state === "FAILURE") return;
    const def = await this.definition(inst);
    if (inst.state !== "STOPPING") {
      const stopping: InstanceRecord = { ...inst, state: "STOPPING", rev: inst.rev + 1 };
      assertInstanceTransition(inst.state, stopping.state);
      if (!(await this.write(stopping))) throw new RetryLater();
      inst = stopping;
    }
    // Tasks not yet taken by a worker are killed here; running ones by their worker.
    const outcomes: TaskOutcome[] = [];
    const now = this.deps.now();
    await mapLimit(activeTasks(inst.progress), 16, async (index) => {
      const attempt = attemptOf(inst.progress, index);
      const key = { instanceId, code: def.dag.codes[index] as string, attempt };
      const killed = await this.deps.store.updateTask(key, ["SUBMITTED", "DISPATCHED"], {
        state: "KILLED",
        endedAt: now,
        error: "stopped before it started",
      });
      if (killed) {
        outcomes.push({ index, attempt, state: "KILLED" });
        return;
      }
      const running = await this.deps.store.updateTask(key, ["RUNNING"], { killRequested: true });
      if (running) return;
      // Neither waiting nor running: over already (for instance killed by an earlier try of
      // this stop whose instance write was lost). Record what it ended as.
      const item = await this.deps.store.getTaskInstance(instanceId, key.code, attempt);
      if (item && isFinalTaskState(item.state))
        outcomes.push({ index, attempt, state: item.state });
    });
    if (
      !(await this.commit(
        inst,
        def,
        applyOutcomes(this.context(inst, def), inst.progress, outcomes),
      ))
    ) {
      throw new RetryLater();
    }
  }

  /**
   * Applies task state-change events of one instance. With `cacheInstances` (one dispatcher
   * process, standalone) the instance comes from memory; a copy that is stale all the same only
   * makes the conditional write fail, and then it is read again and the decision redone.
   */
  async handleTaskEvents(instanceId: string, events: readonly TaskEvent[]): Promise<void> {
    for (let round = 0; round < 3; round++) {
      const cached =
        round === 0 && this.deps.cacheInstances ? this.instances.get(instanceId) : undefined;
      const inst = cached ?? (await this.deps.store.getInstance(instanceId));
      if (!inst) throw new RetryLater();
      if (inst.state === "STOPPED" || inst.state === "SUCCESS" || inst.state === "FAILURE") return;
      const def = await this.definition(inst);
      const outcomes: TaskOutcome[] = [];
      for (const e of events) {
        const index = def.dag.indexOf(e.code);
        if (index !== undefined) outcomes.push({ index, attempt: e.attempt, state: e.state });
      }
      const result = applyOutcomes(this.context(inst, def), inst.progress, outcomes);
      if (await this.commit(inst, def, result)) return;
      this.instances.delete(instanceId);
    }
    throw new RetryLater();
  }

  /**
   * Dispatches what the decision asks for, then records it with one conditional write.
   * @returns false when the instance changed meanwhile (nothing recorded).
   */
  private async commit(
    inst: InstanceRecord,
    def: LoadedDefinition,
    result: AdvanceResult,
  ): Promise<boolean> {
    if (!result.changed) return true;
    await dispatchTasks(this.deps, inst, def, result.dispatch);
    const next: InstanceRecord = { ...inst, progress: result.progress, rev: inst.rev + 1 };
    if (result.finalState) {
      assertInstanceTransition(inst.state, result.finalState);
      next.state = result.finalState;
      next.endedAt = this.deps.now();
    }
    return this.write(next);
  }

  /** The conditional instance write; keeps the cache in step with what was written. */
  private async write(next: InstanceRecord): Promise<boolean> {
    const ok = await this.deps.store.updateInstance(next);
    if (!ok || next.state === "STOPPED" || next.state === "SUCCESS" || next.state === "FAILURE") {
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
