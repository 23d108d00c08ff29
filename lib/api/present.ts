/** Store records → the shapes of docs/api.md (ISO-8601 times, absent fields omitted). */

import type { DeliveryRecord } from "../alerts/deliveries.js";
import { type AlertRule, unconfiguredChannels } from "../core/alert-rules.js";
import { currentAttempts } from "../core/current-attempts.js";
import type { ErrorDetail } from "../core/errors.js";
import type { TaskState } from "../core/model.js";
import { type Progress, progressCounts } from "../core/progress.js";
import { runTypeOf } from "../core/run-type.js";
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

/**
 * The `warnings` of a PUT or POST that stored alert `rules`: each channel they name that the
 * deployment does not configure (`alertChannels`); none when the API does not know its channels.
 */
export function channelWarnings(
  channels: Readonly<Record<string, string>> | undefined,
  rules: readonly AlertRule[] | undefined,
): ErrorDetail[] {
  return channels ? unconfiguredChannels(rules, Object.keys(channels)) : [];
}

export function workflowSummary(h: WorkflowHead) {
  return compact({
    name: h.name,
    version: h.latestVersion,
    releaseState: h.releaseState,
    displayName: h.displayName,
    description: h.description,
  });
}

/** A Grid cell of the instance list (`include=tasks`): the current attempt of one task. */
export interface TaskCell {
  code: string;
  state: TaskState;
  attempt: number;
}

/**
 * An instance as lists show it (docs/api.md InstanceSummary), plus `scheduleTime` (nominal time of
 * a scheduled, backfilled or sub-workflow run) and `runType` (lib/core/run-type.ts). An item
 * written before `runType` was stored has none in a list (the index holds only the summary);
 * given the whole record, it is derived from the record's origin instead.
 * @param list what only the list adds (lib/api/instance-list.ts): the instance's `progress`
 *   (shown as counts) and, with `include=tasks`, its task cells.
 */
export function instanceSummary(
  i: InstanceSummaryRecord &
    Partial<
      Pick<InstanceRecord, "commandType" | "scheduleId" | "backfillId" | "triggerId" | "parent">
    >,
  list?: { progress?: Progress | undefined; tasks?: readonly TaskCell[] | undefined },
) {
  const whole = i.commandType !== undefined;
  return compact({
    instanceId: i.instanceId,
    workflow: i.workflow,
    version: i.version,
    state: i.state,
    priority: i.priority,
    createdAt: iso(i.createdAt),
    startedAt: iso(i.startedAt),
    endedAt: iso(i.endedAt),
    scheduleTime: iso(i.scheduleTime),
    runType: i.runType ?? (whole ? runTypeOf({ ...i, type: i.commandType }) : undefined),
    progress: list?.progress ? progressCounts(list.progress) : undefined,
    tasks: list?.tasks ? [...list.tasks] : undefined,
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

/**
 * The latest attempt of every task: the stand-in for {@link currentAttempts} when the
 * definition (its task order) can no longer be read.
 */
function latestAttempts(tasks: readonly TaskInstanceRecord[]): TaskInstanceRecord[] {
  const latest = new Map<string, TaskInstanceRecord>();
  for (const t of tasks) {
    const cur = latest.get(t.code);
    if (!cur || cur.attempt < t.attempt) latest.set(t.code, t);
  }
  return [...latest.values()];
}

/**
 * The full instance: summary, run settings, progress counts, and the current attempt of every
 * task that started in the current round (lib/core/current-attempts.ts); earlier rounds' attempts
 * are left to the attempts endpoint.
 * @param codes the task codes of the instance's definition version, by index; when absent (the
 *   version was deleted), the latest attempt of every task is shown instead.
 * @param alerts its alert deliveries (docs/alerts.md), shown when there are any.
 */
export function instanceDetail(
  i: InstanceRecord,
  tasks: TaskInstanceRecord[],
  link?: LogLink,
  codes?: readonly string[],
  withAttempts = false,
  alerts: readonly DeliveryRecord[] = [],
) {
  const current = codes ? currentAttempts(i.progress, codes, tasks) : latestAttempts(tasks);
  return compact({
    ...instanceSummary(i),
    commandType: i.commandType,
    params: i.params,
    scheduleTime: iso(i.scheduleTime),
    // The zone of its time parameters (instances from before zones were recorded used UTC).
    timezone: i.timezone ?? "UTC",
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
    tasks: current
      .sort((a, b) => a.submittedAt - b.submittedAt || (a.code < b.code ? -1 : 1))
      .map((t) => taskInstance(t, link)),
    ...(withAttempts ? allAttempts(tasks, codes, link) : {}),
    alerts: alerts.length > 0 ? alerts.map(alertDelivery) : undefined,
  });
}

/** Most attempts `include=attempts` lists (the newest are kept; `attemptsOmitted` counts the rest). */
export const MAX_DETAIL_ATTEMPTS = 5_000;

/** `include=attempts`: every attempt, in task order (the definition's, else by code) then attempt number, capped. */
function allAttempts(
  tasks: readonly TaskInstanceRecord[],
  codes: readonly string[] | undefined,
  link: LogLink | undefined,
) {
  const newest = [...tasks].sort((a, b) => b.submittedAt - a.submittedAt);
  const kept = newest.slice(0, MAX_DETAIL_ATTEMPTS);
  const order = new Map((codes ?? []).map((c, i) => [c, i]));
  const rank = (code: string) => order.get(code) ?? Number.MAX_SAFE_INTEGER;
  kept.sort(
    (a, b) =>
      rank(a.code) - rank(b.code) ||
      (a.code < b.code ? -1 : a.code > b.code ? 1 : 0) ||
      a.attempt - b.attempt,
  );
  const omitted = newest.length - kept.length;
  return {
    attempts: kept.map((t) => taskInstance(t, link)),
    ...(omitted > 0 ? { attemptsOmitted: omitted } : {}),
  };
}

/** One alert delivery as `GET /v1/instances/{id}` shows it (never the channel's URL: it has none). */
export function alertDelivery(d: DeliveryRecord) {
  return compact({
    deliveryId: d.deliveryId,
    rule: d.rule,
    channel: d.channel,
    event: d.event,
    taskCode: d.taskCode,
    attempt: d.attempt,
    status: d.status,
    attempts: d.attempts,
    lastError: d.lastError,
    nextAttemptAt: iso(d.status === "PENDING" ? d.nextAttemptAt : undefined),
    sentAt: iso(d.sentAt),
    createdAt: iso(d.createdAt),
  });
}
