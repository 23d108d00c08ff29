/**
 * The alerts Lambda's invocations (lib/alerts/lambda-event.ts, as functions/alerts runs them), on
 * the emulators through the real AWS SDK with a local HTTP receiver: a Shoal event writes its
 * deliveries and sends them at once, and a repeated event (Lambda's retry) sends nothing more;
 * only the one-minute schedule works through other due jobs; a failure to write deliveries fails
 * the invocation (so that Lambda retries it) while standalone's bus only logs it; with too little
 * of the invocation's time left nothing is claimed, and the schedule sends it later.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Alerts } from "../../lib/alerts/alerts.js";
import { parseAlertsConfig } from "../../lib/alerts/channels.js";
import { handleAlertsInvocation } from "../../lib/alerts/lambda-event.js";
import { putWorkflow } from "../../lib/api/workflows.js";
import { DETAIL_TYPES } from "../../lib/core/state-events.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { useTestAws } from "../helpers/aws-env.js";
import { type Receiver, startReceiver } from "../helpers/receiver.js";

const SCHEDULED = { source: "aws.events", "detail-type": "Scheduled Event", detail: {} };

describe("the alerts Lambda's invocations", () => {
  let rx: Receiver;
  let url = "";
  const got = () => rx.got.map((r) => r.body.deliveryId as string);
  let rt: Runtime;
  const logged: Array<{ msg: string; fields?: Record<string, unknown> }> = [];

  beforeAll(async () => {
    rx = await startReceiver();
    url = rx.url;
    const aws = await useTestAws();
    rt = createRuntime({ ...aws.config, dataDir: mkdtempSync(join(tmpdir(), "shoal-alerts-l-")) });
    const put = await putWorkflow(rt.api, "lw", {
      body: JSON.stringify({
        tasks: [{ code: "a", type: "SHELL", command: "true" }],
        alerts: [{ on: ["SUCCESS"], channels: ["ops"] }],
      }),
      headers: { "content-type": "application/json" },
      isBase64Encoded: false,
    } as never);
    expect(put.statusCode).toBe(201);
  });
  afterAll(async () => {
    await rx?.close();
  });

  const alertsOn = (timersTable: string) =>
    new Alerts({
      dynamo: rt.clients.dynamo,
      timersTable,
      store: rt.api.store,
      definitions: rt.api.definitions,
      schedules: rt.scheduling.schedules,
      now: () => Date.now(),
      log: (msg, fields) => logged.push({ msg, ...(fields ? { fields } : {}) }),
      config: parseAlertsConfig(
        `channels: { ops: { type: webhook, url: "${url}/hook" } }\ndelivery: { timeoutSeconds: 2 }`,
        "test",
      ),
    });
  const succeeded = (instanceId: string) => ({
    source: "shoal",
    "detail-type": DETAIL_TYPES.instance,
    time: new Date().toISOString(),
    detail: {
      schemaVersion: 1,
      instanceId,
      workflow: "lw",
      workflowVersion: 1,
      state: "SUCCESS",
      previousState: "RUNNING_EXECUTION",
      commandType: "START_WORKFLOW",
      priority: "MEDIUM",
      runs: 1,
    },
  });
  const plenty = { remainingMs: () => 290_000 };

  it("an event's deliveries are sent at once; its retry sends nothing more", async () => {
    const alerts = alertsOn(rt.config.tables.timers);
    const first = await handleAlertsInvocation(alerts, succeeded("i-now"), plenty);
    expect(first).toMatchObject({ created: 1, sent: 1, deferred: 0 });
    expect(got().filter((d) => d.startsWith("i-now."))).toHaveLength(1);
    const again = await handleAlertsInvocation(alerts, succeeded("i-now"), plenty);
    expect(again).toMatchObject({ created: 0, sent: 0 });
    expect(got().filter((d) => d.startsWith("i-now."))).toHaveLength(1);
    expect((await alerts.deliveries.list("i-now"))[0]).toMatchObject({
      status: "SENT",
      attempts: 1,
    });
  });

  it("only the schedule works through other due jobs", async () => {
    const alerts = alertsOn(rt.config.tables.timers);
    // A delivery whose event was written by standalone's bus (no send of its own).
    const [waiting] = await alerts.onEvent(succeeded("i-waiting"));
    expect(waiting).toBeDefined();
    await handleAlertsInvocation(alerts, succeeded("i-other"), plenty);
    expect(got().filter((d) => d.startsWith("i-waiting."))).toHaveLength(0);
    const pass = await handleAlertsInvocation(alerts, SCHEDULED, plenty);
    expect(pass.created).toBe(0);
    expect(pass.sent).toBeGreaterThanOrEqual(1);
    expect(got().filter((d) => d.startsWith("i-waiting."))).toHaveLength(1);
  });

  it("with too little time left nothing is claimed; the schedule sends it later", async () => {
    const alerts = alertsOn(rt.config.tables.timers);
    // One POST timeout (2 s) plus the content margin (20 s) is not left.
    const short = await handleAlertsInvocation(alerts, succeeded("i-late"), {
      remainingMs: () => 15_000,
    });
    expect(short).toMatchObject({ created: 1, sent: 0, deferred: 1 });
    expect(await alerts.deliveries.list("i-late")).toMatchObject([
      { status: "PENDING", attempts: 0 },
    ]);
    expect((await alerts.deliveries.list("i-late"))[0]?.claimedUntil).toBeUndefined();
    await handleAlertsInvocation(alerts, SCHEDULED, plenty);
    expect(await alerts.deliveries.list("i-late")).toMatchObject([{ status: "SENT", attempts: 1 }]);
  });

  it("a failure to write the deliveries fails the invocation; standalone's bus logs it", async () => {
    // A table that does not exist: the store's error, as a throttle outlasting the SDK's retries.
    const broken = alertsOn(`${rt.config.tables.timers}-missing`);
    await expect(handleAlertsInvocation(broken, succeeded("i-lost"), plenty)).rejects.toThrow();
    expect(await broken.onEvent(succeeded("i-lost"))).toEqual([]);
    expect(logged.map((l) => l.msg)).toContain("alerts: event not turned into alerts");
  });
});
