/**
 * One step of an instance: decide from its progress, carry out the decision's effects, then
 * record it with one conditional instance write (`rev`). The dispatcher's events
 * (lib/engine/dispatcher.ts) and the control commands (lib/engine/control.ts) are all steps.
 * Effects happen before the write that records them and are idempotent, so a step whose write
 * loses (the instance changed meanwhile) is simply decided again from what is there now.
 */
import { LRUCache } from "lru-cache";
import { type InstanceState, isFinalInstanceState, type TaskDefinition } from "../core/model.js";
import {
  type AdvanceContext,
  type AdvanceResult,
  applyOutcomes,
  type Halt,
  restProgress,
  type TaskOutcome,
} from "../core/progress.js";
import { assertInstanceTransition } from "../core/states.js";
import type { InstanceRecord } from "../store/records.js";
import type { LoadedDefinition } from "./definitions.js";
import type { EngineDeps } from "./engine-deps.js";
import { RetryLater } from "./errors.js";
import { haltActive } from "./halts.js";
import { notifyParent, recordSkipped, releaseGroups } from "./instance-effects.js";
import { recordLogicRetry, runLogicTask } from "./logic-tasks.js";
import { isLiveOutcome, publishChanges } from "./state-change-events.js";
import { dispatchTasks } from "./task-dispatch.js";
import { instanceTimeoutTimer, logicCheckTimer } from "./timers.js";

export interface StepDeps extends EngineDeps {
  /**
   * Keep instances in memory between events. Only where this process is the only dispatcher
   * (standalone): with several (Lambda), a stale copy could dispatch tasks after a stop or a
   * failure that another process recorded, before its conditional write fails.
   */
  cacheInstances?: boolean;
  /**
   * Called after an instance's final write (and again when a message about a final instance is
   * redelivered): serial schedules and backfills move on (lib/engine/finished-runs.ts).
   */
  onInstanceFinished?: (inst: InstanceRecord) => Promise<void>;
}

/** Instances a dispatcher keeps in memory between events (LRU). */
const INSTANCE_CACHE_SIZE = 1_000;

/** Rounds of "logic task decided → apply → more ready" in one step (each settles ≥ 1 task). */
const MAX_SETTLE_ROUNDS = 100_000;

/** What the instance's state holds its tasks to: nothing new starts while it stops or pauses. */
export function haltOf(inst: InstanceRecord): Halt | undefined {
  if (inst.state === "STOPPING") return "stop";
  if (inst.timedOutAt !== undefined) return "fail";
  if (inst.state === "PAUSING" || inst.state === "PAUSED") return "pause";
  return undefined;
}

/** Steps of the instances one dispatcher handles, with its in-memory instances (if any). */
export class InstanceSteps {
  /** In-memory instances (`cacheInstances`), most recently written kept. */
  private readonly cache = new LRUCache<string, InstanceRecord>({ max: INSTANCE_CACHE_SIZE });

  constructor(readonly deps: StepDeps) {}

  /** What deciding an instance's progress needs: its DAG, policies and halt. */
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

  /**
   * The instance's definition version.
   * @throws Error when that version is missing (an instance's version is never deleted while
   *   it runs, so this is a fault).
   */
  async definition(inst: { workflow: string; version: number }): Promise<LoadedDefinition> {
    const def = await this.deps.definitions.get(inst.workflow, inst.version);
    if (!def) throw new Error(`definition ${inst.workflow} v${inst.version} is missing`);
    return def;
  }

  /** The instance: from memory when `cached` and `cacheInstances`, else from the store. */
  async load(instanceId: string, cached: boolean): Promise<InstanceRecord | undefined> {
    const hit = cached && this.deps.cacheInstances ? this.cache.get(instanceId) : undefined;
    return hit ?? (await this.deps.store.getInstance(instanceId));
  }

  /** Drops the in-memory copy (a control command reads the instance fresh). */
  forget(instanceId: string): void {
    this.cache.delete(instanceId);
  }

  /** Fields a new run of an instance starts with: RUNNING, start time, workflow deadline timer. */
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
      await this.deps.timers.putTimer(instanceTimeoutTimer(inst.instanceId, patch.deadlineAt));
    }
    return patch;
  }

  /**
   * Applies outcomes the dispatcher found itself (halts, timeouts) and writes the result.
   * @throws RetryLater when the instance changed meanwhile.
   */
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

  /**
   * Carries out a decision and records it with one conditional write: worker tasks are sent,
   * logic tasks decided (their outcomes applied in turn, until nothing more is decided at once),
   * END's failure kills the active siblings.
   * @param patch instance fields that change with this write (state of a control command…).
   * @param reported task outcomes `first` was computed from (their events are published).
   * @returns false when the instance changed meanwhile (nothing recorded).
   */
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
          const attempt = { instanceId: next.instanceId, code: task.code, attempt: o.attempt };
          await this.deps.timers.putTimer(logicCheckTimer(attempt, dueAt));
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

  /**
   * The conditional instance write (on `rev`); keeps the in-memory copy in step with it.
   * @returns false when the instance changed meanwhile (nothing written).
   */
  async write(next: InstanceRecord): Promise<boolean> {
    const ok = await this.deps.store.updateInstance(next);
    if (!ok || isFinalInstanceState(next.state)) this.cache.delete(next.instanceId);
    else if (this.deps.cacheInstances) this.cache.set(next.instanceId, next);
    return ok;
  }
}
