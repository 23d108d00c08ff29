/**
 * The storage interface of the engine. Every state change is a single-item conditional write
 * (DynamoDB semantics): methods that change state return false/undefined when their condition
 * did not hold instead of throwing, so callers decide what a lost race means.
 */
import type { ReleaseState, TaskState } from "../core/model.js";
import type { Progress } from "../core/progress.js";
import type {
  CommandRecord,
  InstanceRecord,
  InstanceSummaryRecord,
  Page,
  StoredDefinition,
  TaskInstanceRecord,
  WorkflowHead,
} from "./records.js";
import type { WorkerLeaseStore } from "./worker-leases.js";

export interface ListInstancesQuery {
  workflow?: string;
  state?: string;
  /** Filters each page (like `state`): a page may hold fewer than `limit` items. */
  runType?: string;
  /** `scheduleTime >= scheduledAfter`, epoch ms; filters each page (like `state`). */
  scheduledAfter?: number;
  /** `scheduleTime < scheduledBefore`, epoch ms; filters each page (like `state`). */
  scheduledBefore?: number;
  /**
   * A substring of the instance id, matched as given (ids are lowercase UUIDs: pass it
   * lowercased for a case-insensitive search); filters each page (like `state`).
   */
  idContains?: string;
  limit: number;
  nextToken?: string;
}

/** The control commands an instance's halt marker names (lib/store/dynamo-halt-markers.ts). */
export type HaltCommandType = "STOP" | "PAUSE";

/** One attempt of one task, by key. */
export interface TaskAttemptKey {
  instanceId: string;
  code: string;
  attempt: number;
}

export interface Store extends WorkerLeaseStore {
  // Workflow definitions
  /** The head, including a deleted workflow's tombstone (`deleted: true`). */
  getWorkflowHead(name: string): Promise<WorkflowHead | undefined>;
  getDefinition(name: string, version: number): Promise<StoredDefinition | undefined>;
  /** Writes version `def.version` if absent. */
  putDefinition(def: StoredDefinition): Promise<boolean>;
  /** Creates or moves the head, conditioned on the latest version it replaces (0 = new). */
  putWorkflowHead(head: WorkflowHead, expectedLatest: number): Promise<boolean>;
  setReleaseState(
    name: string,
    state: ReleaseState,
    now: number,
  ): Promise<WorkflowHead | undefined>;
  listWorkflows(limit: number, nextToken?: string): Promise<Page<WorkflowHead>>;
  /**
   * Deletes a workflow: its head becomes an unlisted tombstone that remembers the last version
   * number; the versions stay, read only by the instances that ran them.
   */
  deleteWorkflow(name: string): Promise<void>;

  // Commands
  /** Writes a command if its id is new. */
  putCommand(cmd: CommandRecord): Promise<boolean>;
  getCommand(commandId: string): Promise<CommandRecord | undefined>;
  /** PENDING and not claimed within `staleMs` → claimed now. */
  claimCommand(commandId: string, now: number, staleMs: number): Promise<CommandRecord | undefined>;
  completeCommand(commandId: string, now: number): Promise<void>;
  /** Drops a claim taken at `claimedAt` (the claimer failed), so another try may start now. */
  releaseCommandClaim(commandId: string, claimedAt: number): Promise<void>;
  /** Commands still PENDING created before `before`. */
  listPendingCommands(before: number, limit: number): Promise<CommandRecord[]>;
  markResignalled(commandId: string, resignals: number, at: number): Promise<void>;
  /**
   * Names `commandId` as the instance's latest STOP or PAUSE in its halt marker
   * (lib/store/dynamo-halt-markers.ts), which a worker reads after each claim.
   */
  markHalt(
    instanceId: string,
    type: HaltCommandType,
    commandId: string,
    now: number,
  ): Promise<void>;
  /**
   * A STOP or PAUSE the instance's halt marker names that is still PENDING (strongly consistent
   * reads by key), if any.
   */
  pendingHalt(instanceId: string): Promise<CommandRecord | undefined>;

  // Workflow instances
  putInstance(inst: InstanceRecord): Promise<boolean>;
  getInstance(instanceId: string): Promise<InstanceRecord | undefined>;
  /** Replaces the instance if its stored `rev` is `inst.rev - 1`. */
  updateInstance(inst: InstanceRecord): Promise<boolean>;
  listInstances(q: ListInstancesQuery): Promise<Page<InstanceSummaryRecord>>;
  /**
   * The progress of each instance of `instanceIds` that exists, by id (eventually consistent):
   * one BatchGetItem per 100 ids, charged on the whole items' size.
   */
  getInstancesProgress(instanceIds: readonly string[]): Promise<Map<string, Progress>>;
  /** Whether any instance of the workflow is not in a final state. */
  hasUnfinishedInstances(workflow: string): Promise<boolean>;
  /** Whether a START_WORKFLOW command of the workflow waits for the dispatcher. */
  hasPendingStart(workflow: string): Promise<boolean>;

  // Task instances
  putTaskInstance(task: TaskInstanceRecord): Promise<boolean>;
  getTaskInstance(
    instanceId: string,
    code: string,
    attempt: number,
  ): Promise<TaskInstanceRecord | undefined>;
  /** Every attempt of every task of an instance. */
  listTaskInstances(instanceId: string): Promise<TaskInstanceRecord[]>;
  /**
   * The state of each attempt of `keys` that exists (eventually consistent), in no particular
   * order: one BatchGetItem per 100 keys.
   */
  getTaskStates(
    keys: readonly TaskAttemptKey[],
  ): Promise<(TaskAttemptKey & { state: TaskState })[]>;
  /**
   * The OUT values of each attempt of `keys` that exists and set some (strongly consistent, so
   * that a result written just before its task event is seen), in no particular order: one
   * BatchGetItem per 100 keys.
   */
  getTaskOutputs(
    keys: readonly TaskAttemptKey[],
  ): Promise<(TaskAttemptKey & { outputs: Record<string, string> })[]>;
  /** Every attempt of one task, oldest first. */
  listAttempts(instanceId: string, code: string): Promise<TaskInstanceRecord[]>;
  /**
   * Changes a task instance if its state is one of `from` (and, when given, `worker` holds it).
   * @returns the new item, or undefined when the condition failed.
   */
  updateTask(
    key: { instanceId: string; code: string; attempt: number },
    from: readonly TaskState[],
    changes: Partial<TaskInstanceRecord>,
    opts?: {
      worker?: string;
      removeLease?: boolean;
      leaseExpiredBefore?: number;
      /** Also succeed when the item does not exist yet, creating it with these fields. */
      createWith?: TaskInstanceRecord;
    },
  ): Promise<TaskInstanceRecord | undefined>;
  /**
   * Attempts in the leases index whose `leaseExpiresAt` is before `now` (epoch ms), oldest
   * first, at most `limit`: RUNNING ones whose lease lapsed, and failed-over ones whose event is
   * not yet sent (and attempts over written before the outbox had its own shard).
   */
  listExpiredLeases(now: number, limit: number): Promise<TaskInstanceRecord[]>;
  /**
   * Attempts over whose task event is overdue (the outbox of task events, lib/engine/worker.ts):
   * written with a final state and an event deadline (`leaseExpiresAt`) before `now` (epoch ms),
   * oldest first, at most `limit`. Apart from the leases, so that many lapsed leases never hold
   * an overdue event back.
   */
  listOverdueTaskEvents(now: number, limit: number): Promise<TaskInstanceRecord[]>;
}
