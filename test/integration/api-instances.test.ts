/**
 * HTTP API v1, instance endpoints and workflow deletion end to end over real HTTP (harness:
 * test/helpers/api-client.ts): get, list, attempts, log and the control verbs' state rules
 * (their effect on running instances is tested end to end in test/e2e/control.test.ts).
 * No pollers run: a test that needs a RUNNING or finished instance drives the dispatcher and
 * worker itself (test/helpers/api-engine.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  allWorkflows,
  changesNothing,
  createWorkflow,
  del,
  expectError,
  get,
  oneTask,
  post,
  put,
  snapshot,
  startApiServer,
  startRun,
  stopApiServer,
  twoTasks,
} from "../helpers/api-client.js";
import { runToSuccess, startInstance } from "../helpers/api-engine.js";

beforeAll(async () => {
  await startApiServer();
});

afterAll(stopApiServer);

describe("instances", () => {
  let submitted: string; // stays SUBMITTED (no dispatcher)
  beforeAll(async () => {
    await createWorkflow("inst", twoTasks());
    submitted = await startRun("inst");
  });

  it("GET unknown id → 404 naming it; an id that cannot exist → 404", async () => {
    expectError(await get("/v1/instances/00000000-0000-4000-8000-000000000000"), 404, "NotFound", {
      message: /00000000-0000-4000-8000-000000000000/,
    });
    expectError(await get("/v1/instances/not_an_id!"), 404, "NotFound");
    expectError(await get(`/v1/instances/${"a".repeat(65)}`), 404, "NotFound");
  });

  it("list: 400 for an unknown state, a bad workflow name, a bad limit or token", async () => {
    expectError(await get("/v1/instances?state=NOPE"), 400, "ValidationError", {
      path: "state",
      detail: /SUBMITTED/,
    });
    expectError(await get("/v1/instances?workflow=-x"), 400, "ValidationError", {
      path: "workflow",
    });
    for (const bad of ["0", "201", "x"]) {
      expectError(await get(`/v1/instances?limit=${bad}`), 400, "ValidationError", {
        path: "limit",
      });
    }
    expectError(await get("/v1/instances?nextToken=garbage"), 400, "ValidationError", {
      path: "nextToken",
    });
    const ok = await get("/v1/instances?workflow=inst&state=RUNNING&limit=5");
    expect(ok.status, ok.text).toBe(200);
    expect(Array.isArray(ok.body.items)).toBe(true);
  });

  // Regression: this once failed (see git history for the bug it pinned).
  it("list: 400 (not 500) for a well-formed token that is not a key", async () => {
    expectError(await get("/v1/instances?nextToken=e30"), 400, "ValidationError", {
      path: "nextToken",
    });
  });

  it("attempts: 404 for an unknown task code or instance; 400 for a bad code", async () => {
    expectError(await get(`/v1/instances/${submitted}/tasks/nope/attempts`), 404, "NotFound", {
      message: /nope/,
    });
    expectError(
      await get("/v1/instances/00000000-0000-4000-8000-000000000000/tasks/extract/attempts"),
      404,
      "NotFound",
    );
    expectError(await get(`/v1/instances/${submitted}/tasks/-x/attempts`), 400, "ValidationError", {
      path: "code",
    });
    const ok = await get(`/v1/instances/${submitted}/tasks/extract/attempts`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.items).toEqual([]);
  });

  it("log: 404 for an unknown task or instance, 400 for attempt=0 / junk tokens and limits", async () => {
    expectError(await get(`/v1/instances/${submitted}/tasks/nope/log`), 404, "NotFound", {
      message: /nope/,
    });
    expectError(
      await get("/v1/instances/00000000-0000-4000-8000-000000000000/tasks/extract/log"),
      404,
      "NotFound",
    );
    for (const bad of ["0", "-1", "x", "1.5"]) {
      expectError(
        await get(`/v1/instances/${submitted}/tasks/extract/log?attempt=${bad}`),
        400,
        "ValidationError",
        { path: "attempt" },
      );
    }
    expectError(
      await get(`/v1/instances/${submitted}/tasks/extract/log?nextToken=abc`),
      400,
      "ValidationError",
      { path: "nextToken" },
    );
    expectError(
      await get(`/v1/instances/${submitted}/tasks/extract/log?limit=0`),
      400,
      "ValidationError",
      { path: "limit" },
    );
    // Not run yet: no lines, and a token to follow the log with.
    const ok = await get(`/v1/instances/${submitted}/tasks/extract/log`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.lines).toEqual([]);
    expect(typeof ok.body.nextToken).toBe("string");
  });

  it("stop: 404 for an unknown instance; twice → 202 both times", async () => {
    await changesNothing(async () => {
      expectError(
        await post("/v1/instances/00000000-0000-4000-8000-000000000000/stop"),
        404,
        "NotFound",
      );
    });
    const id = await startRun("inst");
    const first = await post(`/v1/instances/${id}/stop`);
    expect(first.status, first.text).toBe(202);
    expect(first.body).toEqual({ instanceId: id, state: "STOPPING" });
    const afterFirst = await snapshot();
    const second = await post(`/v1/instances/${id}/stop`);
    expect(second.status, second.text).toBe(202);
    expect(second.body).toEqual({ instanceId: id, state: "STOPPING" });
    expect(await snapshot()).toEqual(afterFirst);
  });

  it("stop: 415 for a non-JSON body, 400 for a non-object body", async () => {
    await changesNothing(async () => {
      expectError(
        await post(`/v1/instances/${submitted}/stop`, undefined, {
          raw: "now",
          contentType: "text/plain",
        }),
        415,
        "UnsupportedMediaType",
      );
      expectError(await post(`/v1/instances/${submitted}/stop`, [1]), 400, "ValidationError");
    });
  });

  // docs/api.md "Conventions": "Unknown fields in a body are a 400, never dropped silently."
  // Regression: this once failed (see git history for the bug it pinned).
  it("stop: 400 for an unknown field in the body, and nothing stopped", async () => {
    const id = await startRun("inst");
    await changesNothing(async () => {
      expectError(await post(`/v1/instances/${id}/stop`, { force: true }), 400, "ValidationError", {
        detail: /unknown field 'force'/,
      });
    });
  });

  it("pause / resume / rerun / recover-failed → 409 naming the state that forbids it; 404 when unknown", async () => {
    await changesNothing(async () => {
      const rules: Record<string, RegExp> = {
        pause: /is SUBMITTED; only a RUNNING instance can be paused/,
        resume: /is SUBMITTED; only a PAUSING or PAUSED instance can be resumed/,
        rerun: /is SUBMITTED; only a finished instance/,
        "recover-failed": /is SUBMITTED; only a FAILURE or STOPPED instance/,
      };
      for (const [verb, message] of Object.entries(rules)) {
        expectError(await post(`/v1/instances/${submitted}/${verb}`), 409, "Conflict", {
          message,
        });
        expectError(
          await post(`/v1/instances/00000000-0000-4000-8000-000000000000/${verb}`),
          404,
          "NotFound",
        );
      }
      expectError(
        await post(`/v1/instances/${submitted}/tasks/nope/force-success`),
        404,
        "NotFound",
      );
    });
    expect((await get(`/v1/instances/${submitted}`)).body.state).toBe("SUBMITTED");
  });

  it("rerun of a finished instance → 202, the same request again → 202 (one command)", async () => {
    await createWorkflow("again", oneTask("true"));
    const id = await startRun("again");
    await runToSuccess(id);
    const first = await post(`/v1/instances/${id}/rerun`);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ instanceId: id, state: "SUBMITTED" });
    expect((await post(`/v1/instances/${id}/rerun`)).status).toBe(202);
    expectError(await post(`/v1/instances/${id}/pause`), 409, "Conflict", { message: /SUCCESS/ });
  });

  it("DELETE a workflow with a RUNNING instance → 409, nothing deleted", async () => {
    await createWorkflow("busy", oneTask("sleep 30"));
    const id = await startRun("busy");
    await startInstance(id); // dispatcher: instance record written, RUNNING, task sent
    expect((await get(`/v1/instances/${id}`)).body.state).toBe("RUNNING");
    await changesNothing(async () => {
      expectError(await del("/v1/workflows/busy"), 409, "Conflict", { message: /busy/ });
    });
    const g = await get("/v1/workflows/busy");
    expect(g.status).toBe(200);
    expect(g.body.version).toBe(1);
    const listed = await get("/v1/instances?workflow=busy");
    expect(listed.body.items.map((i: { instanceId: string }) => i.instanceId)).toEqual([id]);
    expect(listed.body.items[0]).toMatchObject({ workflow: "busy", state: "RUNNING" });
  });

  // docs/api.md "DELETE /v1/workflows/{name}": 409 while an instance of it is not finished. A run
  // the dispatcher has not picked up yet is SUBMITTED (GET /v1/instances/{id} says so).
  // Regression: this once failed (see git history for the bug it pinned).
  it("DELETE a workflow whose only instance is still SUBMITTED → 409", async () => {
    await createWorkflow("queued", oneTask());
    const id = await startRun("queued");
    expect((await get(`/v1/instances/${id}`)).body.state).toBe("SUBMITTED");
    expectError(await del("/v1/workflows/queued"), 409, "Conflict", { message: /queued/ });
    expect((await get("/v1/workflows/queued")).status).toBe(200);
  });

  it("DELETE unknown → 404; a bad name → 400", async () => {
    await changesNothing(async () => {
      expectError(await del("/v1/workflows/ghost"), 404, "NotFound", { message: /ghost/ });
      expectError(await del("/v1/workflows/-bad"), 400, "ValidationError", { path: "name" });
    });
  });

  it("DELETE a workflow with no instances → 204, then GET 404 and gone from the list", async () => {
    await createWorkflow("doomed", oneTask("echo 1"));
    await createWorkflow("doomed", oneTask("echo 2"));
    const r = await del("/v1/workflows/doomed");
    expect(r.status, r.text).toBe(204);
    expect(r.text).toBe("");
    expectError(await get("/v1/workflows/doomed"), 404, "NotFound");
    expectError(await get("/v1/workflows/doomed?version=1"), 404, "NotFound");
    const names = ((await allWorkflows()) as Array<{ name: string }>).map((w) => w.name);
    expect(names).not.toContain("doomed");
    expectError(await del("/v1/workflows/doomed"), 404, "NotFound");
    // The name can be used again; version numbers go on (never reused: definitions are cached by them).
    const again = await put("/v1/workflows/doomed", oneTask("echo 3"));
    expect(again.status, again.text).toBe(201);
    expect(again.body.version).toBeGreaterThan(1);
  });

  describe("a finished instance (dispatcher and worker driven by hand)", () => {
    let done: string;
    beforeAll(async () => {
      await createWorkflow("finish", oneTask("echo hello-from-shoal"));
      done = await startRun("finish");
      await runToSuccess(done);
    });

    it("GET shows SUCCESS with the task's attempt", async () => {
      const g = await get(`/v1/instances/${done}`);
      expect(g.status, g.text).toBe(200);
      expect(g.body).toMatchObject({ instanceId: done, workflow: "finish", state: "SUCCESS" });
      expect(g.body.endedAt).toMatch(/Z$/);
      expect(g.body.tasks).toHaveLength(1);
      expect(g.body.tasks[0]).toMatchObject({
        code: "only",
        state: "SUCCESS",
        attempt: 1,
        exitCode: 0,
      });
      const a = await get(`/v1/instances/${done}/tasks/only/attempts`);
      expect(a.status).toBe(200);
      expect(a.body.items).toHaveLength(1);
      const listed = await get("/v1/instances?workflow=finish&state=SUCCESS");
      expect(listed.body.items.map((i: { instanceId: string }) => i.instanceId)).toContain(done);
    });

    it("log: the task's output; attempt=0 → 400; unknown task → 404", async () => {
      const log = await get(`/v1/instances/${done}/tasks/only/log?attempt=1`);
      expect(log.status, log.text).toBe(200);
      expect(log.body.lines.map((l: { message: string }) => l.message)).toContain(
        "hello-from-shoal",
      );
      expect(log.body.nextToken).toBeUndefined(); // finished: nothing more to follow
      expectError(
        await get(`/v1/instances/${done}/tasks/only/log?attempt=0`),
        400,
        "ValidationError",
        {
          path: "attempt",
        },
      );
      expectError(await get(`/v1/instances/${done}/tasks/other/log`), 404, "NotFound");
    });

    it("stop on a finished instance → 409, nothing written", async () => {
      await changesNothing(async () => {
        expectError(await post(`/v1/instances/${done}/stop`), 409, "Conflict", {
          message: /SUCCESS/,
        });
      });
      expect((await get(`/v1/instances/${done}`)).body.state).toBe("SUCCESS");
    });

    it("DELETE a workflow whose instances all finished → 204", async () => {
      expect((await del("/v1/workflows/finish")).status).toBe(204);
      expectError(await get("/v1/workflows/finish"), 404, "NotFound");
    });
  });
});
