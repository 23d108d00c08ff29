/**
 * Definitions as the dispatcher uses them: the stored definition, its DAG and retry policies.
 * Versions are immutable, so a process caches them without invalidation (bounded LRU).
 */
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
  private readonly cache = new Map<string, Promise<LoadedDefinition | undefined>>();

  constructor(
    private readonly store: Store,
    private readonly max = 200,
  ) {}

  /** The definition, or undefined when that version does not exist. */
  get(name: string, version: number): Promise<LoadedDefinition | undefined> {
    const key = `${name}\u0000${version}`;
    let p = this.cache.get(key);
    if (p) {
      this.cache.delete(key); // LRU: move to the end
      this.cache.set(key, p);
      return p;
    }
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
    while (this.cache.size > this.max) {
      const oldest = this.cache.keys().next().value as string;
      this.cache.delete(oldest);
    }
    return p;
  }
}
