// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/**
 * The deliverer's at-least-once guarantees, on the emulators through the real AWS SDK, with a local
 * HTTP receiver: a repeated event adds no delivery; two deliverers racing send once; a deliverer
 * that died after claiming leaves the send to the next one once its claim lapses, with the same
 * delivery id; the bounded retries follow the configured backoff.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAlertsConfig } from "../../lib/alerts/channels.js";
import { AlertDeliverer, type DelivererDeps } from "../../lib/alerts/deliverer.js";
import type { DeliveryRecord } from "../../lib/alerts/deliveries.js";
import { DynamoDeliveries } from "../../lib/alerts/dynamo-deliveries.js";
import type { Store } from "../../lib/store/store.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";
import { type Received, type Receiver, startReceiver } from "../helpers/receiver.js";

describe("alert delivery", () => {
  let rx: Receiver;
  let url = "";
  let got: Received[] = [];
  let answer = 200;
  let echo = false;
  let deliveries: DynamoDeliveries;
  let clock = 1_700_000_000_000;

  beforeAll(async () => {
    // A receiver that quotes the request in its error page when `echo` is on.
    rx = await startReceiver((r) =>
      echo
        ? { status: 500, body: `echo ${r.headers.authorization}\nat ${r.path}` }
        : { status: answer },
    );
    url = rx.url;
    got = rx.got;
    const aws = await useTestAws();
    deliveries = new DynamoDeliveries(testClients().dynamo, aws.config.tables.timers);
  });
  afterAll(async () => {
    await rx?.close();
  });

  const deliverer = (more: Partial<DelivererDeps> = {}) =>
    new AlertDeliverer({
      // A misfire's alert reads nothing from the engine's store.
      store: {} as Store,
      deliveries,
      config: parseAlertsConfig(
        [
          "channels:",
          `  ops: { type: webhook, url: "${url}/hook" }`,
          `  lit: { type: webhook, url: "${url}/hook/p4th-t0k3n?key=qu3ry-t0k3n", headers: { Authorization: "Bearer literaltoken123" } }`,
          "  slow: { type: webhook, url: '${secret:slow-url}' }",
          "delivery: { attempts: 3, backoffSeconds: [10, 20] }",
        ].join("\n"),
        "test",
      ),
      now: () => clock,
      ...more,
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

  it("a receiver echoing the request: no header value, path or query in lastError or the log", async () => {
    echo = true;
    const rec = { ...record("echo"), channel: "lit" };
    await deliveries.create(rec);
    const logged: string[] = [];
    const d = deliverer({ log: (msg, fields) => logged.push(`${msg} ${JSON.stringify(fields)}`) });
    expect((await d.deliverDue()).retrying).toBe(1);
    echo = false;
    expect(sentFor(rec.deliveryId)[0]?.headers.authorization).toBe("Bearer literaltoken123");
    const stored = await deliveries.get(rec.subject, rec.deliveryId);
    expect(stored?.lastError).toBe("HTTP 500: echo *** at /<path>?<query>");
    const text = JSON.stringify(stored) + logged.join("\n");
    for (const leak of ["literaltoken123", "p4th-t0k3n", "qu3ry-t0k3n"]) {
      expect(text).not.toContain(leak);
    }
    clock += 3_600_000; // past its retries: out of the later tests' way
    await d.deliverDue();
    await d.deliverDue();
  });

  it("content first, then the claim: a slow build does not eat the claim; short of time, no claim", async () => {
    const rec = { ...record("slow"), channel: "slow" };
    await deliveries.create(rec);
    const seen: Array<Partial<DeliveryRecord> | undefined> = [];
    // Reading the channel's secret (before the content) takes 30 s.
    const secrets = () => ({
      get: async () => {
        seen.push(await deliveries.get(rec.subject, rec.deliveryId));
        clock += 30_000;
        return `${url}/hook`;
      },
      where: () => "test",
    });
    // Short of one POST (10 s) plus the content margin: the job is left, unclaimed.
    const short = await deliverer({ secrets }).deliverDue({ remainingMs: () => 25_000 });
    expect(short).toMatchObject({ sent: 0, deferred: 1 });
    expect(seen).toHaveLength(0);
    const during: Array<DeliveryRecord | undefined> = [];
    const fetchSpy: typeof fetch = async (input, init) => {
      during.push(await deliveries.get(rec.subject, rec.deliveryId));
      return fetch(input, init);
    };
    const start = clock;
    const pass = await deliverer({ secrets, fetch: fetchSpy }).deliverDue({
      remainingMs: () => 200_000,
    });
    expect(pass).toMatchObject({ sent: 1, deferred: 0 });
    // Unclaimed while the content was built; claimed after it, for the invocation's time left
    // plus the margin (200 s + 20 s), not from before the build.
    expect(seen[0]).toMatchObject({ attempts: 0 });
    expect(seen[0]?.claimedUntil).toBeUndefined();
    expect(during[0]).toMatchObject({ attempts: 1, claimedUntil: start + 30_000 + 220_000 });
    expect(await deliveries.get(rec.subject, rec.deliveryId)).toMatchObject({
      status: "SENT",
      attempts: 1,
    });
  });
});
