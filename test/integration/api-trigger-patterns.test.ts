/**
 * HTTP API v1, trigger patterns as EventBridge takes them (harness: test/helpers/api-client.ts):
 * a pattern EventBridge would refuse as "Rule is too complex" is refused with a 400 naming the
 * field and nothing is written; a nested pattern matches an event whose key has a dot.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createWorkflow,
  expectError,
  get,
  oneTask,
  post,
  startApiServer,
  stopApiServer,
} from "../helpers/api-client.js";

beforeAll(async () => {
  await startApiServer();
  await createWorkflow("ingest", oneTask());
});

afterAll(stopApiServer);

describe("POST /v1/triggers", () => {
  it("400 for a pattern EventBridge refuses as too complex, and writes nothing", async () => {
    const key = ["*/datasync/*.bif", "*/datasync/*.tif", "*/datasync/*.tiff", "*/datasync/*.svs"];
    const res = await post("/v1/triggers", {
      workflow: "ingest",
      eventPattern: {
        source: ["aws.s3"],
        detail: { object: { key: key.map((wildcard) => ({ wildcard })) } },
      },
    });
    const err = expectError(res, 400, "ValidationError", {
      path: "eventPattern",
      detail: /^detail\.object\.key: wildcard pattern too complex: .*fewer wildcard characters/,
    });
    expect(err.message).toMatch(/^eventPattern: detail\.object\.key: wildcard pattern too complex/);
    const list = await get("/v1/triggers");
    expect(list.status, list.text).toBe(200);
    expect(list.body.items).toEqual([]);
  });
});

describe("POST /v1/events", () => {
  it("a nested pattern matches a dotted key in the event", async () => {
    const created = await post("/v1/triggers", {
      workflow: "ingest",
      eventPattern: { source: ["app"], detail: { state: { status: ["running"] } } },
    });
    expect(created.status, created.text).toBe(201);
    const sent = await post("/v1/events", {
      Entries: [
        { Source: "app", DetailType: "t", Detail: JSON.stringify({ "state.status": "running" }) },
        { Source: "app", DetailType: "t", Detail: JSON.stringify({ "state.status": "stopped" }) },
      ],
    });
    expect(sent.status, sent.text).toBe(200);
    const [running, stopped] = sent.body.Entries;
    expect(running.Triggers).toEqual([
      { triggerId: created.body.id, instanceId: expect.any(String) },
    ]);
    expect(stopped.Triggers).toEqual([]);
  });
});
