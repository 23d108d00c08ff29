/**
 * HTTP API v1 error contract, end to end over real HTTP: the standalone server (`startHttpServer`)
 * in front of `handleApiEvent`, backed by DynamoDB/SQS emulators. Every failed request is checked
 * for its status, `error.code`, a message naming the problem, `details[].path` where relevant,
 * and that it changed nothing. No pollers run: instances stay SUBMITTED unless a test drives the
 * dispatcher and worker itself with hand-built SQS records.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DeleteMessageCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../lib/api/http.js";
import { handleApiEvent } from "../../lib/api/router.js";
import { sqsClient } from "../../lib/aws/clients.js";
import type { HttpApiEvent, SqsRecord } from "../../lib/engine/lambda-events.js";
import type { EventMessage, TaskMessage } from "../../lib/queue/messages.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { startHttpServer } from "../../lib/standalone/http-server.js";
import { type TestAws, useTestAws } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";
import { prng } from "../helpers/random.js";

const PKG = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

let aws: TestAws;
let rt: Runtime;
let server: Server;
let base: string;
let dataDir: string;

beforeAll(async () => {
  aws = await useTestAws();
  dataDir = await mkdtemp(join(tmpdir(), "shoal-api-test-"));
  rt = createRuntime({ ...aws.config, dataDir });
  const started = await startHttpServer(0, (e) => handleApiEvent(rt.api, e));
  server = started.server;
  base = `http://127.0.0.1:${started.port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => {
    server?.closeAllConnections();
    server ? server.close(() => resolve()) : resolve();
  });
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

// ---- HTTP helpers ---------------------------------------------------------------------------

interface Res {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
  body: any;
  text: string;
  contentType: string | null;
}

interface Opts {
  /** Sent as-is (a string or bytes); otherwise `body` is JSON-encoded. */
  raw?: string | Uint8Array;
  contentType?: string | null;
}

async function call(method: string, path: string, body?: unknown, opts: Opts = {}): Promise<Res> {
  const headers: Record<string, string> = {};
  let payload: string | Uint8Array | undefined;
  if (opts.raw !== undefined) payload = opts.raw;
  else if (body !== undefined) payload = JSON.stringify(body);
  const type = opts.contentType === undefined ? "application/json" : opts.contentType;
  if (payload !== undefined && type !== null) headers["content-type"] = type;
  const r = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
  });
  const text = await r.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: r.status, body: parsed, text, contentType: r.headers.get("content-type") };
}

const get = (path: string) => call("GET", path);
const put = (path: string, body?: unknown, opts?: Opts) => call("PUT", path, body, opts);
const post = (path: string, body?: unknown, opts?: Opts) => call("POST", path, body, opts);
const del = (path: string) => call("DELETE", path);

/** Asserts the contract's error shape; returns the error object for further checks. */
function expectError(
  res: Res,
  status: number,
  code: string,
  expected: { message?: RegExp; path?: string; detail?: RegExp } = {},
) {
  expect(res.status, res.text).toBe(status);
  expect(res.contentType).toMatch(/^application\/json/);
  const err = res.body?.error;
  expect(err, res.text).toBeTruthy();
  expect(err.code).toBe(code);
  expect(typeof err.message).toBe("string");
  expect(err.message.length).toBeGreaterThan(0);
  expect(err.message).not.toMatch(/\n\s+at /); // never a stack trace
  if (expected.message) expect(err.message).toMatch(expected.message);
  if (expected.path !== undefined || expected.detail) {
    expect(Array.isArray(err.details), res.text).toBe(true);
    const details = err.details as Array<{ path: string; message: string }>;
    for (const d of details) {
      expect(typeof d.path).toBe("string");
      expect(typeof d.message).toBe("string");
    }
    const hit = details.find(
      (d) =>
        (expected.path === undefined || d.path === expected.path) &&
        (!expected.detail || expected.detail.test(d.message)),
    );
    expect(
      hit,
      `no detail with path ${expected.path} / ${expected.detail}: ${res.text}`,
    ).toBeTruthy();
  }
  return err as {
    code: string;
    message: string;
    details?: Array<{ path: string; message: string }>;
  };
}

// ---- fixtures -------------------------------------------------------------------------------

function twoTasks(command = "echo extract") {
  return {
    description: "extract then load",
    tasks: [
      { code: "extract", type: "SHELL", command },
      { code: "load", type: "SHELL", upstream: ["extract"], command: "echo load" },
    ],
  };
}

function oneTask(command = "echo hello-from-shoal") {
  return { tasks: [{ code: "only", type: "SHELL", command }] };
}

async function createWorkflow(name: string, def: unknown = twoTasks()): Promise<void> {
  const r = await put(`/v1/workflows/${name}`, def);
  expect([200, 201], r.text).toContain(r.status);
}

async function startRun(name: string, body: unknown = {}): Promise<string> {
  const r = await post(`/v1/workflows/${name}/runs`, body);
  expect(r.status, r.text).toBe(202);
  return r.body.instanceId as string;
}

/** Every workflow in the list, following nextToken. */
async function allWorkflows(): Promise<unknown[]> {
  const out: unknown[] = [];
  let token: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const r = await get(
      `/v1/workflows?limit=200${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`,
    );
    expect(r.status, r.text).toBe(200);
    out.push(...r.body.items);
    token = r.body.nextToken;
    if (!token) return out;
  }
  throw new Error("workflow list does not end");
}

async function allInstances(): Promise<unknown[]> {
  const out: unknown[] = [];
  let token: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const r = await get(
      `/v1/instances?limit=200${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`,
    );
    expect(r.status, r.text).toBe(200);
    out.push(...r.body.items);
    token = r.body.nextToken;
    if (!token) return out;
  }
  throw new Error("instance list does not end");
}

/** Everything a request could have written that the API or the store can show. */
async function snapshot() {
  const pending = await rt.api.store.listPendingCommands(Date.now() + 60_000, 1000);
  return {
    workflows: await allWorkflows(),
    instances: await allInstances(),
    pendingCommands: pending.map((c) => c.commandId).sort(),
  };
}

/** Runs `fn` and asserts that it left the snapshot unchanged. */
async function changesNothing(fn: () => Promise<void>): Promise<void> {
  const before = await snapshot();
  await fn();
  expect(await snapshot()).toEqual(before);
}

// ---- driving the engine by hand (no pollers) ------------------------------------------------

let seq = 0;
function sqsRecord(body: string, groupId?: string, queueName = "events.fifo"): SqsRecord {
  seq++;
  return {
    messageId: `msg-${seq}`,
    receiptHandle: `rh-${seq}`,
    body,
    attributes: {
      ApproximateReceiveCount: "1",
      SentTimestamp: String(Date.now()),
      ...(groupId ? { MessageGroupId: groupId, MessageDeduplicationId: `d-${seq}` } : {}),
    },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueName}`,
    awsRegion: "us-east-1",
  };
}

async function dispatch(event: EventMessage): Promise<void> {
  const r = await rt.dispatcher.handleBatch([sqsRecord(JSON.stringify(event), event.instanceId)]);
  expect(r.batchItemFailures).toEqual([]);
}

/** Creates the instance record and dispatches its first tasks (instance → RUNNING). */
async function startInstance(instanceId: string): Promise<void> {
  await dispatch({ kind: "command", commandId: `start:${instanceId}`, instanceId });
}

/** Receives the task message the dispatcher sent for this instance from the task queues. */
async function receiveTask(instanceId: string): Promise<{ record: SqsRecord; msg: TaskMessage }> {
  return until(
    async () => {
      for (const url of aws.taskUrls) {
        const r = await sqsClient().send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: 10,
            VisibilityTimeout: 1,
          }),
        );
        for (const m of r.Messages ?? []) {
          const msg = JSON.parse(m.Body ?? "{}") as TaskMessage;
          if (msg.instanceId !== instanceId) continue;
          await sqsClient().send(
            new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }),
          );
          const queueName = url.split("/").pop() ?? url;
          return { record: sqsRecord(m.Body ?? "", undefined, queueName), msg };
        }
      }
      return undefined;
    },
    { what: `a task message of ${instanceId}` },
  );
}

/** Drives a one-task instance to SUCCESS: dispatcher, worker (real shell), dispatcher. */
async function runToSuccess(instanceId: string): Promise<void> {
  await startInstance(instanceId);
  const { record, msg } = await receiveTask(instanceId);
  const w = await rt.worker.handleBatch([record]);
  expect(w.batchItemFailures).toEqual([]);
  await dispatch({
    kind: "task",
    instanceId,
    code: msg.code,
    attempt: msg.attempt,
    state: "SUCCESS",
  });
  await until(async () => (await get(`/v1/instances/${instanceId}`)).body?.state === "SUCCESS", {
    what: `${instanceId} SUCCESS`,
  });
}

// ---- tests ----------------------------------------------------------------------------------

describe("health", () => {
  it("GET /v1/health → 200 with status and the package version", async () => {
    const r = await get("/v1/health");
    expect(r.status).toBe(200);
    expect(r.contentType).toMatch(/^application\/json/);
    expect(r.body).toEqual({ status: "ok", version: PKG.version });
  });

  it("a trailing slash reaches the same endpoint", async () => {
    const r = await get("/v1/health/");
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("ok");
  });
});

describe("PUT /v1/workflows/{name}", () => {
  it("201 for a new workflow, 200 for an identical body, 201 with version 2 on a change", async () => {
    const first = await put("/v1/workflows/etl", twoTasks());
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ name: "etl", version: 1, releaseState: "ONLINE" });
    expect(first.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const same = await put("/v1/workflows/etl", twoTasks());
    expect(same.status, same.text).toBe(200);
    expect(same.body).toMatchObject({ name: "etl", version: 1, releaseState: "ONLINE" });
    expect(same.body.createdAt).toBe(first.body.createdAt);

    // The same definition with its defaults spelled out is still the same definition.
    const explicit = twoTasks();
    const withDefaults = {
      ...explicit,
      priority: "MEDIUM",
      failureStrategy: "END",
      params: {},
      tasks: explicit.tasks.map((t) => ({ upstream: [], retries: 0, priority: "MEDIUM", ...t })),
    };
    const same2 = await put("/v1/workflows/etl", withDefaults);
    expect(same2.status, same2.text).toBe(200);
    expect(same2.body.version).toBe(1);

    const changed = await put("/v1/workflows/etl", twoTasks("echo changed"));
    expect(changed.status, changed.text).toBe(201);
    expect(changed.body).toMatchObject({ name: "etl", version: 2, releaseState: "ONLINE" });

    const latest = await get("/v1/workflows/etl");
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({ name: "etl", version: 2, releaseState: "ONLINE" });
    expect(latest.body.tasks[0]).toMatchObject({ code: "extract", command: "echo changed" });
  });

  it("accepts YAML with content-type application/yaml", async () => {
    const yaml = [
      "description: from yaml",
      "tasks:",
      "  - code: a",
      "    type: SHELL",
      "    command: echo a",
      "  - code: b",
      "    type: SHELL",
      "    upstream: [a]",
      "    command: echo b",
      "",
    ].join("\n");
    const r = await put("/v1/workflows/from-yaml", undefined, {
      raw: yaml,
      contentType: "application/yaml",
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ name: "from-yaml", version: 1 });
    const g = await get("/v1/workflows/from-yaml");
    expect(g.status).toBe(200);
    expect(g.body).toMatchObject({ description: "from yaml", name: "from-yaml", version: 1 });
    expect(g.body.tasks.map((t: { code: string }) => t.code)).toEqual(["a", "b"]);
    // The same definition as JSON is the same version.
    const again = await put("/v1/workflows/from-yaml", {
      description: "from yaml",
      tasks: [
        { code: "a", type: "SHELL", command: "echo a" },
        { code: "b", type: "SHELL", upstream: ["a"], command: "echo b" },
      ],
    });
    expect(again.status, again.text).toBe(200);
    expect(again.body.version).toBe(1);
  });

  it("accepts application/json with a charset parameter", async () => {
    const r = await put("/v1/workflows/charset", oneTask(), {
      contentType: "application/json; charset=utf-8",
    });
    expect(r.status, r.text).toBe(201);
  });

  describe("rejects, and writes nothing", () => {
    beforeAll(async () => {
      await createWorkflow("base", twoTasks());
    });

    /** The request fails on a new name (still 404 after) and on an existing one (still v1). */
    async function rejectsOnBoth(
      send: (name: string) => Promise<Res>,
      status: number,
      code: string,
      expected: { message?: RegExp; path?: string; detail?: RegExp } = {},
    ) {
      await changesNothing(async () => {
        expectError(await send("never-created"), status, code, expected);
        expect((await get("/v1/workflows/never-created")).status).toBe(404);
        expectError(await send("base"), status, code, expected);
        const g = await get("/v1/workflows/base");
        expect(g.body.version).toBe(1);
        expect(g.body.tasks[0].command).toBe("echo extract");
      });
    }

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
        { detail: /SHELL or HTTP/ },
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
      const event: HttpApiEvent = {
        version: "2.0",
        routeKey: "$default",
        rawPath: "/v1/workflows/never-created",
        rawQueryString: "",
        headers: { "content-type": "application/json" },
        body: Buffer.from(huge).toString("base64"),
        isBase64Encoded: true,
        requestContext: {
          http: {
            method: "PUT",
            path: "/v1/workflows/never-created",
            protocol: "HTTP/1.1",
            sourceIp: "",
            userAgent: "",
          },
          requestId: "r",
          timeEpoch: Date.now(),
        },
      };
      await changesNothing(async () => {
        const r = await handleApiEvent(rt.api, event);
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

    // API-v1.md: "413 (body or field too large)". A SHELL command over its 64 KiB limit is a field
    // that is too large.
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

describe("GET /v1/workflows[/{name}]", () => {
  beforeAll(async () => {
    await createWorkflow("versions", oneTask("echo v1"));
    await createWorkflow("versions", oneTask("echo v2"));
  });

  it("404 for an unknown workflow, naming it", async () => {
    expectError(await get("/v1/workflows/nope"), 404, "NotFound", { message: /nope/ });
  });

  it("?version=N: 200 for an older version, 404 for one that does not exist, 400 for junk", async () => {
    const v1 = await get("/v1/workflows/versions?version=1");
    expect(v1.status, v1.text).toBe(200);
    expect(v1.body).toMatchObject({ name: "versions", version: 1, releaseState: "ONLINE" });
    expect(v1.body.tasks[0].command).toBe("echo v1");
    const latest = await get("/v1/workflows/versions");
    expect(latest.body.version).toBe(2);
    expect(latest.body.tasks[0].command).toBe("echo v2");

    expectError(await get("/v1/workflows/versions?version=99"), 404, "NotFound", {
      message: /99/,
    });
    expectError(await get("/v1/workflows/nope?version=1"), 404, "NotFound", { message: /nope/ });
    for (const bad of ["abc", "0", "-1", "1.5"]) {
      expectError(await get(`/v1/workflows/versions?version=${bad}`), 400, "ValidationError", {
        path: "version",
      });
    }
  });

  it("400 for a bad name", async () => {
    expectError(await get("/v1/workflows/-bad"), 400, "ValidationError", { path: "name" });
  });

  it("list: 400 for limit out of 1..200 or not a number", async () => {
    for (const bad of ["0", "201", "x", "-1", "2.5"]) {
      expectError(await get(`/v1/workflows?limit=${bad}`), 400, "ValidationError", {
        path: "limit",
        detail: /1 to 200/,
      });
    }
    expect((await get("/v1/workflows?limit=200")).status).toBe(200);
    expect((await get("/v1/workflows?limit=1")).status).toBe(200);
  });

  it("list: 400 for a nextToken it did not hand out", async () => {
    expectError(await get("/v1/workflows?nextToken=garbage"), 400, "ValidationError", {
      path: "nextToken",
    });
    expectError(await get("/v1/workflows?nextToken=%7B%7D"), 400, "ValidationError", {
      path: "nextToken",
    });
  });

  // Regression: this once failed (see git history for the bug it pinned).
  it("list: 400 (not 500) for a well-formed token that is not a key", async () => {
    for (const token of ["e30", Buffer.from('{"a":1}').toString("base64url")]) {
      expectError(await get(`/v1/workflows?nextToken=${token}`), 400, "ValidationError", {
        path: "nextToken",
      });
    }
  });

  it("list: limit=1 pages through every workflow with working nextTokens", async () => {
    const all = (await allWorkflows()) as Array<{ name: string }>;
    expect(all.length).toBeGreaterThanOrEqual(3);
    const seen: string[] = [];
    let token: string | undefined;
    for (let i = 0; i < all.length + 2; i++) {
      const r = await get(
        `/v1/workflows?limit=1${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`,
      );
      expect(r.status, r.text).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(1);
      seen.push(...r.body.items.map((w: { name: string }) => w.name));
      token = r.body.nextToken;
      if (i === 0) expect(typeof token).toBe("string");
      if (!token) break;
    }
    expect(token).toBeUndefined();
    expect(seen).toEqual(all.map((w) => w.name));
    const versions = all.find((w) => w.name === "versions");
    expect(versions).toMatchObject({ name: "versions", version: 2, releaseState: "ONLINE" });
  });

  // API-v1.md: "a response has items and, when more exist, nextToken".
  // Regression: this once failed (see git history for the bug it pinned).
  it("list: no nextToken when the page holds the last items", async () => {
    const all = await allWorkflows();
    const r = await get(`/v1/workflows?limit=${all.length}`);
    expect(r.status).toBe(200);
    expect(r.body.items.length).toBe(all.length);
    expect(r.body.nextToken).toBeUndefined();
  });
});

describe("POST /v1/workflows/{name}/release", () => {
  beforeAll(async () => {
    await createWorkflow("rel", oneTask());
  });

  it("400 for a bad state, an unknown field, or a body that is not an object", async () => {
    await changesNothing(async () => {
      expectError(
        await post("/v1/workflows/rel/release", { state: "LIVE" }),
        400,
        "ValidationError",
        {
          path: "state",
          detail: /ONLINE or OFFLINE/,
        },
      );
      expectError(await post("/v1/workflows/rel/release", {}), 400, "ValidationError", {
        path: "state",
      });
      expectError(
        await post("/v1/workflows/rel/release", { state: "OFFLINE", force: true }),
        400,
        "ValidationError",
        { message: /force/, detail: /unknown field 'force'/ },
      );
      expectError(await post("/v1/workflows/rel/release", ["OFFLINE"]), 400, "ValidationError");
      expectError(await post("/v1/workflows/rel/release"), 400, "ValidationError");
      expectError(
        await post("/v1/workflows/rel/release", undefined, { raw: "{state:" }),
        400,
        "ValidationError",
        { message: /not valid JSON/ },
      );
      expectError(
        await post("/v1/workflows/rel/release", undefined, {
          raw: "state: OFFLINE",
          contentType: "application/yaml",
        }),
        415,
        "UnsupportedMediaType",
      );
    });
    expect((await get("/v1/workflows/rel")).body.releaseState).toBe("ONLINE");
  });

  it("404 for an unknown workflow", async () => {
    await changesNothing(async () => {
      expectError(
        await post("/v1/workflows/ghost/release", { state: "OFFLINE" }),
        404,
        "NotFound",
        {
          message: /ghost/,
        },
      );
    });
    expect((await get("/v1/workflows/ghost")).status).toBe(404);
  });

  it("OFFLINE refuses runs with 409 (nothing started); ONLINE again runs with 202", async () => {
    const off = await post("/v1/workflows/rel/release", { state: "OFFLINE" });
    expect(off.status, off.text).toBe(200);
    expect(off.body).toMatchObject({ name: "rel", version: 1, releaseState: "OFFLINE" });
    expect((await get("/v1/workflows/rel")).body.releaseState).toBe("OFFLINE");

    await changesNothing(async () => {
      expectError(await post("/v1/workflows/rel/runs", {}), 409, "Conflict", {
        message: /OFFLINE/,
      });
      expectError(
        await post("/v1/workflows/rel/runs", { idempotencyKey: "offline-key" }),
        409,
        "Conflict",
      );
    });
    const listed = await get("/v1/instances?workflow=rel");
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([]);

    const on = await post("/v1/workflows/rel/release", { state: "ONLINE" });
    expect(on.status, on.text).toBe(200);
    expect(on.body.releaseState).toBe("ONLINE");
    const run = await post("/v1/workflows/rel/runs", {});
    expect(run.status, run.text).toBe(202);
    expect(run.body).toMatchObject({ workflow: "rel", version: 1, state: "SUBMITTED" });
  });

  it("a new definition with releaseState OFFLINE starts OFFLINE", async () => {
    const r = await put("/v1/workflows/born-offline", { ...oneTask(), releaseState: "OFFLINE" });
    expect(r.status, r.text).toBe(201);
    expect(r.body.releaseState).toBe("OFFLINE");
    expectError(await post("/v1/workflows/born-offline/runs", {}), 409, "Conflict");
  });
});

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

  // API-v1.md: "Unknown fields in a body are a 400, not silently dropped."
  // Regression: this once failed (see git history for the bug it pinned).
  it("stop: 400 for an unknown field in the body, and nothing stopped", async () => {
    const id = await startRun("inst");
    await changesNothing(async () => {
      expectError(await post(`/v1/instances/${id}/stop`, { force: true }), 400, "ValidationError", {
        detail: /unknown field 'force'/,
      });
    });
  });

  it("pause / resume / rerun / recover-failed → 409 'not yet supported'; 404 when unknown", async () => {
    await changesNothing(async () => {
      for (const verb of ["pause", "resume", "rerun", "recover-failed"]) {
        expectError(await post(`/v1/instances/${submitted}/${verb}`), 409, "Conflict", {
          message: new RegExp(`'${verb}' is not yet supported`),
        });
        expectError(
          await post(`/v1/instances/00000000-0000-4000-8000-000000000000/${verb}`),
          404,
          "NotFound",
        );
      }
    });
    expect((await get(`/v1/instances/${submitted}`)).body.state).toBe("SUBMITTED");
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

  // API-v1.md: "DELETE … 409 while any of its instances is not finished". A run the dispatcher has
  // not picked up yet is SUBMITTED (GET /v1/instances/{id} says so), i.e. not finished.
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

describe("routing", () => {
  it("unknown route → 404 JSON error", async () => {
    for (const path of [
      "/",
      "/v2/health",
      "/v1",
      "/v1/nothing",
      "/v1/workflows/a/b/c",
      "/v1/instances/x/tasks",
    ]) {
      expectError(await get(path), 404, "NotFound", {
        message: /no endpoint|not supported|no resource/,
      });
    }
  });

  it("wrong method on a known path → 404 JSON error naming the method", async () => {
    await changesNothing(async () => {
      expectError(await call("POST", "/v1/health"), 404, "NotFound", { message: /POST/ });
      expectError(await call("DELETE", "/v1/workflows"), 404, "NotFound", { message: /DELETE/ });
      expectError(await call("PATCH", "/v1/workflows/base", {}), 404, "NotFound", {
        message: /PATCH/,
      });
      expectError(await call("GET", "/v1/workflows/base/runs"), 404, "NotFound", {
        message: /GET/,
      });
      expectError(await call("PUT", "/v1/instances"), 404, "NotFound");
      expectError(await call("GET", "/v1/instances/x/stop"), 404, "NotFound");
    });
  });

  it("a path segment that is not valid percent-encoding → 404, not 500", async () => {
    expectError(await get("/v1/workflows/%E2%82"), 404, "NotFound");
    expectError(await get("/v1/instances/%ZZ"), 404, "NotFound");
  });
});

describe("never a 500 for anything the client sent", () => {
  it("~60 random junk requests all answer < 500 with a JSON error body", async () => {
    await createWorkflow("fuzz", twoTasks());
    const fuzzId = await startRun("fuzz", { dryRun: true });
    const seed = 20261121;
    const rand = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
    const junkSegment = () =>
      pick([
        "fuzz",
        "ghost",
        "-x",
        "%00",
        "%ZZ",
        "%E2%82",
        "a%2Fb",
        "..%2F..",
        "x".repeat(300),
        "__proto__",
        "constructor",
        "%F0%9F%92%A9",
        fuzzId,
        "00000000-0000-4000-8000-000000000000",
        String(Math.floor(rand() * 1e9)),
      ]);
    const junkQuery = () =>
      pick([
        "",
        "?limit=-5",
        "?limit=1e400",
        "?limit=%00",
        "?nextToken=%7B%22name%22%3A%7B%7D%7D",
        "?nextToken=e30",
        `?nextToken=${"A".repeat(2000)}`,
        "?version=1e309",
        "?version=9007199254740993",
        "?attempt=99999999999999999999",
        "?state=RUNNING&state=SUCCESS",
        "?workflow=fuzz&workflow=ghost",
        "?limit=1&limit=2",
      ]);
    const paths = [
      () => `/v1/workflows/${junkSegment()}`,
      () => `/v1/workflows/${junkSegment()}/runs`,
      () => `/v1/workflows/${junkSegment()}/release`,
      () => "/v1/workflows",
      () => "/v1/instances",
      () => `/v1/instances/${junkSegment()}`,
      () =>
        `/v1/instances/${junkSegment()}/${pick(["stop", "pause", "resume", "rerun", "recover-failed"])}`,
      () => `/v1/instances/${junkSegment()}/tasks/${junkSegment()}/attempts`,
      () => `/v1/instances/${junkSegment()}/tasks/${junkSegment()}/log`,
      () => `/${junkSegment()}`,
    ];
    const jsonJunk = (depth: number): unknown => {
      const r = rand();
      if (depth > 3 || r < 0.2)
        return pick([null, true, 0, -1, 1e308, "", "x", "SHELL", "ONLINE", [], {}]);
      if (r < 0.5) return Array.from({ length: Math.floor(rand() * 4) }, () => jsonJunk(depth + 1));
      const keys = [
        "tasks",
        "code",
        "type",
        "upstream",
        "state",
        "params",
        "priority",
        "startTasks",
        "__proto__",
        "constructor",
        "command",
        "url",
        "expectStatus",
        "idempotencyKey",
        "timeoutSeconds",
      ];
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(rand() * 5); i > 0; i--) o[pick(keys)] = jsonJunk(depth + 1);
      return o;
    };
    const bodies = [
      () => JSON.stringify(jsonJunk(0)),
      () =>
        JSON.stringify({
          tasks: [{ code: "a", type: "SHELL", command: "echo", ...(jsonJunk(2) as object) }],
        }),
      () =>
        '{"__proto__": {"polluted": true}, "tasks": [{"code": "a", "type": "SHELL", "command": "x"}]}',
      () => '{"params": {"__proto__": "x", "constructor": "y"}}',
      () => `${"[".repeat(5000)}${"]".repeat(5000)}`,
      () => "\u0000\u0001\uFFFF",
      () => '{"a": 1e999}',
      () => "tasks: !!js/function 'x'",
      () => "- &a [*a]",
      () => "",
    ];
    const types = [
      "application/json",
      "application/yaml",
      "text/plain",
      "application/json; charset=latin1",
      "application/vnd.api+json",
      "multipart/form-data; boundary=x",
      "",
      null,
    ];
    const methods = ["GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "HEAD"];
    const failures: string[] = [];
    for (let i = 0; i < 60; i++) {
      const method = pick(methods);
      const path = pick(paths)() + junkQuery();
      const hasBody = method !== "GET" && method !== "HEAD" && rand() < 0.85;
      const raw = hasBody ? pick(bodies)() : undefined;
      const contentType = pick(types);
      const r = await call(method, path, undefined, {
        ...(raw !== undefined ? { raw } : {}),
        contentType,
      });
      const what = `#${i} seed=${seed} ${method} ${path.slice(0, 120)} [${contentType}] ${String(raw).slice(0, 80)} → ${r.status} ${r.text.slice(0, 200)}`;
      if (r.status >= 500) failures.push(what);
      else if (r.status >= 400 && method !== "HEAD" && !r.body?.error?.code)
        failures.push(`no error body: ${what}`);
    }
    expect(failures).toEqual([]);
    // Nothing polluted, the server still answers.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await get("/v1/health")).status).toBe(200);
  });
});
