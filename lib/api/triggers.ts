/**
 * Event triggers: `POST/GET /v1/triggers`, `GET/DELETE /v1/triggers/{id}`, and
 * `POST /v1/events` (standalone's stand-in for EventBridge PutEvents: entries are matched here
 * with EventBridge's pattern semantics). On AWS the same `deliverTriggerEvent` runs in the trigger
 * handler for events a rule delivers. The event id is the idempotency key: the run of
 * (trigger, event) has a deterministic id, so a redelivered event never starts a second run.
 * Parameters taken from events are untrusted: size-checked here, shell-quoted when substituted.
 */
import { randomUUID } from "node:crypto";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { z } from "zod";
import { notFound, validationError } from "../core/errors.js";
import {
  checkEventPattern,
  matchesEventPattern,
  putEventsEntryToEvent,
} from "../core/event-pattern.js";
import { deterministicId } from "../core/ids.js";
import { checkJsonPath, extractJsonPath } from "../core/json-path.js";
import { LIMITS, name, paramName } from "../core/schema-parts.js";
import { parseWithSchema } from "../core/validate.js";
import { getStartCommand, submitRun } from "../engine/commands.js";
import type { TriggerRecord } from "../store/triggers.js";
import type { ApiDeps } from "./deps.js";
import { asObject, json, parseBody, parseLimit, query, RESOURCE_ID } from "./http.js";
import { iso } from "./present.js";

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

export function triggerView(t: TriggerRecord) {
  return {
    id: t.id,
    workflow: t.workflow,
    eventPattern: JSON.parse(t.eventPattern) as unknown,
    params: t.params,
    debounceSeconds: t.debounceSeconds,
    createdAt: iso(t.createdAt),
    ...(t.lastFiredAt !== undefined ? { lastFiredAt: iso(t.lastFiredAt) } : {}),
  };
}

/** POST /v1/triggers → 201 with the trigger and its `id`. */
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
    createdAt: deps.now(),
    rev: 1,
  };
  await deps.scheduling.triggers.putTrigger(rec);
  return json(201, triggerView(rec));
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

export async function deleteTrigger(
  deps: ApiDeps,
  id: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  await load(deps, id);
  await deps.scheduling.triggers.deleteTrigger(id);
  return { statusCode: 204 };
}

/** What one event did to one matching trigger. */
export interface TriggerOutcome {
  triggerId: string;
  instanceId?: string;
  /** Why no run started (debounced, a parameter too large or missing, workflow offline). */
  skipped?: string;
}

/**
 * Matches one event (EventBridge envelope) against every trigger and starts the runs.
 * Idempotent per (trigger, event id).
 */
export async function deliverTriggerEvent(
  deps: ApiDeps,
  event: Record<string, unknown> & { id: string },
): Promise<TriggerOutcome[]> {
  const out: TriggerOutcome[] = [];
  let token: string | undefined;
  do {
    const page = await deps.scheduling.triggers.listTriggers(200, token);
    for (const t of page.items) {
      if (!matchesEventPattern(JSON.parse(t.eventPattern) as object, event)) continue;
      out.push(await fire(deps, t, event));
    }
    token = page.nextToken;
  } while (token);
  return out;
}

async function fire(
  deps: ApiDeps,
  t: TriggerRecord,
  event: Record<string, unknown> & { id: string },
): Promise<TriggerOutcome> {
  const instanceId = deterministicId(`trigger\u0000${t.id}\u0000${event.id}`);
  const params: Record<string, string> = {};
  for (const [k, path] of Object.entries(t.params)) {
    const v = extractJsonPath(event, path);
    if (v === undefined)
      return { triggerId: t.id, skipped: `parameter '${k}': ${path} matched nothing` };
    if (Buffer.byteLength(v) > LIMITS.paramValueBytes) {
      return {
        triggerId: t.id,
        skipped: `parameter '${k}' is ${Buffer.byteLength(v)} bytes; the limit is ${LIMITS.paramValueBytes}`,
      };
    }
    params[k] = v;
  }
  const total = Object.entries(params).reduce(
    (n, [k, v]) => n + k.length + Buffer.byteLength(v),
    0,
  );
  if (total > LIMITS.paramsTotalBytes) {
    return {
      triggerId: t.id,
      skipped: `the event's parameters add up to ${total} bytes; the limit is ${LIMITS.paramsTotalBytes}`,
    };
  }
  // A redelivered event whose run exists: the same answer, no debounce check.
  const existing = await getStartCommand(deps.store, instanceId);
  if (!existing && t.debounceSeconds > 0) {
    const now = deps.now();
    if (t.lastFiredAt !== undefined && now - t.lastFiredAt < t.debounceSeconds * 1000) {
      return { triggerId: t.id, skipped: `debounced (${t.debounceSeconds}s)` };
    }
    if (!(await deps.scheduling.triggers.markFired(t.id, t.lastFiredAt, now))) {
      return { triggerId: t.id, skipped: `debounced (${t.debounceSeconds}s)` };
    }
  }
  const started = await submitRun(
    deps,
    instanceId,
    t.workflow,
    { params, taskScope: "DOWNSTREAM", dryRun: false },
    { commandType: "START_WORKFLOW", triggerId: t.id },
  );
  if (started !== "started")
    return { triggerId: t.id, skipped: `workflow '${t.workflow}' is ${started}` };
  return { triggerId: t.id, instanceId };
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
