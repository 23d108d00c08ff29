/**
 * Schedule endpoints: `POST/GET /v1/schedules`, `GET/PUT/DELETE /v1/schedules/{id}`,
 * `POST /v1/schedules/{id}/online|offline`, `GET /v1/schedules/{id}/preview` and
 * `GET /v1/schedules/{id}/fires` (the fire ledger). Timing follows cron-parser (5 or 6 fields),
 * `rate` and `at`; misfire and overlap policies follow Quartz and DolphinScheduler
 * (docs/scheduling.md).
 */
import { randomUUID } from "node:crypto";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { z } from "zod";
import { alertRulesSchema } from "../core/alert-rules.js";
import { conflict, notFound, validationError } from "../core/errors.js";
import { FAILURE_STRATEGIES } from "../core/model.js";
import { checkTiming } from "../core/schedule-check.js";
import { nextFireTimes } from "../core/schedule-time.js";
import { name, priority, WORKER_GROUP_PATTERN } from "../core/schema-parts.js";
import { DEFAULT_ZONE } from "../core/time-params.js";
import { parseWithSchema, runParams } from "../core/validate.js";
import type { FireRecord } from "../store/fires.js";
import type { WorkflowHead } from "../store/records.js";
import type { ScheduleRecord } from "../store/schedules.js";
import { shardOf, timingOf } from "../store/schedules.js";
import type { ApiDeps } from "./deps.js";
import {
  asObject,
  json,
  onlyFields,
  parseBody,
  parseLimit,
  parsePositiveInt,
  query,
  RESOURCE_ID,
} from "./http.js";
import { channelWarnings, iso } from "./present.js";

const isoInstant = z.iso.datetime({ offset: true, error: "must be an ISO-8601 instant" });

/** Schema of the body of `POST /v1/schedules` and `PUT /v1/schedules/{id}`. */
export const scheduleSchema = z.strictObject({
  workflow: name,
  cron: z.string().max(256, { error: "must be at most 256 characters" }).optional(),
  rate: z.string().max(64, { error: "must be at most 64 characters" }).optional(),
  at: isoInstant.optional(),
  // Absent: the workflow's `timezone` (latest version), else UTC, stored explicitly (toRecord).
  timezone: z.string().max(64).optional(),
  startTime: isoInstant.optional(),
  endTime: isoInstant.optional(),
  params: runParams.default({}),
  priority: priority.optional(),
  failureStrategy: z.enum(FAILURE_STRATEGIES, { error: "must be END or CONTINUE" }).optional(),
  workerGroup: z
    .string()
    .regex(WORKER_GROUP_PATTERN, { error: "must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$" })
    .optional(),
  misfirePolicy: z
    .enum(["SKIP", "FIRE_ONCE", "FIRE_ALL"], { error: "must be SKIP, FIRE_ONCE or FIRE_ALL" })
    .default("FIRE_ONCE"),
  misfireThresholdSeconds: z
    .number()
    .int({ error: "must be a whole number of seconds" })
    .min(0, { error: "must be >= 0" })
    .max(86_400, { error: "must be <= 86400" })
    .default(60),
  maxCatchup: z
    .number()
    .int({ error: "must be a whole number" })
    .min(1, { error: "must be >= 1" })
    .max(1_000, { error: "must be <= 1000" })
    .default(100),
  overlapPolicy: z
    .enum(["PARALLEL", "SERIAL_WAIT", "SERIAL_DISCARD", "SERIAL_PRIORITY"], {
      error: "must be PARALLEL, SERIAL_WAIT, SERIAL_DISCARD or SERIAL_PRIORITY",
    })
    .default("PARALLEL"),
  state: z.enum(["ONLINE", "OFFLINE"], { error: "must be ONLINE or OFFLINE" }).default("ONLINE"),
  // Alert rules of this schedule's runs and misfires (docs/alerts.md), besides the workflow's.
  alerts: alertRulesSchema.optional(),
});
export type ScheduleBody = z.infer<typeof scheduleSchema>;

/**
 * The zone of a schedule whose body gives none: the `timezone` of the workflow's latest
 * version, else UTC. Stored with the schedule, so that its cron and its runs' time parameters
 * (lib/engine/schedule-runs.ts passes `s.timezone` to every run) are read in one zone, and a later version
 * of the workflow with another zone does not move a schedule that exists already.
 */
async function defaultZone(deps: ApiDeps, head: WorkflowHead | undefined): Promise<string> {
  if (!head || head.deleted) return DEFAULT_ZONE;
  const latest = await deps.store.getDefinition(head.name, head.latestVersion);
  return latest?.definition.timezone ?? DEFAULT_ZONE;
}

/** The body as a record (timing checked), keeping what a PUT must not change. */
async function toRecord(
  deps: ApiDeps,
  body: unknown,
  base: Pick<ScheduleRecord, "id" | "createdAt" | "rev"> &
    Partial<Pick<ScheduleRecord, "queued" | "activeInstanceId">>,
): Promise<ScheduleRecord> {
  const b = parseWithSchema(scheduleSchema, asObject(body));
  const ms = (v: string | undefined) => (v === undefined ? undefined : Date.parse(v));
  const now = deps.now();
  const head = await deps.store.getWorkflowHead(b.workflow);
  const rec: ScheduleRecord = {
    id: base.id,
    workflow: b.workflow,
    ...(b.cron !== undefined ? { cron: b.cron } : {}),
    ...(b.rate !== undefined ? { rate: b.rate } : {}),
    ...(b.at !== undefined ? { at: ms(b.at) as number } : {}),
    timezone: b.timezone ?? (await defaultZone(deps, head)),
    ...(b.startTime !== undefined ? { startTime: ms(b.startTime) as number } : {}),
    ...(b.endTime !== undefined ? { endTime: ms(b.endTime) as number } : {}),
    params: b.params,
    ...(b.priority ? { priority: b.priority } : {}),
    ...(b.failureStrategy ? { failureStrategy: b.failureStrategy } : {}),
    ...(b.workerGroup ? { workerGroup: b.workerGroup } : {}),
    misfirePolicy: b.misfirePolicy,
    misfireThresholdSeconds: b.misfireThresholdSeconds,
    maxCatchup: b.maxCatchup,
    overlapPolicy: b.overlapPolicy,
    state: b.state,
    ...(b.alerts?.length ? { alerts: b.alerts } : {}),
    shard: shardOf(base.id),
    ...(base.queued ? { queued: base.queued } : {}),
    ...(base.activeInstanceId ? { activeInstanceId: base.activeInstanceId } : {}),
    createdAt: base.createdAt,
    updatedAt: now,
    rev: base.rev,
  };
  const details = checkTiming(timingOf(rec));
  if (details.length > 0) throw validationError(details);
  if (!head || head.deleted) {
    throw validationError([
      { path: "workflow", message: `workflow '${rec.workflow}' does not exist` },
    ]);
  }
  return withNextFire(rec, now);
}

/** Sets `nextFireTime` to the first nominal time after `now` (none while OFFLINE or exhausted). */
function withNextFire(rec: ScheduleRecord, now: number): ScheduleRecord {
  const out = { ...rec };
  delete out.nextFireTime;
  if (rec.state !== "ONLINE") return out;
  const [next] = nextFireTimes(timingOf(rec), now, 1);
  if (next !== undefined) out.nextFireTime = next;
  return out;
}

/** A schedule as the API shows it (ISO-8601 times). */
export function scheduleView(s: ScheduleRecord) {
  return {
    id: s.id,
    workflow: s.workflow,
    ...(s.cron !== undefined ? { cron: s.cron } : {}),
    ...(s.rate !== undefined ? { rate: s.rate } : {}),
    ...(s.at !== undefined ? { at: iso(s.at) } : {}),
    timezone: s.timezone,
    ...(s.startTime !== undefined ? { startTime: iso(s.startTime) } : {}),
    ...(s.endTime !== undefined ? { endTime: iso(s.endTime) } : {}),
    params: s.params,
    ...(s.priority ? { priority: s.priority } : {}),
    ...(s.failureStrategy ? { failureStrategy: s.failureStrategy } : {}),
    ...(s.workerGroup ? { workerGroup: s.workerGroup } : {}),
    misfirePolicy: s.misfirePolicy,
    misfireThresholdSeconds: s.misfireThresholdSeconds,
    maxCatchup: s.maxCatchup,
    overlapPolicy: s.overlapPolicy,
    state: s.state,
    ...(s.alerts?.length ? { alerts: s.alerts } : {}),
    ...(s.nextFireTime !== undefined ? { nextFireTime: iso(s.nextFireTime) } : {}),
    ...(s.queued?.length ? { queued: s.queued.map((q) => iso(q)) } : {}),
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
  };
}

function fireView(f: FireRecord) {
  return {
    nominalTime: iso(f.nominalTime),
    actualTime: iso(f.actualTime),
    latenessMs: f.latenessMs,
    decision: f.decision,
    ...(f.instanceId ? { instanceId: f.instanceId } : {}),
  };
}

/** Whether the ledger holds any entry of schedule `id` (one item read). */
async function hasFires(deps: ApiDeps, id: string): Promise<boolean> {
  return (await deps.scheduling.fires.listFires(id, { limit: 1 })).items.length > 0;
}

async function load(deps: ApiDeps, id: string): Promise<ScheduleRecord> {
  const s = RESOURCE_ID.test(id) ? await deps.scheduling.schedules.getSchedule(id) : undefined;
  if (!s) throw notFound(`schedule '${id.slice(0, 64)}' does not exist`);
  return s;
}

/** POST /v1/schedules → 201 with the schedule (its `id`, `nextFireTime`). */
export async function createSchedule(
  deps: ApiDeps,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const now = deps.now();
  const rec = await toRecord(deps, parseBody(event), {
    id: randomUUID(),
    createdAt: now,
    rev: 1,
  });
  if (!(await deps.scheduling.schedules.putSchedule(rec))) throw new Error("schedule id collision");
  return json(201, writtenView(deps, rec));
}

/**
 * The answer of a POST or PUT: the schedule, and `warnings` when one of its alert rules names a
 * channel the deployment does not configure (stored all the same: docs/alerts.md).
 */
export function writtenView(deps: Pick<ApiDeps, "alertChannels">, rec: ScheduleRecord) {
  const warnings = channelWarnings(deps.alertChannels, rec.alerts);
  return { ...scheduleView(rec), ...(warnings.length > 0 ? { warnings } : {}) };
}

/** GET /v1/schedules?workflow=&limit=&nextToken= → `{items, nextToken}`, newest first. */
export async function listSchedules(
  deps: ApiDeps,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const q = query(event);
  const page = await deps.scheduling.schedules.listSchedules({
    ...(q.workflow ? { workflow: q.workflow } : {}),
    limit: parseLimit(q.limit),
    ...(q.nextToken ? { nextToken: q.nextToken } : {}),
  });
  return json(200, {
    items: page.items.map(scheduleView),
    ...(page.nextToken ? { nextToken: page.nextToken } : {}),
  });
}

export async function getSchedule(
  deps: ApiDeps,
  id: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  return json(200, scheduleView(await load(deps, id)));
}

/**
 * PUT /v1/schedules/{id}: replaces the settings; the next fire is computed again from now (a
 * changed expression never fires the times it skipped). 409 when changed concurrently.
 */
export async function putSchedule(
  deps: ApiDeps,
  id: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const cur = await load(deps, id);
  const rec = await toRecord(deps, parseBody(event), {
    id: cur.id,
    createdAt: cur.createdAt,
    rev: cur.rev + 1,
    ...(cur.queued ? { queued: cur.queued } : {}),
    ...(cur.activeInstanceId ? { activeInstanceId: cur.activeInstanceId } : {}),
  });
  if (!(await deps.scheduling.schedules.updateSchedule(rec))) {
    throw conflict(`schedule '${id}' changed meanwhile; read it and try again`);
  }
  return json(200, writtenView(deps, rec));
}

export async function deleteSchedule(
  deps: ApiDeps,
  id: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  await load(deps, id);
  await deps.scheduling.schedules.deleteSchedule(id);
  return { statusCode: 204 };
}

/** POST /v1/schedules/{id}/online|offline: ONLINE fires from now on (no catch-up of the pause). */
export async function setScheduleState(
  deps: ApiDeps,
  id: string,
  state: "ONLINE" | "OFFLINE",
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  onlyFields(event);
  for (let round = 0; round < 5; round++) {
    const cur = await load(deps, id);
    if (cur.state === state) return json(200, scheduleView(cur));
    const next = withNextFire(
      { ...cur, state, updatedAt: deps.now(), rev: cur.rev + 1 },
      deps.now(),
    );
    if (await deps.scheduling.schedules.updateSchedule(next)) return json(200, scheduleView(next));
  }
  throw new Error(`schedule ${id} kept changing`);
}

/** GET /v1/schedules/{id}/preview?count=N → `{items: [ISO…]}`: the next N nominal fire times. */
export async function previewSchedule(
  deps: ApiDeps,
  id: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const count = parsePositiveInt(query(event).count, "count") ?? 10;
  if (count > 1_000) throw validationError([{ path: "count", message: "must be <= 1000" }]);
  const s = await load(deps, id);
  const times = nextFireTimes(timingOf(s), deps.now(), count);
  return json(200, { items: times.map((t) => iso(t)) });
}

/** GET /v1/schedules/{id}/fires?from&to&limit&nextToken → the fire ledger, oldest first. */
export async function listFires(
  deps: ApiDeps,
  id: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const q = query(event);
  const time = (v: string | undefined, field: string) => {
    if (v === undefined) return undefined;
    const t = Date.parse(v);
    if (Number.isNaN(t))
      throw validationError([{ path: field, message: "must be an ISO-8601 instant" }]);
    return t;
  };
  const from = time(q.from, "from");
  const to = time(q.to, "to");
  const limit = parseLimit(q.limit);
  if (!RESOURCE_ID.test(id)) throw notFound(`schedule '${id.slice(0, 64)}' does not exist`);
  const [schedule, page] = await Promise.all([
    deps.scheduling.schedules.getSchedule(id),
    deps.scheduling.fires.listFires(id, {
      ...(from !== undefined ? { from } : {}),
      ...(to !== undefined ? { to } : {}),
      limit,
      ...(q.nextToken ? { nextToken: q.nextToken } : {}),
    }),
  ]);
  // The ledger is an audit record: it outlives its schedule. A deleted schedule is known by
  // its entries; one that left none cannot be told from an id that never existed.
  const deleted = !schedule;
  if (deleted && page.items.length === 0 && !(await hasFires(deps, id))) {
    throw notFound(`schedule '${id}' does not exist (and no fire of it is recorded)`);
  }
  return json(200, {
    items: page.items.map(fireView),
    ...(page.nextToken ? { nextToken: page.nextToken } : {}),
    ...(deleted ? { scheduleDeleted: true } : {}),
  });
}
