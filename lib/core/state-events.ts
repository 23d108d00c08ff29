/**
 * State-change events: what Shoal tells the outside world when a workflow instance or a task
 * instance changes state, or a schedule's fire did not run. The same events go to the
 * EventBridge bus on AWS and to the in-process bus of `shoal standalone` (docs/events.md).
 *
 * The detail is a versioned schema: `schemaVersion` 1. Fields are only ever added within a
 * version; a rename or removal makes version 2. Times are ISO-8601 UTC strings.
 *
 * Pure: time is an argument.
 */
import type { InstanceState, TaskState, TaskType } from "./model.js";

/** `source` of every Shoal event (rules match on it). */
export const EVENT_SOURCE = "shoal";

/** `detail-type` of each kind of Shoal event (EventBridge convention: "<Service> <Thing> State Change"). */
export const DETAIL_TYPES = {
  instance: "Shoal Workflow Instance State Change",
  task: "Shoal Task Instance State Change",
  misfire: "Shoal Schedule Misfire",
} as const;

/**
 * Shoal's own events that triggers see (on AWS through the bus's trigger rule, in standalone
 * through the in-process bus): instance changes and misfires. Task state-change events are left
 * out: one per finished task would invoke the trigger handler for every task.
 */
export const TRIGGER_DETAIL_TYPES: readonly string[] = [
  DETAIL_TYPES.instance,
  DETAIL_TYPES.misfire,
];

/** True when triggers see `event` (every event not from Shoal, and {@link TRIGGER_DETAIL_TYPES}). */
export function reachesTriggers(event: Record<string, unknown>): boolean {
  return (
    event.source !== EVENT_SOURCE || TRIGGER_DETAIL_TYPES.includes(String(event["detail-type"]))
  );
}

/** Version of the detail schemas below. */
export const SCHEMA_VERSION = 1;

/** One event to publish: the PutEvents entry fields Shoal sets. */
export interface StateChangeEvent {
  source: typeof EVENT_SOURCE;
  detailType: (typeof DETAIL_TYPES)[keyof typeof DETAIL_TYPES];
  /** When the change happened, epoch ms (the event's `time`). */
  time: number;
  detail: InstanceStateDetail | TaskStateDetail | MisfireDetail;
}

/** Detail of "Shoal Workflow Instance State Change" (schema version 1). */
export interface InstanceStateDetail {
  schemaVersion: 1;
  instanceId: string;
  workflow: string;
  workflowVersion: number;
  state: InstanceState;
  previousState: InstanceState;
  /** START_WORKFLOW, RERUN, RECOVER_FAILED… (DolphinScheduler's command types). */
  commandType: string;
  priority: string;
  /** 1 for the first run, +1 per rerun or recover-failed. */
  runs: number;
  startTime?: string;
  endTime?: string;
  /** The nominal time of a scheduled or backfilled run. */
  scheduleTime?: string;
  scheduleId?: string;
  backfillId?: string;
  triggerId?: string;
  /** A sub-workflow instance: the instance whose task started it. */
  parentInstanceId?: string;
  /** Why it failed, when the reason is the workflow's own (timeout), not a task's. */
  error?: string;
  /** Task codes that ended FAILURE or KILLED in this run (final states only). */
  failedTasks?: string[];
}

/** Detail of "Shoal Task Instance State Change" (schema version 1). */
export interface TaskStateDetail {
  schemaVersion: 1;
  instanceId: string;
  workflow: string;
  workflowVersion: number;
  taskCode: string;
  taskType: TaskType;
  /** 1-based attempt number (one task instance per attempt). */
  attempt: number;
  state: TaskState;
  /** FAILURE / NEED_FAULT_TOLERANCE of an attempt after which the task runs again (retry, failover). */
  willRetry?: true;
}

/** What happened to a fire that did not start a run. */
export type MisfireOutcome = "SKIPPED_MISFIRE" | "DISCARDED_OVERLAP";

/** Detail of "Shoal Schedule Misfire" (schema version 1). */
export interface MisfireDetail {
  schemaVersion: 1;
  scheduleId: string;
  workflow: string;
  /** The fire's nominal time. */
  nominalTime: string;
  outcome: MisfireOutcome;
  /** How late the sweeper decided, ms. */
  latenessMs: number;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The instance fields an instance event reads (a subset of the stored record). */
export interface InstanceChangeSource {
  instanceId: string;
  workflow: string;
  version: number;
  state: InstanceState;
  commandType: string;
  priority: string;
  runs?: number;
  startedAt?: number;
  endedAt?: number;
  scheduleTime?: number;
  scheduleId?: string;
  backfillId?: string;
  triggerId?: string;
  parent?: { instanceId: string };
  error?: string;
}

/** "Shoal Workflow Instance State Change" for `inst` having moved from `previous`, at `now` (ms). */
export function instanceStateChange(
  inst: InstanceChangeSource,
  previous: InstanceState,
  now: number,
  failedTasks: string[] = [],
): StateChangeEvent {
  const detail: InstanceStateDetail = {
    schemaVersion: SCHEMA_VERSION,
    instanceId: inst.instanceId,
    workflow: inst.workflow,
    workflowVersion: inst.version,
    state: inst.state,
    previousState: previous,
    commandType: inst.commandType,
    priority: inst.priority,
    runs: inst.runs ?? 1,
  };
  const optional: Partial<InstanceStateDetail> = {
    startTime: iso(inst.startedAt),
    endTime: iso(inst.endedAt),
    scheduleTime: iso(inst.scheduleTime),
    scheduleId: inst.scheduleId,
    backfillId: inst.backfillId,
    triggerId: inst.triggerId,
    parentInstanceId: inst.parent?.instanceId,
    error: inst.error,
    failedTasks: failedTasks.length > 0 ? failedTasks : undefined,
  };
  for (const [k, v] of Object.entries(optional)) {
    if (v !== undefined) (detail as unknown as Record<string, unknown>)[k] = v;
  }
  return { source: EVENT_SOURCE, detailType: DETAIL_TYPES.instance, time: now, detail };
}

/** "Shoal Task Instance State Change" for one attempt of one task reaching `state`, at `now` (ms). */
export function taskStateChange(
  inst: { instanceId: string; workflow: string; version: number },
  task: { code: string; type: TaskType; attempt: number; state: TaskState },
  now: number,
): StateChangeEvent {
  return {
    source: EVENT_SOURCE,
    detailType: DETAIL_TYPES.task,
    time: now,
    detail: {
      schemaVersion: SCHEMA_VERSION,
      instanceId: inst.instanceId,
      workflow: inst.workflow,
      workflowVersion: inst.version,
      taskCode: task.code,
      taskType: task.type,
      attempt: task.attempt,
      state: task.state,
    },
  };
}

/** "Shoal Schedule Misfire": a nominal time that started no run, decided at `now` (ms). */
export function scheduleMisfireEvent(
  fire: { scheduleId: string; workflow: string; nominalTime: number; outcome: MisfireOutcome },
  now: number,
): StateChangeEvent {
  return {
    source: EVENT_SOURCE,
    detailType: DETAIL_TYPES.misfire,
    time: now,
    detail: {
      schemaVersion: SCHEMA_VERSION,
      scheduleId: fire.scheduleId,
      workflow: fire.workflow,
      nominalTime: new Date(fire.nominalTime).toISOString(),
      outcome: fire.outcome,
      latenessMs: Math.max(0, now - fire.nominalTime),
    },
  };
}

/**
 * The PutEvents entry of an event (EventBridge's request shape: `Time` ISO-8601, `Detail` a JSON
 * string). `eventBusName` is left to the publisher.
 */
export function toPutEventsEntry(e: StateChangeEvent): {
  Source: string;
  DetailType: string;
  Detail: string;
  Time: string;
} {
  return {
    Source: e.source,
    DetailType: e.detailType,
    Detail: JSON.stringify(e.detail),
    Time: new Date(e.time).toISOString(),
  };
}
