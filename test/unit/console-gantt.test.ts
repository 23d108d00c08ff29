import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import {
  buildGantt,
  type DagTask,
  layoutGantt,
  MIN_BAR_WIDTH_PX,
  topologicalOrder,
} from "../../console/src/model/gantt.js";
import { makeTimeAxis } from "../../console/src/model/time-axis.js";
import type { TaskInstance } from "../../lib/cli/api-types.generated.js";
import { convertWfcommons } from "../../lib/import/wfcommons.js";
import { readWfcommonsFile, WFCOMMONS_DIR } from "../../lib/import/wfcommons-file.js";

const T0 = Date.UTC(2026, 10, 24, 6, 0, 0);
const iso = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();

/** An attempt queued at `q`, started at `s`, ended at `e` (ms after T0; omitted when undefined). */
function attempt(
  code: string,
  q: number | undefined,
  s: number | undefined,
  e: number | undefined,
  state: TaskInstance["state"] = e === undefined ? "RUNNING" : "SUCCESS",
  n = 1,
): TaskInstance {
  return {
    code,
    state,
    attempt: n,
    ...(q !== undefined ? { submittedAt: iso(q) } : {}),
    ...(s !== undefined ? { startedAt: iso(s) } : {}),
    ...(e !== undefined ? { endedAt: iso(e) } : {}),
  };
}

/** Every task comes after all its upstream tasks. */
function expectTopological(order: readonly string[], tasks: readonly DagTask[]): void {
  const pos = new Map(order.map((c, i) => [c, i]));
  for (const t of tasks) {
    for (const u of t.upstream ?? []) {
      expect(pos.get(u) ?? -1, `${u} before ${t.code}`).toBeLessThan(pos.get(t.code) ?? -1);
    }
  }
}

describe("topological order", () => {
  it("orders by layer (graph columns), ties by definition order", () => {
    const tasks = [
      { code: "d", upstream: ["b"] },
      { code: "a" },
      { code: "b", upstream: ["a", "ghost"] },
      { code: "c", upstream: [] },
    ];
    expect(topologicalOrder(tasks)).toEqual(["a", "c", "b", "d"]);
    expectTopological(
      topologicalOrder(tasks),
      tasks.filter((t) => t.code !== "b"),
    );
  });

  it("keeps tasks on a cycle (last) instead of throwing", () => {
    const order = topologicalOrder([
      { code: "x", upstream: ["y"] },
      { code: "y", upstream: ["x"] },
      { code: "r" },
    ]);
    expect(order).toEqual(["r", "x", "y"]);
  });
});

describe("gantt bars", () => {
  const dag = [{ code: "a" }, { code: "b", upstream: ["a"] }, { code: "c", upstream: ["b"] }];

  it("draws queued then run parts, retries as several bars, nothing for tasks not started", () => {
    const model = buildGantt({
      tasks: dag,
      attempts: [
        attempt("b", 1_100, 1_300, 2_000, "FAILURE", 1),
        attempt("a", 0, 100, 1_000),
        attempt("b", 2_500, 2_600, 4_000, "SUCCESS", 2),
        attempt("c", undefined, undefined, undefined, "SUBMITTED"),
      ],
      nowMs: T0 + 10_000,
    });
    expect(model.rows.map((r) => r.code)).toEqual(["a", "b", "c"]);
    expect(model.rows[2]?.bars).toEqual([]);
    const b = model.rows[1]?.bars ?? [];
    expect(b.map((x) => [x.attempt, x.state, x.queuedMs, x.runMs])).toEqual([
      [1, "FAILURE", 200, 700],
      [2, "SUCCESS", 100, 1_400],
    ]);
    expect(model.range).toEqual({ startMs: T0, endMs: T0 + 4_000 });

    const axis = makeTimeAxis({ startMs: T0, endMs: T0 + 4_000, widthPx: 400 });
    const rows = layoutGantt(model, axis);
    const [first, second] = rows[1]?.bars ?? [];
    expect(first).toMatchObject({ x: 110, width: 90, queuedWidth: 20 });
    expect(second).toMatchObject({ x: 250, width: 150, queuedWidth: 10 });
  });

  it("ends running attempts at now, and a queued-only attempt is all queue", () => {
    const model = buildGantt({
      tasks: dag,
      attempts: [
        attempt("a", 0, 10, undefined, "RUNNING"),
        attempt("b", 0, undefined, undefined, "SUBMITTED"),
      ],
      nowMs: T0 + 5_000,
    });
    const [a, b] = model.rows.map((r) => r.bars[0]);
    expect(a).toMatchObject({ running: true, endMs: T0 + 5_000, runMs: 4_990 });
    expect(b).toMatchObject({ running: true, queuedMs: 5_000, runMs: 0 });
    expect(b?.startedAtMs).toBeUndefined();
    const axis = makeTimeAxis({ startMs: T0, endMs: T0 + 5_000, widthPx: 500 });
    const placed = layoutGantt(model, axis)[1]?.bars[0];
    expect(placed?.queuedWidth).toBe(placed?.width);
  });

  it("never draws a bar narrower than the minimum, zero-length and single tasks included", () => {
    const single = buildGantt({
      tasks: [{ code: "only" }],
      attempts: [attempt("only", 0, 0, 0)],
      nowMs: T0,
    });
    expect(single.criticalPath).toEqual(["only"]);
    expect(single.range?.endMs).toBeGreaterThan(single.range?.startMs ?? 0);
    const axis = makeTimeAxis({ ...(single.range ?? { startMs: 0, endMs: 1 }), widthPx: 300 });
    expect(layoutGantt(single, axis)[0]?.bars[0]?.width).toBe(MIN_BAR_WIDTH_PX);

    // 500 one-ms tasks over a day: all far below a pixel.
    const tasks = Array.from({ length: 500 }, (_, i) => ({ code: `t${i}` }));
    const attempts = tasks.map((t, i) => attempt(t.code, i * 100, i * 100, i * 100 + 1));
    attempts.push(attempt("late", 86_400_000, 86_400_000, 86_400_000));
    const model = buildGantt({ tasks, attempts, nowMs: T0 });
    const wide = makeTimeAxis({ ...(model.range ?? { startMs: 0, endMs: 1 }), widthPx: 1000 });
    for (const row of layoutGantt(model, wide, 4)) {
      for (const bar of row.bars) expect(bar.width).toBeGreaterThanOrEqual(4);
    }
    // An attempt of a task the DAG does not have still gets a row, last.
    expect(model.rows.at(-1)).toMatchObject({ code: "late", inDefinition: false });
  });

  it("clamps bars that clock skew would draw backwards", () => {
    const model = buildGantt({
      tasks: [{ code: "a" }],
      attempts: [attempt("a", 1_000, 900, 800)],
      nowMs: T0,
    });
    const bar = model.rows[0]?.bars[0];
    expect(bar?.endMs).toBeGreaterThanOrEqual(bar?.queuedAtMs ?? 0);
    expect(bar?.runMs).toBeGreaterThanOrEqual(0);
  });
});

describe("critical path", () => {
  // a → b → d, a → c → d, c → e; x is independent.
  const diamond = [
    { code: "a" },
    { code: "b", upstream: ["a"] },
    { code: "c", upstream: ["a"] },
    { code: "d", upstream: ["b", "c"] },
    { code: "e", upstream: ["c"] },
    { code: "x" },
  ];

  it("follows the upstream that ended latest before each task started", () => {
    const model = buildGantt({
      tasks: diamond,
      attempts: [
        attempt("a", 0, 10, 100),
        attempt("x", 0, 5, 3_000),
        attempt("b", 100, 110, 400),
        attempt("c", 100, 110, 900),
        attempt("d", 900, 950, 5_000),
        attempt("e", 900, 950, 1_000),
      ],
      nowMs: T0 + 99_999,
    });
    expect(model.criticalPath).toEqual(["a", "c", "d"]);
    expect(model.rows.filter((r) => r.critical).map((r) => r.code)).toEqual(["a", "c", "d"]);
    expect(model.rows.find((r) => r.code === "d")?.bars.every((b) => b.critical)).toBe(true);
    expect(model.rows.find((r) => r.code === "b")?.bars[0]?.critical).toBe(false);
  });

  it("uses the last retry's end and the first attempt's queue time", () => {
    const model = buildGantt({
      tasks: diamond,
      attempts: [
        attempt("a", 0, 10, 100),
        attempt("b", 100, 110, 200, "FAILURE", 1),
        attempt("b", 300, 310, 1_500, "SUCCESS", 2), // b's retry now gates d
        attempt("c", 100, 110, 900),
        attempt("d", 1_500, 1_550, 2_000, "FAILURE", 1),
        attempt("d", 2_100, 2_150, 3_000, "SUCCESS", 2),
      ],
      nowMs: T0,
    });
    expect(model.criticalPath).toEqual(["a", "b", "d"]);
    expect(model.rows.find((r) => r.code === "d")?.bars).toHaveLength(2);
  });

  it("ignores an upstream that ended after the task was queued, and ends at a running task", () => {
    const model = buildGantt({
      tasks: diamond,
      attempts: [
        attempt("a", 0, 10, 100),
        attempt("b", 100, 110, 400),
        attempt("c", 100, 110, 1_200), // ended after d was queued: not what d waited for
        attempt("d", 1_000, 1_050, undefined, "RUNNING"),
      ],
      nowMs: T0 + 60_000,
    });
    expect(model.criticalPath).toEqual(["a", "b", "d"]);
    expect(model.range?.endMs).toBe(T0 + 60_000);
  });

  it("is empty when nothing started", () => {
    const model = buildGantt({ tasks: diamond, attempts: [], nowMs: T0 });
    expect(model.criticalPath).toEqual([]);
    expect(model.range).toBeUndefined();
    expect(model.rows).toHaveLength(diamond.length);
  });
});

/** Simulates a run with unlimited workers: each task queued when its last upstream ends. */
function simulate(tasks: readonly DagTask[], runtimeMs: (code: string) => number, queueMs: number) {
  const byCode = new Map(tasks.map((t) => [t.code, t]));
  const end = new Map<string, number>();
  const attempts: TaskInstance[] = [];
  for (const code of topologicalOrder(tasks)) {
    const t = byCode.get(code) as DagTask;
    const q = Math.max(0, ...(t.upstream ?? []).map((u) => end.get(u) ?? 0));
    const e = q + queueMs + runtimeMs(code);
    end.set(code, e);
    attempts.push(attempt(code, q, q + queueMs, e));
  }
  return attempts;
}

describe("large DAGs", () => {
  it("computes a layered 1,700-task DAG with retries fast", () => {
    // 10 layers of 170 tasks; each task depends on 1–3 tasks of the layer before.
    let seed = 42;
    const rand = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const tasks: DagTask[] = [];
    for (let layer = 0; layer < 10; layer++) {
      for (let i = 0; i < 170; i++) {
        const upstream =
          layer === 0
            ? []
            : Array.from(
                { length: 1 + Math.floor(rand() * 3) },
                () => `L${layer - 1}_${Math.floor(rand() * 170)}`,
              );
        tasks.push({ code: `L${layer}_${i}`, upstream });
      }
    }
    tasks.reverse(); // definition order need not be topological
    const byCode = new Map(tasks.map((t) => [t.code, t]));
    const runtime = new Map(tasks.map((t) => [t.code, Math.floor(rand() * 60_000)]));
    const attempts: TaskInstance[] = [];
    const end = new Map<string, number>();
    for (const code of topologicalOrder(tasks)) {
      const t = byCode.get(code) as DagTask;
      const q = Math.max(0, ...(t.upstream ?? []).map((u) => end.get(u) ?? 0));
      const r = runtime.get(code) ?? 0;
      if (rand() < 0.05) attempts.push(attempt(code, q, q + 20, q + 20 + r / 2, "FAILURE", 1));
      const e = q + 30 + r;
      attempts.push(attempt(code, q, q + 30, e, "SUCCESS", 2));
      end.set(code, e);
    }

    const started = performance.now();
    const model = buildGantt({ tasks, attempts, nowMs: T0 + 10 * 3_600_000 });
    const axis = makeTimeAxis({ ...(model.range ?? { startMs: 0, endMs: 1 }), widthPx: 1600 });
    const rows = layoutGantt(model, axis);
    const elapsed = performance.now() - started;

    expect(elapsed).toBeLessThan(500); // generous: typically a few ms
    expect(rows).toHaveLength(1_700);
    const order = rows.map((r) => r.code);
    expectTopological(order, tasks);
    // Layer 0 first, in definition order.
    expect(order.slice(0, 3)).toEqual(["L0_169", "L0_168", "L0_167"]);
    expect(model.criticalPath).toHaveLength(10);
    for (const row of rows)
      for (const bar of row.bars) expect(bar.width).toBeGreaterThanOrEqual(MIN_BAR_WIDTH_PX);
  });

  it("finds the Epigenomics trace's critical path (1,695 tasks) in well under 100 ms", () => {
    const doc = readWfcommonsFile(
      join(WFCOMMONS_DIR, "epigenomics-chameleon-ilmn-6seq-50k-001.json.gz"),
    );
    const { definition, criticalPathSeconds } = convertWfcommons(doc, { timeScale: 1 });
    const runtime = new Map(
      definition.tasks.map((t) => [
        t.code,
        Math.round(Number(/sleep ([\d.]+)/.exec(t.command)?.[1] ?? 0) * 1000),
      ]),
    );
    const attempts = simulate(definition.tasks, (c) => runtime.get(c) ?? 0, 0);

    const started = performance.now();
    const model = buildGantt({ tasks: definition.tasks, attempts, nowMs: T0 + 86_400_000 });
    const axis = makeTimeAxis({ ...(model.range ?? { startMs: 0, endMs: 1 }), widthPx: 1200 });
    layoutGantt(model, axis);
    expect(performance.now() - started).toBeLessThan(500);

    expect(model.rows).toHaveLength(1_695);
    expectTopological(
      model.rows.map((r) => r.code),
      definition.tasks,
    );
    // With unlimited workers and no queueing, the path is the trace's longest runtime chain.
    const pathMs = model.criticalPath.reduce((sum, c) => sum + (runtime.get(c) ?? 0), 0);
    expect(pathMs).toBe(Math.round(criticalPathSeconds * 1000));
    expect((model.range?.endMs ?? 0) - (model.range?.startMs ?? 0)).toBe(pathMs);
    // Consecutive path tasks are real edges.
    const up = new Map(definition.tasks.map((t) => [t.code, t.upstream]));
    for (let i = 1; i < model.criticalPath.length; i++) {
      expect(up.get(model.criticalPath[i] as string)).toContain(model.criticalPath[i - 1]);
    }
  });
});
