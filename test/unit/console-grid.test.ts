import { describe, expect, it } from "vitest";
import { buildGantt } from "../../console/src/model/gantt.js";
import { buildGrid } from "../../console/src/model/grid.js";
import type { Instance, TaskInstance } from "../../lib/cli/api-types.generated.js";

function run(
  id: string,
  version: number,
  tasks: Array<[string, TaskInstance["state"], number?]>,
): Instance {
  return {
    instanceId: id,
    workflow: "etl",
    version,
    state: "SUCCESS",
    tasks: tasks.map(([code, state, attempt]) => ({
      code,
      state,
      ...(attempt ? { attempt } : {}),
    })),
  };
}

// v2: extract → transform → load, report after transform.
// v1 had "clean" between extract and transform.
const v2 = [
  { code: "load", upstream: ["transform"] },
  { code: "extract" },
  { code: "transform", upstream: ["extract"] },
  { code: "report", upstream: ["transform"] },
];
const v1 = [
  { code: "extract" },
  { code: "clean", upstream: ["extract"] },
  { code: "transform", upstream: ["clean"] },
  { code: "load", upstream: ["transform"] },
];

// Newest first, as GET /v1/instances lists them.
const instances = [
  run("r3", 2, [
    ["extract", "SUCCESS"],
    ["transform", "RUNNING"],
  ]),
  run("r2", 2, [
    ["extract", "SUCCESS"],
    ["transform", "FAILURE", 1],
    ["transform", "SUCCESS", 2],
    ["load", "SUCCESS"],
    ["report", "SKIPPED"],
  ]),
  run("r1", 1, [
    ["extract", "SUCCESS"],
    ["clean", "SUCCESS"],
    ["transform", "SUCCESS"],
    ["load", "FAILURE"],
    ["legacy", "SUCCESS"],
  ]),
];

describe("grid", () => {
  it("puts runs oldest left, newest right", () => {
    const grid = buildGrid({ instances, tasks: v2 });
    expect(grid.columns.map((c) => c.instanceId)).toEqual(["r1", "r2", "r3"]);
    expect(instances[0]?.instanceId).toBe("r3"); // the input is not reordered in place
  });

  it("orders rows like the Gantt and keeps tasks that only some runs have", () => {
    const grid = buildGrid({ instances, tasks: v2 });
    const gantt = buildGantt({ tasks: v2, attempts: [], nowMs: 0 });
    expect(grid.rows.slice(0, 4).map((r) => r.code)).toEqual(gantt.rows.map((r) => r.code));
    expect(grid.rows.map((r) => r.code)).toEqual([
      "extract",
      "transform",
      "load",
      "report",
      "clean",
      "legacy",
    ]);
    expect(grid.rows.map((r) => r.inDefinition)).toEqual([true, true, true, true, false, false]);
  });

  it("places tasks of older definitions by their old edges when given", () => {
    const grid = buildGrid({ instances, tasks: v2, previousTasks: [v1] });
    // clean (after extract in v1) joins transform's column instead of trailing at the end.
    expect(grid.rows.map((r) => r.code)).toEqual([
      "extract",
      "transform",
      "clean",
      "load",
      "report",
      "legacy",
    ]);
    expect(grid.rows.find((r) => r.code === "clean")?.inDefinition).toBe(false);
  });

  it("fills each cell with the task's state, or NOT_STARTED", () => {
    const grid = buildGrid({ instances, tasks: v2 });
    const cells = Object.fromEntries(grid.rows.map((r) => [r.code, r.cells.map((c) => c.state)]));
    expect(cells).toEqual({
      extract: ["SUCCESS", "SUCCESS", "SUCCESS"],
      transform: ["SUCCESS", "SUCCESS", "RUNNING"], // r2: the highest attempt counts
      load: ["FAILURE", "SUCCESS", "NOT_STARTED"],
      report: ["NOT_STARTED", "SKIPPED", "NOT_STARTED"],
      clean: ["SUCCESS", "NOT_STARTED", "NOT_STARTED"],
      legacy: ["SUCCESS", "NOT_STARTED", "NOT_STARTED"],
    });
    const transformR2 = grid.rows.find((r) => r.code === "transform")?.cells[1];
    expect(transformR2?.task?.attempt).toBe(2);
    for (const row of grid.rows) expect(row.cells).toHaveLength(3);
  });

  it("handles no runs, and runs without tasks", () => {
    expect(buildGrid({ instances: [], tasks: v2 }).rows.map((r) => r.cells)).toEqual([
      [],
      [],
      [],
      [],
    ]);
    const bare: Instance = { instanceId: "s", workflow: "etl", version: 2, state: "SUBMITTED" };
    const grid = buildGrid({ instances: [bare], tasks: v2 });
    expect(grid.rows.every((r) => r.cells[0]?.state === "NOT_STARTED")).toBe(true);
  });
});
