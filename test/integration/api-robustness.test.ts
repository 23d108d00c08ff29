/**
 * HTTP API v1 robustness end to end over real HTTP (harness: test/helpers/api-client.ts):
 * unknown routes and methods answer a JSON 404, and random junk requests never get a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  changesNothing,
  createWorkflow,
  expectError,
  get,
  startApiServer,
  startRun,
  stopApiServer,
  twoTasks,
} from "../helpers/api-client.js";
import { prng } from "../helpers/random.js";

beforeAll(async () => {
  await startApiServer();
});

afterAll(stopApiServer);

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
