/**
 * OUT values where a step needs them. The instance item marks the tasks whose current attempt
 * set OUT parameters (`outputSlots`) and the values stay on those attempts' task items, where the
 * worker wrote them with the result: the instance item, rewritten on every dispatcher step, does not
 * grow with them (docs/cost.md). Before a task's parameters are resolved (taskParams), the
 * values of its ancestors are read into the in-memory record.
 */
import { LRUCache } from "lru-cache";
import { attemptOf } from "../core/progress.js";
import type { InstanceRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { LoadedDefinition } from "./definitions.js";
import { ancestorsOf } from "./engine-deps.js";

/**
 * Values read, by `instanceId\ncode#attempt`: an attempt's OUT values never change once its
 * result is written, so a dispatcher process that steps one instance many times (a chain) reads
 * each once. Bounded: entries are small (at most MAX_INSTANCE_OUTPUT_BYTES per instance).
 */
const read = new LRUCache<string, Record<string, string>>({ max: 20_000 });

const cacheKey = (instanceId: string, code: string, attempt: number) =>
  `${instanceId}\n${code}#${attempt}`;

/**
 * `inst` with `outputs` holding the OUT values of every ancestor of `indexes` that set some
 * (others as they were). Reads only what memory lacks: one consistent BatchGetItem per 100
 * attempts.
 * @returns `inst` itself when nothing was missing.
 * @throws what the store throws (the step is then retried).
 */
export async function withUpstreamOutputs(
  store: Pick<Store, "getTaskOutputs">,
  inst: InstanceRecord,
  def: Pick<LoadedDefinition, "dag">,
  indexes: readonly number[],
): Promise<InstanceRecord> {
  const setters = inst.outputSlots;
  if (!setters?.includes("1") || indexes.length === 0) return inst;
  const have = inst.outputs ?? {};
  const missing = new Map<string, number>();
  for (const index of indexes) {
    for (const a of ancestorsOf(def.dag, index)) {
      const code = def.dag.codes[a] as string;
      // A task keeps the attempt that set its values until a rerun clears the marks.
      if (setters[a] === "1" && !(code in have)) missing.set(code, attemptOf(inst.progress, a));
    }
  }
  if (missing.size === 0) return inst;
  const found: Record<string, Record<string, string>> = {};
  const keys: { instanceId: string; code: string; attempt: number }[] = [];
  for (const [code, attempt] of missing) {
    const hit = read.get(cacheKey(inst.instanceId, code, attempt));
    if (hit) found[code] = hit;
    else keys.push({ instanceId: inst.instanceId, code, attempt });
  }
  if (keys.length > 0) {
    for (const t of await store.getTaskOutputs(keys)) {
      found[t.code] = t.outputs;
      read.set(cacheKey(inst.instanceId, t.code, t.attempt), t.outputs);
    }
  }
  return { ...inst, outputs: { ...have, ...found } };
}

/**
 * The `outputSlots` of an item written by 0.1.0, from the values it holds inline (the task items
 * hold them too: its workers wrote them with their results).
 */
export function legacyOutputSlots(
  inst: InstanceRecord,
  def: Pick<LoadedDefinition, "dag">,
): string {
  const slots: string[] = [];
  for (const code of Object.keys(inst.outputs ?? {})) {
    const index = def.dag.indexOf(code);
    if (index === undefined) continue;
    while (slots.length <= index) slots.push("0");
    slots[index] = "1";
  }
  return slots.join("");
}

/** Bytes of the OUT values an item written by 0.1.0 holds inline (it kept no count). */
export function legacyOutputBytes(inst: InstanceRecord): number {
  const n = Object.keys(inst.outputs ?? {}).length;
  return n === 0 ? 0 : Buffer.byteLength(JSON.stringify(inst.outputs));
}
