import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { convertWfcommons } from "../../lib/import/wfcommons.js";
import { readWfcommonsFile, WFCOMMONS_DIR } from "../../lib/import/wfcommons-file.js";

const CODE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

function loadTrace(file: string): unknown {
  return readWfcommonsFile(join(WFCOMMONS_DIR, `${file}.gz`));
}

// Figures of examples/wfcommons/README.md (unscaled seconds); the README rounds the
// critical paths (21.4, 5.4, 237.6, 1,084), these are the unrounded values.
const CASES = [
  { file: "montage-chameleon-2mass-005d-001.json", tasks: 58, edges: 114, cp: 21.385, work: 222 },
  { file: "seismology-chameleon-1000p-001.json", tasks: 1001, edges: 1000, cp: 5.437, work: 538 },
  {
    file: "cycles-chameleon-1l-3c-12p-001.json",
    tasks: 657,
    edges: 975,
    cp: 237.639,
    work: 10653,
  },
  {
    file: "epigenomics-chameleon-ilmn-6seq-50k-001.json",
    tasks: 1695,
    edges: 2108,
    cp: 1084.123,
    work: 26060,
  },
];

/** Minimal valid trace built from `[id, parents, runtime?]` triples. */
function trace(tasks: Array<[string, string[], number?]>): unknown {
  return {
    workflow: {
      specification: { tasks: tasks.map(([id, parents]) => ({ id, parents, children: [] })) },
      execution: {
        tasks: tasks
          .filter((t) => t[2] !== undefined)
          .map(([id, , runtimeInSeconds]) => ({ id, runtimeInSeconds })),
      },
    },
  };
}

describe("convertWfcommons on the shared traces", () => {
  for (const c of CASES) {
    it(`converts ${c.file}`, () => {
      const doc = loadTrace(c.file);
      const r = convertWfcommons(doc, { timeScale: 1, source: c.file });
      expect(r.taskCount).toBe(c.tasks);
      expect(r.edgeCount).toBe(c.edges);
      expect(r.criticalPathSeconds).toBeGreaterThan(c.cp - 0.1);
      expect(r.criticalPathSeconds).toBeLessThan(c.cp + 0.1);
      expect(Math.abs(r.totalWorkSeconds - c.work)).toBeLessThan(1);

      const tasks = r.definition.tasks;
      expect(tasks).toHaveLength(c.tasks);
      const codes = new Set(tasks.map((t) => t.code));
      expect(codes.size).toBe(tasks.length);
      let edges = 0;
      for (const t of tasks) {
        expect(t.code).toMatch(CODE);
        expect(t.type).toBe("SHELL");
        expect(t.command).toMatch(/^sleep (0|[1-9]\d*)(\.\d{0,2}[1-9])?$/);
        for (const u of t.upstream) expect(codes.has(u)).toBe(true);
        edges += t.upstream.length;
      }
      expect(edges).toBe(c.edges);
      expect(r.definition.description).toContain(c.file);

      // Scaling divides the critical path (up to per-task millisecond rounding).
      const fast = convertWfcommons(doc, { timeScale: 0.1 });
      expect(Math.abs(fast.criticalPathSeconds - r.criticalPathSeconds / 10)).toBeLessThan(0.05);
      expect(fast.definition.description).toContain("× 0.1");
    });
  }

  it("keeps the specification order and maps parents to upstream", () => {
    const r = convertWfcommons(loadTrace(CASES[0]?.file ?? ""), { timeScale: 0.1 });
    const first = r.definition.tasks[0];
    expect(first).toEqual({
      code: "mProject_ID0000001",
      type: "SHELL",
      upstream: [],
      command: "sleep 1.671",
    });
    expect(r.definition.tasks.at(-1)?.upstream).toEqual([
      "mAdd_ID0000018",
      "mAdd_ID0000037",
      "mAdd_ID0000056",
    ]);
  });
});

describe("convertWfcommons on small traces", () => {
  it("formats sleeps with at most 3 decimals and computes the weighted longest chain", () => {
    const r = convertWfcommons(
      trace([
        ["a", [], 2.1449],
        ["b", ["a"], 1.0004],
        ["c", ["a"], 10],
        ["d", ["b", "c"], 0.5],
        ["e", []],
      ]),
      { timeScale: 1 },
    );
    expect(r.definition.tasks.map((t) => t.command)).toEqual([
      "sleep 2.145",
      "sleep 1",
      "sleep 10",
      "sleep 0.5",
      "sleep 0",
    ]);
    expect(r.criticalPathSeconds).toBe(12.645);
    expect(r.totalWorkSeconds).toBe(13.645);
    expect(r.edgeCount).toBe(4);
  });

  it("scales runtimes, and a zero scale gives sleep 0 everywhere", () => {
    const doc = trace([
      ["a", [], 3],
      ["b", ["a"], 4],
    ]);
    expect(convertWfcommons(doc, { timeScale: 0.25 }).definition.tasks[1]?.command).toBe("sleep 1");
    const zero = convertWfcommons(doc, { timeScale: 0 });
    expect(zero.criticalPathSeconds).toBe(0);
    expect(zero.definition.tasks.every((t) => t.command === "sleep 0")).toBe(true);
  });

  it("rewrites invalid ids into unique codes and keeps parents consistent", () => {
    const long = "x".repeat(200);
    const r = convertWfcommons(
      trace([
        ["a b", []],
        ["a_b", ["a b"]],
        ["-x", ["a b", "a_b", "a b"]],
        ["a/b", ["-x"]],
        [long, []],
        [`${long}!`, [long]],
      ]),
      { timeScale: 1 },
    );
    const codes = r.definition.tasks.map((t) => t.code);
    // Valid ids keep their names; rewritten ones give way.
    expect(codes.slice(0, 4)).toEqual(["a_b_2", "a_b", "t-x", "a_b_3"]);
    expect(r.definition.tasks[2]?.upstream).toEqual(["a_b_2", "a_b"]);
    expect(r.definition.tasks[3]?.upstream).toEqual(["t-x"]);
    expect(new Set(codes).size).toBe(codes.length);
    for (const c of codes) expect(c).toMatch(CODE);
    expect(r.definition.tasks[5]?.upstream).toEqual([codes[4]]);
    expect(r.edgeCount).toBe(5);
  });
});

describe("convertWfcommons errors", () => {
  const one = trace([["a", []]]);
  const cases: Array<[string, unknown, number, string]> = [
    ["a string", "nope", 1, "WfCommons trace: expected a JSON object at the top level."],
    ["an array", [], 1, "WfCommons trace: expected a JSON object at the top level."],
    ["no workflow", {}, 1, "workflow: is missing."],
    [
      "no tasks",
      { workflow: { specification: {} } },
      1,
      "workflow.specification.tasks: is missing.",
    ],
    [
      "empty tasks",
      { workflow: { specification: { tasks: [] } } },
      1,
      "workflow.specification.tasks: must contain at least one task.",
    ],
    [
      "parents not a list",
      { workflow: { specification: { tasks: [{ id: "a", parents: "b" }] } } },
      1,
      "workflow.specification.tasks[0].parents: must be an array.",
    ],
    [
      "unknown parent",
      trace([
        ["a", []],
        ["b", ["a", "x"]],
      ]),
      1,
      "workflow.specification.tasks[1].parents[1]: unknown task id 'x'.",
    ],
    [
      "duplicate id",
      trace([
        ["a", []],
        ["a", []],
      ]),
      1,
      "workflow.specification.tasks[1].id: duplicate task id 'a'.",
    ],
    [
      "non-numeric runtime",
      {
        workflow: {
          specification: { tasks: [{ id: "a", parents: [] }] },
          execution: { tasks: [{ id: "a", runtimeInSeconds: "3" }] },
        },
      },
      1,
      "workflow.execution.tasks[0].runtimeInSeconds: must be a number.",
    ],
    [
      "negative runtime",
      trace([["a", [], -1]]),
      1,
      "workflow.execution.tasks[0].runtimeInSeconds: must not be negative.",
    ],
    [
      "execution of an unknown task",
      {
        workflow: {
          specification: { tasks: [{ id: "a", parents: [] }] },
          execution: { tasks: [{ id: "z", runtimeInSeconds: 1 }] },
        },
      },
      1,
      "workflow.execution.tasks[0].id: unknown task id 'z'.",
    ],
    [
      "a cycle",
      trace([
        ["a", ["c"]],
        ["b", ["a"]],
        ["c", ["b"]],
        ["d", []],
      ]),
      1,
      "workflow.specification.tasks: dependency cycle 'b' -> 'c' -> 'a' -> 'b'.",
    ],
    [
      "a self-loop",
      trace([["a", ["a"]]]),
      1,
      "workflow.specification.tasks: dependency cycle 'a' -> 'a'.",
    ],
    ["a negative time scale", one, -1, "timeScale must be a finite number >= 0, got -1."],
    ["an infinite time scale", one, Infinity, "timeScale must be a finite number >= 0"],
    ["a NaN time scale", one, Number.NaN, "timeScale must be a finite number >= 0, got NaN."],
  ];
  for (const [what, doc, timeScale, message] of cases) {
    it(`rejects ${what}`, () => {
      expect(() => convertWfcommons(doc, { timeScale })).toThrow(message);
    });
  }
});
