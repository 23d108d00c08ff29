/** Store records for tests that write or read the store directly. */
import type { InstanceRecord, TaskInstanceRecord } from "../../lib/store/records.js";
import type { TaskAttemptKey } from "../../lib/store/store.js";

/**
 * A RUNNING instance of workflow `w` v1 with one active task, started by hand; `fields`
 * override any of it.
 */
export function instanceRecord(
  instanceId: string,
  fields: Partial<InstanceRecord> = {},
): InstanceRecord {
  return {
    instanceId,
    workflow: "w",
    version: 1,
    state: "RUNNING",
    priority: "MEDIUM",
    failureStrategy: "END",
    commandType: "START_WORKFLOW",
    params: {},
    dryRun: false,
    taskScope: "DOWNSTREAM",
    createdAt: 0,
    progress: { slots: "D", attempts: {} },
    rev: 1,
    ...fields,
  };
}

/** A DISPATCHED SHELL attempt of workflow `w` (worker group `default`); `fields` override any of it. */
export function taskRecord(
  key: TaskAttemptKey,
  fields: Partial<TaskInstanceRecord> = {},
): TaskInstanceRecord {
  return {
    ...key,
    workflow: "w",
    type: "SHELL",
    state: "DISPATCHED",
    priority: "MEDIUM",
    workerGroup: "default",
    submittedAt: 1,
    ...fields,
  };
}
