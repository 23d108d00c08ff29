/**
 * HTTP API v1, what the console's workflow list reads from `GET /v1/workflows?include=summary`
 * (harness: test/helpers/api-client.ts, which also checks every answer against the OpenAPI
 * document): each workflow's earliest next fire among its ONLINE schedules (with that schedule's
 * zone), its newest runs, nothing extra without the include, and a 400 naming the parameter for
 * each bad value. No pollers run: instances are started by hand (test/helpers/api-engine.ts).
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import {
  LAST_RUNS,
  MAX_LIMIT_WITH_SUMMARY,
  type summariseWorkflows,
} from "../../lib/api/workflow-summary.js";
import type { WorkflowListItem } from "../../lib/cli/api-types.generated.js";
import {
  createWorkflow,
  expectError,
  get,
  oneTask,
  post,
  startApiServer,
  startRun,
  stopApiServer,
} from "../helpers/api-client.js";
import { startInstance } from "../helpers/api-engine.js";

beforeAll(async () => {
  await startApiServer();
});

afterAll(stopApiServer);

// biome-ignore lint/suspicious/noExplicitAny: answer items are checked field by field
type Item = any;

describe("include=summary", () => {
  const runs: string[] = [];
  let soonest: Item;
  beforeAll(async () => {
    await createWorkflow("sum-a", oneTask());
    await createWorkflow("sum-b", oneTask());
    for (let i = 0; i < LAST_RUNS + 1; i++) {
      const id = await startRun("sum-a");
      await startInstance(id);
      runs.push(id);
    }
    const yearly = await post("/v1/schedules", {
      workflow: "sum-a",
      cron: "0 0 1 1 *",
      timezone: "Asia/Tokyo",
    });
    expect(yearly.status, yearly.text).toBe(201);
    const hourly = await post("/v1/schedules", {
      workflow: "sum-a",
      cron: "0 * * * *",
      timezone: "Europe/Paris",
    });
    expect(hourly.status, hourly.text).toBe(201);
    soonest = hourly.body;
    // An OFFLINE schedule that would fire sooner does not count.
    const offline = await post("/v1/schedules", {
      workflow: "sum-a",
      rate: "1 minute",
      state: "OFFLINE",
    });
    expect(offline.status, offline.text).toBe(201);
  });

  it("carries the earliest ONLINE next fire with its zone and the newest runs", async () => {
    const r = await get("/v1/workflows?include=summary");
    expect(r.status, r.text).toBe(200);
    const a = (r.body.items as Item[]).find((w) => w.name === "sum-a");
    expect(a.nextFireAt).toBe(soonest.nextFireTime);
    expect(a.nextFireTimezone).toBe("Europe/Paris");
    expect(a.lastRuns).toHaveLength(LAST_RUNS);
    // Newest first: the last started run comes first; the oldest is left out.
    expect(a.lastRuns.map((x: Item) => x.instanceId)).toEqual(runs.slice(1).reverse());
    for (const x of a.lastRuns) expect(typeof x.state).toBe("string");
    const b = (r.body.items as Item[]).find((w) => w.name === "sum-b");
    expect(b.nextFireAt).toBeUndefined();
    expect(b.lastRuns).toEqual([]);
  });

  it("adds nothing without the include", async () => {
    const r = await get("/v1/workflows");
    expect(r.status, r.text).toBe(200);
    const a = (r.body.items as Item[]).find((w) => w.name === "sum-a");
    expect(a).toEqual({ name: "sum-a", version: 1, releaseState: "ONLINE" });
  });

  it("pages like the plain list", async () => {
    const first = await get("/v1/workflows?include=summary&limit=1");
    expect(first.status, first.text).toBe(200);
    expect(first.body.items).toHaveLength(1);
    expect(first.body.nextToken).toBeTruthy();
    const second = await get(
      `/v1/workflows?include=summary&limit=1&nextToken=${encodeURIComponent(first.body.nextToken)}`,
    );
    expect(second.status, second.text).toBe(200);
    expect(second.body.items[0].name).not.toBe(first.body.items[0].name);
  });

  it("answers 400 naming include or limit", async () => {
    expectError(await get("/v1/workflows?include=tasks"), 400, "ValidationError", {
      path: "include",
    });
    expectError(
      await get(`/v1/workflows?include=summary&limit=${MAX_LIMIT_WITH_SUMMARY + 1}`),
      400,
      "ValidationError",
      { path: "limit" },
    );
    const plain = await get(`/v1/workflows?limit=${MAX_LIMIT_WITH_SUMMARY + 1}`);
    expect(plain.status, plain.text).toBe(200);
  });
});

it("builds the fields of the generated WorkflowListItem type", () => {
  type Built = Awaited<ReturnType<typeof summariseWorkflows>>[number];
  expectTypeOf<keyof Built>().toEqualTypeOf<keyof WorkflowListItem>();
  expectTypeOf<Built["lastRuns"]>().toExtend<NonNullable<WorkflowListItem["lastRuns"]>>();
});
