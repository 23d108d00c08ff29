/**
 * Triggers that match Shoal's own events, through a real `shoal standalone` and the CLI
 * (docs/events.md "Trigger loops and storms"):
 * - the two patterns of the report that took standalone down (`{"source": [{"prefix": ""}]}` and
 *   an `anything-but` on `detail.state`) start one run per outside event and no more, while
 *   `/v1/health` answers within a second every second and the data dir stays small;
 * - chaining A → B on A's SUCCESS starts exactly one B;
 * - a workflow triggered by its own SUCCESS stops at the depth limit, with the loop event and
 *   the trigger's detail;
 * - a storm asked for (limits raised) is stopped by SIGTERM within the 5 s grace, and a restart
 *   with `--no-triggers` answers at once with every trigger OFFLINE.
 */
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DETAIL_TYPES } from "../../lib/core/state-events.js";
import { until } from "../helpers/poll.js";
import {
  api,
  cli,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

/** Bytes under `dir`, recursively. */
function sizeOf(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? sizeOf(p) : statSync(p).size;
  }
  return n;
}

/** `GET /v1/health`'s latency, ms, or Infinity when it did not answer within `limitMs`. */
async function healthLatency(base: string, limitMs = 1_000): Promise<number> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${base}/v1/health`, { signal: AbortSignal.timeout(limitMs) });
    await res.text();
    return performance.now() - t0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** The instances of `workflow`, every page. */
async function instancesOf(base: string, workflow: string): Promise<Array<{ instanceId: string }>> {
  const out: Array<{ instanceId: string }> = [];
  let token = "";
  do {
    const r = await api(
      base,
      "GET",
      `/v1/instances?workflow=${workflow}&limit=200${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`,
    );
    if (r.status !== 200) throw new Error(`list: ${r.status} ${JSON.stringify(r.body)}`);
    out.push(...r.body.items);
    token = r.body.nextToken ?? "";
  } while (token);
  return out;
}

const ONE_TASK = { tasks: [{ code: "t", type: "SHELL", command: "echo hi" }] };

describe("triggers on Shoal's own events, through shoal standalone", () => {
  let sa: RunningStandalone;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = join(mkdtempSync(join(tmpdir(), "shoal-storm-")), "data");
    sa = await startStandaloneProcess({ dataDir, workers: 2 });
    await putWorkflow(sa.url, "any-source", ONE_TASK);
    await putWorkflow(sa.url, "any-state", ONE_TASK);
  });
  afterAll(async () => {
    await sa?.stop();
  });

  it("patterns that match everything start one run per outside event, and health answers every second", async () => {
    const env = { SHOAL_ENDPOINT: sa.url };
    for (const [workflow, pattern] of [
      ["any-source", { source: [{ prefix: "" }] }],
      ["any-state", { detail: { state: [{ "anything-but": "initializing" }] } }],
    ] as const) {
      const made = await cli(
        ["trigger", "create", workflow, "--pattern", JSON.stringify(pattern)],
        env,
      );
      expect(made.code, made.stderr).toBe(0);
      // A pattern that never sees Shoal's events cannot loop: nothing to warn about.
      expect(made.stderr).toBe("");
    }
    const put = await cli(
      [
        "events",
        "put",
        "--source",
        "com.example.orders",
        "--detail-type",
        "OrderPlaced",
        "--detail",
        '{"state": "new"}',
      ],
      env,
    );
    expect(put.code, put.stderr).toBe(0);
    expect(put.stdout.match(/started/g)).toHaveLength(2);
    const latencies: number[] = [];
    for (let s = 0; s < 20; s++) {
      const started = Date.now();
      latencies.push(await healthLatency(sa.url));
      await new Promise((r) => setTimeout(r, Math.max(0, 1_000 - (Date.now() - started))));
    }
    expect(Math.max(...latencies), `health latencies ${latencies.map(Math.round)}`).toBeLessThan(
      1_000,
    );
    // The runs finished long ago, and their events started nothing more.
    expect(await instancesOf(sa.url, "any-source")).toHaveLength(1);
    expect(await instancesOf(sa.url, "any-state")).toHaveLength(1);
    expect(sizeOf(dataDir)).toBeLessThan(16 * 1024 * 1024);
  }, 90_000);

  it("a burst of 1,000 matching events: the rate's runs start, the rest are refused and counted, and health answers meanwhile", async () => {
    await putWorkflow(sa.url, "bursty", ONE_TASK);
    const t = await api(sa.url, "POST", "/v1/triggers", {
      workflow: "bursty",
      eventPattern: { source: ["com.example.burst"] },
    });
    const started = new Set<string>();
    let refused = 0;
    let sent = 0;
    const put = async () => {
      while (sent < 1_000) {
        sent++;
        const r = await api(sa.url, "POST", "/v1/events", {
          Entries: [{ Source: "com.example.burst", DetailType: "Tick", Detail: "{}" }],
        });
        if (r.status === 503) {
          sent--; // over standalone's bound for events in flight: put again
          continue;
        }
        expect(r.status).toBe(200);
        // The broad triggers of the first test match these events too: count this one's.
        for (const o of r.body.Entries[0].Triggers) {
          if (o.triggerId !== t.body.id) continue;
          if (o.instanceId) started.add(o.instanceId);
          else if (String(o.skipped).startsWith("rate limited")) refused++;
        }
      }
    };
    const latencies: number[] = [];
    let done = false;
    const probe = async () => {
      while (!done) {
        latencies.push(await healthLatency(sa.url));
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const probing = probe();
    await Promise.all(Array.from({ length: 8 }, put));
    done = true;
    await probing;
    expect(Math.max(...latencies), `health latencies ${latencies.map(Math.round)}`).toBeLessThan(
      1_000,
    );
    // One minute's window, or two if the burst straddled a minute's turn.
    expect(started.size).toBeGreaterThanOrEqual(60);
    expect(started.size).toBeLessThanOrEqual(120);
    expect(started.size + refused).toBe(1_000);
    const view = await api(sa.url, "GET", `/v1/triggers/${t.body.id}`);
    expect(view.body.refusedRuns).toBe(refused);
    // Nothing accepted is lost: every run started finishes.
    for (const id of started) expect((await waitFinal(sa.url, id)).state).toBe("SUCCESS");
  }, 180_000);

  it("chaining A → B on A's SUCCESS starts exactly one B", async () => {
    await putWorkflow(sa.url, "chain-a", ONE_TASK);
    await putWorkflow(sa.url, "chain-b", ONE_TASK);
    const t = await api(sa.url, "POST", "/v1/triggers", {
      workflow: "chain-b",
      eventPattern: {
        source: ["shoal"],
        "detail-type": [DETAIL_TYPES.instance],
        detail: { workflow: ["chain-a"], state: ["SUCCESS"] },
      },
    });
    expect(t.status).toBe(201);
    expect(t.body.warnings).toBeUndefined();
    const a = await startRun(sa.url, "chain-a");
    expect((await waitFinal(sa.url, a)).state).toBe("SUCCESS");
    const [b] = await until(async () => {
      const list = await instancesOf(sa.url, "chain-b");
      return list.length > 0 ? list : undefined;
    });
    expect((await waitFinal(sa.url, b?.instanceId as string)).state).toBe("SUCCESS");
    // B's own events (and A's others) start nothing more.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await instancesOf(sa.url, "chain-b")).toHaveLength(1);
  }, 60_000);

  it("a workflow triggered by its own SUCCESS runs 11 times from one start; the trigger shows the stop", async () => {
    await putWorkflow(sa.url, "again", ONE_TASK);
    const made = await cli(
      [
        "trigger",
        "create",
        "again",
        "--pattern",
        JSON.stringify({
          source: ["shoal"],
          "detail-type": [DETAIL_TYPES.instance],
          detail: { workflow: ["again"], state: ["SUCCESS"] },
        }),
      ],
      { SHOAL_ENDPOINT: sa.url },
    );
    expect(made.code).toBe(0);
    expect(made.stderr).toMatch(
      /^warning: eventPattern: matches the events of the runs this trigger starts/,
    );
    const id = made.stdout.trim();
    await startRun(sa.url, "again");
    const view = await until(
      async () => {
        const r = await api(sa.url, "GET", `/v1/triggers/${id}`);
        return r.body.loopStops > 0 ? r.body : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: "the loop to be stopped" },
    );
    expect(view.lastLoopStop).toMatchObject({ reason: "DEPTH", limit: 10, depth: 11 });
    expect(await instancesOf(sa.url, "again")).toHaveLength(11);
    const stopped = await api(
      sa.url,
      "GET",
      `/v1/events/recent?detailType=${encodeURIComponent(DETAIL_TYPES.triggerLoop)}`,
    );
    expect(stopped.body.items[0].detail).toMatchObject({ triggerId: id, depth: 11 });
    const get = await cli(["trigger", "get", id], { SHOAL_ENDPOINT: sa.url });
    expect(get.stdout).toMatch(
      /loop stopped: 1 time, last .*: a run 11 triggers deep \(limit 10\)/,
    );
  }, 120_000);
});

describe("a storm asked for: stop, and restart with --no-triggers", () => {
  let sa: RunningStandalone | undefined;
  afterEach(async () => {
    await sa?.stop();
  });

  it("SIGTERM stops it within 5 s, and --no-triggers restarts it answering at once", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "shoal-storm2-")), "data");
    // Limits raised so far that the loop doubles per level unchecked.
    sa = await startStandaloneProcess({
      dataDir,
      workers: 4,
      env: {
        SHOAL_TRIGGER_MAX_DEPTH: "100",
        SHOAL_TRIGGER_MAX_RUNS_PER_EVENT: "100000",
        SHOAL_TRIGGER_MAX_RUNS_PER_MINUTE: "100000",
      },
    });
    await putWorkflow(sa.url, "storm", ONE_TASK);
    const t = await api(sa.url, "POST", "/v1/triggers", {
      workflow: "storm",
      eventPattern: { source: ["shoal"], detail: { workflow: ["storm"] } },
    });
    expect(t.body.warnings).toHaveLength(1);
    await startRun(sa.url, "storm");
    await until(async () => (await instancesOf(sa?.url as string, "storm")).length >= 200, {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: "the storm to grow",
    });
    // Even now the controls answer.
    expect(await healthLatency(sa.url)).toBeLessThan(1_000);
    const started = Date.now();
    const exited = new Promise((r) => sa?.proc.once("exit", r));
    sa.proc.kill("SIGTERM");
    await exited;
    expect(Date.now() - started).toBeLessThan(5_000);

    sa = await startStandaloneProcess({ dataDir, workers: 4, args: ["--no-triggers"] });
    expect(sa.output()).toMatch(/triggers\s+all OFFLINE \(--no-triggers; 1 was online\)/);
    expect(await healthLatency(sa.url)).toBeLessThan(1_000);
    const list = await api(sa.url, "GET", "/v1/triggers");
    expect(list.body.items.map((x: { state: string }) => x.state)).toEqual(["OFFLINE"]);
    // The runs accepted before the stop still start; then nothing new does. The API stays
    // prompt meanwhile.
    let last = -1;
    await until(
      async () => {
        expect(await healthLatency(sa?.url as string)).toBeLessThan(1_000);
        const n = (await instancesOf(sa?.url as string, "storm")).length;
        const settled = n === last;
        last = n;
        return settled;
      },
      { timeoutMs: 60_000, intervalMs: 2_000, what: "the runs to stop growing" },
    );
    expect((await cli(["trigger", "delete", t.body.id], { SHOAL_ENDPOINT: sa.url })).code).toBe(0);
  }, 180_000);
});
