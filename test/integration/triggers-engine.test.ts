/**
 * Event triggers against the emulators: the event id is the idempotency key (a redelivered
 * event starts no second run), debounce, and untrusted parameters that are too large.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { deliverTriggerEvent } from "../../lib/api/trigger-delivery.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { useTestAws } from "../helpers/aws-env.js";

describe("trigger delivery", () => {
  let rt: Runtime;
  beforeAll(async () => {
    const aws = await useTestAws();
    rt = createRuntime({ ...aws.config, dataDir: mkdtempSync(join(tmpdir(), "shoal-trig-")) });
    const now = Date.now();
    await rt.api.store.putDefinition({
      name: "on-file",
      version: 1,
      definition: {
        priority: "MEDIUM",
        failureStrategy: "END",
        params: {},
        tasks: [],
      },
      createdAt: now,
    });
    await rt.api.store.putWorkflowHead(
      { name: "on-file", latestVersion: 1, releaseState: "ONLINE", createdAt: now, updatedAt: now },
      0,
    );
  });

  const event = (id: string, path: string) => ({
    version: "0",
    id,
    "detail-type": "Object Created",
    source: "aws.s3",
    account: "000000000000",
    time: "2026-11-21T00:00:00Z",
    region: "us-east-1",
    resources: [],
    detail: { bucket: { name: "in" }, object: { key: path } },
  });

  async function trigger(debounceSeconds = 0) {
    const id = `t-${Math.random().toString(36).slice(2)}`;
    await rt.api.scheduling?.triggers.putTrigger({
      id,
      workflow: "on-file",
      eventPattern: JSON.stringify({ source: ["aws.s3"], detail: { bucket: { name: [id] } } }),
      params: { key: "$.detail.object.key" },
      debounceSeconds,
      createdAt: Date.now(),
      rev: 1,
    });
    return id;
  }

  it("the same event delivered twice starts one run", async () => {
    const t = await trigger();
    const e = {
      ...event("evt-1", "a.csv"),
      detail: { bucket: { name: t }, object: { key: "a.csv" } },
    };
    const first = await deliverTriggerEvent(rt.api, e);
    const again = await deliverTriggerEvent(rt.api, e);
    expect(first).toHaveLength(1);
    expect(first[0]?.instanceId).toBeDefined();
    expect(again[0]?.instanceId).toBe(first[0]?.instanceId);
    const cmd = await rt.api.store.getCommand(`start:${first[0]?.instanceId}`);
    expect(cmd?.run?.params).toEqual({ key: "a.csv" });
    expect(cmd?.triggerId).toBe(t);
  });

  it("debounce: a second event within the window starts nothing", async () => {
    const t = await trigger(60);
    const mk = (id: string) => ({
      ...event(id, "x"),
      detail: { bucket: { name: t }, object: { key: "x" } },
    });
    const a = await deliverTriggerEvent(rt.api, mk("evt-a"));
    const b = await deliverTriggerEvent(rt.api, mk("evt-b"));
    expect(a[0]?.instanceId).toBeDefined();
    expect(b[0]?.skipped).toMatch(/debounced/);
  });

  it("a parameter over the size limit starts nothing and says why", async () => {
    const t = await trigger();
    const big = "k".repeat(5_000);
    const r = await deliverTriggerEvent(rt.api, {
      ...event("evt-big", big),
      detail: { bucket: { name: t }, object: { key: big } },
    });
    expect(r[0]?.instanceId).toBeUndefined();
    expect(r[0]?.skipped).toMatch(/key.*5000 bytes.*4096/);
  });
});
