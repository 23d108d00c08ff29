/**
 * Store on DynamoDB: single-item conditional writes (PutItem/UpdateItem/DeleteItem with a
 * ConditionExpression), GetItem, BatchGetItem, Query and BatchWriteItem only — no transactions, streams or
 * PartiQL (DynamoDB Developer Guide, "Condition expressions"). Runs unchanged on dynalite.
 * Finished items may carry a TTL attribute; DynamoDB TTL deletes them on AWS, dynalite ignores it.
 *
 * Each table's requests live in their own file (dynamo-workflows.ts, dynamo-commands.ts,
 * dynamo-halt-markers.ts, dynamo-instances.ts, dynamo-tasks.ts); this class hands every `Store`
 * method to one of them.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { ReleaseState, TaskState } from "../core/model.js";
import type { Progress } from "../core/progress.js";
import { DynamoCommands } from "./dynamo-commands.js";
import { DynamoHaltMarkers } from "./dynamo-halt-markers.js";
import { DynamoInstances } from "./dynamo-instances.js";
import { DynamoTasks } from "./dynamo-tasks.js";
import { DynamoWorkerLeases } from "./dynamo-worker-leases.js";
import { DynamoWorkflows } from "./dynamo-workflows.js";
import type {
  CommandRecord,
  InstanceRecord,
  InstanceSummaryRecord,
  Page,
  StoredDefinition,
  TaskInstanceRecord,
  WorkflowHead,
} from "./records.js";
import type { HaltCommandType, ListInstancesQuery, Store, TaskAttemptKey } from "./store.js";
import type { WorkerLeaseRecord, WorkerLeaseRenewal } from "./worker-leases.js";

export { taskKey } from "./dynamo-tasks.js";
export { MAX_STORED_DEFINITION_BYTES } from "./dynamo-workflows.js";

export class DynamoStore implements Store {
  private readonly workflows: DynamoWorkflows;
  private readonly commands: DynamoCommands;
  private readonly haltMarkers: DynamoHaltMarkers;
  private readonly instances: DynamoInstances;
  private readonly tasks: DynamoTasks;
  private readonly workerLeases: DynamoWorkerLeases;

  constructor(
    db: DynamoDBDocumentClient,
    tables: {
      workflows: string;
      commands: string;
      instances: string;
      tasks: string;
    },
    opts: {
      /**
       * Days finished instances and task attempts are kept: their items get the TTL attribute
       * (lib/aws/resources.ts TTL_ATTRIBUTE) that DynamoDB TTL deletes on AWS. 0/absent: forever.
       */
      retentionDays?: number;
    } = {},
  ) {
    this.workflows = new DynamoWorkflows(db, tables.workflows);
    this.commands = new DynamoCommands(db, tables.commands);
    this.haltMarkers = new DynamoHaltMarkers(db, tables.commands);
    this.instances = new DynamoInstances(db, tables.instances, opts.retentionDays);
    this.tasks = new DynamoTasks(db, tables.tasks, opts.retentionDays);
    this.workerLeases = new DynamoWorkerLeases(db, tables.tasks);
  }

  // ---- worker leases (in the tasks table) ----

  renewWorkerLease(
    leaseId: string,
    worker: string,
    expiresAt: number,
    opts: { create: boolean; handledKills?: readonly string[] },
  ): Promise<WorkerLeaseRenewal | undefined> {
    return this.workerLeases.renewWorkerLease(leaseId, worker, expiresAt, opts);
  }

  requestWorkerKill(leaseId: string, ref: string, reason: string): Promise<boolean> {
    return this.workerLeases.requestWorkerKill(leaseId, ref, reason);
  }

  listExpiredWorkerLeases(now: number, limit: number): Promise<WorkerLeaseRecord[]> {
    return this.workerLeases.listExpiredWorkerLeases(now, limit);
  }

  markWorkerLeaseDead(leaseId: string, now: number): Promise<boolean> {
    return this.workerLeases.markWorkerLeaseDead(leaseId, now);
  }

  listWorkerLeaseTasks(leaseId: string, limit: number): Promise<TaskInstanceRecord[]> {
    return this.workerLeases.listWorkerLeaseTasks(leaseId, limit);
  }

  deleteWorkerLease(leaseId: string): Promise<void> {
    return this.workerLeases.deleteWorkerLease(leaseId);
  }

  // ---- workflows ----

  getWorkflowHead(name: string): Promise<WorkflowHead | undefined> {
    return this.workflows.getWorkflowHead(name);
  }

  getDefinition(name: string, version: number): Promise<StoredDefinition | undefined> {
    return this.workflows.getDefinition(name, version);
  }

  putDefinition(def: StoredDefinition): Promise<boolean> {
    return this.workflows.putDefinition(def);
  }

  putWorkflowHead(head: WorkflowHead, expectedLatest: number): Promise<boolean> {
    return this.workflows.putWorkflowHead(head, expectedLatest);
  }

  setReleaseState(
    name: string,
    state: ReleaseState,
    now: number,
  ): Promise<WorkflowHead | undefined> {
    return this.workflows.setReleaseState(name, state, now);
  }

  listWorkflows(limit: number, nextToken?: string): Promise<Page<WorkflowHead>> {
    return this.workflows.listWorkflows(limit, nextToken);
  }

  deleteWorkflow(name: string): Promise<void> {
    return this.workflows.deleteWorkflow(name);
  }

  // ---- commands ----

  putCommand(cmd: CommandRecord): Promise<boolean> {
    return this.commands.putCommand(cmd);
  }

  getCommand(commandId: string): Promise<CommandRecord | undefined> {
    return this.commands.getCommand(commandId);
  }

  claimCommand(
    commandId: string,
    now: number,
    staleMs: number,
  ): Promise<CommandRecord | undefined> {
    return this.commands.claimCommand(commandId, now, staleMs);
  }

  completeCommand(commandId: string, now: number): Promise<void> {
    return this.commands.completeCommand(commandId, now);
  }

  releaseCommandClaim(commandId: string, claimedAt: number): Promise<void> {
    return this.commands.releaseCommandClaim(commandId, claimedAt);
  }

  listPendingCommands(before: number, limit: number): Promise<CommandRecord[]> {
    return this.commands.listPendingCommands(before, limit);
  }

  markResignalled(commandId: string, resignals: number, at: number): Promise<void> {
    return this.commands.markResignalled(commandId, resignals, at);
  }

  markHalt(
    instanceId: string,
    type: HaltCommandType,
    commandId: string,
    now: number,
  ): Promise<void> {
    return this.haltMarkers.markHalt(instanceId, type, commandId, now);
  }

  pendingHalt(instanceId: string): Promise<CommandRecord | undefined> {
    return this.haltMarkers.pendingHalt(instanceId);
  }

  // ---- instances ----

  putInstance(inst: InstanceRecord): Promise<boolean> {
    return this.instances.putInstance(inst);
  }

  getInstance(instanceId: string): Promise<InstanceRecord | undefined> {
    return this.instances.getInstance(instanceId);
  }

  updateInstance(inst: InstanceRecord): Promise<boolean> {
    return this.instances.updateInstance(inst);
  }

  listInstances(q: ListInstancesQuery): Promise<Page<InstanceSummaryRecord>> {
    return this.instances.listInstances(q);
  }

  getInstancesProgress(instanceIds: readonly string[]): Promise<Map<string, Progress>> {
    return this.instances.getInstancesProgress(instanceIds);
  }

  getTaskStates(
    keys: readonly TaskAttemptKey[],
  ): Promise<(TaskAttemptKey & { state: TaskState })[]> {
    return this.tasks.getTaskStates(keys);
  }

  getTaskOutputs(
    keys: readonly TaskAttemptKey[],
  ): Promise<(TaskAttemptKey & { outputs: Record<string, string> })[]> {
    return this.tasks.getTaskOutputs(keys);
  }

  /** Queries the commands table's pending index (START_WORKFLOW commands of `workflow`). */
  hasPendingStart(workflow: string): Promise<boolean> {
    return this.commands.hasPendingStart(workflow);
  }

  hasUnfinishedInstances(workflow: string): Promise<boolean> {
    return this.instances.hasUnfinishedInstances(workflow);
  }

  // ---- task instances ----

  putTaskInstance(task: TaskInstanceRecord): Promise<boolean> {
    return this.tasks.putTaskInstance(task);
  }

  getTaskInstance(
    instanceId: string,
    code: string,
    attempt: number,
  ): Promise<TaskInstanceRecord | undefined> {
    return this.tasks.getTaskInstance(instanceId, code, attempt);
  }

  listTaskInstances(instanceId: string): Promise<TaskInstanceRecord[]> {
    return this.tasks.listTaskInstances(instanceId);
  }

  listAttempts(instanceId: string, code: string): Promise<TaskInstanceRecord[]> {
    return this.tasks.listAttempts(instanceId, code);
  }

  updateTask(
    key: { instanceId: string; code: string; attempt: number },
    from: readonly TaskState[],
    changes: Partial<TaskInstanceRecord>,
    opts?: {
      worker?: string;
      removeLease?: boolean;
      leaseExpiredBefore?: number;
      createWith?: TaskInstanceRecord;
    },
  ): Promise<TaskInstanceRecord | undefined> {
    return this.tasks.updateTask(key, from, changes, opts);
  }

  listExpiredLeases(now: number, limit: number): Promise<TaskInstanceRecord[]> {
    return this.tasks.listExpiredLeases(now, limit);
  }

  listOverdueTaskEvents(now: number, limit: number): Promise<TaskInstanceRecord[]> {
    return this.tasks.listOverdueTaskEvents(now, limit);
  }
}
