/**
 * The harness of the HTTP API v1 tests (test/integration/api-*.test.ts): the standalone server
 * (`startHttpServer`) in front of `handleApiRequest`, backed by DynamoDB/SQS emulators, plus
 * request helpers, error-shape assertions and fixtures. Every failed request is checked for its
 * status, `error.code`, a message naming the problem, `details[].path` where relevant, and that
 * it changed nothing. No pollers run: instances stay SUBMITTED unless a test drives the
 * dispatcher and worker itself (api-engine.ts).
 *
 * One server per test file: call `startApiServer()` in the file's `beforeAll` and
 * `stopApiServer()` in its `afterAll`; the helpers below talk to that server.
 *
 * Every answer the server gives is checked against the OpenAPI document (answer-schemas.ts): a
 * status the route does not declare, or a body its schema refuses, fails the test that caused it
 * (in the `afterEach` below; `stopApiServer` fails for what a `beforeAll`/`afterAll` caused).
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { handleApiRequest } from "../../lib/api/router.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { startHttpServer } from "../../lib/standalone/http-server.js";
import { type AnswerCheck, answerChecker } from "./answer-schemas.js";
import { type TestAws, useTestAws } from "./aws-env.js";

let aws: TestAws;
let rt: Runtime;
let server: Server;
let base: string;
let dataDir: string;
let checkAnswer: AnswerCheck | undefined;
/** Answers since the last check that do not match the document: what each does wrong. */
const violations: string[] = [];

/** @throws Error listing the answers since the last call that do not match the document. */
function failOnViolations(): void {
  if (violations.length === 0) return;
  const found = violations.splice(0);
  throw new Error(
    `${found.length} answer(s) do not match the OpenAPI document (lib/api/schemas, lib/api/routes):\n\n${found.join("\n\n")}`,
  );
}

afterEach(failOnViolations);

export interface ApiServer {
  aws: TestAws;
  rt: Runtime;
  /** `http://127.0.0.1:<port>` */
  base: string;
}

/** Private tables and queues, a runtime on them, and the HTTP server on a free port. */
export async function startApiServer(): Promise<ApiServer> {
  aws = await useTestAws();
  dataDir = await mkdtemp(join(tmpdir(), "shoal-api-test-"));
  rt = createRuntime({ ...aws.config, dataDir });
  checkAnswer ??= answerChecker();
  const check = checkAnswer;
  const started = await startHttpServer(0, async (e) => {
    const result = await handleApiRequest(rt.api, e);
    let violation: string | undefined;
    try {
      violation = check(e, result);
    } catch (error) {
      violation = `checking the answer to ${e.requestContext.http.method} ${e.rawPath} failed: ${(error as Error).stack ?? error}`;
    }
    if (violation) violations.push(violation);
    return result;
  });
  server = started.server;
  base = `http://127.0.0.1:${started.port}`;
  return apiServer();
}

/** Closes the server and removes its data directory (also after a failed start). */
export async function stopApiServer(): Promise<void> {
  await new Promise<void>((resolve) => {
    server?.closeAllConnections();
    server ? server.close(() => resolve()) : resolve();
  });
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  failOnViolations();
}

/** The server `startApiServer()` started. */
export function apiServer(): ApiServer {
  if (!rt) throw new Error("startApiServer() has not run");
  return { aws, rt, base };
}

// ---- HTTP helpers ---------------------------------------------------------------------------

export interface Res {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
  body: any;
  text: string;
  contentType: string | null;
}

export interface Opts {
  /** Sent as-is (a string or bytes); otherwise `body` is JSON-encoded. */
  raw?: string | Uint8Array;
  contentType?: string | null;
}

export async function call(
  method: string,
  path: string,
  body?: unknown,
  opts: Opts = {},
): Promise<Res> {
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

export const get = (path: string) => call("GET", path);
export const put = (path: string, body?: unknown, opts?: Opts) => call("PUT", path, body, opts);
export const post = (path: string, body?: unknown, opts?: Opts) => call("POST", path, body, opts);
export const del = (path: string) => call("DELETE", path);

/** Asserts the contract's error shape; returns the error object for further checks. */
export function expectError(
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

export function twoTasks(command = "echo extract") {
  return {
    description: "extract then load",
    tasks: [
      { code: "extract", type: "SHELL", command },
      { code: "load", type: "SHELL", upstream: ["extract"], command: "echo load" },
    ],
  };
}

export function oneTask(command = "echo hello-from-shoal") {
  return { tasks: [{ code: "only", type: "SHELL", command }] };
}

export async function createWorkflow(name: string, def: unknown = twoTasks()): Promise<void> {
  const r = await put(`/v1/workflows/${name}`, def);
  expect([200, 201], r.text).toContain(r.status);
}

export async function startRun(name: string, body: unknown = {}): Promise<string> {
  const r = await post(`/v1/workflows/${name}/runs`, body);
  expect(r.status, r.text).toBe(202);
  return r.body.instanceId as string;
}

/** Every workflow in the list, following nextToken. */
export async function allWorkflows(): Promise<unknown[]> {
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

export async function allInstances(): Promise<unknown[]> {
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
export async function snapshot() {
  const pending = await rt.api.store.listPendingCommands(Date.now() + 60_000, 1000);
  return {
    workflows: await allWorkflows(),
    instances: await allInstances(),
    pendingCommands: pending.map((c) => c.commandId).sort(),
  };
}

/** Runs `fn` and asserts that it left the snapshot unchanged. */
export async function changesNothing(fn: () => Promise<void>): Promise<void> {
  const before = await snapshot();
  await fn();
  expect(await snapshot()).toEqual(before);
}

/**
 * The request fails on a new name (still 404 after) and on an existing one (still v1): the
 * caller created `base` from `twoTasks()`.
 */
export async function rejectsOnBoth(
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
