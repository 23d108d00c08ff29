/**
 * Schedules end to end with real processes: a standalone without its own schedule sweeper, and
 * `shoal sweeper` processes sharing the shards. Every nominal time fires once and only once
 * (fire ledger and instances agree), a killed sweeper's shards are taken over, misfire policies
 * do what they say after the sweepers were down, and serial overlap never runs two at once.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  type RunningStandalone,
  type RunningWorker,
  startStandaloneProcess,
  startSweeperProcess,
} from "../helpers/standalone.js";

interface Fire {
  nominalTime: string;
  decision: string;
  instanceId?: string;
  latenessMs: number;
}

describe("schedules with shoal sweeper processes", () => {
  let sa: RunningStandalone;
  let dataDir: string;
  const sweepers: RunningWorker[] = [];
  beforeAll(async () => {
    dataDir = join(mkdtempSync(join(tmpdir(), "shoal-sched-")), "data");
    sa = await startStandaloneProcess({ dataDir, workers: 8, args: ["--no-scheduler"] });
    const put = await api(sa.url, "PUT", "/v1/workflows/tick", {
      tasks: [{ code: "t", type: "SHELL", command: "true" }],
    });
    expect(put.status).toBe(201);
  });
  afterAll(async () => {
    for (const s of sweepers) await s.stop("SIGKILL");
    await sa?.stop();
  });

  async function fires(id: string): Promise<Fire[]> {
    const out: Fire[] = [];
    let token: string | undefined;
    do {
      const r = await api(
        sa.url,
        "GET",
        `/v1/schedules/${id}/fires?limit=200${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`,
      );
      expect(r.status).toBe(200);
      out.push(...r.body.items);
      token = r.body.nextToken;
    } while (token);
    return out;
  }
  async function schedule(body: Record<string, unknown>): Promise<string> {
    const r = await api(sa.url, "POST", "/v1/schedules", { workflow: "tick", ...body });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.id as string;
  }
  async function sweeper(): Promise<RunningWorker> {
    const s = startSweeperProcess(dataDir, ["--interval", "500"]);
    sweepers.push(s);
    await s.ready();
    return s;
  }

  it("two sweepers, one killed mid-way: every nominal time fires exactly once, none missing", async () => {
    const first = await sweeper();
    await sweeper();
    const every2 = await schedule({ cron: "*/2 * * * * *" });
    const everySecond = await Promise.all([1, 2, 3].map(() => schedule({ cron: "* * * * * *" })));
    // 30 s in all, the first sweeper killed half-way: its shards come back after its lease (3 s),
    // so the second half sees a take-over and 12 s of fires after it.
    await sleep(15_000);
    await first.stop("SIGKILL");
    await sleep(15_000);
    const check = async (id: string, stepMs: number) => {
      const f = (await fires(id)).filter((x) => x.decision !== "QUEUED_SERIAL");
      expect(f.length).toBeGreaterThan(30_000 / stepMs - 6);
      const nominal = f.map((x) => Date.parse(x.nominalTime));
      for (let i = 1; i < nominal.length; i++) {
        expect((nominal[i] as number) - (nominal[i - 1] as number)).toBe(stepMs); // none missing, none twice
      }
      expect(f.every((x) => x.decision === "FIRED")).toBe(true);
      // One instance per nominal time, carrying it as scheduleTime.
      const ids = new Set(f.map((x) => x.instanceId));
      expect(ids.size).toBe(f.length);
      const sample = f[f.length - 3] as Fire;
      const inst = await until(
        async () => {
          const r = await api(sa.url, "GET", `/v1/instances/${sample.instanceId}`);
          return r.status === 200 && r.body.scheduleTime ? r.body : undefined;
        },
        { timeoutMs: 30_000, what: "a scheduled instance" },
      );
      expect(inst.scheduleTime).toBe(sample.nominalTime);
      // Fired within the look-ahead, but started no earlier than its nominal time.
      expect(Date.parse(inst.startedAt)).toBeGreaterThanOrEqual(
        Date.parse(sample.nominalTime) - 50,
      );
      expect(inst.commandType).toBe("SCHEDULED");
    };
    await check(every2, 2_000);
    for (const id of everySecond) await check(id, 1_000);
    for (const id of [every2, ...everySecond]) {
      expect((await api(sa.url, "POST", `/v1/schedules/${id}/offline`)).status).toBe(200);
    }
  }, 180_000);

  it("misfire policies after the sweepers were down for 10 s", async () => {
    for (const s of sweepers.splice(0)) await s.stop("SIGTERM");
    const common = { cron: "* * * * * *", misfireThresholdSeconds: 2 };
    const skip = await schedule({ ...common, misfirePolicy: "SKIP" });
    const once = await schedule({ ...common, misfirePolicy: "FIRE_ONCE" });
    const all = await schedule({ ...common, misfirePolicy: "FIRE_ALL", maxCatchup: 100 });
    const downFrom = Date.now();
    await sleep(10_000);
    await sweeper();
    await until(async () => (await fires(all)).length >= 10, {
      timeoutMs: 20_000,
      what: "catch-up",
    });
    await sleep(2_000);
    const inGap = (f: Fire[]) => f.filter((x) => Date.parse(x.nominalTime) < downFrom + 7_000); // surely misfired
    const s = inGap(await fires(skip));
    const o = inGap(await fires(once));
    const a = inGap(await fires(all));
    expect(s.length).toBeGreaterThanOrEqual(5);
    expect(s.every((x) => x.decision === "SKIPPED_MISFIRE")).toBe(true);
    // The sweeper process sent them to the standalone's bus as "Shoal Schedule Misfire" events.
    const events = (
      await api(sa.url, "GET", "/v1/events/recent?limit=1000&detailType=Shoal%20Schedule%20Misfire")
    ).body.items as Array<{ detail: { scheduleId: string; nominalTime: string; outcome: string } }>;
    const missed = new Set(
      events.filter((e) => e.detail.scheduleId === skip).map((e) => e.detail.nominalTime),
    );
    for (const f of s) expect(missed.has(f.nominalTime), f.nominalTime).toBe(true);
    expect(o.filter((x) => x.decision === "FIRED").length).toBeLessThanOrEqual(1);
    expect(o.filter((x) => x.decision === "SKIPPED_MISFIRE").length).toBeGreaterThanOrEqual(5);
    expect(a.length).toBeGreaterThanOrEqual(5);
    expect(a.every((x) => x.decision === "FIRED")).toBe(true);
    // After the catch-up, every policy fires on time again.
    for (const id of [skip, once, all]) {
      const latest = (await fires(id)).slice(-2);
      expect(latest.every((x) => x.decision === "FIRED" && x.latenessMs < 2_000)).toBe(true);
      await api(sa.url, "POST", `/v1/schedules/${id}/offline`);
    }
  }, 60_000);

  it("SERIAL_WAIT never runs two at once; SERIAL_DISCARD drops fires while one runs", async () => {
    if (sweepers.length === 0) await sweeper();
    await api(sa.url, "PUT", "/v1/workflows/slow-tick", {
      tasks: [{ code: "t", type: "SHELL", command: "sleep 2.5" }],
    });
    const mk = async (overlapPolicy: string) => {
      const r = await api(sa.url, "POST", "/v1/schedules", {
        workflow: "slow-tick",
        cron: "* * * * * *",
        overlapPolicy,
      });
      expect(r.status).toBe(201);
      return r.body.id as string;
    };
    const wait = await mk("SERIAL_WAIT");
    const discard = await mk("SERIAL_DISCARD");
    await sleep(9_000);
    for (const id of [wait, discard]) await api(sa.url, "POST", `/v1/schedules/${id}/offline`);
    const d = await fires(discard);
    expect(d.some((x) => x.decision === "DISCARDED_OVERLAP")).toBe(true);
    const w = await fires(wait);
    expect(w.some((x) => x.decision === "QUEUED_SERIAL")).toBe(true);
    // The runs of each schedule never overlap.
    for (const id of [wait, discard]) {
      const ran = (await fires(id)).filter((x) => x.decision === "FIRED" && x.instanceId);
      const spans: Array<[number, number]> = [];
      for (const f of ran) {
        const inst = await until(
          async () => {
            const r = await api(sa.url, "GET", `/v1/instances/${f.instanceId}`);
            return r.body?.endedAt ? r.body : undefined;
          },
          { timeoutMs: 60_000, what: "a serial run to end" },
        );
        spans.push([Date.parse(inst.startedAt), Date.parse(inst.endedAt)]);
      }
      spans.sort((x, y) => x[0] - y[0]);
      for (let i = 1; i < spans.length; i++) {
        expect(spans[i]?.[0]).toBeGreaterThanOrEqual(spans[i - 1]?.[1] as number);
      }
    }
  }, 120_000);
});
