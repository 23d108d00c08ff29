/**
 * HTTP API v1, PUT /v1/workflows/{name} requests that must be refused (harness:
 * test/helpers/api-client.ts): each is checked for its status, `error.code`, message and
 * `details[].path`, on a new name and on an existing workflow, and that it changed nothing.
 */

import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../lib/api/http.js";
import { handleApiRequest } from "../../lib/api/router.js";
import type { Runtime } from "../../lib/runtime/runtime.js";
import { httpApiEvent } from "../../lib/standalone/lambda-events.js";
import {
  changesNothing,
  createWorkflow,
  del,
  expectError,
  get,
  oneTask,
  post,
  put,
  rejectsOnBoth,
  startApiServer,
  stopApiServer,
  twoTasks,
} from "../helpers/api-client.js";

let rt: Runtime;

beforeAll(async () => {
  ({ rt } = await startApiServer());
});

afterAll(stopApiServer);

describe("PUT /v1/workflows/{name}", () => {
  describe("rejects, and writes nothing", () => {
    beforeAll(async () => {
      await createWorkflow("base", twoTasks());
    });

    it("400 for a body that is not JSON", async () => {
      await rejectsOnBoth(
        (n) => put(`/v1/workflows/${n}`, undefined, { raw: '{"tasks": [' }),
        400,
        "ValidationError",
        { message: /not valid JSON/ },
      );
    });

    it("400 for a YAML body that does not parse", async () => {
      await rejectsOnBoth(
        (n) =>
          put(`/v1/workflows/${n}`, undefined, {
            raw: "tasks:\n  - code: a\n   type: [SHELL\n",
            contentType: "application/yaml",
          }),
        400,
        "ValidationError",
        { message: /not valid YAML/ },
      );
    });

    it("400 for a YAML alias bomb (no blow-up)", async () => {
      const bomb = [
        "a: &a [x, x, x, x, x, x, x, x, x, x]",
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
        "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
        "tasks: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]",
        "",
      ].join("\n");
      await rejectsOnBoth(
        (n) => put(`/v1/workflows/${n}`, undefined, { raw: bomb, contentType: "application/yaml" }),
        400,
        "ValidationError",
      );
    });

    for (const [label, raw] of [
      ["an array", "[]"],
      ["a string", '"tasks"'],
      ["a number", "42"],
      ["null", "null"],
    ] as const) {
      it(`400 for a body that is ${label}, not an object`, async () => {
        await rejectsOnBoth(
          (n) => put(`/v1/workflows/${n}`, undefined, { raw }),
          400,
          "ValidationError",
          { message: /must be a JSON object/ },
        );
      });
    }

    it("400 for a YAML body that is a scalar", async () => {
      await rejectsOnBoth(
        (n) =>
          put(`/v1/workflows/${n}`, undefined, { raw: "hello", contentType: "application/yaml" }),
        400,
        "ValidationError",
        { message: /must be a JSON object/ },
      );
    });

    it("400 for an empty body", async () => {
      await rejectsOnBoth(
        (n) => put(`/v1/workflows/${n}`, undefined, { raw: "" }),
        400,
        "ValidationError",
      );
    });

    it("400 for an unknown top-level field, naming it", async () => {
      await rejectsOnBoth(
        (n) => put(`/v1/workflows/${n}`, { ...twoTasks(), colour: "blue" }),
        400,
        "ValidationError",
        { message: /colour/, detail: /unknown field 'colour'/ },
      );
    });

    it("400 for an unknown field in a task, at the field's path", async () => {
      const def = twoTasks();
      const bad = { ...def, tasks: [def.tasks[0], { ...def.tasks[1], retires: 3 }] };
      await rejectsOnBoth((n) => put(`/v1/workflows/${n}`, bad), 400, "ValidationError", {
        path: "tasks[1].retires",
        detail: /unknown field 'retires'/,
      });
    });

    it("400 listing every problem of a DolphinScheduler-style task, with Shoal's field names", async () => {
      const bad = {
        tasks: [
          {
            code: "load",
            taskType: "SHELL",
            rawScript: "echo load",
            failRetryTimes: 3,
            preTasks: ["extract"],
          },
        ],
      };
      await changesNothing(async () => {
        const r = await put("/v1/workflows/from-ds", bad);
        const err = expectError(r, 400, "ValidationError", { path: "tasks[0].type" });
        expect(err.details?.map((d) => `${d.path}: ${d.message}`).slice(1)).toEqual([
          "tasks[0].taskType: unknown field 'taskType' (did you mean 'type'?)",
          "tasks[0].rawScript: unknown field 'rawScript' (did you mean 'command'?)",
          "tasks[0].failRetryTimes: unknown field 'failRetryTimes' (did you mean 'retries'?)",
          "tasks[0].preTasks: unknown field 'preTasks' (did you mean 'upstream'?)",
        ]);
      });
    });

    it("400 for an unknown upstream, at tasks[1].upstream[0]", async () => {
      const bad = {
        tasks: [
          { code: "extract", type: "SHELL", command: "echo e" },
          { code: "load", type: "SHELL", upstream: ["lod"], command: "echo l" },
        ],
      };
      const r = await put("/v1/workflows/never-created", bad);
      expectError(r, 400, "ValidationError", {
        message: /lod/,
        path: "tasks[1].upstream[0]",
        detail: /unknown task code 'lod'/,
      });
      await rejectsOnBoth((n) => put(`/v1/workflows/${n}`, bad), 400, "ValidationError", {
        path: "tasks[1].upstream[0]",
      });
    });

    it("400 for a cycle", async () => {
      const bad = {
        tasks: [
          { code: "a", type: "SHELL", upstream: ["c"], command: "echo a" },
          { code: "b", type: "SHELL", upstream: ["a"], command: "echo b" },
          { code: "c", type: "SHELL", upstream: ["b"], command: "echo c" },
        ],
      };
      await rejectsOnBoth((n) => put(`/v1/workflows/${n}`, bad), 400, "ValidationError", {
        message: /cycle/,
        detail: /^cycle: /,
      });
    });

    it("400 for a self-dependency and for duplicate codes", async () => {
      await rejectsOnBoth(
        (n) =>
          put(`/v1/workflows/${n}`, {
            tasks: [{ code: "a", type: "SHELL", upstream: ["a"], command: "echo a" }],
          }),
        400,
        "ValidationError",
        { path: "tasks[0].upstream[0]", detail: /itself/ },
      );
      await rejectsOnBoth(
        (n) =>
          put(`/v1/workflows/${n}`, {
            tasks: [
              { code: "a", type: "SHELL", command: "echo a" },
              { code: "a", type: "SHELL", command: "echo again" },
            ],
          }),
        400,
        "ValidationError",
        { path: "tasks[1].code", detail: /duplicate task code 'a'/ },
      );
    });

    it("400 for bad field values, each at its path", async () => {
      await rejectsOnBoth((n) => put(`/v1/workflows/${n}`, { tasks: [] }), 400, "ValidationError", {
        path: "tasks",
        detail: /at least one task/,
      });
      await rejectsOnBoth(
        (n) =>
          put(`/v1/workflows/${n}`, {
            tasks: [{ code: "a", type: "PYTHON", command: "print(1)" }],
          }),
        400,
        "ValidationError",
        { detail: /SHELL, HTTP, LAMBDA, STEP_FUNCTIONS, CONDITIONS/ },
      );
      await rejectsOnBoth(
        (n) =>
          put(`/v1/workflows/${n}`, {
            tasks: [{ code: "a", type: "SHELL", command: "echo a", retries: 101 }],
          }),
        400,
        "ValidationError",
        { path: "tasks[0].retries" },
      );
      await rejectsOnBoth(
        (n) => put(`/v1/workflows/${n}`, { ...oneTask(), priority: "URGENT" }),
        400,
        "ValidationError",
        { path: "priority", detail: /HIGHEST/ },
      );
      await rejectsOnBoth(
        (n) => put(`/v1/workflows/${n}`, { ...oneTask(), params: { region: 1 } }),
        400,
        "ValidationError",
        { path: "params.region", detail: /strings/ },
      );
      await rejectsOnBoth(
        (n) =>
          put(`/v1/workflows/${n}`, {
            tasks: [{ code: "-a", type: "SHELL", command: "echo a" }],
          }),
        400,
        "ValidationError",
        { path: "tasks[0].code" },
      );
    });

    it("400 in plain words: is required, must be a string, must be an object, DolphinScheduler's forms", async () => {
      await changesNothing(async () => {
        const r = await put("/v1/workflows/plain-words", {
          params: [{ prop: "dt", value: "1" }],
          tasks: [
            { type: "SHELL", command: "x" },
            { code: 1234567890, type: "SHELL", command: "x" },
            { code: "c", type: "shell", command: "x", upstream: [1234567890] },
            null,
          ],
        });
        const err = expectError(r, 400, "ValidationError");
        expect(err.details?.map((d) => `${d.path}: ${d.message}`)).toEqual([
          "params: must be a map of name: value (DolphinScheduler's localParams list of {prop, value} becomes {prop: value})",
          "tasks[0].code: is required",
          "tasks[1].code: must be a string (DolphinScheduler's numeric task codes: use the task's name)",
          "tasks[2].type: type must be SHELL, HTTP, LAMBDA, STEP_FUNCTIONS, CONDITIONS, SWITCH, SUB_WORKFLOW or DEPENDENT (did you mean SHELL?)",
          "tasks[2].upstream[0]: must be a string (DolphinScheduler's numeric task codes: use the task's name)",
          "tasks[3]: must be an object",
        ]);
      });
      await createWorkflow("keyed-run", oneTask());
      const run = await post("/v1/workflows/keyed-run/runs", { idempotencyKey: "" });
      expectError(run, 400, "ValidationError", {
        path: "idempotencyKey",
        detail: /^must not be empty$/,
      });
    });

    it("400 at tasks[i].workflow for a sub-workflow cycle closed through stored workflows", async () => {
      await createWorkflow("loop-c", oneTask());
      await createWorkflow("loop-b", {
        tasks: [{ code: "run-c", type: "SUB_WORKFLOW", workflow: "loop-c" }],
      });
      await createWorkflow("loop-a", {
        tasks: [{ code: "run-b", type: "SUB_WORKFLOW", workflow: "loop-b" }],
      });
      const closing = {
        tasks: [
          { code: "first", type: "SHELL", command: "echo" },
          { code: "run-a", type: "SUB_WORKFLOW", workflow: "loop-a", upstream: ["first"] },
        ],
      };
      await changesNothing(async () => {
        const r = await put("/v1/workflows/loop-c", closing);
        expectError(r, 400, "ValidationError", {
          path: "tasks[1].workflow",
          detail:
            /^sub-workflow cycle: loop-c -> loop-a -> loop-b -> loop-c \(as the other workflows' latest versions stand\)/,
        });
      });
      expect((await get("/v1/workflows/loop-c")).body.version).toBe(1);
      // Once loop-b no longer runs loop-c, the same body is accepted.
      await createWorkflow("loop-b", oneTask("echo b"));
      const ok = await put("/v1/workflows/loop-c", closing);
      expect(ok.status, ok.text).toBe(201);
    });

    it("400 for a bad name in the path", async () => {
      await changesNothing(async () => {
        for (const bad of ["-bad", ".hidden", "a%20b", "a%2Fb", "x".repeat(129), "%C3%A9t%C3%A9"]) {
          const r = await put(`/v1/workflows/${bad}`, twoTasks());
          expectError(r, 400, "ValidationError", { path: "name", detail: /must match/ });
        }
      });
      // 128 characters is allowed.
      const long = "x".repeat(128);
      const ok = await put(`/v1/workflows/${long}`, oneTask());
      expect(ok.status, ok.text).toBe(201);
      expect((await del(`/v1/workflows/${long}`)).status).toBe(204);
    });

    it("415 for text/plain and for application/xml", async () => {
      await rejectsOnBoth(
        (n) =>
          put(`/v1/workflows/${n}`, undefined, {
            raw: JSON.stringify(twoTasks()),
            contentType: "text/plain",
          }),
        415,
        "UnsupportedMediaType",
        { message: /text\/plain/ },
      );
      await rejectsOnBoth(
        (n) =>
          put(`/v1/workflows/${n}`, undefined, {
            raw: JSON.stringify(twoTasks()),
            contentType: "application/xml",
          }),
        415,
        "UnsupportedMediaType",
        { message: /application\/xml/ },
      );
    });

    it("413 for a body over 5 MB (the standalone server answers itself)", async () => {
      const command = `echo ${"x".repeat(MAX_BODY_BYTES)}`;
      const huge = JSON.stringify({ tasks: [{ code: "a", type: "SHELL", command }] });
      expect(Buffer.byteLength(huge)).toBeGreaterThan(MAX_BODY_BYTES);
      await changesNothing(async () => {
        expectError(
          await put("/v1/workflows/never-created", undefined, { raw: huge }),
          413,
          "PayloadTooLarge",
          {
            message: /larger than/,
          },
        );
        expect((await get("/v1/workflows/never-created")).status).toBe(404);
        expectError(
          await put("/v1/workflows/base", undefined, { raw: huge }),
          413,
          "PayloadTooLarge",
        );
        expect((await get("/v1/workflows/base")).body.version).toBe(1);
        // The runs endpoint too.
        expectError(
          await post("/v1/workflows/base/runs", undefined, { raw: huge }),
          413,
          "PayloadTooLarge",
        );
        // The server still answers afterwards.
        expect((await get("/v1/health")).status).toBe(200);
      });
    });

    it("413 from the handler itself (API Gateway path, no standalone server in front)", async () => {
      const command = `echo ${"x".repeat(MAX_BODY_BYTES)}`;
      const huge = JSON.stringify({ tasks: [{ code: "a", type: "SHELL", command }] });
      const event: APIGatewayProxyEventV2 = httpApiEvent({
        method: "PUT",
        path: "/v1/workflows/never-created",
        headers: { "content-type": "application/json" },
        body: Buffer.from(huge).toString("base64"),
        isBase64Encoded: true,
        sourceIp: "",
        requestId: "r",
        timeEpoch: Date.now(),
      });
      await changesNothing(async () => {
        const r = await handleApiRequest(rt.api, event);
        expect(r.statusCode).toBe(413);
        expect(JSON.parse(r.body ?? "{}").error.code).toBe("PayloadTooLarge");
      });
    });

    it("a body of exactly MAX_BODY_BYTES is not refused for its size", async () => {
      const def = JSON.stringify(oneTask("echo pad"));
      const padded = def + " ".repeat(MAX_BODY_BYTES - Buffer.byteLength(def));
      expect(Buffer.byteLength(padded)).toBe(MAX_BODY_BYTES);
      const r = await put("/v1/workflows/exactly-max", undefined, { raw: padded });
      expect(r.status, r.text).toBe(201);
      expect((await del("/v1/workflows/exactly-max")).status).toBe(204);
    });

    // docs/api.md "Errors": 413 when every problem found is a size limit. A SHELL command over its
    // 64 KiB limit is a field that is too large.
    // Regression: this once failed (see git history for the bug it pinned).
    it("413 for a field over its size limit (a 65 KiB command)", async () => {
      await rejectsOnBoth(
        (n) =>
          put(`/v1/workflows/${n}`, {
            tasks: [{ code: "a", type: "SHELL", command: `echo ${"y".repeat(65 * 1024)}` }],
          }),
        413,
        "PayloadTooLarge",
        { path: "tasks[0].command" },
      );
    });

    // A body under 5 MB whose tasks each stay under their field limits but whose definition,
    // even gzipped, exceeds DynamoDB's 400 KB item limit: the client sent it, so never a 500.
    // Regression: this once failed (see git history for the bug it pinned).
    it("413/400, not 500, for a definition too large to store", async () => {
      // Incompressible commands (random base64): 16 × 60 KB ≈ 960 KB of JSON, ~720 KB gzipped.
      const rand = (n: number) => {
        const bytes = new Uint8Array(n);
        crypto.getRandomValues(bytes);
        return Buffer.from(bytes).toString("base64").slice(0, n);
      };
      const tasks = Array.from({ length: 16 }, (_, i) => ({
        code: `t${i}`,
        type: "SHELL",
        command: `echo ${rand(60_000)}`,
      }));
      await changesNothing(async () => {
        const r = await put("/v1/workflows/never-created", { tasks });
        expect(r.status, r.text).toBeLessThan(500);
        expect(["PayloadTooLarge", "ValidationError"]).toContain(r.body?.error?.code);
        expect((await get("/v1/workflows/never-created")).status).toBe(404);
      });
    });
  });
});
