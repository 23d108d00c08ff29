/**
 * The deliverer's at-least-once guarantees, on the emulators through the real AWS SDK, with a local
 * HTTP receiver: a repeated event adds no delivery; two deliverers racing send once; a deliverer
 * that died after claiming leaves the send to the next one once its claim lapses, with the same
 * delivery id; the bounded retries follow the configured backoff.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAlertsConfig } from "../../lib/alerts/channels.js";
import { AlertDeliverer } from "../../lib/alerts/deliverer.js";
import type { DeliveryRecord } from "../../lib/alerts/deliveries.js";
import { DynamoDeliveries } from "../../lib/alerts/dynamo-deliveries.js";
import type { Store } from "../../lib/store/store.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";

describe("alert delivery", () => {
  let server: Server;
  let url = "";
  const got: Array<{ headers: IncomingHttpHeaders; body: { deliveryId: string } }> = [];
  let answer = 200;
  let deliveries: DynamoDeliveries;
  let clock = 1_700_000_000_000;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = "";
      req.on("data", (d) => {
        text += d;
      });
      req.on("end", () => {
        got.push({ headers: req.headers, body: JSON.parse(text) });
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const aws = await useTestAws();
    deliveries = new DynamoDeliveries(testClients().dynamo, aws.config.tables.timers);
  });
  afterAll(() => {
    server.close();
  });

  const deliverer = () =>
    new AlertDeliverer({
      // A misfire's alert reads nothing from the engine's store.
      store: {} as Store,
      deliveries,
      config: parseAlertsConfig(
        `channels: { ops: { type: webhook, url: "${url}/hook" } }\ndelivery: { attempts: 3, backoffSeconds: [10, 20] }`,
        "test",
      ),
      now: () => clock,
    });

  const record = (id: string): DeliveryRecord => ({
    deliveryId: `s-1.${id}.SCHEDULE_MISFIRE.s0.ops`,
    subject: "schedule:s-1",
    workflow: "wf",
    scheduleId: "s-1",
    nominalTime: clock - 60_000,
    misfireOutcome: "SKIPPED_MISFIRE",
    rule: "schedule.alerts[0]",
    channel: "ops",
    event: "SCHEDULE_MISFIRE",
    occurredAt: clock,
    status: "PENDING",
    attempts: 0,
    createdAt: clock,
    rev: 1,
  });
  const sentFor = (deliveryId: string) => got.filter((g) => g.body.deliveryId === deliveryId);

  it("a repeated event adds nothing; two deliverers racing send once", async () => {
    const rec = record("race");
    expect(await deliveries.create(rec)).toBe(true);
    expect(await deliveries.create({ ...rec, createdAt: clock + 5 })).toBe(false);
    const reports = await Promise.all([deliverer().deliverDue(), deliverer().deliverDue()]);
    expect(reports.reduce((n, r) => n + r.sent, 0)).toBe(1);
    expect(sentFor(rec.deliveryId)).toHaveLength(1);
    expect(sentFor(rec.deliveryId)[0]?.headers["x-shoal-delivery-id"]).toBe(rec.deliveryId);
    expect(await deliveries.get(rec.subject, rec.deliveryId)).toMatchObject({
      status: "SENT",
      attempts: 1,
      sentAt: clock,
    });
    // Nothing left to do.
    expect(
      (await deliveries.listDueJobs(clock + 3_600_000, 100)).map((j) => j.deliveryId),
    ).not.toContain(rec.deliveryId);
  });

  it("a deliverer that died after its claim: the next one sends once the claim lapses", async () => {
    const rec = record("crash");
    await deliveries.create(rec);
    // What a deliverer that died right after claiming leaves behind.
    expect(
      await deliveries.update({ ...rec, attempts: 1, claimedUntil: clock + 30_000, rev: 2 }),
    ).toBe(true);
    expect((await deliverer().deliverDue()).sent).toBe(0);
    expect(sentFor(rec.deliveryId)).toHaveLength(0);
    clock += 31_000;
    expect((await deliverer().deliverDue()).sent).toBe(1);
    expect(await deliveries.get(rec.subject, rec.deliveryId)).toMatchObject({
      status: "SENT",
      attempts: 2,
    });
  });

  it("retries on the configured backoff, then gives up", async () => {
    answer = 503;
    const rec = record("retry");
    await deliveries.create(rec);
    const d = deliverer();
    expect((await d.deliverDue()).retrying).toBe(1);
    expect(await deliveries.get(rec.subject, rec.deliveryId)).toMatchObject({
      status: "PENDING",
      attempts: 1,
      lastError: "HTTP 503",
      nextAttemptAt: clock + 10_000,
    });
    clock += 9_000;
    expect((await d.deliverDue()).retrying).toBe(0);
    clock += 1_000;
    expect((await d.deliverDue()).retrying).toBe(1);
    clock += 20_000;
    expect((await d.deliverDue()).failed).toBe(1);
    expect(await deliveries.get(rec.subject, rec.deliveryId)).toMatchObject({
      status: "FAILED",
      attempts: 3,
    });
    expect(sentFor(rec.deliveryId)).toHaveLength(3);
    answer = 200;
  });
});
