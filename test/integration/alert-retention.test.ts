/**
 * Alert delivery records expire with their instance, on the emulators through the real AWS SDK:
 * each record carries the TTL attribute (epoch seconds, DynamoDB TTL on AWS) set to the instance
 * retention after its last write, none when retention is off; timers and delivery jobs never carry
 * it (the timers table's TTL touches only records). Standalone's retention sweep deletes an
 * instance's records when it deletes the instance, an expired misfire record and an expired
 * record whose instance is gone, and never a record of an instance that still exists.
 */
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import type { DeliveryRecord } from "../../lib/alerts/deliveries.js";
import { DynamoDeliveries, JOB_SHARD } from "../../lib/alerts/dynamo-deliveries.js";
import { DynamoExpiredDeliveries } from "../../lib/alerts/dynamo-expired-deliveries.js";
import type { ShoalConfig } from "../../lib/aws/config.js";
import { TTL_ATTRIBUTE } from "../../lib/aws/resources.js";
import { sweepRetention } from "../../lib/standalone/retention.js";
import { DynamoExpiredItems } from "../../lib/store/dynamo-expired.js";
import { DynamoStore } from "../../lib/store/dynamo-store.js";
import { DynamoTimers } from "../../lib/store/dynamo-timers.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";
import { instanceRecord } from "../helpers/records.js";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

function delivery(subject: string, id: string, at: number): DeliveryRecord {
  const instance = subject.startsWith("schedule:") ? {} : { instanceId: subject, run: 1 };
  return {
    deliveryId: `${subject}.1.FAILURE.w0.${id}`,
    subject,
    workflow: "w",
    ...instance,
    rule: "workflow.alerts[0]",
    channel: id,
    event: subject.startsWith("schedule:") ? "SCHEDULE_MISFIRE" : "FAILURE",
    occurredAt: at,
    status: "PENDING",
    attempts: 0,
    createdAt: at,
    rev: 1,
  };
}

describe("alert delivery records expire with their instance", () => {
  let config: ShoalConfig;
  let store: DynamoStore;
  let clock = T0;
  /** Deliveries written with a 7-day retention at `clock`. */
  let deliveries: DynamoDeliveries;

  beforeAll(async () => {
    config = (await useTestAws()).config;
    store = new DynamoStore(testClients().dynamo, config.tables, { retentionDays: 7 });
    deliveries = new DynamoDeliveries(testClients().dynamo, config.tables.timers, {
      retentionDays: 7,
      now: () => clock,
    });
  });

  const rawTtl = async (subject: string, deliveryId: string) => {
    const r = await testClients().dynamo.send(
      new GetCommand({
        TableName: config.tables.timers,
        Key: { shard: `alert#${subject}`, dueKey: deliveryId },
      }),
    );
    return r.Item?.[TTL_ATTRIBUTE] as number | undefined;
  };

  it("a record carries the retention after its last write; jobs, timers and keep-all carry none", async () => {
    clock = T0;
    const rec = delivery("ttl-inst", "ops", T0);
    expect(await deliveries.create(rec)).toBe(true);
    expect(await rawTtl(rec.subject, rec.deliveryId)).toBe(T0 / 1000 + 7 * 86_400);
    // Sent 5 minutes later: the record lives 7 days from then.
    clock = T0 + 300_000;
    expect(await deliveries.update({ ...rec, status: "SENT", attempts: 1, rev: 2 })).toBe(true);
    expect(await rawTtl(rec.subject, rec.deliveryId)).toBe((T0 + 300_000) / 1000 + 7 * 86_400);
    // The API's reader never shows the attribute.
    expect(await deliveries.get(rec.subject, rec.deliveryId)).not.toHaveProperty(TTL_ATTRIBUTE);

    const keepAll = new DynamoDeliveries(testClients().dynamo, config.tables.timers, {
      retentionDays: 0,
    });
    const kept = delivery("ttl-keep", "ops", T0);
    await keepAll.create(kept);
    expect(await rawTtl(kept.subject, kept.deliveryId)).toBeUndefined();

    await new DynamoTimers(testClients().dynamo, config.tables.timers).putTimer({
      id: "check:ttl-inst:a:1",
      dueAt: T0,
      kind: "logic-check",
      instanceId: "ttl-inst",
    });
    for (const shard of [JOB_SHARD, "0"]) {
      const r = await testClients().dynamo.send(
        new QueryCommand({
          TableName: config.tables.timers,
          KeyConditionExpression: "#s = :s",
          ExpressionAttributeNames: { "#s": "shard" },
          ExpressionAttributeValues: { ":s": shard },
        }),
      );
      expect(r.Items?.length).toBeGreaterThan(0);
      for (const item of r.Items ?? []) expect(item).not.toHaveProperty(TTL_ATTRIBUTE);
    }
  });

  it("standalone's sweep deletes them with their instance, and on their own only without one", async () => {
    const expired = new DynamoExpiredItems(testClients().dynamo, config.tables);
    const expiredDeliveries = new DynamoExpiredDeliveries(
      testClients().dynamo,
      config.tables.timers,
    );
    // Ended at T0: the instance and its alerts (written then) expire at T0 + 7 days.
    await store.putInstance(instanceRecord("gone", { state: "FAILURE", endedAt: T0, rev: 2 }));
    clock = T0;
    await deliveries.create(delivery("gone", "ops", T0));
    await deliveries.create(delivery("gone", "chat", T0));
    // Still there (a rerun since): its old alerts stay, whatever their own attribute says.
    await store.putInstance(instanceRecord("rerun", { state: "RUNNING", runs: 2 }));
    await deliveries.create(delivery("rerun", "ops", T0));
    // A misfire's record belongs to no instance; an event handled after the instance went.
    await deliveries.create(delivery("schedule:s1", "ops", T0));
    await deliveries.create(delivery("never-stored", "ops", T0));
    // Written a day later: not expired yet.
    clock = T0 + DAY;
    await deliveries.create(delivery("schedule:s2", "ops", T0 + DAY));

    const sweep = () =>
      sweepRetention({
        expired,
        deliveries: expiredDeliveries,
        dataDir: "/nonexistent-shoal-test-dir",
        retentionDays: 7,
        now: () => T0 + 7.5 * DAY,
      });
    const swept = await sweep();
    expect(swept).toMatchObject({ instances: 1 });
    // gone ×2, schedule:s1, never-stored, and the first test's ttl-inst (no instance).
    expect(swept.alerts).toBe(5);
    expect(await store.getInstance("gone")).toBeUndefined();
    expect(await deliveries.list("gone")).toEqual([]);
    expect(await deliveries.list("schedule:s1")).toEqual([]);
    expect(await deliveries.list("never-stored")).toEqual([]);
    expect(await deliveries.list("rerun")).toHaveLength(1);
    expect(await deliveries.list("schedule:s2")).toHaveLength(1);
    expect(await deliveries.list("ttl-keep")).toHaveLength(1);
    // Nothing left to do.
    expect((await sweep()).alerts).toBe(0);
  });
});
