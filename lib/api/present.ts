/** Store records → API-v1.md shapes (ISO-8601 times, absent fields omitted). */

import { progressCounts } from "../core/progress.js";
import type {
  InstanceRecord,
  InstanceSummaryRecord,
  TaskInstanceRecord,
  WorkflowHead,
} from "../store/records.js";

export const iso = (ms: number | undefined): string | undefined =>
  ms === undefined ? undefined : new Date(ms).toISOString();

function compact<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

export function workflowSummary(h: WorkflowHead) {
  return compact({
    name: h.name,
    version: h.latestVersion,
    releaseState: h.releaseState,
    description: h.description,
  });
}

export function instanceSummary(i: InstanceSummaryRecord) {
  return compact({
    instanceId: i.instanceId,
    workflow: i.workflow,
    version: i.version,
    state: i.state,
    priority: i.priority,
    createdAt: iso(i.createdAt),
    startedAt: iso(i.startedAt),
    endedAt: iso(i.endedAt),
  });
}

/** The `logUrl` of a task instance, where the logs have one (CloudWatch on AWS). */
export type LogLink = (t: TaskInstanceRecord) => string | undefined;

export function taskInstance(t: TaskInstanceRecord, link?: LogLink) {
  return compact({
    code: t.code,
    type: t.type,
    state: t.state,
    attempt: t.attempt,
    priority: t.priority,
    workerGroup: t.workerGroup,
    submittedAt: iso(t.submittedAt),
    startedAt: iso(t.startedAt),
    endedAt: iso(t.endedAt),
    worker: t.worker,
    exitCode: t.exitCode,
    error: t.error,
    warning: t.warning,
    taskGroup: t.taskGroup,
    outputs: t.outputs,
    subInstanceId: t.subInstanceId,
    branch: t.branch,
    logUrl: link?.(t),
  });
}

/** The full instance: summary, run settings, progress counts, latest attempt of every task. */
export function instanceDetail(i: InstanceRecord, tasks: TaskInstanceRecord[], link?: LogLink) {
  const latest = new Map<string, TaskInstanceRecord>();
  for (const t of tasks) {
    const cur = latest.get(t.code);
    if (!cur || cur.attempt < t.attempt) latest.set(t.code, t);
  }
  return compact({
    ...instanceSummary(i),
    commandType: i.commandType,
    params: i.params,
    scheduleTime: iso(i.scheduleTime),
    failureStrategy: i.failureStrategy,
    dryRun: i.dryRun,
    startTasks: i.startTasks,
    taskScope: i.startTasks ? i.taskScope : undefined,
    progress: progressCounts(i.progress),
    runs: i.runs,
    workerGroup: i.workerGroup,
    scheduleId: i.scheduleId,
    backfillId: i.backfillId,
    triggerId: i.triggerId,
    error: i.error,
    parent: i.parent,
    deadlineAt: iso(i.deadlineAt),
    tasks: [...latest.values()]
      .sort((a, b) => a.submittedAt - b.submittedAt || (a.code < b.code ? -1 : 1))
      .map((t) => taskInstance(t, link)),
  });
}
