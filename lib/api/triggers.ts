/**
 * Event triggers: `POST/GET /v1/triggers`, `GET/DELETE /v1/triggers/{id}`,
 * `POST /v1/triggers/{id}/online|offline`, and `POST /v1/events` (standalone's stand-in for
 * EventBridge PutEvents: entries are matched here with EventBridge's pattern semantics). On AWS
 * the same `deliverTriggerEvent` (trigger-delivery.ts) runs in the trigger handler for events a
 * rule delivers. Parameters taken from events are untrusted: size-checked there, shell-quoted
 * when substituted.
 */
import { randomUUID, timingSafeEqual } from "node:crypto";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { z } from "zod";
import { notFound, validationError } from "../core/errors.js";
import { checkEventPattern, putEventsEntryToEvent } from "../core/event-pattern.js";
import { checkJsonPath } from "../core/json-path.js";
import type { ReleaseState } from "../core/model.js";
import { name, paramName } from "../core/schema-parts.js";
import { EVENT_SOURCE } from "../core/state-events.js";
import { DEFAULT_TRIGGER_LIMITS, ownEventStates } from "../core/trigger-events.js";
import { parseWithSchema } from "../core/validate.js";
import type { TriggerRecord } from "../store/triggers.js";
import type { ApiDeps } from "./deps.js";
import { asObject, json, parseBody, parseLimit, query, RESOURCE_ID } from "./http.js";
import { iso } from "./present.js";
import { deliverTriggerEvent } from "./trigger-delivery.js";

/** Schema of the body of `POST /v1/triggers`. */
export const triggerSchema = z.strictObject({
  workflow: name,
  eventPattern: z.record(z.string(), z.unknown(), {
    error: "must be an EventBridge pattern object",
  }),
  params: z
    .record(
      paramName,
      z.string().superRefine((path, ctx) => {
        const problem = checkJsonPath(path);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
    )
    .refine((p) => Object.keys(p).length <= 32, { error: "at most 32 parameters" })
    .default({}),
  debounceSeconds: z
    .number()
    .int({ error: "must be a whole number of seconds" })
    .min(0, { error: "must be >= 0" })
    .max(86_400, { error: "must be <= 86400" })
    .default(0),
  state: z.enum(["ONLINE", "OFFLINE"], { error: "must be ONLINE or OFFLINE" }).default("ONLINE"),
});

/** Schema of the body of `POST /v1/events` (PutEvents-shaped). */
export const eventsSchema = z.strictObject({
  Entries: z
    .array(
      z.strictObject({
        Source: z
          .string()
          .min(1, { error: "must not be empty" })
          .max(256, { error: "must be at most 256 characters" }),
        DetailType: z
          .string()
          .min(1, { error: "must not be empty" })
          .max(128, { error: "must be at most 128 characters" }),
        Detail: z.string().max(256 * 1024, { error: "must be at most 256 KiB" }),
        Resources: z.array(z.string()).max(20).optional(),
        Time: z.iso.datetime({ offset: true }).optional(),
      }),
    )
    .min(1, { error: "at least one entry" })
    .max(10, { error: "at most 10 entries (PutEvents' limit)" }),
});

/** The Trigger of the API (docs/api.md): the record, its state, and what its guards did. */
export function triggerView(t: TriggerRecord) {
  const stop = t.lastLoopStop;
  return {
    id: t.id,
    workflow: t.workflow,
    eventPattern: JSON.parse(t.eventPattern) as unknown,
    params: t.params,
    debounceSeconds: t.debounceSeconds,
    state: t.state ?? "ONLINE",
    createdAt: iso(t.createdAt),
    ...(t.lastFiredAt !== undefined ? { lastFiredAt: iso(t.lastFiredAt) } : {}),
    refusedRuns: t.refusedRuns ?? 0,
    ...(t.lastRefusedAt !== undefined ? { lastRefusedAt: iso(t.lastRefusedAt) } : {}),
    loopStops: t.loopStops ?? 0,
    ...(stop ? { lastLoopStop: { ...stop, at: iso(stop.at) } } : {}),
  };
}

/**
 * The warning of a pattern that can match the instance events of the runs its own trigger
 * starts (lib/core/trigger-events.ts ownEventStates): each run may start another, until the
 * loop limits stop the chain.
 */
function selfLoopWarning(
  deps: ApiDeps,
  t: TriggerRecord,
  pattern: object,
): { path: string; message: string } | undefined {
  const states = ownEventStates(pattern, t.workflow, t.id);
  if (states.length === 0) return undefined;
  const limits = deps.triggerLimits ?? DEFAULT_TRIGGER_LIMITS;
  return {
    path: "eventPattern",
    message:
      `matches the events of the runs this trigger starts (workflow '${t.workflow}', state ` +
      `${states.join(", ")}): each such run starts another. Shoal stops the chain ` +
      `${limits.maxDepth} runs deep and at ${limits.maxRunsPerOrigin} runs per originating ` +
      "event (a 'Shoal Trigger Loop Stopped' event says so); to run once per outside event, " +
      `leave the trigger's own workflow out, e.g. "detail": {"workflow": [{"anything-but": "${t.workflow}"}]}`,
  };
}

/**
 * POST /v1/triggers → 201 with the trigger and its `id`, plus `warnings` when the pattern can
 * match the events of the runs it starts.
 */
export async function createTrigger(
  deps: ApiDeps,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const b = parseWithSchema(triggerSchema, asObject(parseBody(event)));
  const problem = checkEventPattern(b.eventPattern);
  if (problem) throw validationError([{ path: "eventPattern", message: problem }]);
  const head = await deps.store.getWorkflowHead(b.workflow);
  if (!head || head.deleted) {
    throw validationError([
      { path: "workflow", message: `workflow '${b.workflow}' does not exist` },
    ]);
  }
  const rec: TriggerRecord = {
    id: randomUUID(),
    workflow: b.workflow,
    eventPattern: JSON.stringify(b.eventPattern),
    params: b.params,
    debounceSeconds: b.debounceSeconds,
    state: b.state,
    createdAt: deps.now(),
    rev: 1,
  };
  await deps.scheduling.triggers.putTrigger(rec);
  const warning = selfLoopWarning(deps, rec, b.eventPattern);
  return json(201, { ...triggerView(rec), ...(warning ? { warnings: [warning] } : {}) });
}

export async function listTriggers(
  deps: ApiDeps,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const q = query(event);
  const page = await deps.scheduling.triggers.listTriggers(
    parseLimit(q.limit),
    q.nextToken || undefined,
  );
  return json(200, {
    items: page.items.map(triggerView),
    ...(page.nextToken ? { nextToken: page.nextToken } : {}),
  });
}

async function load(deps: ApiDeps, id: string): Promise<TriggerRecord> {
  const t = RESOURCE_ID.test(id) ? await deps.scheduling.triggers.getTrigger(id) : undefined;
  if (!t) throw notFound(`trigger '${id.slice(0, 64)}' does not exist`);
  return t;
}

export async function getTrigger(
  deps: ApiDeps,
  id: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  return json(200, triggerView(await load(deps, id)));
}

/** POST /v1/triggers/{id}/online|offline → 200 with the trigger (idempotent). */
export async function setTriggerState(
  deps: ApiDeps,
  id: string,
  state: ReleaseState,
): Promise<APIGatewayProxyStructuredResultV2> {
  await load(deps, id);
  const t = await deps.scheduling.triggers.setTriggerState(id, state);
  if (!t) throw notFound(`trigger '${id.slice(0, 64)}' does not exist`);
  return json(200, triggerView(t));
}

export async function deleteTrigger(
  deps: ApiDeps,
  id: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  await load(deps, id);
  await deps.scheduling.triggers.deleteTrigger(id);
  return { statusCode: 204 };
}

/** Header with which standalone's own relay (a `shoal sweeper`'s misfires) proves itself. */
export const RELAY_HEADER = "x-shoal-relay";

/** Whether the request comes from Shoal's own relay (the configured token, compared in constant time). */
function isRelay(deps: ApiDeps, event: APIGatewayProxyEventV2): boolean {
  const token = deps.eventsRelayToken;
  const sent = event.headers?.[RELAY_HEADER];
  if (!token || !sent) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * POST /v1/events `{"Entries": [...]}` → 200 `{"FailedEntryCount", "Entries": [{"EventId",
 * "Triggers": [...]}]}`: each entry becomes an EventBridge event (new id) and is delivered.
 */
export async function putEvents(
  deps: ApiDeps,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const b = parseWithSchema(eventsSchema, asObject(parseBody(event)));
  if (!isRelay(deps, event)) {
    const forged = b.Entries.flatMap((e, i) =>
      e.Source === EVENT_SOURCE
        ? [
            {
              path: `Entries[${i}].Source`,
              message: `"${EVENT_SOURCE}" is the source of Shoal's own state-change events, which chain workflows; they cannot be put from outside (use a source of your own, e.g. "com.example.orders")`,
            },
          ]
        : [],
    );
    if (forged.length > 0) throw validationError(forged);
  }
  const entries = [];
  const failed = 0; // an entry that cannot be read fails the whole request (400) before any run
  const envelopes = b.Entries.map((e, i) => {
    try {
      return putEventsEntryToEvent(e, {
        id: randomUUID(),
        account: "000000000000",
        region: deps.region ?? "us-east-1",
        now: deps.now(),
      }) as unknown as Record<string, unknown> & { id: string };
    } catch (err) {
      throw validationError(
        [{ path: `Entries[${i}].Detail`, message: (err as Error).message }],
        undefined,
        { cause: err },
      );
    }
  });
  for (const envelope of envelopes) {
    deps.bus?.record(envelope);
    const triggers = await deliverTriggerEvent(deps, envelope);
    entries.push({ EventId: envelope.id, Triggers: triggers });
  }
  return json(200, { FailedEntryCount: failed, Entries: entries });
}
