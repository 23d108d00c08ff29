/**
 * Delivering one event to the triggers: the code the trigger Lambda runs on AWS for every event
 * a rule delivers, and standalone runs for every event of its bus and `POST /v1/events`.
 *
 * What it guards against (docs/events.md "Trigger loops and storms"):
 * - a trigger sees Shoal's own events only when its pattern names `"source": ["shoal"]`
 *   (lib/core/trigger-events.ts), so a pattern meant for everything never sees the runs it starts;
 * - a run started from an event of a trigger-started run is one deeper; past the depth limit, or
 *   past the runs one originating event may lead to, the trigger starts nothing and records a
 *   "Shoal Trigger Loop Stopped" event;
 * - a trigger starts at most so many runs a minute; the excess is refused and counted, with one
 *   "Shoal Trigger Rate Limited" event per trigger a minute.
 *
 * The event id is the idempotency key: the run of (trigger, event) has a deterministic id, so a
 * redelivered event never starts a second run and is never counted twice.
 */
import { LRUCache } from "lru-cache";
import { METRICS } from "../aws/config.js";
import { deterministicId } from "../core/ids.js";
import { extractJsonPath } from "../core/json-path.js";
import { LIMITS } from "../core/schema-parts.js";
import {
  type LoopStopReason,
  reachesTriggers,
  triggerLoopStoppedEvent,
  triggerRateLimitedEvent,
} from "../core/state-events.js";
import type { TriggerCause } from "../core/trigger-cause.js";
import {
  type CompiledTriggerPattern,
  causeOf,
  compileTriggerPattern,
  DEFAULT_TRIGGER_LIMITS,
  loopStopSentence,
  rateWindowStart,
} from "../core/trigger-events.js";
import { getStartCommand, submitRun } from "../engine/commands.js";
import type { TriggerRecord } from "../store/triggers.js";
import type { ApiDeps } from "./deps.js";

/** What one event did to one matching trigger. */
export interface TriggerOutcome {
  triggerId: string;
  instanceId?: string;
  /**
   * Why no run started: debounced, a parameter too large or missing, the workflow offline, the
   * rate limit, or a loop stopped.
   */
  skipped?: string;
}

/** Compiled patterns by their JSON text: a pattern is compiled once, not per event. */
const compiled = new LRUCache<string, CompiledTriggerPattern>({ max: 500 });

function patternOf(t: TriggerRecord): CompiledTriggerPattern {
  let c = compiled.get(t.eventPattern);
  if (!c) {
    c = compileTriggerPattern(JSON.parse(t.eventPattern) as object);
    compiled.set(t.eventPattern, c);
  }
  return c;
}

/**
 * Matches one event (EventBridge envelope) against every online trigger and starts the runs.
 * Idempotent per (trigger, event id). Events that never reach triggers (Shoal's task events, its
 * trigger loop and rate events) start nothing.
 */
export async function deliverTriggerEvent(
  deps: ApiDeps,
  event: Record<string, unknown> & { id: string },
): Promise<TriggerOutcome[]> {
  if (!reachesTriggers(event)) return [];
  const out: TriggerOutcome[] = [];
  let token: string | undefined;
  do {
    const page = await deps.scheduling.triggers.listTriggers(200, token);
    for (const t of page.items) {
      if (t.state === "OFFLINE") continue;
      if (!patternOf(t).sees(event)) continue;
      out.push(await fire(deps, t, event));
    }
    token = page.nextToken;
  } while (token);
  return out;
}

/** The run parameters taken from the event, or why there are none. */
function paramsFrom(
  t: TriggerRecord,
  event: Record<string, unknown>,
): Record<string, string> | string {
  const params: Record<string, string> = {};
  for (const [k, path] of Object.entries(t.params)) {
    const v = extractJsonPath(event, path);
    if (v === undefined) return `parameter '${k}': ${path} matched nothing`;
    if (Buffer.byteLength(v) > LIMITS.paramValueBytes) {
      return `parameter '${k}' is ${Buffer.byteLength(v)} bytes; the limit is ${LIMITS.paramValueBytes}`;
    }
    params[k] = v;
  }
  const total = Object.entries(params).reduce(
    (n, [k, v]) => n + k.length + Buffer.byteLength(v),
    0,
  );
  if (total > LIMITS.paramsTotalBytes) {
    return `the event's parameters add up to ${total} bytes; the limit is ${LIMITS.paramsTotalBytes}`;
  }
  return params;
}

async function fire(
  deps: ApiDeps,
  t: TriggerRecord,
  event: Record<string, unknown> & { id: string },
): Promise<TriggerOutcome> {
  const instanceId = deterministicId(`trigger\u0000${t.id}\u0000${event.id}`);
  const params = paramsFrom(t, event);
  if (typeof params === "string") return { triggerId: t.id, skipped: params };
  const cause = causeOf(event, t.id);
  // A redelivered event whose run exists: the same answer, nothing counted again.
  const existing = await getStartCommand(deps.store, instanceId);
  if (!existing) {
    const skipped = await admit(deps, t, cause);
    if (skipped) return { triggerId: t.id, skipped };
  }
  const started = await submitRun(
    deps,
    instanceId,
    t.workflow,
    { params, taskScope: "DOWNSTREAM", dryRun: false },
    { commandType: "START_WORKFLOW", triggerId: t.id, triggerCause: cause },
  );
  if (started !== "started")
    return { triggerId: t.id, skipped: `workflow '${t.workflow}' is ${started}` };
  if (!existing) deps.metric?.(METRICS.triggerRuns, 1);
  return { triggerId: t.id, instanceId };
}

/**
 * The checks a new run passes, in order: depth, debounce, rate, runs per originating event.
 * @returns why it may not start, or undefined when it may.
 */
async function admit(
  deps: ApiDeps,
  t: TriggerRecord,
  cause: TriggerCause,
): Promise<string | undefined> {
  const limits = deps.triggerLimits ?? DEFAULT_TRIGGER_LIMITS;
  const triggers = deps.scheduling.triggers;
  if (cause.depth > limits.maxDepth) return loopStopped(deps, t, cause, "DEPTH", limits.maxDepth);
  const now = deps.now();
  if (t.debounceSeconds > 0) {
    const debounced = `debounced (${t.debounceSeconds}s)`;
    if (t.lastFiredAt !== undefined && now - t.lastFiredAt < t.debounceSeconds * 1000)
      return debounced;
    if (!(await triggers.markFired(t.id, t.lastFiredAt, now))) return debounced;
  }
  const window = rateWindowStart(now);
  if (!(await triggers.takeRateSlot(t.id, window, limits.maxRunsPerMinute))) {
    deps.metric?.(METRICS.triggerRunsRefused, 1);
    if (await triggers.recordRefusal(t.id, window, now)) {
      deps.log?.("triggers: runs refused over the rate limit", {
        triggerId: t.id,
        workflow: t.workflow,
        limitPerMinute: limits.maxRunsPerMinute,
      });
      await publish(deps, [
        triggerRateLimitedEvent(t, limits.maxRunsPerMinute, window, deps.now()),
      ]);
    }
    return `rate limited: more than ${limits.maxRunsPerMinute} runs a minute (SHOAL_TRIGGER_MAX_RUNS_PER_MINUTE)`;
  }
  if (!(await triggers.takeOriginRun(cause.originEventId, limits.maxRunsPerOrigin, now))) {
    return loopStopped(deps, t, cause, "RUNS_PER_EVENT", limits.maxRunsPerOrigin);
  }
  return undefined;
}

/** Records a loop stop on the trigger and publishes it; @returns the outcome's sentence. */
async function loopStopped(
  deps: ApiDeps,
  t: TriggerRecord,
  cause: TriggerCause,
  reason: LoopStopReason,
  limit: number,
): Promise<string> {
  const now = deps.now();
  // Many events of one chain can reach the limit (each run emits several): the first stop of a
  // chain at this trigger is the one told; the others are counted.
  const first = await deps.scheduling.triggers.recordLoopStop(t.id, {
    at: now,
    reason,
    limit,
    depth: cause.depth,
    eventId: cause.eventId,
    originEventId: cause.originEventId,
    chain: cause.chain,
  });
  deps.metric?.(METRICS.triggerLoopsStopped, 1);
  if (first) {
    deps.log?.("triggers: loop stopped", {
      triggerId: t.id,
      workflow: t.workflow,
      reason,
      depth: cause.depth,
      originEventId: cause.originEventId,
    });
    await publish(deps, [triggerLoopStoppedEvent(t, { reason, limit, cause }, now)]);
  }
  return loopStopSentence(reason, cause, limit);
}

/** Best effort, as every publisher: a failure is logged by the publisher, never thrown. */
async function publish(
  deps: ApiDeps,
  events: Parameters<NonNullable<ApiDeps["stateChanges"]>["publish"]>[0],
): Promise<void> {
  await deps.stateChanges
    ?.publish(events)
    .catch((e) => deps.log?.("triggers: event not published", { error: String(e) }));
}
