/**
 * Alerts in `shoal standalone --alerts FILE`, received by a local HTTP receiver: a failing
 * workflow's alert (generic JSON and Slack) names the failed task with its last log lines and links
 * to the console; SUCCESS rules; a receiver answering 500 twice then 200 (SENT, 3 attempts); a
 * dead receiver and an unknown channel (FAILED, the instance unaffected); TASK_RETRY_EXHAUSTED
 * under failureStrategy CONTINUE; a schedule's discarded fire (SCHEDULE_MISFIRE). Every delivery
 * is recorded in `GET /v1/instances/{id}`, and no channel URL ever shows there.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import { type Received, type Receiver, startReceiver } from "../helpers/receiver.js";
import {
  api,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

/** `/flaky/<key>` answers 500 twice per key, then 200; everything else 200. */
function flakyAnswers(): (r: Received) => { status: number; body: string } {
  const flaky = new Map<string, number>();
  return (r) => {
    if (!r.path.startsWith("/flaky")) return { status: 200, body: "ok" };
    const n = (flaky.get(r.path) ?? 0) + 1;
    flaky.set(r.path, n);
    return n <= 2
      ? { status: 500, body: "receiver down for maintenance" }
      : { status: 200, body: "ok" };
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const SECRET = "T000/B000/not-for-your-eyes";

describe("alerts in shoal standalone", () => {
  let sa: RunningStandalone;
  let rx: Receiver;
  let scratch: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "shoal-alerts-"));
    rx = await startReceiver(flakyAnswers());
    const dead = await closedPort();
    const file = join(scratch, "alerts.yaml");
    writeFileSync(
      file,
      [
        "channels:",
        `  ops: { type: webhook, url: "${rx.url}/ops/${SECRET}", headers: { Authorization: "Bearer t0ken" } }`,
        `  chat: { type: slack, url: "${rx.url}/slack/${SECRET}" }`,
        `  flaky: { type: webhook, url: "${rx.url}/flaky/one" }`,
        `  dead: { type: webhook, url: "http://127.0.0.1:${dead}/${SECRET}" }`,
        "delivery: { attempts: 4, backoffSeconds: [0.2, 0.4], timeoutSeconds: 2 }",
        "",
      ].join("\n"),
    );
    sa = await startStandaloneProcess({
      dataDir: join(scratch, "data"),
      workers: 4,
      args: ["--alerts", file],
      // Logs on: the test checks they name channels and hosts, never a URL.
      env: { SHOAL_QUIET: "false" },
    });
  });
  afterAll(async () => {
    await sa?.stop();
    await rx?.close();
  });

  const posts = (instanceId: string, prefix: string) =>
    rx.got.filter((g) => g.path.startsWith(prefix) && g.body.instanceId === instanceId);
  const slackPosts = (instanceId: string) =>
    rx.got.filter(
      (g) => g.path.startsWith("/slack") && JSON.stringify(g.body).includes(instanceId),
    );
  /** The instance once its alerts are no longer PENDING. */
  const settled = (id: string, count: number, timeoutMs = 20_000) =>
    until(
      async () => {
        const r = await api(sa.url, "GET", `/v1/instances/${id}`);
        const alerts = (r.body.alerts ?? []) as Array<{ status: string }>;
        return alerts.length === count && alerts.every((a) => a.status !== "PENDING")
          ? r.body
          : undefined;
      },
      { timeoutMs, intervalMs: 100, what: `the alerts of ${id} to settle` },
    );

  it("a failing workflow: one POST per channel with the link, the failed task and its last log lines", async () => {
    await putWorkflow(sa.url, "alert-fails", {
      tasks: [
        { code: "ok", type: "SHELL", command: "echo fine" },
        {
          code: "boom",
          type: "SHELL",
          command: "for i in $(seq 1 30); do echo line $i; done; exit 3",
          upstream: ["ok"],
        },
      ],
      alerts: [
        { on: ["FAILURE"], channels: ["ops", "chat"] },
        { on: ["SUCCESS"], channels: ["ops"] },
      ],
    });
    const id = await startRun(sa.url, "alert-fails");
    const inst = await waitFinal(sa.url, id);
    expect(inst.state).toBe("FAILURE");
    const body = await settled(id, 2);
    const byChannel = Object.fromEntries(
      (body.alerts as Array<{ channel: string; lastError?: string }>).map((a) => [a.channel, a]),
    );
    expect(byChannel.ops).toMatchObject({ event: "FAILURE", status: "SENT", attempts: 1 });
    expect(byChannel.chat).toMatchObject({ event: "FAILURE", status: "SENT", attempts: 1 });
    expect(JSON.stringify(body)).not.toContain(SECRET);

    const [ops, ...more] = posts(id, "/ops");
    expect(more).toEqual([]);
    expect(ops?.headers["x-shoal-delivery-id"]).toBe(ops?.body.deliveryId);
    expect(ops?.headers.authorization).toBe("Bearer t0ken");
    expect(ops?.body).toMatchObject({
      schemaVersion: 1,
      event: "FAILURE",
      workflow: "alert-fails",
      instanceId: id,
      state: "FAILURE",
      link: `${sa.url}/instances/${id}`,
      failedTasks: [{ code: "boom", attempt: 1, state: "FAILURE" }],
    });
    const tail = ops?.body.failedTasks[0].logTail as string[];
    expect(tail).toHaveLength(20);
    // The task's own last lines, then the worker's line saying how it ended.
    expect(tail.slice(-2)).toEqual(["line 30", "shoal: exit code 3"]);
    expect(tail).not.toContain("line 10");
    expect(ops?.body.durationMs).toBeGreaterThanOrEqual(0);

    const slack = slackPosts(id);
    expect(slack).toHaveLength(1);
    expect(slack[0]?.body.text).toContain("alert-fails: instance FAILURE");
    const blocks = JSON.stringify(slack[0]?.body.blocks);
    expect(blocks).toContain(`<${sa.url}/instances/${id}|${id}>`);
    expect(blocks).toContain("line 30");
  }, 60_000);

  it("SUCCESS rules; a receiver answering 500 twice then 200 is SENT after 3 attempts", async () => {
    await putWorkflow(sa.url, "alert-succeeds", {
      tasks: [{ code: "t", type: "SHELL", command: "echo done" }],
      alerts: [
        { on: ["SUCCESS"], channels: ["ops", "flaky"] },
        { on: ["FAILURE"], channels: ["chat"] },
      ],
    });
    const id = await startRun(sa.url, "alert-succeeds");
    expect((await waitFinal(sa.url, id)).state).toBe("SUCCESS");
    const body = await settled(id, 2);
    const byChannel = Object.fromEntries(
      (body.alerts as Array<{ channel: string; lastError?: string }>).map((a) => [a.channel, a]),
    );
    expect(byChannel.ops).toMatchObject({ event: "SUCCESS", status: "SENT", attempts: 1 });
    expect(byChannel.flaky).toMatchObject({
      event: "SUCCESS",
      status: "SENT",
      attempts: 3,
      lastError: "HTTP 500: receiver down for maintenance",
    });
    expect(posts(id, "/ops")).toHaveLength(1);
    const flaky = posts(id, "/flaky");
    expect(flaky).toHaveLength(3);
    // The same delivery id every time: a receiver can drop repeats.
    expect(new Set(flaky.map((f) => f.headers["x-shoal-delivery-id"])).size).toBe(1);
    expect(slackPosts(id)).toEqual([]);
  }, 60_000);

  it("a dead receiver and an unknown channel end FAILED; the instance is not affected", async () => {
    // The PUT stores the rule and warns about the channel --alerts does not configure.
    const put = await api(sa.url, "PUT", "/v1/workflows/alert-dead", {
      tasks: [{ code: "t", type: "SHELL", command: "echo done" }],
      alerts: [{ on: ["SUCCESS"], channels: ["dead", "nope"] }],
    });
    expect(put.status).toBe(201);
    expect(put.body.warnings).toEqual([
      {
        path: "alerts[0].channels[1]",
        message: expect.stringMatching(
          /^alert rule alerts\[0\] names channel 'nope', which this Shoal does not configure \(its channels: chat, dead, flaky, ops\): .* standalone's --alerts FILE/,
        ),
      },
    ]);
    const channels = await api(sa.url, "GET", "/v1/alert-channels");
    expect(channels.body.items).toEqual([
      { name: "chat", type: "slack" },
      { name: "dead", type: "webhook" },
      { name: "flaky", type: "webhook" },
      { name: "ops", type: "webhook" },
    ]);
    const id = await startRun(sa.url, "alert-dead");
    const done = await waitFinal(sa.url, id);
    expect(done.state).toBe("SUCCESS");
    const body = await settled(id, 2);
    const byChannel = Object.fromEntries(
      (body.alerts as Array<{ channel: string; lastError?: string }>).map((a) => [a.channel, a]),
    );
    expect(byChannel.dead).toMatchObject({ status: "FAILED", attempts: 4 });
    expect(byChannel.dead?.lastError).toMatch(/^request failed: ECONNREFUSED/);
    expect(byChannel.nope).toMatchObject({
      status: "FAILED",
      attempts: 0,
      lastError: "channel 'nope' is not configured in this deployment's alerts",
    });
    // The run's own record is what it was when it ended.
    expect(body.state).toBe("SUCCESS");
    expect(body.endedAt).toBe(done.endedAt);
    expect(JSON.stringify(body)).not.toContain(SECRET);
    const logged = sa.output();
    expect(logged).toContain("alerts: failed");
    expect(logged).toContain('"target":"webhook (127.0.0.1:');
    expect(logged).not.toContain(SECRET);
  }, 60_000);

  it("TASK_RETRY_EXHAUSTED fires once for a task that failed for good under CONTINUE", async () => {
    await putWorkflow(sa.url, "alert-continue", {
      failureStrategy: "CONTINUE",
      tasks: [
        { code: "bad", type: "SHELL", command: "echo trying; exit 1", retries: 1 },
        { code: "good", type: "SHELL", command: "sleep 1; echo fine" },
      ],
      alerts: [{ on: ["TASK_RETRY_EXHAUSTED"], channels: ["ops"] }],
    });
    const id = await startRun(sa.url, "alert-continue");
    const done = await waitFinal(sa.url, id);
    expect(done.tasks.find((t: { code: string }) => t.code === "good")?.state).toBe("SUCCESS");
    const body = await settled(id, 1);
    expect(body.alerts[0]).toMatchObject({
      event: "TASK_RETRY_EXHAUSTED",
      taskCode: "bad",
      attempt: 2,
      status: "SENT",
    });
    const got = posts(id, "/ops");
    expect(got).toHaveLength(1);
    expect(got[0]?.body).toMatchObject({
      event: "TASK_RETRY_EXHAUSTED",
      task: { code: "bad", attempt: 2 },
      failedTasks: [{ code: "bad", attempt: 2 }],
    });
    expect(got[0]?.body.failedTasks[0].logTail).toContain("trying");
  }, 60_000);

  it("a workflow timeout is one TIMEOUT alert for a rule on TIMEOUT and FAILURE", async () => {
    await putWorkflow(sa.url, "alert-timeout", {
      timeoutSeconds: 1,
      tasks: [{ code: "t", type: "SHELL", command: "sleep 30" }],
      alerts: [{ on: ["FAILURE", "TIMEOUT"], channels: ["ops"] }],
    });
    const id = await startRun(sa.url, "alert-timeout");
    expect((await waitFinal(sa.url, id, 30_000)).state).toBe("FAILURE");
    const body = await settled(id, 1);
    expect(body.alerts[0]).toMatchObject({ event: "TIMEOUT", status: "SENT" });
    const got = posts(id, "/ops");
    expect(got).toHaveLength(1);
    expect(got[0]?.body).toMatchObject({
      event: "TIMEOUT",
      error: "the workflow timed out after 1s",
    });
  }, 60_000);

  it("a schedule's discarded fire is a SCHEDULE_MISFIRE alert of the schedule's rule", async () => {
    await putWorkflow(sa.url, "alert-slow", {
      tasks: [{ code: "t", type: "SHELL", command: "sleep 2.5" }],
    });
    const s = await api(sa.url, "POST", "/v1/schedules", {
      workflow: "alert-slow",
      cron: "* * * * * *",
      overlapPolicy: "SERIAL_DISCARD",
      alerts: [{ on: ["SCHEDULE_MISFIRE"], channels: ["ops"] }],
    });
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    expect(s.body.alerts).toEqual([{ on: ["SCHEDULE_MISFIRE"], channels: ["ops"] }]);
    const scheduleId = s.body.id as string;
    try {
      const got = await until(
        () =>
          rx.got.find(
            (g) =>
              g.body.event === "SCHEDULE_MISFIRE" && g.body.schedule?.scheduleId === scheduleId,
          ),
        { timeoutMs: 20_000, what: "a misfire alert" },
      );
      expect(got.body).toMatchObject({
        workflow: "alert-slow",
        rule: "schedule.alerts[0]",
        schedule: { outcome: "DISCARDED_OVERLAP" },
      });
    } finally {
      await api(sa.url, "POST", `/v1/schedules/${scheduleId}/offline`);
    }
  }, 60_000);
});
