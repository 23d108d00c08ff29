import { describe, expect, it } from "vitest";
import { Dag, findCycle } from "../../lib/core/dag.js";
import { prng, shuffle } from "../helpers/random.js";

interface Task {
  code: string;
  upstream: string[];
}

/**
 * A random DAG: node k may depend on nodes < k (so it is acyclic), then the task list is shuffled
 * so that list order is not already a topological order.
 */
function randomDag(n: number, seed: number, maxUpstream = 4): Task[] {
  const rand = prng(seed);
  const tasks: Task[] = [];
  for (let k = 0; k < n; k++) {
    const ups = new Set<string>();
    const count = k === 0 ? 0 : Math.floor(rand() * (maxUpstream + 1));
    for (let j = 0; j < count; j++) ups.add(`n${Math.floor(rand() * k)}`);
    tasks.push({ code: `n${k}`, upstream: [...ups] });
  }
  return shuffle(tasks, rand);
}

/** Checks that `cycle` (first code repeated last) follows real edges, all in one direction. */
function expectRealCycle(cycle: string[] | null, tasks: readonly Task[]): void {
  expect(cycle).not.toBeNull();
  const path = cycle as string[];
  expect(path.length).toBeGreaterThanOrEqual(2);
  expect(path[0]).toBe(path[path.length - 1]);
  expect(new Set(path.slice(0, -1)).size).toBe(path.length - 1);
  const ups = new Map(tasks.map((t) => [t.code, t.upstream]));
  const pairs = path.slice(0, -1).map((x, i) => [x, path[i + 1] as string] as const);
  const dependsOnNext = pairs.every(([x, y]) => ups.get(x)?.includes(y));
  const feedsNext = pairs.every(([x, y]) => ups.get(y)?.includes(x));
  expect(dependsOnNext || feedsNext, path.join(" -> ")).toBe(true);
}

const t = (code: string, ...upstream: string[]): Task => ({ code, upstream });

/** a → b, a → c, b → d, c → d */
const diamond = [t("a"), t("b", "a"), t("c", "a"), t("d", "b", "c")];

function inScope(dag: Dag, flags: boolean[]): string[] {
  return dag.codes.filter((_, i) => flags[i]);
}

describe("Dag", () => {
  it("indexes codes and both edge directions", () => {
    const dag = new Dag(diamond);
    expect(dag.size).toBe(4);
    expect(dag.indexOf("c")).toBe(2);
    expect(dag.indexOf("zz")).toBeUndefined();
    expect(dag.upstream[3]).toEqual([1, 2]);
    expect(dag.downstream[0]).toEqual([1, 2]);
    expect(dag.downstream[3]).toEqual([]);
  });

  it("refuses an unknown upstream", () => {
    expect(() => new Dag([t("a", "ghost")])).toThrow(/unknown upstream 'ghost'/);
  });

  it.each([1, 2, 3, 4, 5])(
    "orders a random 300-task DAG so every edge goes forward (seed %i)",
    (seed) => {
      const tasks = randomDag(300, seed);
      const dag = new Dag(tasks);
      const order = dag.topologicalOrder();
      expect(order).toHaveLength(300);
      expect(new Set(order).size).toBe(300);
      const position = new Map(order.map((index, pos) => [index, pos]));
      let edges = 0;
      tasks.forEach((task, i) => {
        for (const up of task.upstream) {
          edges++;
          const u = dag.indexOf(up) as number;
          expect(position.get(u) as number).toBeLessThan(position.get(i) as number);
        }
      });
      expect(edges).toBeGreaterThan(300); // the generator really produced a dense graph
    },
  );

  it("orders a 10,000-task chain given in reverse", () => {
    const n = 10_000;
    const tasks = Array.from({ length: n }, (_, k) => {
      const i = n - 1 - k;
      return t(`c${i}`, ...(i > 0 ? [`c${i - 1}`] : []));
    });
    const order = new Dag(tasks).topologicalOrder();
    expect(order).toEqual(Array.from({ length: n }, (_, k) => n - 1 - k));
  });
});

describe("findCycle", () => {
  it("returns null for acyclic graphs", () => {
    expect(findCycle([])).toBeNull();
    expect(findCycle([t("a")])).toBeNull();
    expect(findCycle(diamond)).toBeNull();
    for (const seed of [11, 12, 13]) expect(findCycle(randomDag(300, seed))).toBeNull();
  });

  it("finds a self-loop", () => {
    const tasks = [t("a"), t("b", "a", "b")];
    expect(findCycle(tasks)).toEqual(["b", "b"]);
  });

  it("finds a two-task cycle", () => {
    const tasks = [t("a", "b"), t("b", "a")];
    const cycle = findCycle(tasks);
    expectRealCycle(cycle, tasks);
    expect(new Set(cycle)).toEqual(new Set(["a", "b"]));
  });

  it("finds a cycle reachable only through acyclic parts", () => {
    const tasks = [
      t("start"),
      t("x", "start"),
      t("y", "x", "w"),
      t("z", "y"),
      t("w", "z"),
      t("end", "y", "x"),
    ];
    const cycle = findCycle(tasks);
    expectRealCycle(cycle, tasks);
    expect(new Set(cycle)).toEqual(new Set(["y", "z", "w"]));
  });

  it("ignores unknown upstream codes", () => {
    expect(findCycle([t("a", "ghost"), t("b", "a")])).toBeNull();
  });

  it.each([21, 22, 23, 24, 25, 26])(
    "finds a real cycle after a back edge is added to a random DAG (seed %i)",
    (seed) => {
      const rand = prng(seed * 7919);
      const tasks = randomDag(300, seed);
      // Take a task with upstreams, follow upstream edges a few steps, then close the loop.
      const byCode = new Map(tasks.map((task) => [task.code, task]));
      const withUps = tasks.filter((task) => task.upstream.length > 0);
      const from = withUps[Math.floor(rand() * withUps.length)] as Task;
      let to = from;
      for (let step = 0; step < 5 && to.upstream.length > 0; step++) {
        to = byCode.get(to.upstream[Math.floor(rand() * to.upstream.length)] as string) as Task;
      }
      to.upstream.push(from.code); // `to` now depends on one of its own downstream tasks
      expectRealCycle(findCycle(tasks), tasks);
    },
  );

  it("handles a 10,000-task chain and a 10,000-task ring without overflowing the stack", () => {
    const n = 10_000;
    const chain = Array.from({ length: n }, (_, i) => t(`c${i}`, ...(i > 0 ? [`c${i - 1}`] : [])));
    expect(findCycle(chain)).toBeNull();
    const ring = Array.from({ length: n }, (_, i) => t(`c${i}`, `c${(i + n - 1) % n}`));
    const cycle = findCycle(ring);
    expectRealCycle(cycle, ring);
    expect(cycle).toHaveLength(n + 1);
  });
});

describe("Dag.scope", () => {
  const dag = new Dag(diamond);

  it("covers every task without start tasks, whatever the scope", () => {
    for (const scope of ["DOWNSTREAM", "ONLY", "UPSTREAM"] as const) {
      expect(dag.scope(undefined, scope)).toEqual([true, true, true, true]);
      expect(dag.scope([], scope)).toEqual([true, true, true, true]);
    }
  });

  it("DOWNSTREAM: the start tasks and everything after them", () => {
    expect(inScope(dag, dag.scope(["a"], "DOWNSTREAM"))).toEqual(["a", "b", "c", "d"]);
    expect(inScope(dag, dag.scope(["b"], "DOWNSTREAM"))).toEqual(["b", "d"]);
    expect(inScope(dag, dag.scope(["d"], "DOWNSTREAM"))).toEqual(["d"]);
  });

  it("UPSTREAM: the start tasks and everything before them", () => {
    expect(inScope(dag, dag.scope(["d"], "UPSTREAM"))).toEqual(["a", "b", "c", "d"]);
    expect(inScope(dag, dag.scope(["b"], "UPSTREAM"))).toEqual(["a", "b"]);
    expect(inScope(dag, dag.scope(["a"], "UPSTREAM"))).toEqual(["a"]);
  });

  it("ONLY: just the start tasks", () => {
    expect(inScope(dag, dag.scope(["b"], "ONLY"))).toEqual(["b"]);
    expect(inScope(dag, dag.scope(["d", "a"], "ONLY"))).toEqual(["a", "d"]);
  });

  it("with several start tasks takes the union", () => {
    // a → b → e, a → c → d → f; x stands alone
    const wide = new Dag([
      t("a"),
      t("b", "a"),
      t("c", "a"),
      t("d", "c"),
      t("e", "b"),
      t("f", "d"),
      t("x"),
    ]);
    expect(inScope(wide, wide.scope(["b", "d"], "DOWNSTREAM"))).toEqual(["b", "d", "e", "f"]);
    expect(inScope(wide, wide.scope(["e", "d"], "UPSTREAM"))).toEqual(["a", "b", "c", "d", "e"]);
    expect(inScope(wide, wide.scope(["x", "f"], "ONLY"))).toEqual(["f", "x"]);
    expect(inScope(wide, wide.scope(["b", "b"], "DOWNSTREAM"))).toEqual(["b", "e"]);
  });

  it("throws for an unknown start task", () => {
    expect(() => dag.scope(["zz"], "DOWNSTREAM")).toThrow(/unknown start task 'zz'/);
    expect(() => dag.scope(["a", "zz"], "ONLY")).toThrow(/unknown start task 'zz'/);
  });

  it("DOWNSTREAM and UPSTREAM agree with reachability on a random DAG", () => {
    const tasks = randomDag(300, 99);
    const big = new Dag(tasks);
    const start = "n150";
    const s = big.indexOf(start) as number;
    const reach = (from: number, edges: readonly (readonly number[])[]): Set<number> => {
      const seen = new Set([from]);
      const todo = [from];
      while (todo.length > 0) {
        for (const n of edges[todo.pop() as number] ?? []) {
          if (!seen.has(n)) {
            seen.add(n);
            todo.push(n);
          }
        }
      }
      return seen;
    };
    const down = reach(s, big.downstream);
    const up = reach(s, big.upstream);
    expect(big.scope([start], "DOWNSTREAM")).toEqual(big.codes.map((_, i) => down.has(i)));
    expect(big.scope([start], "UPSTREAM")).toEqual(big.codes.map((_, i) => up.has(i)));
  });
});
