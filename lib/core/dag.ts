/**
 * The task graph of a workflow definition, by task index (position in `tasks`), so that an
 * instance's progress can be kept as one character per task.
 */
import type { TaskScope } from "./model.js";

interface GraphTask {
  code: string;
  upstream: readonly string[];
}

/**
 * Finds one cycle, if any (iterative DFS; definitions have up to 10,000 tasks).
 * @returns the cycle's path as codes in execution order (each code is upstream of the next),
 *   first code repeated at the end (`a -> b -> a`), or null.
 */
export function findCycle(tasks: readonly GraphTask[]): string[] | null {
  const index = new Map(tasks.map((t, i) => [t.code, i]));
  // 0 = unvisited, 1 = on the stack, 2 = done
  const color = new Uint8Array(tasks.length);
  for (let root = 0; root < tasks.length; root++) {
    if (color[root] !== 0) continue;
    const stack: Array<[number, number]> = [[root, 0]];
    color[root] = 1;
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as [number, number];
      const [node, next] = top;
      const ups = tasks[node]?.upstream ?? [];
      if (next >= ups.length) {
        color[node] = 2;
        stack.pop();
        continue;
      }
      top[1] = next + 1;
      const up = index.get(ups[next] as string);
      if (up === undefined) continue;
      if (color[up] === 1) {
        // The DFS stack from `up` to `node` follows upstream edges; read backwards it runs in
        // execution order (upstream -> downstream), which is how users read a DAG.
        const path: string[] = [];
        for (let i = stack.length - 1; i >= 0; i--) {
          const n = (stack[i] as [number, number])[0];
          path.push(tasks[n]?.code ?? "");
          if (n === up) break;
        }
        path.unshift(tasks[up]?.code ?? "");
        return path;
      }
      if (color[up] === 0) {
        color[up] = 1;
        stack.push([up, 0]);
      }
    }
  }
  return null;
}

/** Immutable adjacency of a validated (acyclic, known upstreams) definition. */
export class Dag {
  readonly codes: readonly string[];
  readonly upstream: readonly (readonly number[])[];
  readonly downstream: readonly (readonly number[])[];
  private readonly index: ReadonlyMap<string, number>;

  constructor(tasks: readonly GraphTask[]) {
    this.codes = tasks.map((t) => t.code);
    this.index = new Map(this.codes.map((c, i) => [c, i]));
    const down: number[][] = tasks.map(() => []);
    this.upstream = tasks.map((t, i) =>
      t.upstream.map((code) => {
        const u = this.index.get(code);
        if (u === undefined) throw new Error(`unknown upstream '${code}' of '${t.code}'`);
        down[u]?.push(i);
        return u;
      }),
    );
    this.downstream = down;
  }

  get size(): number {
    return this.codes.length;
  }

  /** Index of a task code, or undefined. */
  indexOf(code: string): number | undefined {
    return this.index.get(code);
  }

  /** Task indices in an order where every task comes after its upstreams (Kahn). */
  topologicalOrder(): number[] {
    const indegree = this.upstream.map((u) => u.length);
    const queue: number[] = [];
    indegree.forEach((d, i) => {
      if (d === 0) queue.push(i);
    });
    for (let head = 0; head < queue.length; head++) {
      for (const d of this.downstream[queue[head] as number] ?? []) {
        const left = (indegree[d] as number) - 1;
        indegree[d] = left;
        if (left === 0) queue.push(d);
      }
    }
    return queue;
  }

  /**
   * The tasks a run covers (DolphinScheduler `TaskDependType`): DOWNSTREAM = the start tasks
   * and everything after them, UPSTREAM = the start tasks and everything before them, ONLY = the
   * start tasks. Without start tasks, every task.
   */
  scope(startTasks: readonly string[] | undefined, scope: TaskScope): boolean[] {
    if (!startTasks || startTasks.length === 0) return this.codes.map(() => true);
    const inScope = this.codes.map(() => false);
    const stack: number[] = [];
    for (const code of startTasks) {
      const i = this.index.get(code);
      if (i === undefined) throw new Error(`unknown start task '${code}'`);
      inScope[i] = true;
      stack.push(i);
    }
    if (scope === "ONLY") return inScope;
    const edges = scope === "DOWNSTREAM" ? this.downstream : this.upstream;
    while (stack.length > 0) {
      for (const next of edges[stack.pop() as number] ?? []) {
        if (!inScope[next]) {
          inScope[next] = true;
          stack.push(next);
        }
      }
    }
    return inScope;
  }
}
