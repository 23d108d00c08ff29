/**
 * Asks for the answers the other API tests do not: every call goes through the harness's server,
 * which checks each answer against the OpenAPI document (test/helpers/answer-schemas.ts), so
 * these tests fail when a schedule, backfill, trigger, event or task group answer (or an error
 * of reading a body) is one docs/openapi.json does not describe. The statuses are asserted too,
 * so that each request reaches the answer it is here for.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  createWorkflow,
  del,
  get,
  oneTask,
  post,
  put,
  startApiServer,
  startRun,
  stopApiServer,
} from "../helpers/api-client.js";

beforeAll(async () => {
  await startApiServer();
  await createWorkflow("answers", oneTask("echo answers"));
});
afterAll(stopApiServer);

const status = async (res: Promise<{ status: number; text: string }>, expected: number) => {
  const r = await res;
  expect(r.status, r.text).toBe(expected);
};

describe("schedules", () => {
  it("list, read, replace, online/offline, preview, fires, delete, and their errors", async () => {
    const created = await post("/v1/schedules", { workflow: "answers", cron: "0 3 * * *" });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    await status(get("/v1/schedules?workflow=answers&limit=5"), 200);
    await status(get("/v1/schedules?limit=0"), 400);
    await status(get(`/v1/schedules/${id}`), 200);
    await status(put(`/v1/schedules/${id}`, { workflow: "answers", rate: "1 hour" }), 200);
    await status(put(`/v1/schedules/${id}`, { workflow: "answers", rate: "often" }), 400);
    await status(put("/v1/schedules/nope", { workflow: "answers", rate: "1 hour" }), 404);
    await status(post(`/v1/schedules/${id}/offline`), 200);
    await status(post(`/v1/schedules/${id}/online`, {}), 200);
    await status(post(`/v1/schedules/${id}/online`, { extra: 1 }), 400);
    await status(post("/v1/schedules/nope/offline"), 404);
    await status(post(`/v1/schedules/${id}/offline`, "x", { contentType: "text/plain" }), 415);
    await status(get(`/v1/schedules/${id}/preview?count=3`), 200);
    await status(get(`/v1/schedules/${id}/preview?count=1001`), 400);
    await status(get("/v1/schedules/nope/preview"), 404);
    await status(get(`/v1/schedules/${id}/fires?from=yesterday`), 400);
    await status(get(`/v1/schedules/${id}/fires`), 200);
    await status(post("/v1/schedules", "{", { raw: "{" }), 400);
    await status(
      post("/v1/schedules", { workflow: "answers", cron: "x" }, { contentType: "text/csv" }),
      415,
    );
    await status(del(`/v1/schedules/${id}`), 204);
    await status(del(`/v1/schedules/${id}`), 404);
  });
});

describe("backfills", () => {
  const range = { from: "2024-01-01T00:00:00Z", to: "2024-01-03T00:00:00Z", cron: "0 0 * * *" };

  it("dry run, start, read, pause, resume, cancel, and their errors", async () => {
    const dry = await post("/v1/workflows/answers/backfill", { ...range, dryRun: true });
    expect(dry.status, dry.text).toBe(200);
    await status(post("/v1/workflows/nope/backfill", range), 404);
    await status(post("/v1/workflows/answers/backfill", range, { contentType: "text/plain" }), 415);
    const started = await post("/v1/workflows/answers/backfill", { ...range, mode: "SERIAL" });
    expect(started.status, started.text).toBe(202);
    const id = started.body.id as string;
    await status(get(`/v1/backfills/${id}`), 200);
    await status(get("/v1/backfills/nope"), 404);
    await status(post(`/v1/backfills/${id}/pause`), 202);
    await status(post(`/v1/backfills/${id}/pause`, { extra: true }), 400);
    await status(post(`/v1/backfills/${id}/resume`), 202);
    await status(post(`/v1/backfills/${id}/cancel`), 202);
    await status(post(`/v1/backfills/${id}/resume`), 409);
    await status(post("/v1/backfills/nope/cancel"), 404);
    await status(post(`/v1/backfills/${id}/pause`, "x", { contentType: "text/plain" }), 415);
    await status(
      post("/v1/workflows/answers/backfill", {
        from: "2000-01-01T00:00:00Z",
        to: "2024-01-01T00:00:00Z",
        cron: "* * * * *",
      }),
      413,
    );
    await status(
      put("/v1/workflows/answers-offline", { ...oneTask(), releaseState: "OFFLINE" }),
      201,
    );
    await status(post("/v1/workflows/answers-offline/backfill", range), 409);
  });
});

describe("triggers and events", () => {
  it("create, list, read, deliver, delete, and their errors", async () => {
    const created = await post("/v1/triggers", {
      workflow: "answers",
      eventPattern: { source: ["answers.test"] },
      params: { who: "$.detail.who" },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    await status(get("/v1/triggers?limit=10"), 200);
    await status(get("/v1/triggers?nextToken=nonsense"), 400);
    await status(get(`/v1/triggers/${id}`), 200);
    await status(get("/v1/triggers/nope"), 404);
    const entry = {
      Source: "answers.test",
      DetailType: "t",
      Detail: JSON.stringify({ who: "me" }),
    };
    const sent = await post("/v1/events", { Entries: [entry, { ...entry, Detail: "{}" }] });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.Entries[0].Triggers[0].instanceId).toBeDefined();
    expect(sent.body.Entries[1].Triggers[0].skipped).toBeDefined();
    await status(post("/v1/events", { Entries: [entry] }, { contentType: "text/plain" }), 415);
    await status(post("/v1/triggers", { workflow: "answers" }, { contentType: "text/plain" }), 415);
    // No in-process bus behind this server: the recent events are on EventBridge.
    await status(get("/v1/events/recent"), 404);
    await status(get("/v1/events/recent?limit=0"), 400);
    await status(del(`/v1/triggers/${id}`), 204);
    await status(del(`/v1/triggers/${id}`), 404);
  });
});

describe("task groups", () => {
  it("create, change, list, read, delete, and their errors", async () => {
    await status(put("/v1/task-groups/answers", { capacity: 2 }), 201);
    await status(put("/v1/task-groups/answers", { capacity: 3, description: "three" }), 200);
    await status(put("/v1/task-groups/answers", { capacity: 0 }), 400);
    await status(
      put("/v1/task-groups/answers", { capacity: 1, description: "x".repeat(5000) }),
      413,
    );
    await status(put("/v1/task-groups/answers", "x", { contentType: "text/plain" }), 415);
    await status(put("/v1/task-groups/-bad", { capacity: 1 }), 400);
    await status(put("/v1/task-groups/%E0%A4%A", { capacity: 1 }), 404);
    await status(get("/v1/task-groups?limit=1"), 200);
    await status(get("/v1/task-groups?limit=201"), 400);
    await status(get("/v1/task-groups/answers"), 200);
    await status(get("/v1/task-groups/-bad"), 400);
    await status(get("/v1/task-groups/nope"), 404);
    await status(del("/v1/task-groups/-bad"), 400);
    await status(del("/v1/task-groups/answers"), 204);
    await status(del("/v1/task-groups/answers"), 404);
  });
});

describe("workflows and instances", () => {
  it("renders, control verbs and bodies the other tests do not send", async () => {
    await status(get("/v1/workflows/answers/tasks/only/render?timezone=Europe/Berlin"), 200);
    await status(get("/v1/workflows/answers/tasks/nope/render"), 404);
    await status(
      post("/v1/workflows/answers/tasks/only/render", "x", { contentType: "text/plain" }),
      415,
    );
    await status(
      post("/v1/workflows/answers/release", { state: "ONLINE" }, { contentType: "text/plain" }),
      415,
    );
    await status(put("/v1/workflows/%E0%A4%A", oneTask()), 404);
    const id = await startRun("answers");
    await status(get(`/v1/instances/${id}/tasks/only/render`), 409);
    await status(get(`/v1/instances/${id}/tasks/only/render?attempt=0`), 400);
    await status(post(`/v1/instances/${id}/pause`, { extra: 1 }), 400);
    await status(post(`/v1/instances/${id}/pause`, "x", { contentType: "text/plain" }), 415);
    await status(post(`/v1/instances/${id}/tasks/-bad/force-success`), 400);
    await status(post(`/v1/instances/${id}/tasks/only/force-success`, { extra: 1 }), 400);
    await status(post(`/v1/instances/${id}/tasks/only/force-success`), 409);
    await status(call("POST", `/v1/instances/${id}/stop`), 202);
  });
});
