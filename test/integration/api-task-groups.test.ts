/**
 * Task group endpoints (lib/api/task-groups.ts) over DynamoDB on dynalite, called the way the
 * router calls handlers: an API Gateway v2 event in, a result out, RequestErrors shaped into the
 * contract's error body. Checks status codes, bodies, 400/404/409/413/415, and that a refused
 * request wrote nothing.
 */

import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { beforeAll, describe, expect, it } from "vitest";
import { errorResult } from "../../lib/api/http.js";
import {
  deleteTaskGroup,
  getTaskGroup,
  listTaskGroups,
  putTaskGroup,
} from "../../lib/api/task-groups.js";
import { RequestError } from "../../lib/core/errors.js";
import { httpApiEvent } from "../../lib/standalone/lambda-events.js";
import { DynamoTaskGroups } from "../../lib/store/dynamo-task-groups.js";
import type { TaskGroupStore } from "../../lib/store/task-groups.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";

const WRITES = ["putGroup", "deleteGroup", "takeSlot", "freeSlot", "putWaiter", "deleteWaiter"];

let store: TaskGroupStore;
let writes = 0;
let clock = Date.parse("2024-05-01T10:00:00.000Z");
const now = () => clock;

beforeAll(async () => {
  const aws = await useTestAws();
  const real = new DynamoTaskGroups(testClients().dynamo, aws.config.tables.taskGroups);
  // Counts every write the handlers make, so a refused request can be shown to change nothing.
  store = new Proxy(real, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (WRITES.includes(String(prop))) writes++;
        return v.apply(target, args);
      };
    },
  });
});

function event(
  method: string,
  path: string,
  body?: unknown,
  opts: { query?: string; contentType?: string; raw?: string } = {},
): APIGatewayProxyEventV2 {
  return httpApiEvent({
    method,
    path,
    rawQueryString: opts.query ?? "",
    headers: { "content-type": opts.contentType ?? "application/json", "user-agent": "test" },
    ...(opts.raw !== undefined
      ? { body: opts.raw }
      : body !== undefined
        ? { body: JSON.stringify(body) }
        : {}),
    requestId: "r",
    timeEpoch: clock,
  });
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

interface Answer {
  status: number;
  body: Json;
}

/** What handleApiRequest does for these routes: dispatch, and shape a RequestError. */
async function call(e: APIGatewayProxyEventV2): Promise<Answer> {
  const method = e.requestContext.http.method;
  const m = /^\/v1\/task-groups(?:\/([^/]+))?$/.exec(e.rawPath);
  let r: APIGatewayProxyStructuredResultV2;
  try {
    if (!m) throw new Error(`no route ${e.rawPath}`);
    const name = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    if (name === undefined && method === "GET") r = await listTaskGroups(store, now, e);
    else if (name !== undefined && method === "PUT") r = await putTaskGroup(store, now, name, e);
    else if (name !== undefined && method === "GET") r = await getTaskGroup(store, now, name);
    else if (name !== undefined && method === "DELETE") r = await deleteTaskGroup(store, now, name);
    else throw new Error(`no route ${method} ${e.rawPath}`);
  } catch (err) {
    if (!(err instanceof RequestError)) throw err;
    r = errorResult(err);
  }
  return { status: r.statusCode ?? 200, body: r.body ? JSON.parse(r.body) : undefined };
}

const put = (name: string, body: unknown, opts?: Parameters<typeof event>[3]) =>
  call(event("PUT", `/v1/task-groups/${name}`, body, opts));
const get = (name: string) => call(event("GET", `/v1/task-groups/${name}`));
const del = (name: string) => call(event("DELETE", `/v1/task-groups/${name}`));
const list = (query = "") => call(event("GET", "/v1/task-groups", undefined, { query }));

/** Expects an error answer that wrote nothing. */
async function refused(
  request: Promise<Answer>,
  status: number,
  code: string,
  path?: string,
  message?: RegExp,
) {
  const before = writes;
  const r = await request;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.error.code).toBe(code);
  if (path !== undefined)
    expect(r.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  if (message) expect(JSON.stringify(r.body.error)).toMatch(message);
  if (status !== 409) expect(writes).toBe(before);
  return r.body.error;
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe("PUT /v1/task-groups/{name}", () => {
  it("201 when created, 200 without a write when equal, 200 when changed", async () => {
    const created = await put("etl", { capacity: 2, description: "nightly loads" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      name: "etl",
      capacity: 2,
      description: "nightly loads",
      used: 0,
      waiting: 0,
      createdAt: "2024-05-01T10:00:00.000Z",
      updatedAt: "2024-05-01T10:00:00.000Z",
    });

    clock += 60_000;
    const before = writes;
    const same = await put("etl", { capacity: 2, description: "nightly loads" });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(created.body);
    expect(writes).toBe(before);

    const changed = await put("etl", { capacity: 5 });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({
      name: "etl",
      capacity: 5,
      used: 0,
      waiting: 0,
      createdAt: "2024-05-01T10:00:00.000Z",
      updatedAt: "2024-05-01T10:01:00.000Z",
    });
    expect((await get("etl")).body).toEqual(changed.body);
  });

  it("400 naming capacity and its rule; nothing written", async () => {
    for (const capacity of [0, 1001, 2.5, "3", null, -1]) {
      const e = await refused(put("bad-cap", { capacity }), 400, "ValidationError", "capacity");
      expect(e.message).toMatch(/^capacity: must be a whole number from 1 to 1000/);
    }
    await refused(put("bad-cap", {}), 400, "ValidationError", "capacity", /1 to 1000/);
    expect((await get("bad-cap")).status).toBe(404);
  });

  it("accepts the capacity bounds 1 and 1000", async () => {
    expect((await put("cap-min", { capacity: 1 })).status).toBe(201);
    expect((await put("cap-max", { capacity: 1000 })).status).toBe(201);
  });

  it("400 for unknown fields, each named; for a bad name; for a body that is not an object", async () => {
    const e = await refused(
      put("tg", { capacity: 1, size: 2, owner: "me" }),
      400,
      "ValidationError",
      "size",
    );
    expect(e.details).toEqual(
      expect.arrayContaining([
        { path: "size", message: "unknown field 'size'" },
        { path: "owner", message: "unknown field 'owner'" },
      ]),
    );
    await refused(put("-bad", { capacity: 1 }), 400, "ValidationError", "name");
    await refused(put("a%20b", { capacity: 1 }), 400, "ValidationError", "name");
    await refused(put("tg", [1]), 400, "ValidationError", "");
    await refused(put("tg", undefined), 400, "ValidationError", "");
    await refused(put("tg", undefined, { raw: "{capacity" }), 400, "ValidationError", "");
    await refused(
      put("tg", { capacity: 1, description: 7 }),
      400,
      "ValidationError",
      "description",
    );
    expect((await get("tg")).status).toBe(404);
  });

  it("413 for a description that is too long, 415 for another content type", async () => {
    await refused(
      put("long", { capacity: 1, description: "x".repeat(1025) }),
      413,
      "PayloadTooLarge",
      "description",
    );
    await refused(
      put("long", undefined, { contentType: "text/plain", raw: "capacity=1" }),
      415,
      "UnsupportedMediaType",
    );
    expect((await get("long")).status).toBe(404);
  });
});

describe("GET /v1/task-groups[/{name}]", () => {
  it("reports held slots and waiting tasks", async () => {
    await put("counted", { capacity: 2 });
    await store.takeSlot("counted", 0, { instanceId: "i", code: "a", attempt: 1 }, clock);
    await store.putWaiter({
      group: "counted",
      instanceId: "i",
      code: "b",
      attempt: 1,
      taskGroupPriority: 0,
      instancePriority: "MEDIUM",
      taskPriority: "MEDIUM",
      queuedAt: clock,
      payload: "{}",
    });
    const r = await get("counted");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: "counted", capacity: 2, used: 1, waiting: 1 });
    expect(r.body.createdAt).toMatch(ISO);
  });

  it("404 for an unknown group, 400 for a bad name", async () => {
    await refused(get("nope"), 404, "NotFound", undefined, /nope/);
    await refused(get(".dot"), 400, "ValidationError", "name");
  });

  it("lists groups by name in pages of `limit`", async () => {
    for (const n of ["p1", "p2", "p3"]) await put(n, { capacity: 1 });
    const names: string[] = [];
    let token: string | undefined;
    do {
      const r = await list(`limit=2${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`);
      expect(r.status).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(2);
      for (const item of r.body.items) {
        expect(Object.keys(item).sort()).toEqual(
          expect.arrayContaining(["name", "capacity", "used", "waiting", "createdAt", "updatedAt"]),
        );
      }
      names.push(...r.body.items.map((i: { name: string }) => i.name));
      token = r.body.nextToken;
    } while (token);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(["p1", "p2", "p3", "etl"]));
    const all = await list();
    expect(all.body.nextToken).toBeUndefined();
    expect(all.body.items.length).toBe(names.length);
  });

  it("400 for a bad limit or token", async () => {
    await refused(list("limit=0"), 400, "ValidationError", "limit");
    await refused(list("limit=201"), 400, "ValidationError", "limit");
    await refused(list("nextToken=garbage"), 400, "ValidationError", "nextToken");
  });
});

describe("DELETE /v1/task-groups/{name}", () => {
  it("409 while a slot is held or a task waits, 204 once idle, then 404", async () => {
    await put("doomed", { capacity: 1 });
    const h = { instanceId: "i", code: "a", attempt: 1 };
    await store.takeSlot("doomed", 0, h, clock);
    await refused(del("doomed"), 409, "Conflict", undefined, /holding a slot/);
    expect((await get("doomed")).status).toBe(200);
    await store.freeSlot("doomed", 0, h);
    const w = {
      group: "doomed",
      instanceId: "i",
      code: "b",
      attempt: 1,
      taskGroupPriority: 3,
      instancePriority: "HIGH" as const,
      taskPriority: "LOW" as const,
      queuedAt: clock,
    };
    await store.putWaiter({ ...w, payload: "{}" });
    await refused(del("doomed"), 409, "Conflict", undefined, /waiting/);
    expect((await get("doomed")).body).toMatchObject({ used: 0, waiting: 1 });
    await store.deleteWaiter(w);
    const r = await del("doomed");
    expect(r.status).toBe(204);
    expect(r.body).toBeUndefined();
    await refused(get("doomed"), 404, "NotFound");
    await refused(del("doomed"), 404, "NotFound");
  });

  it("404 for an unknown group, 400 for a bad name", async () => {
    await refused(del("never"), 404, "NotFound", undefined, /never/);
    await refused(del("bad name"), 400, "ValidationError", "name");
  });
});
