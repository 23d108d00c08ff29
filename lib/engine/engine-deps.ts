/**
 * What the dispatcher's parts share: stores, queues, definitions, the task-group gate and the
 * clock, plus the parameter resolution every dispatched task (worker or logic) goes through.
 */

import type { Dag } from "../core/dag.js";
import type { TaskDefinition } from "../core/model.js";
import { resolveParams } from "../core/params.js";
import { builtinParams } from "../core/time-params.js";
import type { EventPublisher } from "../events/event-publisher.js";
import type { Queues } from "../queue/sqs-queues.js";
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
  events?: EventPublisher;
}

/** Base time of built-in time parameters: the schedule time, else when the run was requested. */
export function baseTimeOf(inst: InstanceRecord): number {
  return inst.scheduleTime ?? inst.createdAt;
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
  const seen = new Set<number>();
  const stack = [...(dag.upstream[index] ?? [])];
  while (stack.length > 0) {
    const u = stack.pop() as number;
    if (seen.has(u)) continue;
    seen.add(u);
    stack.push(...(dag.upstream[u] ?? []));
  }
  const order = topologicalRanks(dag).filter((i) => seen.has(i));
  const merged: Record<string, string> = {};
  for (const i of order) Object.assign(merged, outputs[dag.codes[i] as string] ?? {});
  return merged;
}

/**
 * The parameters of one task attempt: startup > local > upstream OUT > global > built-in
 * (DolphinScheduler's precedence), references inside values expanded.
 * @throws ParamError for a malformed `$[...]` time expression.
 */
export function taskParams(
  inst: InstanceRecord,
  def: LoadedDefinition,
  index: number,
  attempt: number,
): Record<string, string> {
  const task = def.definition.tasks[index] as TaskDefinition;
  const baseMs = baseTimeOf(inst);
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
    }),
    baseMs,
  });
}
