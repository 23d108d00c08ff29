/**
 * `displayName`: the name people read beside a workflow's ASCII name and a task's code (what
 * `shoal import dolphinscheduler` keeps of a DolphinScheduler name, Chinese included). Stored
 * with the definition, listed with the workflow, removed with it, and refused with a 400 naming
 * the field when it is empty, too long or holds a line break.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createWorkflow,
  del,
  expectError,
  get,
  put,
  startApiServer,
  stopApiServer,
} from "../helpers/api-client.js";

beforeAll(async () => {
  await startApiServer();
});

afterAll(stopApiServer);

const imported = {
  displayName: "每日销售报表",
  description: "imported from DolphinScheduler",
  tasks: [
    { code: "extract", displayName: "抽取数据", type: "SHELL", command: "echo extract" },
    { code: "load", displayName: "加载", type: "SHELL", upstream: ["extract"], command: "echo ok" },
  ],
};

describe("displayName", () => {
  it("is kept on the workflow and its tasks, and listed", async () => {
    await createWorkflow("daily-sales", imported);
    const one = await get("/v1/workflows/daily-sales");
    expect(one.status, one.text).toBe(200);
    expect(one.body.displayName).toBe("每日销售报表");
    expect(one.body.tasks.map((t: { displayName?: string }) => t.displayName)).toEqual([
      "抽取数据",
      "加载",
    ]);
    const list = await get("/v1/workflows");
    const item = list.body.items.find((w: { name: string }) => w.name === "daily-sales");
    expect(item).toMatchObject({ displayName: "每日销售报表" });
  });

  it("is gone from the list once the workflow is deleted", async () => {
    await createWorkflow("gone-soon", { ...imported, displayName: "临时" });
    expect((await del("/v1/workflows/gone-soon")).status).toBe(204);
    const list = await get("/v1/workflows");
    expect(list.body.items.map((w: { name: string }) => w.name)).not.toContain("gone-soon");
  });

  it.each([
    // Too long is a size, answered 413 like every other size limit of a definition.
    ["empty", "", 400, "ValidationError", /must not be empty/],
    ["too long", "长".repeat(201), 413, "PayloadTooLarge", /at most 200 characters/],
    ["a line break", "第一行\n第二行", 400, "ValidationError", /control characters/],
  ])("is refused when %s, naming the field", async (_what, value, status, code, rule) => {
    const res = await put("/v1/workflows/bad-display", { ...imported, displayName: value });
    expectError(res, status, code, { path: "displayName", detail: rule });
    const task = await put("/v1/workflows/bad-display", {
      ...imported,
      tasks: [{ ...imported.tasks[0], displayName: value }],
    });
    expectError(task, status, code, { path: "tasks[0].displayName", detail: rule });
  });
});
