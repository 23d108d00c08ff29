/**
 * Which events a trigger sees (Shoal's own only when its pattern names `"source": ["shoal"]`),
 * the self-loop warning's analysis, and the causation a trigger-started run carries on.
 */
import { describe, expect, it } from "vitest";
import { putEventsEntryToEvent } from "../../lib/core/event-pattern.js";
import {
  DETAIL_TYPES,
  instanceStateChange,
  toPutEventsEntry,
} from "../../lib/core/state-events.js";
import {
  causeOf,
  compileTriggerPattern,
  ownEventStates,
  rateWindowStart,
} from "../../lib/core/trigger-events.js";

const NOW = Date.parse("2026-12-07T10:00:00Z");

/** An instance event of `workflow` as the bus delivers it. */
function shoalEvent(
  id: string,
  workflow: string,
  state: "RUNNING" | "SUCCESS" = "SUCCESS",
  cause?: { id: string; eventId: string; depth: number; originEventId: string; chain: string[] },
) {
  const e = instanceStateChange(
    {
      instanceId: `inst-${id}`,
      workflow,
      version: 1,
      state,
      commandType: "START_WORKFLOW",
      priority: "MEDIUM",
      ...(cause ? { triggerId: cause.id, triggerCause: cause } : {}),
    },
    "RUNNING",
    NOW,
  );
  return putEventsEntryToEvent(toPutEventsEntry(e), {
    id,
    account: "000000000000",
    region: "us-east-1",
    now: NOW,
  }) as unknown as Record<string, unknown> & { id: string };
}

const outside = {
  id: "ext-1",
  source: "com.example.orders",
  "detail-type": "OrderPlaced",
  detail: { state: "new" },
};

describe("which events a trigger sees", () => {
  it("patterns that match anything never see Shoal's own events", () => {
    for (const pattern of [
      { source: [{ prefix: "" }] },
      { detail: { state: [{ "anything-but": "initializing" }] } },
      { "detail-type": [{ prefix: "" }] },
      { source: [{ "anything-but": "aws.s3" }] },
      { source: [{ "equals-ignore-case": "SHOAL" }] },
      { source: [{ wildcard: "sh*" }] },
    ]) {
      const c = compileTriggerPattern(pattern);
      expect(c.asksForShoalEvents, JSON.stringify(pattern)).toBe(false);
      expect(c.sees(shoalEvent("e1", "etl")), JSON.stringify(pattern)).toBe(false);
    }
    expect(compileTriggerPattern({ source: [{ prefix: "" }] }).sees(outside)).toBe(true);
  });

  it("a pattern naming source shoal exactly sees them, at the top level or in every $or branch", () => {
    const top = compileTriggerPattern({ source: ["shoal"], detail: { workflow: ["etl"] } });
    expect(top.sees(shoalEvent("e1", "etl"))).toBe(true);
    expect(top.sees(shoalEvent("e2", "other"))).toBe(false);
    const both = compileTriggerPattern({
      $or: [
        { source: ["shoal"], detail: { workflow: ["etl"] } },
        { source: ["shoal", "com.example"], detail: { state: ["FAILURE"] } },
      ],
    });
    expect(both.asksForShoalEvents).toBe(true);
    expect(both.sees(shoalEvent("e3", "etl"))).toBe(true);
    const one = compileTriggerPattern({
      $or: [{ source: ["shoal"], detail: { workflow: ["etl"] } }, { detail: { state: ["new"] } }],
    });
    expect(one.asksForShoalEvents).toBe(false);
    expect(one.sees(shoalEvent("e4", "etl"))).toBe(false);
    expect(one.sees(outside)).toBe(true);
  });
});

describe("ownEventStates (the self-loop warning)", () => {
  it("names the states of its own workflow's events the pattern matches", () => {
    expect(
      ownEventStates(
        { source: ["shoal"], detail: { workflow: ["etl"], state: ["SUCCESS"] } },
        "etl",
        "t1",
      ),
    ).toEqual(["SUCCESS"]);
    expect(ownEventStates({ source: ["shoal"] }, "etl", "t1")).toContain("RUNNING");
  });

  it("is empty when the pattern names another workflow, leaves its own out, or asks not for Shoal's events", () => {
    expect(
      ownEventStates({ source: ["shoal"], detail: { workflow: ["upstream"] } }, "etl", "t1"),
    ).toEqual([]);
    expect(
      ownEventStates(
        { source: ["shoal"], detail: { workflow: [{ "anything-but": "etl" }] } },
        "etl",
        "t1",
      ),
    ).toEqual([]);
    expect(
      ownEventStates({ source: ["shoal"], "detail-type": ["Shoal Schedule Misfire"] }, "etl", "t1"),
    ).toEqual([]);
    expect(ownEventStates({ source: [{ prefix: "" }] }, "etl", "t1")).toEqual([]);
  });
});

describe("causeOf", () => {
  it("an outside event starts a chain at depth 1", () => {
    expect(causeOf({ ...outside }, "t1")).toEqual({
      id: "t1",
      eventId: "ext-1",
      depth: 1,
      originEventId: "ext-1",
      chain: [],
    });
  });

  it("an event of a run no trigger started starts one too, with that run as its first link", () => {
    const e = shoalEvent("m-1", "etl");
    expect(causeOf(e, "t1")).toMatchObject({ depth: 1, originEventId: "m-1", chain: ["inst-m-1"] });
  });

  it("an event of a trigger-started run is one deeper and keeps the origin", () => {
    const e = shoalEvent("e-7", "etl", "SUCCESS", {
      id: "t1",
      eventId: "e-6",
      depth: 4,
      originEventId: "e-1",
      chain: ["a", "b", "c", "d"],
    });
    expect(e.detail).toMatchObject({ trigger: { id: "t1", depth: 4, originEventId: "e-1" } });
    expect(causeOf(e, "t2")).toEqual({
      id: "t2",
      eventId: "e-7",
      depth: 5,
      originEventId: "e-1",
      chain: ["a", "b", "c", "d", "inst-e-7"],
    });
  });

  it("reads a cause only from Shoal's instance events, and a malformed one as absent", () => {
    const forged = {
      ...outside,
      detail: { trigger: { eventId: "x", depth: 1, originEventId: "x", chain: [] } },
    };
    expect(causeOf(forged, "t").depth).toBe(1);
    const bad = shoalEvent("e-9", "etl");
    (bad.detail as Record<string, unknown>).trigger = { depth: "deep" };
    expect(causeOf(bad, "t")).toMatchObject({ depth: 1, originEventId: "e-9" });
    expect(bad["detail-type"]).toBe(DETAIL_TYPES.instance);
  });
});

it("rate windows are whole minutes", () => {
  expect(rateWindowStart(NOW + 59_999)).toBe(NOW);
  expect(rateWindowStart(NOW + 60_000)).toBe(NOW + 60_000);
});
