/**
 * What the dispatcher's parts share: stores, queues, definitions, the task-group gate and the
 * clock, plus the parameter resolution every dispatched task (worker or logic) goes through.
 */

import type { Dag } from "../core/dag.js";
import type { TaskDefinition } from "../core/model.js";
import { resolveParams } from "../core/params.js";
import { builtinParams, DEFAULT_ZONE } from "../core/time-params.js";
import type { StateChangePublisher } from "../events/event-publisher.js";
import type { Queues } from "../queue/queues.js";
import type { InstanceRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { TimerStore } from "../store/timers.js";
import type { DefinitionCache, LoadedDefinition } from "./definitions.js";
import type { TaskGroupGate } from "./task-group-gate.js";

export interface EngineDeps {
  store: Store;
  queues: Queues;
  definitions: DefinitionCache;
  timers: TimerStore;
  gate: TaskGroupGate;
  now: () => number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Where state-change events go (absent: nowhere). */
  stateChanges?: StateChangePublisher;
  /**
   * Which task state-change events go there (default `unsuccessful`: a successful attempt's is
   * left out; instance events always go).
   */
  taskEvents?: "unsuccessful" | "all" | "none";
}

/** Base time of built-in time parameters: the schedule time, else when the run was requested. */
export function baseTimeOf(inst: InstanceRecord): number {
  return inst.scheduleTime ?? inst.createdAt;
}

/**
 * IANA zone of an instance's time parameters and DEPENDENT date periods: the one fixed at its
 * creation (schedule, backfill, parent instance, else the workflow's `timezone`), else UTC.
 */
export function zoneOf(inst: Pick<InstanceRecord, "timezone">): string {
  return inst.timezone ?? DEFAULT_ZONE;
}

const ranks = new WeakMap<Dag, number[]>();

/** The DAG's topological order, computed once per loaded definition. */
function topologicalRanks(dag: Dag): number[] {
  let order = ranks.get(dag);
  if (!order) {
    order = dag.topologicalOrder();
    ranks.set(dag, order);
  }
  return order;
}

/**
 * OUT parameters visible to task `index`: those of its ancestors, nearer ones overriding
 * farther ones (an ancestor later in topological order wins).
 */
export function upstreamOutputs(
  dag: Dag,
  outputs: InstanceRecord["outputs"],
  index: number,
): Record<string, string> {
  if (!outputs || Object.keys(outputs).length === 0) return {};
  const seen = ancestorsOf(dag, index);
  const order = topologicalRanks(dag).filter((i) => seen.has(i));
  const merged: Record<string, string> = {};
  for (const i of order) Object.assign(merged, outputs[dag.codes[i] as string] ?? {});
  return merged;
}

/** Indexes of every task `index` depends on, directly or not. */
export function ancestorsOf(dag: Dag, index: number): Set<number> {
  const seen = new Set<number>();
  const stack = [...(dag.upstream[index] ?? [])];
  while (stack.length > 0) {
    const u = stack.pop() as number;
    if (seen.has(u)) continue;
    seen.add(u);
    stack.push(...(dag.upstream[u] ?? []));
  }
  return seen;
}

/**
 * The parameters of one task attempt: startup > local > upstream OUT > global > built-in
 * (DolphinScheduler's precedence), references inside values expanded, time parameters in the
 * instance's zone ({@link zoneOf}).
 * @throws ParamError for a malformed `$[...]` time expression.
 */
export function taskParams(
  inst: InstanceRecord,
  def: Pick<LoadedDefinition, "definition" | "dag">,
  index: number,
  attempt: number,
): Record<string, string> {
  const task = def.definition.tasks[index] as TaskDefinition;
  const baseMs = baseTimeOf(inst);
  const zone = zoneOf(inst);
  return resolveParams({
    global: def.definition.params,
    upstreamOut: upstreamOutputs(def.dag, inst.outputs, index),
    local: task.params,
    startup: inst.params,
    builtins: builtinParams({
      baseMs,
      workflow: inst.workflow,
      instanceId: inst.instanceId,
      taskCode: task.code,
      attempt,
      zone,
    }),
    baseMs,
    zone,
  });
}
