/**
 * Retention (DynamoDB TTL on AWS): with retention set, finished instances, finished task
 * attempts and fire-ledger entries carry the TTL attribute in epoch seconds; unfinished ones do
 * not, a rerun's write drops it again, and reads never show it. Checked on the raw items.
 */
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import type { ShoalConfig } from "../../lib/aws/config.js";
import { TTL_ATTRIBUTE } from "../../lib/aws/resources.js";
import { DynamoFires } from "../../lib/store/dynamo-fires.js";
import { DynamoStore, taskKey } from "../../lib/store/dynamo-store.js";
import type { InstanceRecord } from "../../lib/store/records.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";
import { instanceRecord, taskRecord } from "../helpers/records.js";

const DAYS = 2;
const END = Date.UTC(2026, 10, 21, 12, 0, 0, 500);
const TTL = Math.floor(END / 1000) + DAYS * 86_400;

const instance = (instanceId: string, fields: Partial<InstanceRecord>) =>
  instanceRecord(instanceId, { createdAt: END, ...fields });

describe("retention of finished items (TTL attribute)", () => {
  let config: ShoalConfig;
  let store: DynamoStore;
  beforeAll(async () => {
    config = (await useTestAws()).config;
    store = new DynamoStore(testClients().dynamo, config.tables, { retentionDays: DAYS });
  });

  const raw = async (table: string, key: Record<string, unknown>) =>
    (await testClients().dynamo.send(new GetCommand({ TableName: table, Key: key }))).Item ?? {};

  it("a finished instance expires retentionDays after it ended; a rerun drops the attribute", async () => {
    const inst = instance("ttl-1", { state: "RUNNING", createdAt: END - 60_000 });
    expect(await store.putInstance(inst)).toBe(true);
    expect((await raw(config.tables.instances, { instanceId: "ttl-1" }))[TTL_ATTRIBUTE]).toBe(
      undefined,
    );
    const done = { ...inst, state: "SUCCESS" as const, endedAt: END, rev: 2 };
    expect(await store.updateInstance(done)).toBe(true);
    expect((await raw(config.tables.instances, { instanceId: "ttl-1" }))[TTL_ATTRIBUTE]).toBe(TTL);
    // The record read back is the record written: no storage attribute leaks out.
    expect(await store.getInstance("ttl-1")).toEqual(done);
    const rerun = { ...done, state: "RUNNING" as const, endedAt: undefined, rev: 3 };
    expect(await store.updateInstance(rerun)).toBe(true);
    expect((await raw(config.tables.instances, { instanceId: "ttl-1" }))[TTL_ATTRIBUTE]).toBe(
      undefined,
    );
  });

  it("a task attempt expires when it ends, not while it runs", async () => {
    const key = { instanceId: "ttl-2", code: "a", attempt: 1 };
    expect(await store.putTaskInstance(taskRecord(key, { submittedAt: END - 1_000 }))).toBe(true);
    await store.updateTask(key, ["DISPATCHED"], { state: "RUNNING", startedAt: END - 500 });
    const item = () => raw(config.tables.tasks, { instanceId: "ttl-2", taskKey: taskKey("a", 1) });
    expect((await item())[TTL_ATTRIBUTE]).toBe(undefined);
    const ended = await store.updateTask(key, ["RUNNING"], { state: "SUCCESS", endedAt: END });
    expect((await item())[TTL_ATTRIBUTE]).toBe(TTL);
    expect(ended && TTL_ATTRIBUTE in ended).toBe(false);
    // A SKIPPED record is written final at once.
    await store.putTaskInstance({
      instanceId: "ttl-2",
      code: "b",
      attempt: 1,
      workflow: "w",
      type: "SHELL",
      state: "SKIPPED",
      priority: "MEDIUM",
      workerGroup: "default",
      submittedAt: END,
      endedAt: END,
    });
    expect(
      (await raw(config.tables.tasks, { instanceId: "ttl-2", taskKey: taskKey("b", 1) }))[
        TTL_ATTRIBUTE
      ],
    ).toBe(TTL);
  });

  it("a fire-ledger entry expires retentionDays after its nominal time", async () => {
    const fires = new DynamoFires(testClients().dynamo, config.tables.fires, DAYS);
    await fires.putFire({
      scheduleId: "s-ttl",
      nominalTime: END,
      actualTime: END,
      latenessMs: 0,
      decision: "FIRED",
    });
    expect(
      (await raw(config.tables.fires, { scheduleId: "s-ttl", nominalTime: END }))[TTL_ATTRIBUTE],
    ).toBe(TTL);
  });

  it("a QUEUED_SERIAL entry carries no expiry while it waits; it expires retentionDays after it is decided", async () => {
    const DECIDED = END + 10 * 86_400_000;
    const fires = new DynamoFires(testClients().dynamo, config.tables.fires, DAYS, () => DECIDED);
    const ttlOf = async (nominalTime: number) =>
      (await raw(config.tables.fires, { scheduleId: "s-queue", nominalTime }))[TTL_ATTRIBUTE];
    for (const nominalTime of [END, END + 1_000]) {
      await fires.putFire({
        scheduleId: "s-queue",
        nominalTime,
        actualTime: END,
        latenessMs: 0,
        decision: "QUEUED_SERIAL",
      });
      expect(await ttlOf(nominalTime)).toBe(undefined);
    }
    // Its turn came 10 days later: fired then.
    await fires.updateFire("s-queue", END, "QUEUED_SERIAL", {
      decision: "FIRED",
      instanceId: "i",
      actualTime: DECIDED,
      latenessMs: DECIDED - END,
    });
    expect(await ttlOf(END)).toBe(Math.floor(DECIDED / 1000) + DAYS * 86_400);
    // Dropped by a newer fire (no actual time): from the clock.
    await fires.updateFire("s-queue", END + 1_000, "QUEUED_SERIAL", {
      decision: "DISCARDED_OVERLAP",
    });
    expect(await ttlOf(END + 1_000)).toBe(Math.floor(DECIDED / 1000) + DAYS * 86_400);
    // The record read back carries no storage attribute of a queued entry's making.
    expect((await fires.getFire("s-queue", END))?.decision).toBe("FIRED");
  });

  it("without retention nothing carries the attribute", async () => {
    const keep = new DynamoStore(testClients().dynamo, config.tables);
    await keep.putInstance(instance("ttl-3", { state: "SUCCESS", endedAt: END }));
    expect((await raw(config.tables.instances, { instanceId: "ttl-3" }))[TTL_ATTRIBUTE]).toBe(
      undefined,
    );
  });
});
