/**
 * Which events a trigger sees, and the causation that cuts trigger loops off (docs/events.md
 * "Triggers on Shoal's own events").
 *
 * A trigger sees Shoal's own events (source `shoal`) only when its pattern asks for them by
 * name: `"source": ["shoal"]` at the top level of every `$or` alternative. A pattern that matches
 * "everything" (`{"source": [{"prefix": ""}]}`, an `anything-but`, no `source` at all) would
 * otherwise match the state changes of the runs it starts and start runs for ever.
 *
 * A run a trigger starts carries its cause ({@link TriggerCause}), and the instance events of that
 * run carry it on (`detail.trigger`): a run started by such an event is one deeper. Past
 * {@link TriggerLimits.maxDepth} a trigger starts nothing, and one originating event leads to at
 * most {@link TriggerLimits.maxRunsPerOrigin} runs in all (a pattern matching every state of
 * its own workflow would otherwise double the runs per level).
 *
 * Pure: time is an argument.
 */
import { compileEventPattern, matchesCompiledPattern } from "./event-pattern.js";
import { leaves, type Matcher, type PatternNode, type Scalar } from "./event-pattern-match.js";
import { INSTANCE_STATES, type InstanceState } from "./model.js";
import { DETAIL_TYPES, EVENT_SOURCE, type LoopStopReason } from "./state-events.js";
import { MAX_CHAIN, type TriggerCause } from "./trigger-cause.js";

/** The limits that stop trigger loops and storms (each a setting: docs/events.md). */
export interface TriggerLimits {
  /** Deepest chain of trigger-started runs, counted from the first (1). Default 10. */
  maxDepth: number;
  /** Runs one originating event may lead to in all, over every level. Default 100. */
  maxRunsPerOrigin: number;
  /** Runs one trigger may start per minute (a fixed window); the excess is refused. Default 60. */
  maxRunsPerMinute: number;
}

/** The limits unless configured (SHOAL_TRIGGER_MAX_DEPTH, _MAX_RUNS_PER_EVENT, _MAX_RUNS_PER_MINUTE). */
export const DEFAULT_TRIGGER_LIMITS: TriggerLimits = {
  maxDepth: 10,
  maxRunsPerOrigin: 100,
  maxRunsPerMinute: 60,
};

/** Bounds of each limit setting (inclusive). */
export const TRIGGER_LIMIT_RANGES: Record<keyof TriggerLimits, readonly [number, number]> = {
  maxDepth: [1, 100],
  maxRunsPerOrigin: [1, 100_000],
  maxRunsPerMinute: [1, 100_000],
};

/** The length of a rate window, ms: runs are counted per trigger per minute. */
export const RATE_WINDOW_MS = 60_000;

/** A trigger's pattern compiled once: whether it asks for Shoal's events, and its matcher. */
export interface CompiledTriggerPattern {
  /** The pattern names `"source": ["shoal"]` in every alternative. */
  asksForShoalEvents: boolean;
  /** Whether the trigger sees `event` (the source rule, then the pattern). */
  sees(event: Record<string, unknown>): boolean;
}

/**
 * Compiles a trigger's pattern.
 * @throws Error `invalid event pattern: ...` for a pattern `checkEventPattern` refuses.
 */
export function compileTriggerPattern(pattern: object): CompiledTriggerPattern {
  const alternatives = compileEventPattern(pattern);
  const asks = alternatives.every(namesShoalSource);
  return {
    asksForShoalEvents: asks,
    sees: (event) =>
      (asks || event.source !== EVENT_SOURCE) && matchesCompiledPattern(alternatives, event),
  };
}

/** The alternative's top-level `source` lists `"shoal"` as an exact value. */
function namesShoalSource(root: PatternNode): boolean {
  const leaf = root.children?.get("source")?.leaf;
  return leaf?.some((m) => "test" in m && m.exact === EVENT_SOURCE) ?? false;
}

/**
 * The states of its own workflow's instance events that `pattern` can match: events of a run the
 * trigger itself started (source `shoal`, the instance detail-type, `detail.workflow` =
 * `workflow`, `detail.triggerId` = `triggerId`). Fields the pattern names beyond those that
 * such an event may carry with any value are taken as matchable, so the answer errs towards
 * warning. Empty when the pattern does not ask for Shoal's events.
 * @throws Error `invalid event pattern: ...` as {@link compileTriggerPattern}.
 */
export function ownEventStates(
  pattern: object,
  workflow: string,
  triggerId: string,
): InstanceState[] {
  const alternatives = compileEventPattern(pattern);
  if (!alternatives.every(namesShoalSource)) return [];
  const states = INSTANCE_STATES.filter((s) => s !== "SUBMITTED");
  return states.filter((state) => {
    const known = new Map<string, Scalar[]>([
      ["source", [EVENT_SOURCE]],
      ["detail-type", [DETAIL_TYPES.instance]],
      ["detail.schemaVersion", [1]],
      ["detail.workflow", [workflow]],
      ["detail.triggerId", [triggerId]],
      ["detail.state", [state]],
      ["detail.previousState", [...INSTANCE_STATES]],
      ["detail.commandType", ["START_WORKFLOW", "RERUN", "RECOVER_FAILED"]],
    ]);
    return alternatives.some((root) =>
      leaves(root).every(({ name, leaf }) => {
        const values = known.get(name);
        return values === undefined || leaf.some((m) => canMatch(m, values));
      }),
    );
  });
}

function canMatch(m: Matcher, values: Scalar[]): boolean {
  if ("exists" in m) return m.exists;
  return values.some((v) => m.test(v));
}

/**
 * The cause a run started by `event` gets. Only Shoal's own instance events pass a cause on
 * (their `detail.trigger`, and their instance as a link of the chain); any other event starts a
 * chain of its own at depth 1. A malformed `detail.trigger` is read as absent.
 */
export function causeOf(
  event: Record<string, unknown> & { id: string },
  triggerId: string,
): TriggerCause {
  const fresh: TriggerCause = {
    id: triggerId,
    eventId: event.id,
    depth: 1,
    originEventId: event.id,
    chain: [],
  };
  if (event.source !== EVENT_SOURCE || event["detail-type"] !== DETAIL_TYPES.instance) return fresh;
  const detail = isRecord(event.detail) ? event.detail : {};
  const instanceId = typeof detail.instanceId === "string" ? detail.instanceId : undefined;
  const link = instanceId ? [instanceId] : [];
  const before = readCause(detail.trigger);
  if (!before) return { ...fresh, chain: link };
  return {
    id: triggerId,
    eventId: event.id,
    depth: before.depth + 1,
    originEventId: before.originEventId,
    chain: [...before.chain, ...link].slice(-MAX_CHAIN),
  };
}

/** A `detail.trigger` as published, or undefined when it is not one. */
function readCause(v: unknown): Omit<TriggerCause, "id"> | undefined {
  if (!isRecord(v)) return undefined;
  const { eventId, depth, originEventId, chain } = v;
  if (typeof eventId !== "string" || typeof depth !== "number" || !Number.isInteger(depth))
    return undefined;
  if (depth < 1) return undefined;
  return {
    eventId,
    depth,
    originEventId: typeof originEventId === "string" ? originEventId : eventId,
    chain: Array.isArray(chain) ? chain.filter((c): c is string => typeof c === "string") : [],
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The start of the rate window `now` falls in, epoch ms. */
export function rateWindowStart(now: number): number {
  return Math.floor(now / RATE_WINDOW_MS) * RATE_WINDOW_MS;
}

/** The sentence a skipped trigger outcome gives for a loop stop. */
export function loopStopSentence(
  reason: LoopStopReason,
  cause: TriggerCause,
  limit: number,
): string {
  return reason === "DEPTH"
    ? `loop stopped: this run would be ${cause.depth} triggers deep; the limit is ${limit}`
    : `loop stopped: event ${cause.originEventId} has led to ${limit} runs, the limit`;
}
