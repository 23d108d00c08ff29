// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is Shoal's parameter syntax, not a JS template
/**
 * State-change events in `shoal standalone`, seen through `GET /v1/events/recent`: instance and
 * task events with the documented detail (a failed attempt that is retried says `willRetry`),
 * a trigger on Shoal's own event chains a second workflow, a schedule's discarded fire becomes a
 * "Shoal Schedule Misfire" event, and POST /v1/events entries show up on the same bus.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DETAIL_TYPES } from "../../lib/core/state-events.js";
import { until } from "../helpers/poll.js";
import {
  api,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

interface BusEvent {
  id: string;
  source: string;
  "detail-type": string;
  detail: Record<string, unknown>;
}

describe("state-change events in shoal standalone", () => {
  let sa: RunningStandalone;
  let scratch: string;
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "shoal-events-"));
    // Every task event, the successful ones too (the default leaves those out).
    sa = await startStandaloneProcess({
      dataDir: join(scratch, "data"),
      workers: 4,
      env: { SHOAL_TASK_EVENTS: "all" },
    });
  });
  afterAll(async () => {
    await sa?.stop();
  });

  const recent = async (query = ""): Promise<BusEvent[]> => {
    const r = await api(sa.url, "GET", `/v1/events/recent?limit=1000${query}`);
    expect(r.status).toBe(200);
    return r.body.items;
  };
  const ofInstance = (events: BusEvent[], id: string) =>
    events.filter((e) => e.detail.instanceId === id).reverse(); // oldest first

  it("publishes instance and task changes; a retried failure says willRetry", async () => {
    const marker = join(scratch, "flaky");
    await putWorkflow(sa.url, "flaky", {
      tasks: [
        { code: "first", type: "SHELL", command: "echo ok" },
        {
          code: "flaky",
          type: "SHELL",
          // Fails on its first attempt only.
          command: `if [ -f '${marker}' ]; then echo again; else touch '${marker}'; exit 3; fi`,
          retries: 1,
          upstream: ["first"],
        },
      ],
    });
    const id = await startRun(sa.url, "flaky");
    expect((await waitFinal(sa.url, id)).state).toBe("SUCCESS");
    const mine = await until(
      async () => {
        const events = ofInstance(await recent(), id);
        return events.some((e) => e.detail.state === "SUCCESS" && !e.detail.taskCode)
          ? events
          : undefined;
      },
      { timeoutMs: 10_000, what: "the instance's SUCCESS event" },
    );
    const instanceChanges = mine
      .filter((e) => e["detail-type"] === DETAIL_TYPES.instance)
      .map((e) => `${e.detail.previousState}->${e.detail.state}`);
    expect(instanceChanges).toEqual(["SUBMITTED->RUNNING", "RUNNING->SUCCESS"]);
    const tasks = mine
      .filter((e) => e["detail-type"] === DETAIL_TYPES.task)
      .map((e) => ({
        code: e.detail.taskCode,
        attempt: e.detail.attempt,
        state: e.detail.state,
        willRetry: e.detail.willRetry,
      }));
    expect(tasks).toEqual([
      { code: "first", attempt: 1, state: "SUCCESS", willRetry: undefined },
      { code: "flaky", attempt: 1, state: "FAILURE", willRetry: true },
      { code: "flaky", attempt: 2, state: "SUCCESS", willRetry: undefined },
    ]);
    const done = mine.find((e) => e.detail.state === "SUCCESS" && !e.detail.taskCode);
    expect(done?.source).toBe("shoal");
    expect(done?.detail).toMatchObject({
      schemaVersion: 1,
      workflow: "flaky",
      workflowVersion: 1,
      commandType: "START_WORKFLOW",
      runs: 1,
    });
    expect(Date.parse(done?.detail.endTime as string)).toBeGreaterThan(0);
  }, 60_000);

  it("a trigger on a failed run's event starts the alert workflow with the failed tasks", async () => {
    await putWorkflow(sa.url, "breaks", {
      tasks: [{ code: "boom", type: "SHELL", command: "exit 1" }],
    });
    await putWorkflow(sa.url, "on-failure", {
      params: { failed: "", tasks: "" },
      tasks: [{ code: "alert", type: "SHELL", command: "echo run ${failed} failed: ${tasks}" }],
    });
    const t = await api(sa.url, "POST", "/v1/triggers", {
      workflow: "on-failure",
      eventPattern: {
        source: ["shoal"],
        "detail-type": [DETAIL_TYPES.instance],
        detail: { workflow: ["breaks"], state: ["FAILURE"] },
      },
      params: { failed: "$.detail.instanceId", tasks: "$.detail.failedTasks" },
    });
    expect(t.status, JSON.stringify(t.body)).toBe(201);
    const id = await startRun(sa.url, "breaks");
    const failed = await waitFinal(sa.url, id);
    expect(failed.state).toBe("FAILURE");
    const alert = await until(
      async () => {
        const list = (await api(sa.url, "GET", "/v1/instances?workflow=on-failure")).body.items;
        return list[0];
      },
      { timeoutMs: 15_000, what: "the triggered alert run" },
    );
    const done = await waitFinal(sa.url, alert.instanceId);
    expect(done.state).toBe("SUCCESS");
    expect(done.params).toMatchObject({ failed: id });
    expect(done.params.tasks).toContain("boom");
    // The failure event carried the failed task.
    const ev = (await recent(`&detailType=${encodeURIComponent(DETAIL_TYPES.instance)}`)).find(
      (e) => e.detail.instanceId === id && e.detail.state === "FAILURE",
    );
    expect(ev?.detail.failedTasks).toEqual(["boom"]);
    await api(sa.url, "DELETE", `/v1/triggers/${t.body.id}`);
  }, 60_000);

  it("a fire discarded by SERIAL_DISCARD is a Shoal Schedule Misfire event", async () => {
    await putWorkflow(sa.url, "slow-events", {
      tasks: [{ code: "t", type: "SHELL", command: "sleep 2.5" }],
    });
    const s = await api(sa.url, "POST", "/v1/schedules", {
      workflow: "slow-events",
      cron: "* * * * * *",
      overlapPolicy: "SERIAL_DISCARD",
    });
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    const scheduleId = s.body.id as string;
    try {
      const misfire = await until(
        async () =>
          (await recent(`&detailType=${encodeURIComponent(DETAIL_TYPES.misfire)}`)).find(
            (e) => e.detail.scheduleId === scheduleId,
          ),
        { timeoutMs: 20_000, what: "a misfire event" },
      );
      expect(misfire.detail).toMatchObject({
        schemaVersion: 1,
        workflow: "slow-events",
        outcome: "DISCARDED_OVERLAP",
      });
      // The ledger agrees.
      const fires = (await api(sa.url, "GET", `/v1/schedules/${scheduleId}/fires?limit=200`)).body
        .items as Array<{ nominalTime: string; decision: string }>;
      expect(fires.find((f) => f.nominalTime === misfire.detail.nominalTime)?.decision).toBe(
        "DISCARDED_OVERLAP",
      );
    } finally {
      await api(sa.url, "POST", `/v1/schedules/${scheduleId}/offline`);
    }
  }, 60_000);

  it("POST /v1/events entries are on the same bus; recent filters and checks its query", async () => {
    const put = await api(sa.url, "POST", "/v1/events", {
      Entries: [{ Source: "acme.orders", DetailType: "Order Placed", Detail: '{"order":7}' }],
    });
    expect(put.status).toBe(200);
    const mine = await recent("&source=acme.orders");
    expect(mine[0]).toMatchObject({ "detail-type": "Order Placed", detail: { order: 7 } });
    expect(mine[0]?.id).toBe(put.body.Entries[0].EventId);
    const bad = await api(sa.url, "GET", "/v1/events/recent?limit=0");
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("limit");
    const unknown = await api(sa.url, "GET", "/v1/events/recent?type=x");
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0].path).toBe("type");
  });
});
