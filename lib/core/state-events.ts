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
import type { TriggerCause } from "./trigger-cause.js";

/** `source` of every Shoal event (rules match on it). */
export const EVENT_SOURCE = "shoal";

/** `detail-type` of each kind of Shoal event (EventBridge convention: "<Service> <Thing> State Change"). */
export const DETAIL_TYPES = {
  instance: "Shoal Workflow Instance State Change",
  task: "Shoal Task Instance State Change",
  misfire: "Shoal Schedule Misfire",
  /** A trigger started nothing because the run would have been too deep in a chain (docs/events.md). */
  triggerLoop: "Shoal Trigger Loop Stopped",
  /** A trigger refused runs over its rate (at most one event per trigger a minute). */
  triggerRate: "Shoal Trigger Rate Limited",
} as const;

/**
 * Shoal's own events that triggers see (on AWS through the bus's trigger rule, in standalone
 * through the in-process bus): instance changes and misfires. Task state-change events are left
 * out: one per finished task would invoke the trigger handler for every task. So are the trigger
 * loop and rate events: a trigger reacting to its own refusals would be a loop of its own.
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
  detail:
    | InstanceStateDetail
    | TaskStateDetail
    | MisfireDetail
    | TriggerLoopStoppedDetail
    | TriggerRateLimitedDetail;
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
  /**
   * A run a trigger started (or a sub-workflow of one): its cause, so that a run another trigger
   * starts from this event is one deeper (lib/core/trigger-events.ts).
   */
  trigger?: TriggerCause;
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
  triggerCause?: TriggerCause;
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
    trigger: inst.triggerCause,
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

/** Why a trigger started nothing to cut a loop off. */
export type LoopStopReason = "DEPTH" | "RUNS_PER_EVENT";

/** Detail of "Shoal Trigger Loop Stopped" (schema version 1). */
export interface TriggerLoopStoppedDetail {
  schemaVersion: 1;
  triggerId: string;
  workflow: string;
  /** `DEPTH`: the run would be deeper than the limit; `RUNS_PER_EVENT`: the originating event's budget is spent. */
  reason: LoopStopReason;
  /** The limit that was reached (depth, or runs per originating event). */
  limit: number;
  /** The depth the run would have had. */
  depth: number;
  /** The event that would have started the run, and the first event of its chain. */
  eventId: string;
  originEventId: string;
  /** The instances whose events led here, oldest first. */
  chain: string[];
}

/** Detail of "Shoal Trigger Rate Limited" (schema version 1). */
export interface TriggerRateLimitedDetail {
  schemaVersion: 1;
  triggerId: string;
  workflow: string;
  /** Runs a minute the trigger may start. */
  limit: number;
  /** The minute the refusal fell in, ISO-8601. */
  windowStart: string;
}

/** "Shoal Trigger Loop Stopped" at `now` (ms). */
export function triggerLoopStoppedEvent(
  t: { id: string; workflow: string },
  stop: { reason: LoopStopReason; limit: number; cause: TriggerCause },
  now: number,
): StateChangeEvent {
  return {
    source: EVENT_SOURCE,
    detailType: DETAIL_TYPES.triggerLoop,
    time: now,
    detail: {
      schemaVersion: SCHEMA_VERSION,
      triggerId: t.id,
      workflow: t.workflow,
      reason: stop.reason,
      limit: stop.limit,
      depth: stop.cause.depth,
      eventId: stop.cause.eventId,
      originEventId: stop.cause.originEventId,
      chain: stop.cause.chain,
    },
  };
}

/** "Shoal Trigger Rate Limited" for the window starting at `windowStart`, at `now` (ms). */
export function triggerRateLimitedEvent(
  t: { id: string; workflow: string },
  limit: number,
  windowStart: number,
  now: number,
): StateChangeEvent {
  return {
    source: EVENT_SOURCE,
    detailType: DETAIL_TYPES.triggerRate,
    time: now,
    detail: {
      schemaVersion: SCHEMA_VERSION,
      triggerId: t.id,
      workflow: t.workflow,
      limit,
      windowStart: new Date(windowStart).toISOString(),
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
