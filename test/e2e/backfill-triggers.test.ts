// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is Shoal's parameter syntax, not a JS template
/**
 * Backfills and event triggers through the HTTP API of a real `shoal standalone`: a serial
 * backfill never overlaps, a parallel one respects its parallelism, each nominal time runs once
 * with it as scheduleTime; a matching event starts one run with its parameters, a non-matching
 * one starts none; schedule preview and validation errors.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  type RunningStandalone,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

describe("backfills, triggers and schedule validation in shoal standalone", () => {
  let sa: RunningStandalone;
  beforeAll(async () => {
    sa = await startStandaloneProcess({
      dataDir: join(mkdtempSync(join(tmpdir(), "shoal-bf-")), "data"),
      workers: 8,
    });
    await api(sa.url, "PUT", "/v1/workflows/daily", {
      tasks: [{ code: "load", type: "SHELL", command: "echo day=$[yyyyMMdd]; sleep 0.4" }],
    });
  });
  afterAll(async () => {
    await sa?.stop();
  });

  async function runBackfill(body: Record<string, unknown>) {
    const r = await api(sa.url, "POST", "/v1/workflows/daily/backfill", body);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const id = r.body.id as string;
    const done = await until(
      async () => {
        const b = (await api(sa.url, "GET", `/v1/backfills/${id}`)).body;
        return b.state === "SUCCESS" || b.state === "FAILURE" ? b : undefined;
      },
      { timeoutMs: 60_000, what: `backfill ${id}` },
    );
    const runs = (await api(sa.url, "GET", "/v1/instances?workflow=daily&limit=200")).body.items;
    const mine = [];
    for (const s of runs) {
      const inst = (await api(sa.url, "GET", `/v1/instances/${s.instanceId}`)).body;
      if (inst.commandType === "BACKFILL" && inst.priority === (body.priority ?? "LOW")) {
        mine.push(inst);
      }
    }
    return { backfill: done, instances: mine };
  }

  const overlapPeak = (spans: Array<{ startedAt: string; endedAt: string }>) => {
    const ev = spans.flatMap((s) => [
      [Date.parse(s.startedAt), 1],
      [Date.parse(s.endedAt), -1],
    ]) as Array<[number, number]>;
    ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let n = 0;
    let peak = 0;
    for (const [, d] of ev) {
      n += d;
      peak = Math.max(peak, n);
    }
    return peak;
  };

  it("dry run lists the nominal times; a serial backfill runs them one at a time", async () => {
    const body = { from: "2026-01-01T00:00:00Z", to: "2026-01-05T00:00:00Z", cron: "0 0 * * *" };
    const dry = await api(sa.url, "POST", "/v1/workflows/daily/backfill", {
      ...body,
      dryRun: true,
    });
    expect(dry.status).toBe(200);
    expect(dry.body.nominalTimes).toEqual([
      "2026-01-01T00:00:00.000Z",
      "2026-01-02T00:00:00.000Z",
      "2026-01-03T00:00:00.000Z",
      "2026-01-04T00:00:00.000Z",
      "2026-01-05T00:00:00.000Z",
    ]);
    const { backfill, instances } = await runBackfill({ ...body, mode: "SERIAL" });
    expect(backfill).toMatchObject({ state: "SUCCESS", done: 5, failed: 0, pending: 0 });
    expect(instances.map((i) => i.scheduleTime).sort()).toEqual(dry.body.nominalTimes);
    expect(overlapPeak(instances)).toBe(1);
    const log = await api(
      sa.url,
      "GET",
      `/v1/instances/${instances.find((i) => i.scheduleTime.startsWith("2026-01-03"))?.instanceId}/tasks/load/log`,
    );
    expect(log.body.lines.map((l: { message: string }) => l.message)).toContain("day=20260103");
  }, 90_000);

  it("a parallel backfill never runs more than its parallelism", async () => {
    const dates = Array.from({ length: 8 }, (_, i) => `2025-06-0${i + 1}T00:00:00Z`);
    const { backfill, instances } = await runBackfill({
      dates,
      mode: "PARALLEL",
      parallelism: 3,
      priority: "LOWEST",
    });
    expect(backfill).toMatchObject({ state: "SUCCESS", done: 8 });
    expect(instances).toHaveLength(8);
    const peak = overlapPeak(instances);
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThanOrEqual(2);
  }, 90_000);

  it("a matching event starts one run with its parameters; a non-matching one starts none", async () => {
    await api(sa.url, "PUT", "/v1/workflows/on-order", {
      tasks: [{ code: "ship", type: "SHELL", command: "echo shipping ${orderId}" }],
    });
    const t = await api(sa.url, "POST", "/v1/triggers", {
      workflow: "on-order",
      eventPattern: {
        source: ["shop"],
        "detail-type": ["OrderPlaced"],
        detail: { amount: [{ numeric: [">", 100] }] },
      },
      params: { orderId: "$.detail.id" },
    });
    expect(t.status, JSON.stringify(t.body)).toBe(201);
    const send = (detail: unknown) =>
      api(sa.url, "POST", "/v1/events", {
        Entries: [{ Source: "shop", DetailType: "OrderPlaced", Detail: JSON.stringify(detail) }],
      });
    const small = await send({ id: "o-1", amount: 50 });
    expect(small.status).toBe(200);
    expect(small.body.Entries[0].Triggers).toEqual([]);
    const big = await send({ id: "o-2; rm -rf /", amount: 500 });
    const started = big.body.Entries[0].Triggers[0];
    expect(started.triggerId).toBe(t.body.id);
    const inst = await waitFinal(sa.url, started.instanceId, 30_000);
    expect(inst.state).toBe("SUCCESS");
    expect(inst.params).toEqual({ orderId: "o-2; rm -rf /" });
    const log = await api(sa.url, "GET", `/v1/instances/${started.instanceId}/tasks/ship/log`);
    expect(log.body.lines.map((l: { message: string }) => l.message)).toContain(
      "shipping o-2; rm -rf /",
    );
    const bad = await api(sa.url, "POST", "/v1/triggers", {
      workflow: "on-order",
      eventPattern: { source: "shop" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("eventPattern");
  }, 60_000);

  it("schedules: preview, and 400s that name the problem", async () => {
    const ok = await api(sa.url, "POST", "/v1/schedules", {
      workflow: "daily",
      cron: "30 2 * * *",
      timezone: "Europe/Berlin",
      state: "OFFLINE",
    });
    expect(ok.status).toBe(201);
    const preview = await api(sa.url, "GET", `/v1/schedules/${ok.body.id}/preview?count=3`);
    expect(preview.body.items).toHaveLength(3);
    for (const t of preview.body.items as string[]) {
      const local = new Intl.DateTimeFormat("en-GB", {
        timeZone: "Europe/Berlin",
        hour: "2-digit",
        minute: "2-digit",
      }).format(new Date(t));
      expect(["02:30", "03:00"]).toContain(local); // 03:00 only on a spring-forward day
    }
    const badCron = await api(sa.url, "POST", "/v1/schedules", {
      workflow: "daily",
      cron: "61 * * * *",
    });
    expect(badCron.status).toBe(400);
    expect(badCron.body.error.details[0].path).toBe("cron");
    const badZone = await api(sa.url, "POST", "/v1/schedules", {
      workflow: "daily",
      rate: "5 minutes",
      timezone: "Mars/Olympus",
    });
    expect(badZone.status).toBe(400);
    expect(badZone.body.error.details[0].path).toBe("timezone");
    const none = await api(sa.url, "POST", "/v1/schedules", { workflow: "daily" });
    expect(none.status).toBe(400);
  });
});
