/**
 * Trigger loops and storms on the store (docs/events.md "Trigger loops and storms"): a chain of
 * runs each started by the last one's SUCCESS stops past the depth limit, a pattern matching
 * every state of its own workflow stops at the runs one event may lead to, a burst of events is
 * refused past the rate with nothing accepted lost, an OFFLINE trigger starts nothing, and
 * nobody outside can put events with Shoal's own source. The events of a run are built as the
 * dispatcher publishes them (lib/core/state-events.ts) from the run's START command, so each
 * step of a chain is what the bus would deliver.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiDeps } from "../../lib/api/deps.js";
import { deliverTriggerEvent, type TriggerOutcome } from "../../lib/api/trigger-delivery.js";
import { putEventsEntryToEvent } from "../../lib/core/event-pattern.js";
import {
  DETAIL_TYPES,
  instanceStateChange,
  type StateChangeEvent,
  toPutEventsEntry,
} from "../../lib/core/state-events.js";
import { DEFAULT_TRIGGER_LIMITS } from "../../lib/core/trigger-events.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { useTestAws } from "../helpers/aws-env.js";
import { callApi } from "../helpers/runtime-api.js";

type BusEvent = Record<string, unknown> & { id: string };

/** A fixed minute: the rate window does not roll over in the middle of a test. */
const NOW = Date.parse("2026-12-07T10:00:10Z");
let seq = 0;

describe("trigger loops and storms", () => {
  let rt: Runtime;
  let api: ApiDeps;
  /** What the triggers published (loop stops, rate limits). */
  const published: StateChangeEvent[] = [];

  beforeAll(async () => {
    const aws = await useTestAws();
    rt = createRuntime({ ...aws.config, dataDir: mkdtempSync(join(tmpdir(), "shoal-loops-")) });
    api = {
      ...rt.api,
      now: () => NOW,
      stateChanges: { publish: async (events) => void published.push(...events) },
    };
    for (const name of ["self", "fan", "burst", "sleepy", "upstream", "downstream"]) {
      await rt.api.store.putDefinition({
        name,
        version: 1,
        definition: { priority: "MEDIUM", failureStrategy: "END", params: {}, tasks: [] },
        createdAt: NOW,
      });
      await rt.api.store.putWorkflowHead(
        { name, latestVersion: 1, releaseState: "ONLINE", createdAt: NOW, updatedAt: NOW },
        0,
      );
    }
  });

  async function createTrigger(workflow: string, eventPattern: object) {
    const res = await callApi(api, "POST", "/v1/triggers", { workflow, eventPattern });
    expect(res.status).toBe(201);
    return res.body as { id: string; warnings?: Array<{ path: string; message: string }> };
  }

  /** The instance event `state` of `instanceId`, with the cause its START command recorded. */
  async function eventOf(instanceId: string, workflow: string, state: "RUNNING" | "SUCCESS") {
    const cmd = await rt.api.store.getCommand(`start:${instanceId}`);
    const e = instanceStateChange(
      {
        instanceId,
        workflow,
        version: 1,
        state,
        commandType: "START_WORKFLOW",
        priority: "MEDIUM",
        ...(cmd?.triggerId ? { triggerId: cmd.triggerId } : {}),
        ...(cmd?.triggerCause ? { triggerCause: cmd.triggerCause } : {}),
      },
      state === "SUCCESS" ? "RUNNING" : "SUBMITTED",
      NOW,
    );
    return envelope(toPutEventsEntry(e));
  }

  function envelope(entry: { Source: string; DetailType: string; Detail: string }): BusEvent {
    return putEventsEntryToEvent(entry, {
      id: `evt-${++seq}`,
      account: "000000000000",
      region: "us-east-1",
      now: NOW,
    }) as unknown as BusEvent;
  }

  const started = (outs: TriggerOutcome[]) =>
    outs.flatMap((o) => (o.instanceId ? [o.instanceId] : []));

  it("a workflow triggered by its own SUCCESS runs 11 times from one start, then the loop is stopped and told", async () => {
    const t = await createTrigger("self", {
      source: ["shoal"],
      "detail-type": [DETAIL_TYPES.instance],
      detail: { workflow: ["self"], state: ["SUCCESS"] },
    });
    // The warning names what will happen.
    expect(t.warnings?.[0]?.path).toBe("eventPattern");
    expect(t.warnings?.[0]?.message).toMatch(/'self'.*SUCCESS.*10 runs deep/);
    let current = "manual-run-0";
    const runs = [current];
    let last: TriggerOutcome[] = [];
    for (let i = 0; i < 20; i++) {
      last = await deliverTriggerEvent(api, await eventOf(current, "self", "SUCCESS"));
      const next = started(last);
      if (next.length === 0) break;
      expect(next).toHaveLength(1);
      current = next[0] as string;
      runs.push(current);
    }
    expect(runs).toHaveLength(11);
    expect(last[0]?.skipped).toMatch(
      /loop stopped: this run would be 11 triggers deep; the limit is 10/,
    );
    const view = await callApi(api, "GET", `/v1/triggers/${t.id}`);
    expect(view.body).toMatchObject({
      loopStops: 1,
      lastLoopStop: { reason: "DEPTH", limit: 10, depth: 11, chain: runs },
    });
    const told = published.filter((e) => e.detailType === DETAIL_TYPES.triggerLoop);
    expect(told).toHaveLength(1);
    expect(told[0]?.detail).toMatchObject({ triggerId: t.id, workflow: "self", chain: runs });
    // The stopped chain's runs carry their depth in their events.
    const cmd = await rt.api.store.getCommand(`start:${runs[10]}`);
    expect(cmd?.triggerCause).toMatchObject({ id: t.id, depth: 10 });
  });

  it("a pattern matching every state of its own workflow stops at the runs one event may lead to", async () => {
    const t = await createTrigger("fan", { source: ["shoal"], detail: { workflow: ["fan"] } });
    // A rate above the budget: here the budget is what stops the chain, not the rate.
    const fast = {
      ...api,
      triggerLimits: { ...DEFAULT_TRIGGER_LIMITS, maxRunsPerMinute: 1_000 },
    };
    const queue: BusEvent[] = [await eventOf("manual-fan-0", "fan", "SUCCESS")];
    const runs: string[] = [];
    let stops = 0;
    while (queue.length > 0) {
      const outs = await deliverTriggerEvent(fast, queue.shift() as BusEvent);
      for (const o of outs) if (o.skipped?.startsWith("loop stopped")) stops++;
      for (const id of started(outs)) {
        runs.push(id);
        // Each run publishes RUNNING and SUCCESS: both match, so the runs double per level.
        queue.push(await eventOf(id, "fan", "RUNNING"), await eventOf(id, "fan", "SUCCESS"));
      }
    }
    expect(runs).toHaveLength(DEFAULT_TRIGGER_LIMITS.maxRunsPerOrigin);
    expect(stops).toBeGreaterThan(0);
    const view = await callApi(api, "GET", `/v1/triggers/${t.id}`);
    expect(view.body.loopStops).toBe(stops);
    expect(view.body.lastLoopStop.reason).toBe("RUNS_PER_EVENT");
    // One event per chain at this trigger, however many of its events hit the limit.
    const told = published.filter(
      (e) =>
        e.detailType === DETAIL_TYPES.triggerLoop &&
        (e.detail as { triggerId: string }).triggerId === t.id,
    );
    expect(told).toHaveLength(1);
  });

  it("concurrent events of one chain past the limit are all stopped and counted, and told once", async () => {
    const t = await createTrigger("self", {
      source: ["shoal"],
      "detail-type": [DETAIL_TYPES.instance],
      detail: { workflow: ["self"], state: ["RUNNING"] },
    });
    const deep = {
      id: t.id,
      eventId: "evt-deep",
      depth: 10,
      originEventId: `origin-${seq}`,
      chain: ["a"],
    };
    const events = Array.from({ length: 5 }, (_, i) =>
      envelope(
        toPutEventsEntry(
          instanceStateChange(
            {
              instanceId: `deep-${i}`,
              workflow: "self",
              version: 1,
              state: "RUNNING",
              commandType: "START_WORKFLOW",
              priority: "MEDIUM",
              triggerId: t.id,
              triggerCause: deep,
            },
            "SUBMITTED",
            NOW,
          ),
        ),
      ),
    );
    const before = published.length;
    const outs = (await Promise.all(events.map((e) => deliverTriggerEvent(api, e)))).flat();
    const mine = outs.filter((o) => o.triggerId === t.id);
    expect(mine.map((o) => o.skipped)).toEqual(
      Array(5).fill(expect.stringMatching(/^loop stopped/)),
    );
    expect((await callApi(api, "GET", `/v1/triggers/${t.id}`)).body.loopStops).toBe(5);
    const told = published
      .slice(before)
      .filter((e) => (e.detail as { triggerId?: string }).triggerId === t.id);
    expect(told).toHaveLength(1);
  });

  it("a burst of 1,000 matching events starts the rate's runs, refuses and counts the rest, and loses none it accepted", async () => {
    const t = await createTrigger("burst", { source: ["com.example.burst"] });
    const events = Array.from({ length: 1_000 }, () =>
      envelope({ Source: "com.example.burst", DetailType: "Tick", Detail: "{}" }),
    );
    const outs: TriggerOutcome[] = [];
    for (let i = 0; i < events.length; i += 50) {
      const batch = await Promise.all(
        events.slice(i, i + 50).map((e) => deliverTriggerEvent(api, e)),
      );
      outs.push(...batch.flat());
    }
    const runs = started(outs);
    const limit = DEFAULT_TRIGGER_LIMITS.maxRunsPerMinute;
    expect(runs).toHaveLength(limit);
    const refused = outs.filter((o) => o.skipped?.startsWith("rate limited"));
    expect(refused).toHaveLength(1_000 - limit);
    expect(refused[0]?.skipped).toMatch(/more than 60 runs a minute/);
    for (const id of runs) {
      expect((await rt.api.store.getCommand(`start:${id}`))?.state).toBe("PENDING");
    }
    const view = await callApi(api, "GET", `/v1/triggers/${t.id}`);
    expect(view.body).toMatchObject({ refusedRuns: 1_000 - limit, state: "ONLINE" });
    const told = published.filter(
      (e) =>
        e.detailType === DETAIL_TYPES.triggerRate &&
        (e.detail as { triggerId: string }).triggerId === t.id,
    );
    expect(told).toHaveLength(1);
    expect(told[0]?.detail).toMatchObject({ limit, windowStart: "2026-12-07T10:00:00.000Z" });
  });

  it("an OFFLINE trigger starts nothing until it is put ONLINE again", async () => {
    const t = await createTrigger("sleepy", { source: ["com.example.sleepy"] });
    const off = await callApi(api, "POST", `/v1/triggers/${t.id}/offline`);
    expect(off).toMatchObject({ status: 200, body: { id: t.id, state: "OFFLINE" } });
    const e = () => envelope({ Source: "com.example.sleepy", DetailType: "Tick", Detail: "{}" });
    expect(await deliverTriggerEvent(api, e())).toEqual([]);
    const on = await callApi(api, "POST", `/v1/triggers/${t.id}/online`);
    expect(on.body.state).toBe("ONLINE");
    expect(started(await deliverTriggerEvent(api, e()))).toHaveLength(1);
    expect((await callApi(api, "POST", "/v1/triggers/nope/online")).status).toBe(404);
  });

  it("chaining A → B: B's trigger, named on A's SUCCESS, starts one B and no warning", async () => {
    const t = await createTrigger("downstream", {
      source: ["shoal"],
      "detail-type": [DETAIL_TYPES.instance],
      detail: { workflow: ["upstream"], state: ["SUCCESS"] },
    });
    expect(t.warnings).toBeUndefined();
    const outs = await deliverTriggerEvent(api, await eventOf("up-1", "upstream", "SUCCESS"));
    expect(started(outs)).toHaveLength(1);
    // B's own SUCCESS matches nothing.
    const b = started(outs)[0] as string;
    expect(await deliverTriggerEvent(api, await eventOf(b, "downstream", "SUCCESS"))).toEqual([]);
  });

  it("POST /v1/events refuses entries with source shoal, except from standalone's relay", async () => {
    const entry = {
      Source: "shoal",
      DetailType: DETAIL_TYPES.misfire,
      Detail: JSON.stringify({ workflow: "self" }),
    };
    const refused = await callApi(api, "POST", "/v1/events", {
      Entries: [{ Source: "com.example", DetailType: "x", Detail: "{}" }, entry],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([
      {
        path: "Entries[1].Source",
        message: expect.stringMatching(/Shoal's own state-change events/),
      },
    ]);
    const relay = { ...api, eventsRelayToken: "secret-token" };
    const wrong = await callApi(
      relay,
      "POST",
      "/v1/events",
      { Entries: [entry] },
      {
        "x-shoal-relay": "guess",
      },
    );
    expect(wrong.status).toBe(400);
    const ok = await callApi(
      relay,
      "POST",
      "/v1/events",
      { Entries: [entry] },
      {
        "x-shoal-relay": "secret-token",
      },
    );
    expect(ok.status).toBe(200);
  });
});
