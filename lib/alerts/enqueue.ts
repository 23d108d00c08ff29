/**
 * Turns Shoal's state-change events (lib/core/state-events.ts) into alert deliveries: the
 * instance ends, failed task attempts with no retry left and schedule misfires that a rule of the
 * workflow definition or of the schedule is `on`. Each becomes a delivery record and a due job
 * (deliveries.ts); a repeated event finds its deliveries there and adds nothing.
 *
 * It consumes the same events triggers do (the in-process bus in standalone, an EventBridge rule
 * on AWS), after the state they report is written: nothing here is in a run's path, and a failure
 * here is logged, never passed back to the engine.
 */
import {
  type AlertEvent,
  type AlertMatch,
  type AlertRule,
  deliveryId,
  instanceEndEvents,
  matchRules,
  taskEndEvents,
} from "../core/alert-rules.js";
import {
  DETAIL_TYPES,
  type InstanceStateDetail,
  type MisfireDetail,
  type TaskStateDetail,
} from "../core/state-events.js";
import type { DefinitionCache } from "../engine/definitions.js";
import type { ScheduleStore } from "../store/schedules.js";
import type { Store } from "../store/store.js";
import type { DeliveryRecord, DeliveryStore } from "./deliveries.js";

export interface EnqueueDeps {
  store: Store;
  definitions: DefinitionCache;
  schedules: ScheduleStore;
  deliveries: DeliveryStore;
  now: () => number;
}

/** An event as a bus delivers it (EventBridge's envelope: `detail-type`, `detail`, `time`). */
export type BusEventLike = Record<string, unknown>;

/** The schedule's rules (none when it is gone or has none). */
async function scheduleRules(
  deps: EnqueueDeps,
  scheduleId: string | undefined,
): Promise<AlertRule[] | undefined> {
  if (!scheduleId) return undefined;
  const s = await deps.schedules.getSchedule(scheduleId);
  return s?.alerts;
}

async function workflowRules(
  deps: EnqueueDeps,
  workflow: string,
  version?: number,
): Promise<AlertRule[] | undefined> {
  let v = version;
  if (v === undefined) {
    const head = await deps.store.getWorkflowHead(workflow);
    if (!head || head.deleted) return undefined;
    v = head.latestVersion;
  }
  return (await deps.definitions.get(workflow, v))?.definition.alerts;
}

/**
 * The matches of a workflow's and a schedule's rules for `events`, each channel and event once
 * (a channel both name gets one alert). `first` says whose rules count first (their rule names
 * the delivery): the workflow's for instance and task ends, the schedule's for a misfire.
 */
async function matchBoth(
  deps: EnqueueDeps,
  events: readonly AlertEvent[],
  w: { workflow: string; version?: number },
  scheduleId: string | undefined,
  first: "workflow" | "schedule" = "workflow",
): Promise<AlertMatch[]> {
  const seen = new Set<string>();
  const fromWorkflow = async () =>
    matchRules("workflow", await workflowRules(deps, w.workflow, w.version), events, seen);
  const fromSchedule = async () =>
    matchRules("schedule", await scheduleRules(deps, scheduleId), events, seen);
  return first === "workflow"
    ? [...(await fromWorkflow()), ...(await fromSchedule())]
    : [...(await fromSchedule()), ...(await fromWorkflow())];
}

/**
 * The deliveries one event asks for, written (record + job each).
 * @returns the deliveries created now (none for an event no rule is on, or a repeated one).
 */
export async function enqueueAlerts(
  deps: EnqueueDeps,
  event: BusEventLike,
): Promise<DeliveryRecord[]> {
  const type = event["detail-type"];
  const detail = event.detail as Record<string, unknown> | undefined;
  if (event.source !== "shoal" || !detail) return [];
  const occurredAt = Date.parse(String(event.time ?? "")) || deps.now();
  if (type === DETAIL_TYPES.instance)
    return instanceEnd(deps, detail as unknown as InstanceStateDetail, occurredAt);
  if (type === DETAIL_TYPES.task)
    return taskEnd(deps, detail as unknown as TaskStateDetail, occurredAt);
  if (type === DETAIL_TYPES.misfire)
    return misfire(deps, detail as unknown as MisfireDetail, occurredAt);
  return [];
}

async function instanceEnd(
  deps: EnqueueDeps,
  d: InstanceStateDetail,
  occurredAt: number,
): Promise<DeliveryRecord[]> {
  // Cheap checks first: most events are not an end.
  if (d.parentInstanceId || !["SUCCESS", "FAILURE", "STOPPED"].includes(d.state)) return [];
  const inst = d.state === "FAILURE" ? await deps.store.getInstance(d.instanceId) : undefined;
  const events = instanceEndEvents({
    state: d.state,
    timedOut: inst?.timedOutAt !== undefined,
    subWorkflow: false,
  });
  const matches = await matchBoth(
    deps,
    events,
    { workflow: d.workflow, version: d.workflowVersion },
    d.scheduleId,
  );
  const run = d.runs ?? 1;
  return create(deps, matches, `${d.instanceId}.${run}`, occurredAt, {
    subject: d.instanceId,
    workflow: d.workflow,
    instanceId: d.instanceId,
    run,
    ...(d.scheduleId ? { scheduleId: d.scheduleId } : {}),
  });
}

async function taskEnd(
  deps: EnqueueDeps,
  d: TaskStateDetail,
  occurredAt: number,
): Promise<DeliveryRecord[]> {
  const events = taskEndEvents({ state: d.state, ...(d.willRetry ? { willRetry: true } : {}) });
  if (events.length === 0) return [];
  const inst = await deps.store.getInstance(d.instanceId);
  const matches = await matchBoth(
    deps,
    events,
    { workflow: d.workflow, version: d.workflowVersion },
    inst?.scheduleId,
  );
  return create(deps, matches, `${d.instanceId}.${d.taskCode}.${d.attempt}`, occurredAt, {
    subject: d.instanceId,
    workflow: d.workflow,
    instanceId: d.instanceId,
    run: inst?.runs ?? 1,
    ...(inst?.scheduleId ? { scheduleId: inst.scheduleId } : {}),
    taskCode: d.taskCode,
    attempt: d.attempt,
  });
}

async function misfire(
  deps: EnqueueDeps,
  d: MisfireDetail,
  occurredAt: number,
): Promise<DeliveryRecord[]> {
  const events = ["SCHEDULE_MISFIRE"] as const;
  const matches = await matchBoth(deps, events, { workflow: d.workflow }, d.scheduleId, "schedule");
  const nominal = Date.parse(d.nominalTime);
  return create(deps, matches, `${d.scheduleId}.${nominal}`, occurredAt, {
    subject: `schedule:${d.scheduleId}`,
    workflow: d.workflow,
    scheduleId: d.scheduleId,
    nominalTime: nominal,
    misfireOutcome: d.outcome,
  });
}

type Common = Omit<
  DeliveryRecord,
  | "deliveryId"
  | "rule"
  | "channel"
  | "event"
  | "occurredAt"
  | "status"
  | "attempts"
  | "createdAt"
  | "rev"
>;

async function create(
  deps: EnqueueDeps,
  matches: readonly AlertMatch[],
  occurrence: string,
  occurredAt: number,
  common: Common,
): Promise<DeliveryRecord[]> {
  const created: DeliveryRecord[] = [];
  const now = deps.now();
  for (const m of matches) {
    const rec: DeliveryRecord = {
      ...common,
      deliveryId: deliveryId(occurrence, m),
      rule: m.rule,
      channel: m.channel,
      event: m.event,
      occurredAt,
      status: "PENDING",
      attempts: 0,
      createdAt: now,
      rev: 1,
    };
    if (await deps.deliveries.create(rec)) created.push(rec);
  }
  return created;
}
