/**
 * HTTP API v1, POST /v1/workflows/{name}/runs end to end over real HTTP (harness:
 * test/helpers/api-client.ts): refused requests change nothing; accepted ones answer 202 with a
 * SUBMITTED instance (no pollers run), and an idempotencyKey starts one instance only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  changesNothing,
  createWorkflow,
  expectError,
  get,
  post,
  snapshot,
  startApiServer,
  stopApiServer,
  twoTasks,
} from "../helpers/api-client.js";

beforeAll(async () => {
  await startApiServer();
});

afterAll(stopApiServer);

describe("POST /v1/workflows/{name}/runs", () => {
  beforeAll(async () => {
    await createWorkflow("runs", twoTasks());
  });

  it("404 for an unknown workflow", async () => {
    await changesNothing(async () => {
      expectError(await post("/v1/workflows/ghost/runs", {}), 404, "NotFound", {
        message: /ghost/,
      });
    });
  });

  it("400 for an unknown startTasks code, at startTasks[i]", async () => {
    await changesNothing(async () => {
      expectError(
        await post("/v1/workflows/runs/runs", { startTasks: ["lod"] }),
        400,
        "ValidationError",
        { path: "startTasks[0]", detail: /unknown task code 'lod'/, message: /lod/ },
      );
      expectError(
        await post("/v1/workflows/runs/runs", { startTasks: ["load", "xtract"] }),
        400,
        "ValidationError",
        { path: "startTasks[1]", detail: /xtract/ },
      );
      expectError(
        await post("/v1/workflows/runs/runs", { startTasks: [] }),
        400,
        "ValidationError",
        {
          path: "startTasks",
        },
      );
    });
  });

  it("400 for a bad priority, taskScope, dryRun, params or idempotencyKey", async () => {
    await changesNothing(async () => {
      expectError(
        await post("/v1/workflows/runs/runs", { priority: "URGENT" }),
        400,
        "ValidationError",
        {
          path: "priority",
          detail: /HIGHEST, HIGH, MEDIUM, LOW, LOWEST/,
        },
      );
      expectError(await post("/v1/workflows/runs/runs", { priority: 1 }), 400, "ValidationError", {
        path: "priority",
      });
      expectError(
        await post("/v1/workflows/runs/runs", { taskScope: "ALL" }),
        400,
        "ValidationError",
        {
          path: "taskScope",
        },
      );
      expectError(
        await post("/v1/workflows/runs/runs", { dryRun: "yes" }),
        400,
        "ValidationError",
        {
          path: "dryRun",
        },
      );
      expectError(
        await post("/v1/workflows/runs/runs", { params: { k: 1 } }),
        400,
        "ValidationError",
        {
          path: "params.k",
        },
      );
      expectError(
        await post("/v1/workflows/runs/runs", { idempotencyKey: "" }),
        400,
        "ValidationError",
        {
          path: "idempotencyKey",
        },
      );
      expectError(
        await post("/v1/workflows/runs/runs", { idempotencyKey: "k".repeat(129) }),
        413,
        "PayloadTooLarge",
        { path: "idempotencyKey" },
      );
    });
  });

  it("400 for an unknown field, a body that is not an object, or bad JSON", async () => {
    await changesNothing(async () => {
      expectError(await post("/v1/workflows/runs/runs", { paramz: {} }), 400, "ValidationError", {
        message: /paramz/,
        detail: /unknown field 'paramz'/,
      });
      expectError(await post("/v1/workflows/runs/runs", [1]), 400, "ValidationError", {
        message: /JSON object/,
      });
      expectError(await post("/v1/workflows/runs/runs", null), 400, "ValidationError");
      expectError(
        await post("/v1/workflows/runs/runs", undefined, { raw: "{" }),
        400,
        "ValidationError",
        { message: /not valid JSON/ },
      );
    });
  });

  it("415 for a content type other than JSON (YAML included)", async () => {
    await changesNothing(async () => {
      expectError(
        await post("/v1/workflows/runs/runs", undefined, { raw: "{}", contentType: "text/plain" }),
        415,
        "UnsupportedMediaType",
        { message: /text\/plain/ },
      );
      expectError(
        await post("/v1/workflows/runs/runs", undefined, {
          raw: "dryRun: true",
          contentType: "application/yaml",
        }),
        415,
        "UnsupportedMediaType",
      );
    });
  });

  it("400 for a bad name in the path", async () => {
    await changesNothing(async () => {
      expectError(await post("/v1/workflows/-x/runs", {}), 400, "ValidationError", {
        path: "name",
      });
    });
  });

  it("413 for too many params or a param value over its limit", async () => {
    await changesNothing(async () => {
      const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, "v"]));
      expectError(await post("/v1/workflows/runs/runs", { params: many }), 413, "PayloadTooLarge", {
        path: "params",
        detail: /at most 100/,
      });
      expectError(
        await post("/v1/workflows/runs/runs", { params: { big: "z".repeat(4097) } }),
        413,
        "PayloadTooLarge",
        { path: "params.big" },
      );
    });
  });

  // Every field within its limit (100 params of 4,096 characters each), yet the START command
  // that stores them is over DynamoDB's 400 KB item limit: the client sent it, so never a 500.
  // Regression: this once failed (see git history for the bug it pinned).
  it("413/400, not 500, for run params too large to store", async () => {
    const params = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`p${i}`, "é".repeat(4096)]),
    );
    await changesNothing(async () => {
      const r = await post("/v1/workflows/runs/runs", { params });
      expect(r.status, r.text).toBeLessThan(500);
      expect(["PayloadTooLarge", "ValidationError"]).toContain(r.body?.error?.code);
    });
  });

  it("202 with instanceId and SUBMITTED; GET right after answers SUBMITTED", async () => {
    const r = await post("/v1/workflows/runs/runs", { params: { k: "v" }, priority: "HIGH" });
    expect(r.status, r.text).toBe(202);
    expect(r.body).toMatchObject({ workflow: "runs", version: 1, state: "SUBMITTED" });
    expect(r.body.instanceId).toMatch(/^[0-9a-f-]{36}$/);
    const g = await get(`/v1/instances/${r.body.instanceId}`);
    expect(g.status, g.text).toBe(200);
    expect(g.body).toMatchObject({
      instanceId: r.body.instanceId,
      workflow: "runs",
      version: 1,
      state: "SUBMITTED",
      priority: "HIGH",
      params: { k: "v" },
      tasks: [],
    });
    expect(g.body.createdAt).toMatch(/Z$/);
  });

  it("an empty body (no content type) starts a run", async () => {
    const r = await call("POST", "/v1/workflows/runs/runs");
    expect(r.status, r.text).toBe(202);
    expect(r.body.state).toBe("SUBMITTED");
  });

  it("the same idempotencyKey returns the same instance; another key another one", async () => {
    const a = await post("/v1/workflows/runs/runs", { idempotencyKey: "nightly-2026-01-01" });
    expect(a.status, a.text).toBe(202);
    const pendingAfterFirst = await snapshot();
    const b = await post("/v1/workflows/runs/runs", { idempotencyKey: "nightly-2026-01-01" });
    expect(b.status, b.text).toBe(202);
    expect(b.body).toMatchObject({
      instanceId: a.body.instanceId,
      workflow: "runs",
      version: 1,
      state: "SUBMITTED",
    });
    expect(await snapshot()).toEqual(pendingAfterFirst);
    const c = await post("/v1/workflows/runs/runs", { idempotencyKey: "nightly-2026-01-02" });
    expect(c.status).toBe(202);
    expect(c.body.instanceId).not.toBe(a.body.instanceId);
  });
});
