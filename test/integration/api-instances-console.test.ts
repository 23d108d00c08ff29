/**
 * HTTP API v1, what the console's instance list and Grid read from `GET /v1/instances` (harness:
 * test/helpers/api-client.ts, which also checks every answer against the OpenAPI document):
 * each item's `progress`, `include=tasks` (the current attempt of each task), the
 * `scheduledAfter` / `scheduledBefore` / `q` filters, and a 400 naming the parameter for each
 * bad value. No pollers run: the dispatcher and worker are driven by hand
 * (test/helpers/api-engine.ts).
 */
import { randomUUID } from "node:crypto";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiDeps } from "../../lib/api/deps.js";
import { listInstances, MAX_TASK_READS } from "../../lib/api/instance-list.js";
import { RequestError } from "../../lib/core/errors.js";
import {
  apiServer,
  createWorkflow,
  expectError,
  get,
  oneTask,
  startApiServer,
  startRun,
  stopApiServer,
  twoTasks,
} from "../helpers/api-client.js";
import { control, runNextTask, runToSuccess, startInstance } from "../helpers/api-engine.js";

beforeAll(async () => {
  await startApiServer();
});

afterAll(stopApiServer);

// biome-ignore lint/suspicious/noExplicitAny: answer items are checked field by field
type Item = any;

/** Every item of the list for `query`, following nextToken (pages of `limit`). */
async function listAll(query: string): Promise<Item[]> {
  const out: Item[] = [];
  let token: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const r = await get(
      `/v1/instances?${query}${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`,
    );
    expect(r.status, r.text).toBe(200);
    out.push(...r.body.items);
    token = r.body.nextToken;
    if (!token) return out;
  }
  throw new Error("instance list does not end");
}

/** The detail's current attempts as the list's cells, by code. */
async function detailCells(id: string) {
  const r = await get(`/v1/instances/${id}`);
  expect(r.status, r.text).toBe(200);
  return (r.body.tasks as Item[])
    .map((t) => ({ code: t.code, state: t.state, attempt: t.attempt }))
    .sort((a, b) => (a.code < b.code ? -1 : 1));
}

describe("progress and include=tasks", () => {
  let done: string; // SUCCESS, both tasks run
  let running: string; // RUNNING, extract dispatched
  let submitted: string; // no dispatcher yet: not listed
  beforeAll(async () => {
    await createWorkflow("grid", twoTasks());
    done = await startRun("grid");
    await startInstance(done);
    expect((await runNextTask(done)).state).toBe("SUCCESS");
    expect((await runNextTask(done)).state).toBe("SUCCESS");
    running = await startRun("grid");
    await startInstance(running);
    submitted = await startRun("grid");
  });

  it("each item carries the detail's progress; no tasks without include", async () => {
    const items = await listAll("workflow=grid&limit=1");
    expect(items.map((i) => i.instanceId)).toEqual([running, done]);
    for (const i of items) {
      const detail = await get(`/v1/instances/${i.instanceId}`);
      expect(i.progress).toEqual(detail.body.progress);
      expect(i.tasks).toBeUndefined();
    }
    expect(items[0].progress).toEqual({ done: 0, active: 1, failed: 0, total: 2 });
    expect(items[1].progress).toEqual({ done: 2, active: 0, failed: 0, total: 2 });
    expect(items.some((i) => i.instanceId === submitted)).toBe(false);
  });

  it("include=tasks: the current attempt of each task, as the detail's, in task order", async () => {
    const r = await get("/v1/instances?workflow=grid&include=tasks&limit=25");
    expect(r.status, r.text).toBe(200);
    const [run, fin] = r.body.items as Item[];
    expect(fin.instanceId).toBe(done);
    expect(fin.tasks).toEqual([
      { code: "extract", state: "SUCCESS", attempt: 1 },
      { code: "load", state: "SUCCESS", attempt: 1 },
    ]);
    expect(run.instanceId).toBe(running);
    expect(run.tasks).toHaveLength(1); // load has not started
    expect(run.tasks[0]).toMatchObject({ code: "extract", attempt: 1 });
    for (const i of [run, fin]) {
      expect([...i.tasks].sort((a: Item, b: Item) => (a.code < b.code ? -1 : 1))).toEqual(
        await detailCells(i.instanceId),
      );
    }
  });

  it("include=tasks after a rerun: only the new round's attempts", async () => {
    await createWorkflow("grid-rerun", oneTask());
    const id = await startRun("grid-rerun");
    await runToSuccess(id);
    await control(id, "rerun");
    const r = await get("/v1/instances?workflow=grid-rerun&include=tasks");
    expect(r.status, r.text).toBe(200);
    const [item] = r.body.items as Item[];
    expect(item.tasks).toEqual(await detailCells(id));
    expect(item.tasks).toEqual([{ code: "only", state: expect.any(String), attempt: 2 }]);
    expect(item.progress).toEqual({ done: 0, active: 1, failed: 0, total: 1 });
  });

  it("the detail's include=attempts: every attempt of every round, in task order (the Gantt's)", async () => {
    await createWorkflow("gantt-rounds", twoTasks());
    const id = await startRun("gantt-rounds");
    await startInstance(id);
    expect((await runNextTask(id)).state).toBe("SUCCESS");
    expect((await runNextTask(id)).state).toBe("SUCCESS");
    await control(id, "rerun");
    const r = await get(`/v1/instances/${id}?include=attempts`);
    expect(r.status, r.text).toBe(200);
    expect((r.body.attempts as Item[]).map((a) => `${a.code}#${a.attempt}`)).toEqual([
      "extract#1",
      "extract#2",
      "load#1",
    ]);
    expect(r.body.attemptsOmitted).toBeUndefined();
    // The current round's attempts stay what `tasks` says, without the include too.
    expect((r.body.tasks as Item[]).map((t) => `${t.code}#${t.attempt}`)).toEqual(["extract#2"]);
    expect((await get(`/v1/instances/${id}`)).body.attempts).toBeUndefined();
    // A run the dispatcher has not picked up: none yet.
    expect((await get(`/v1/instances/${submitted}?include=attempts`)).body.attempts).toEqual([]);
    for (const bad of ["tasks", "", "ATTEMPTS"]) {
      expectError(
        await get(`/v1/instances/${id}?include=${encodeURIComponent(bad)}`),
        400,
        "ValidationError",
        { path: "include" },
      );
    }
  });

  it("include=tasks bounds limit to 100: 101 → 400 naming limit; other include values → 400", async () => {
    expect((await get("/v1/instances?include=tasks&limit=100")).status).toBe(200);
    expectError(await get("/v1/instances?include=tasks&limit=101"), 400, "ValidationError", {
      path: "limit",
      detail: /100/,
    });
    expect((await get("/v1/instances?limit=101")).status).toBe(200);
    for (const bad of ["task", "tasks,progress", "", "TASKS"]) {
      expectError(
        await get(`/v1/instances?include=${encodeURIComponent(bad)}`),
        400,
        "ValidationError",
        { path: "include" },
      );
    }
  });
});

describe("filters: scheduledAfter, scheduledBefore, q", () => {
  const T0 = Date.parse("2026-01-01T00:00:00Z");
  const HOUR = 3_600_000;
  const scheduled: string[] = []; // scheduleTime T0, T0+1h, T0+2h
  let manual: string;
  beforeAll(async () => {
    await createWorkflow("sched", oneTask());
    manual = await startRun("sched");
    await startInstance(manual);
    // Scheduled runs as the dispatcher writes them, without a schedule firing on time: copies
    // of a real instance with their own id and scheduleTime.
    const store = apiServer().rt.engine.store;
    const real = await store.getInstance(manual);
    if (!real) throw new Error("no instance");
    for (let k = 0; k < 3; k++) {
      const instanceId = randomUUID();
      const ok = await store.putInstance({
        ...real,
        instanceId,
        createdAt: real.createdAt + k + 1,
        scheduleTime: T0 + k * HOUR,
        commandType: "SCHEDULED",
        runType: "SCHEDULE",
        rev: 1,
      });
      expect(ok).toBe(true);
      scheduled.push(instanceId);
    }
  });

  const at = (ms: number) => new Date(ms).toISOString();
  const ids = async (query: string) =>
    (await listAll(`workflow=sched&${query}`)).map((i) => i.instanceId).sort();

  it("scheduledAfter is inclusive, scheduledBefore exclusive; manual runs drop out", async () => {
    const [s0, s1, s2] = scheduled;
    expect(await ids(`scheduledAfter=${at(T0 + HOUR)}`)).toEqual([s1, s2].sort());
    expect(await ids(`scheduledBefore=${at(T0 + HOUR)}`)).toEqual([s0]);
    expect(
      await ids(`scheduledAfter=${at(T0)}&scheduledBefore=${at(T0 + 2 * HOUR)}&limit=1`),
    ).toEqual([s0, s1].sort());
    // An offset other than Z names the same instant.
    expect(await ids(`scheduledAfter=${encodeURIComponent("2026-01-01T03:00:00+02:00")}`)).toEqual(
      [s1, s2].sort(),
    );
    expect(await ids(`scheduledAfter=${at(T0 + 3 * HOUR)}`)).toEqual([]);
    expect(await ids("")).toContain(manual);
  });

  it("filters apply per page: a short page may still carry nextToken, and the pages add up", async () => {
    // Newest first: s2, s1, s0, manual. limit=1 with scheduledBefore=T0+1h reads s2 first and
    // keeps nothing of that page.
    const first = await get(
      `/v1/instances?workflow=sched&limit=1&scheduledBefore=${at(T0 + HOUR)}`,
    );
    expect(first.status, first.text).toBe(200);
    expect(first.body.items).toEqual([]);
    expect(first.body.nextToken).toBeTruthy();
  });

  it("q: a case-insensitive substring of the id; empty searches nothing", async () => {
    const target = scheduled[1] as string;
    const part = target.slice(9, 18);
    expect(await ids(`q=${part.toUpperCase()}`)).toEqual([target]);
    expect(await ids(`q=${target}`)).toEqual([target]);
    expect(await ids("q=ffffffffffffffff")).toEqual([]);
    expect((await ids("q=")).length).toBe(4);
    // Combined with the other filters.
    expect(await ids(`q=${part}&scheduledAfter=${at(T0 + 2 * HOUR)}`)).toEqual([]);
  });

  it("400 naming the parameter for bad or hostile values", async () => {
    const bad: Array<[string, string]> = [
      ["scheduledAfter", "yesterday"],
      ["scheduledAfter", "1767225600000"],
      ["scheduledAfter", "2026-13-01T00:00:00Z"],
      ["scheduledAfter", "2026-01-01T00:00:00"], // no offset: which zone?
      ["scheduledBefore", "2026-01-01"],
      ["scheduledBefore", "2026-01-01T00:00:00Z OR 1=1"],
      ["q", "a'b"],
      ["q", ") OR contains(instanceId, :k"],
      ["q", "a".repeat(65)],
      ["q", "%"],
      ["q", "\u0000"],
    ];
    for (const [name, value] of bad) {
      expectError(
        await get(`/v1/instances?${name}=${encodeURIComponent(value)}`),
        400,
        "ValidationError",
        { path: name },
      );
    }
    expectError(
      await get(`/v1/instances?scheduledAfter=${at(T0)}&scheduledBefore=${at(T0)}`),
      400,
      "ValidationError",
      { path: "scheduledBefore", detail: /later than scheduledAfter/ },
    );
  });
});

describe("include=tasks: the bound on task reads", () => {
  // A page whose instances have more current attempts than a request may read: refused before
  // any task is read (a stub store, as no emulator should hold thousands of attempts).
  it("more than MAX_TASK_READS current attempts on a page → 400 naming limit, no task read", async () => {
    const perInstance = 51;
    const count = Math.ceil(MAX_TASK_READS / perInstance) + 1;
    const codes = Array.from({ length: perInstance }, (_, k) => `t${k}`);
    let taskReads = 0;
    const deps = {
      store: {
        listInstances: async (q: { limit: number }) => ({
          items: Array.from({ length: q.limit }, (_, k) => ({
            instanceId: `00000000-0000-4000-8000-${String(k).padStart(12, "0")}`,
            workflow: "big",
            version: 1,
            state: "RUNNING",
            priority: "MEDIUM",
            createdAt: k,
          })),
        }),
        getInstancesProgress: async (ids: readonly string[]) =>
          new Map(ids.map((id) => [id, { slots: "D".repeat(perInstance), attempts: {} }])),
        getTaskStates: async () => {
          taskReads++;
          return [];
        },
      },
      definitions: {
        get: async () => ({ definition: { tasks: codes.map((code) => ({ code })) } }),
      },
    } as unknown as ApiDeps;
    const event = {
      rawQueryString: `workflow=big&include=tasks&limit=${count}`,
    } as APIGatewayProxyEventV2;
    const err = await listInstances(deps, event).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RequestError);
    expect((err as RequestError).code).toBe("ValidationError");
    expect((err as RequestError).details).toEqual([
      { path: "limit", message: expect.stringMatching(/more than 5000: ask a smaller limit/) },
    ]);
    expect(taskReads).toBe(0);
    // A page within the bound: its attempts are read in one call.
    const fewer = {
      rawQueryString: `workflow=big&include=tasks&limit=${count - 2}`,
    } as APIGatewayProxyEventV2;
    const ok = await listInstances(deps, fewer);
    expect(ok.statusCode).toBe(200);
    expect(taskReads).toBe(1);
  });
});
