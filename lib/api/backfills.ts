/**
 * Backfills (DolphinScheduler "complement data"): `POST /v1/workflows/{name}/backfill`,
 * `GET /v1/backfills/{id}`, `POST /v1/backfills/{id}/pause|resume|cancel`. Nominal times come
 * from a range and a cron (default: the workflow's first cron schedule) or a list of dates; each
 * runs at most once per backfill (a deterministic instance id); runs are LOW priority unless
 * said otherwise, so live runs go first.
 */
import { randomUUID } from "node:crypto";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { z } from "zod";
import { conflict, notFound, RequestError, validationError } from "../core/errors.js";
import { FAILURE_STRATEGIES } from "../core/model.js";
import { checkTiming } from "../core/schedule-check.js";
import { exceedsFireCount, fireTimesBetween } from "../core/schedule-time.js";
import { priority } from "../core/schema-parts.js";
import { isTimeZone, zoneSuggestion } from "../core/time-zones.js";
import { checkName, parseWithSchema, runParams } from "../core/validate.js";
import { advanceBackfill, DEFAULT_BACKFILL_PRIORITY } from "../engine/backfill-progress.js";
import type { RunDeps } from "../engine/scheduling-deps.js";
import type { BackfillRecord, BackfillState, BackfillSummary } from "../store/backfills.js";
import type { ApiDeps } from "./deps.js";
import { asObject, json, onlyFields, parseBody, parseLimit, query, RESOURCE_ID } from "./http.js";
import { iso } from "./present.js";

/** Most nominal times one backfill may hold (they live in one item). */
export const MAX_BACKFILL_TIMES = 10_000;

const isoInstant = z.iso.datetime({ offset: true, error: "must be an ISO-8601 instant" });

/** Schema of the body of `POST /v1/workflows/{name}/backfill`. */
export const backfillSchema = z.strictObject({
  from: isoInstant.optional(),
  to: isoInstant.optional(),
  dates: z.array(isoInstant).min(1).max(MAX_BACKFILL_TIMES).optional(),
  cron: z.string().max(256).optional(),
  timezone: z
    .string()
    .max(64)
    .optional()
    .describe(
      "IANA zone of the cron (default: UTC, or the schedule's with its cron) and of the runs' time parameters",
    ),
  mode: z.enum(["SERIAL", "PARALLEL"], { error: "must be SERIAL or PARALLEL" }).default("SERIAL"),
  parallelism: z
    .number()
    .int({ error: "must be a whole number" })
    .min(1, { error: "must be >= 1" })
    .max(100, { error: "must be <= 100" })
    .default(2),
  order: z.enum(["ASC", "DESC"], { error: "must be ASC or DESC" }).default("ASC"),
  priority: priority.default(DEFAULT_BACKFILL_PRIORITY),
  params: runParams.default({}),
  failureStrategy: z.enum(FAILURE_STRATEGIES, { error: "must be END or CONTINUE" }).optional(),
  dryRun: z.boolean({ error: "must be true or false" }).default(false),
});

/**
 * The nominal times a backfill body asks for, in its order, and the IANA zone of its runs' time
 * parameters: the zone its cron is read in (the body's `timezone`, or the workflow schedule's
 * with that schedule's cron, else UTC); with `dates`, the body's `timezone` if any (absent: the
 * workflow's). @throws RequestError 400.
 */
async function nominalTimes(
  deps: ApiDeps,
  workflow: string,
  b: z.infer<typeof backfillSchema>,
): Promise<{ times: number[]; timezone?: string }> {
  let times: number[];
  let zone = b.timezone;
  if (b.dates) {
    if (b.from || b.to) {
      throw validationError([{ path: "dates", message: "give either dates or from/to, not both" }]);
    }
    if (zone !== undefined && !isTimeZone(zone)) {
      const hint = zoneSuggestion(zone);
      const message = `unknown time zone '${zone}'${hint ? `: ${hint}` : ""}`;
      throw validationError([{ path: "timezone", message }]);
    }
    times = [...new Set(b.dates.map((d) => Date.parse(d)))].sort((x, y) => x - y);
  } else {
    if (!b.from || !b.to) {
      throw validationError([
        { path: b.from ? "to" : "from", message: "from and to are required without dates" },
      ]);
    }
    const from = Date.parse(b.from);
    const to = Date.parse(b.to);
    if (to < from) throw validationError([{ path: "to", message: "must not be before from" }]);
    let cron = b.cron;
    let timezone = b.timezone ?? "UTC";
    if (!cron) {
      // The workflow's schedule (DolphinScheduler complements along the workflow's cron).
      const page = await deps.scheduling.schedules.listSchedules({ workflow, limit: 50 });
      const s = page.items.find((x) => x.cron !== undefined);
      if (!s?.cron) {
        throw validationError([
          { path: "cron", message: `workflow '${workflow}' has no cron schedule; give a cron` },
        ]);
      }
      cron = s.cron;
      timezone = s.timezone;
    }
    const details = checkTiming({ cron, timezone });
    if (details.length > 0) throw validationError(details);
    zone = timezone;
    // Inclusive of `from` (fireTimesBetween takes (from, to]). A range that certainly holds too
    // many is refused before listing (listing 10,001 times holds the event loop for ~0.1-1 s).
    const tooMany = exceedsFireCount({ cron, timezone }, from - 1, to, MAX_BACKFILL_TIMES);
    times = tooMany
      ? []
      : fireTimesBetween({ cron, timezone }, from - 1, to, MAX_BACKFILL_TIMES + 1);
    if (tooMany || times.length > MAX_BACKFILL_TIMES) {
      throw new RequestError(
        "PayloadTooLarge",
        `the range holds more than ${MAX_BACKFILL_TIMES} nominal times; split it`,
        [{ path: "to", message: `more than ${MAX_BACKFILL_TIMES} nominal times` }],
      );
    }
  }
  if (times.length === 0) {
    throw validationError([{ path: "from", message: "no nominal time in the range" }]);
  }
  return {
    times: b.order === "DESC" ? times.reverse() : times,
    ...(zone !== undefined ? { timezone: zone } : {}),
  };
}

export function backfillView(b: BackfillRecord) {
  return backfillSummaryView({
    ...b,
    total: b.nominalTimes.length,
    ...(b.nominalTimes.length > 0
      ? {
          firstTime: b.nominalTimes[0] as number,
          lastTime: b.nominalTimes[b.nominalTimes.length - 1] as number,
        }
      : {}),
  });
}

/** Backfill states, for the list's `state` filter (lib/store/schedules.ts BackfillState). */
export const BACKFILL_STATES = [
  "RUNNING",
  "PAUSED",
  "CANCELLED",
  "SUCCESS",
  "FAILURE",
] as const satisfies readonly BackfillState[];

/**
 * A backfill as the API shows it, from the list index's summary (which carries the count and
 * first and last of the nominal times instead of the times themselves); {@link backfillView}
 * builds the same from a whole record.
 */
function backfillSummaryView(b: BackfillSummary) {
  return {
    id: b.id,
    workflow: b.workflow,
    state: b.state,
    mode: b.mode,
    parallelism: b.mode === "SERIAL" ? 1 : b.parallelism,
    priority: b.priority,
    total: b.total,
    done: b.done,
    running: b.running.length,
    failed: b.failed,
    pending: b.total - b.next,
    // Absent while the list indexes do not project it (lib/aws/resources.ts BACKFILL_SUMMARY).
    timezone: b.timezone,
    firstTime: iso(b.firstTime),
    lastTime: iso(b.lastTime),
    createdAt: iso(b.createdAt),
    updatedAt: iso(b.updatedAt),
  };
}

/**
 * GET /v1/backfills?workflow=&state=&limit=&nextToken= → `{items, nextToken}`, newest first.
 * `state` filters each page the store reads, so a page may hold fewer than `limit` items (even
 * none) and still carry a `nextToken`: follow it to the end.
 */
export async function listBackfills(
  deps: ApiDeps,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const q = query(event);
  if (q.workflow !== undefined) checkName(q.workflow, "workflow");
  const state = q.state;
  if (state !== undefined && !(BACKFILL_STATES as readonly string[]).includes(state)) {
    throw validationError([
      { path: "state", message: `must be one of ${BACKFILL_STATES.join(", ")}` },
    ]);
  }
  const page = await deps.scheduling.backfills.listBackfills({
    ...(q.workflow !== undefined ? { workflow: q.workflow } : {}),
    ...(state !== undefined ? { state: state as BackfillState } : {}),
    limit: parseLimit(q.limit),
    ...(q.nextToken ? { nextToken: q.nextToken } : {}),
  });
  return json(200, {
    items: page.items.map(backfillSummaryView),
    ...(page.nextToken ? { nextToken: page.nextToken } : {}),
  });
}

/** POST /v1/workflows/{name}/backfill → 202 `{id, …}`, or 200 `{nominalTimes}` for a dry run. */
export async function createBackfill(
  deps: ApiDeps,
  workflow: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  checkName(workflow, "name");
  const b = parseWithSchema(backfillSchema, asObject(parseBody(event)));
  const head = await deps.store.getWorkflowHead(workflow);
  if (!head || head.deleted) throw notFound(`workflow '${workflow}' does not exist`);
  const { times, timezone } = await nominalTimes(deps, workflow, b);
  if (b.dryRun) return json(200, { nominalTimes: times.map((t) => iso(t)) });
  if (head.releaseState !== "ONLINE") {
    throw conflict(`workflow '${workflow}' is OFFLINE; release it ONLINE to backfill it`);
  }
  const now = deps.now();
  const rec: BackfillRecord = {
    id: randomUUID(),
    workflow,
    nominalTimes: times,
    mode: b.mode,
    parallelism: b.mode === "SERIAL" ? 1 : b.parallelism,
    priority: b.priority,
    params: b.params,
    ...(b.failureStrategy ? { failureStrategy: b.failureStrategy } : {}),
    ...(timezone !== undefined ? { timezone } : {}),
    state: "RUNNING",
    next: 0,
    running: [],
    done: 0,
    failed: 0,
    createdAt: now,
    updatedAt: now,
    rev: 1,
  };
  await deps.scheduling.backfills.putBackfill(rec);
  await advanceBackfill(engineOf(deps), rec.id);
  const stored = (await deps.scheduling.backfills.getBackfill(rec.id)) ?? rec;
  return json(202, backfillView(stored));
}

/** What advancing a backfill needs, from the API's parts. */
function engineOf(deps: ApiDeps): RunDeps {
  const s = deps.scheduling;
  return {
    store: deps.store,
    queues: deps.queues,
    now: deps.now,
    schedules: s.schedules,
    fires: s.fires,
    backfills: s.backfills,
    ...(deps.log ? { log: deps.log } : {}),
  };
}

export async function getBackfill(
  deps: ApiDeps,
  id: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  const b = RESOURCE_ID.test(id) ? await deps.scheduling.backfills.getBackfill(id) : undefined;
  if (!b) throw notFound(`backfill '${id.slice(0, 64)}' does not exist`);
  return json(200, backfillView(b));
}

const TRANSITIONS = {
  pause: { from: ["RUNNING"], to: "PAUSED" },
  resume: { from: ["PAUSED"], to: "RUNNING" },
  cancel: { from: ["RUNNING", "PAUSED"], to: "CANCELLED" },
} as const;

/**
 * POST /v1/backfills/{id}/pause|resume|cancel → 202 with the backfill. Pause and cancel start
 * nothing new (running instances finish); resume goes on where it stopped. 409 from a state that
 * does not allow it.
 */
export async function controlBackfill(
  deps: ApiDeps,
  id: string,
  verb: keyof typeof TRANSITIONS,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  onlyFields(event);
  const t = TRANSITIONS[verb];
  for (let round = 0; round < 5; round++) {
    const b = RESOURCE_ID.test(id) ? await deps.scheduling.backfills.getBackfill(id) : undefined;
    if (!b) throw notFound(`backfill '${id.slice(0, 64)}' does not exist`);
    if (b.state === t.to) return json(202, backfillView(b)); // sent twice: a no-op
    if (!(t.from as readonly string[]).includes(b.state)) {
      throw conflict(`backfill '${id}' is ${b.state}; it cannot ${verb}`);
    }
    const next: BackfillRecord = { ...b, state: t.to, updatedAt: deps.now(), rev: b.rev + 1 };
    if (await deps.scheduling.backfills.updateBackfill(next)) {
      if (verb === "resume") await advanceBackfill(engineOf(deps), id);
      const stored = (await deps.scheduling.backfills.getBackfill(id)) ?? next;
      return json(202, backfillView(stored));
    }
  }
  throw new Error(`backfill ${id} kept changing`);
}
