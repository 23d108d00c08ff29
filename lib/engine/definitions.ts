/**
 * Definitions as the dispatcher uses them: the stored definition, its DAG and retry policies.
 * Versions are immutable, so a process caches them without invalidation (bounded LRU).
 */
import { LRUCache } from "lru-cache";
import { Dag } from "../core/dag.js";
import { isLogicTaskType, type WorkflowDefinition } from "../core/model.js";
import type { TaskKind } from "../core/progress.js";
import type { RetryPolicy } from "../core/retry.js";
import type { Store } from "../store/store.js";

export interface LoadedDefinition {
  name: string;
  version: number;
  definition: WorkflowDefinition;
  dag: Dag;
  policies: RetryPolicy[];
  /** Per task index: "worker" or the logic task type the dispatcher runs. */
  kinds: TaskKind[];
}

export class DefinitionCache {
  /** Loads by `name\u0000version`; a load that fails or finds nothing is not kept. */
  private readonly cache: LRUCache<string, Promise<LoadedDefinition | undefined>>;

  /** @param max versions kept (least recently used go first). */
  constructor(
    private readonly store: Store,
    max = 200,
  ) {
    this.cache = new LRUCache({ max });
  }

  /** The definition, or undefined when that version does not exist. */
  get(name: string, version: number): Promise<LoadedDefinition | undefined> {
    const key = `${name}\u0000${version}`;
    let p = this.cache.get(key);
    if (p) return p;
    p = this.store.getDefinition(name, version).then((stored) => {
      if (!stored) {
        this.cache.delete(key);
        return undefined;
      }
      const def = stored.definition;
      return {
        name,
        version,
        definition: def,
        dag: new Dag(def.tasks),
        kinds: def.tasks.map((t): TaskKind => (isLogicTaskType(t.type) ? t.type : "worker")),
        policies: def.tasks.map((t) => ({
          retries: t.retries,
          retryIntervalSeconds: t.retryIntervalSeconds,
          retryBackoff: t.retryBackoff,
          ...(t.maxRetryIntervalSeconds !== undefined
            ? { maxRetryIntervalSeconds: t.maxRetryIntervalSeconds }
            : {}),
        })),
      };
    });
    p.catch(() => this.cache.delete(key));
    this.cache.set(key, p);
    return p;
  }
}
