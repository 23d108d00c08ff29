/**
 * The event publishers: one conformance suite (events arrive in order, in EventBridge's shape,
 * publish never throws) run against the in-process bus of standalone and the EventBridge
 * publisher (its PutEvents requests captured with aws-sdk-client-mock), then what is particular
 * to each: PutEvents' 10-entry / 256 KB limits and retries of failed entries; the bus's ring,
 * filters and subscribers.
 */
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it } from "vitest";
import { METRICS } from "../../lib/aws/config.js";
import { putEventsEntryToEvent } from "../../lib/core/event-pattern.js";
import {
  DETAIL_TYPES,
  instanceStateChange,
  reachesTriggers,
  type StateChangeEvent,
  scheduleMisfireEvent,
  taskStateChange,
} from "../../lib/core/state-events.js";
import type { StateChangePublisher } from "../../lib/events/event-publisher.js";
import {
  batchEntries,
  EventBridgePublisher,
  entrySize,
} from "../../lib/events/eventbridge-publisher.js";
import { type BusEvent, LocalEventBus } from "../../lib/events/local-event-bus.js";
import { shoalMetrics } from "../../lib/runtime/metrics.js";

const T = Date.UTC(2026, 10, 21, 9, 30, 0, 250);
const inst = { instanceId: "i-1", workflow: "etl", version: 3 };

function sample(n: number): StateChangeEvent[] {
  return Array.from({ length: n }, (_, i) =>
    taskStateChange(inst, { code: `t${i}`, type: "SHELL", attempt: 1, state: "SUCCESS" }, T + i),
  );
}

/** A publisher under test and a way to read what it delivered, as EventBridge envelopes. */
interface Harness {
  publisher: StateChangePublisher;
  delivered(): BusEvent[];
  logs: string[];
}

const eb = mockClient(EventBridgeClient);
afterEach(() => eb.reset());

const harnesses: Array<[string, () => Harness]> = [
  [
    "LocalEventBus",
    () => {
      const logs: string[] = [];
      const bus = new LocalEventBus({
        region: "eu-west-1",
        now: () => T,
        log: (m) => logs.push(m),
      });
      return { publisher: bus, delivered: () => bus.recent(1000).reverse(), logs };
    },
  ],
  [
    "EventBridgePublisher",
    () => {
      const logs: string[] = [];
      eb.on(PutEventsCommand).callsFake((input) => ({
        FailedEntryCount: 0,
        Entries: input.Entries.map((_: unknown, i: number) => ({ EventId: `e${i}` })),
      }));
      const publisher = new EventBridgePublisher(new EventBridgeClient({ region: "eu-west-1" }), {
        eventBusName: "shoal-bus",
        log: (m) => logs.push(m),
      });
      const delivered = () =>
        eb.commandCalls(PutEventsCommand).flatMap((c) =>
          (c.args[0].input.Entries ?? []).map(
            (e, i) =>
              putEventsEntryToEvent(
                {
                  Source: e.Source as string,
                  DetailType: e.DetailType as string,
                  Detail: e.Detail as string,
                  Time: (e.Time as Date).toISOString(),
                },
                { id: `x${i}`, account: "1", region: "eu-west-1", now: 0 },
              ) as unknown as BusEvent,
          ),
        );
      return { publisher, delivered, logs };
    },
  ],
];

describe.each(harnesses)("%s conformance", (_name, make) => {
  it("delivers every event in order with source, detail-type, time and detail", async () => {
    const h = make();
    const events = [
      ...sample(23),
      instanceStateChange(
        { ...inst, state: "SUCCESS", commandType: "START_WORKFLOW", priority: "HIGH", endedAt: T },
        "RUNNING",
        T,
      ),
    ];
    await h.publisher.publish(events);
    const got = h.delivered();
    expect(got).toHaveLength(24);
    got.forEach((e, i) => {
      const sent = events[i] as StateChangeEvent;
      expect(e.source).toBe("shoal");
      expect(e["detail-type"]).toBe(sent.detailType);
      expect(e.detail).toEqual(sent.detail);
      // EventBridge writes `time` to the second.
      expect(e.time).toBe(new Date(sent.time).toISOString().replace(/\.\d{3}Z$/, "Z"));
    });
  });

  it("publishing nothing sends nothing", async () => {
    const h = make();
    await h.publisher.publish([]);
    expect(h.delivered()).toEqual([]);
  });
});

describe("EventBridgePublisher", () => {
  const publisher = (logs: string[] = []) =>
    new EventBridgePublisher(new EventBridgeClient({ region: "eu-west-1" }), {
      eventBusName: "arn:aws:events:eu-west-1:123456789012:event-bus/shoal-bus",
      log: (m) => logs.push(m),
    });

  it("sends at most 10 entries per PutEvents, to the bus, with Time as a date", async () => {
    eb.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [] });
    await publisher().publish(sample(25));
    const calls = eb.commandCalls(PutEventsCommand).map((c) => c.args[0].input.Entries ?? []);
    expect(calls.map((c) => c.length)).toEqual([10, 10, 5]);
    const first = calls[0]?.[0];
    expect(first?.EventBusName).toBe("arn:aws:events:eu-west-1:123456789012:event-bus/shoal-bus");
    expect(first?.Time).toEqual(new Date(T));
    expect(JSON.parse(first?.Detail as string)).toMatchObject({ schemaVersion: 1, taskCode: "t0" });
  });

  it("retries only the entries PutEvents reports failed", async () => {
    eb.on(PutEventsCommand)
      .resolvesOnce({
        FailedEntryCount: 1,
        Entries: [{ EventId: "a" }, { ErrorCode: "ThrottlingException" }, { EventId: "c" }],
      })
      .resolves({ FailedEntryCount: 0, Entries: [{ EventId: "b" }] });
    await publisher().publish(sample(3));
    const calls = eb.commandCalls(PutEventsCommand).map((c) => c.args[0].input.Entries ?? []);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.map((e) => JSON.parse(e.Detail as string).taskCode)).toEqual(["t1"]);
  });

  it("never throws: an unreachable EventBridge is logged after three attempts", async () => {
    eb.on(PutEventsCommand).rejects(
      Object.assign(new Error("down"), { name: "ServiceUnavailable" }),
    );
    const logs: string[] = [];
    await expect(publisher(logs).publish(sample(2))).resolves.toBeUndefined();
    expect(eb.commandCalls(PutEventsCommand)).toHaveLength(3);
    expect(logs).toEqual(["events: PutEvents failed; events dropped"]);
  });

  it("splits by size too and drops (logs) an event over 256 KB", async () => {
    eb.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [] });
    const big = (kb: number): StateChangeEvent => {
      const e = scheduleMisfireEvent(
        {
          scheduleId: "s",
          workflow: "w".repeat(kb * 1024),
          nominalTime: T,
          outcome: "SKIPPED_MISFIRE",
        },
        T,
      );
      return e;
    };
    const logs: string[] = [];
    await publisher(logs).publish([big(100), big(100), big(100), big(300)]);
    const calls = eb.commandCalls(PutEventsCommand).map((c) => c.args[0].input.Entries ?? []);
    expect(calls.map((c) => c.length)).toEqual([2, 1]);
    expect(logs).toEqual(["events: an event exceeds PutEvents' 256 KB and is dropped"]);
  });

  it("sizes entries the way AWS documents (14 bytes for Time + UTF-8 of the strings)", () => {
    expect(entrySize({ Source: "shoal", DetailType: "ab", Detail: '{"é":1}', Time: "x" })).toBe(
      14 + 5 + 2 + 8,
    );
    const entries = Array.from({ length: 21 }, () => ({
      Source: "s",
      DetailType: "d",
      Detail: "{}",
      Time: "t",
    }));
    expect(batchEntries(entries).map((b) => b.length)).toEqual([10, 10, 1]);
  });
});

describe("LocalEventBus", () => {
  it("keeps the newest events, filters by detail-type and source", async () => {
    const bus = new LocalEventBus({ region: "us-east-1", now: () => T, keep: 5 });
    await bus.publish(sample(7));
    bus.record({ id: "ext", source: "acme", "detail-type": "Order", detail: {} });
    const all = bus.recent(100);
    expect(all).toHaveLength(5);
    expect(all[0]?.id).toBe("ext");
    expect(bus.recent(100, { source: "acme" }).map((e) => e.id)).toEqual(["ext"]);
    expect(bus.recent(2, { detailType: DETAIL_TYPES.task }).map((e) => e.detail)).toEqual([
      expect.objectContaining({ taskCode: "t6" }),
      expect.objectContaining({ taskCode: "t5" }),
    ]);
  });

  it("hands Shoal's events to subscribers without waiting; a failing subscriber is logged", async () => {
    const logs: string[] = [];
    const bus = new LocalEventBus({ region: "us-east-1", now: () => T, log: (m) => logs.push(m) });
    const seen: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    bus.subscribe(async (e) => {
      await gate;
      seen.push((e.detail as { taskCode: string }).taskCode);
    });
    bus.subscribe(async () => {
      throw new Error("trigger store down");
    });
    await bus.publish(sample(2)); // returns before the subscribers finish
    expect(seen).toEqual([]);
    release();
    await bus.drain();
    expect(seen).toEqual(["t0", "t1"]);
    expect(logs).toEqual(["event bus: a subscriber failed", "event bus: a subscriber failed"]);
  });
});

describe("state-change event details", () => {
  it("an instance event carries only the fields that are set, times as ISO-8601", () => {
    const e = instanceStateChange(
      {
        ...inst,
        state: "FAILURE",
        commandType: "SCHEDULED",
        priority: "MEDIUM",
        runs: 2,
        startedAt: T - 1000,
        endedAt: T,
        scheduleTime: Date.UTC(2026, 10, 21),
        scheduleId: "s-1",
        parent: { instanceId: "p-1" },
      },
      "RUNNING",
      T,
      ["load"],
    );
    expect(e.detailType).toBe("Shoal Workflow Instance State Change");
    expect(e.detail).toEqual({
      schemaVersion: 1,
      instanceId: "i-1",
      workflow: "etl",
      workflowVersion: 3,
      state: "FAILURE",
      previousState: "RUNNING",
      commandType: "SCHEDULED",
      priority: "MEDIUM",
      runs: 2,
      startTime: "2026-11-21T09:29:59.250Z",
      endTime: "2026-11-21T09:30:00.250Z",
      scheduleTime: "2026-11-21T00:00:00.000Z",
      scheduleId: "s-1",
      parentInstanceId: "p-1",
      failedTasks: ["load"],
    });
  });

  it("triggers see other sources' events and Shoal's instance and misfire events, not task events", () => {
    expect(reachesTriggers({ source: "acme.orders", "detail-type": "Order Placed" })).toBe(true);
    expect(reachesTriggers({ source: "shoal", "detail-type": DETAIL_TYPES.instance })).toBe(true);
    expect(reachesTriggers({ source: "shoal", "detail-type": DETAIL_TYPES.misfire })).toBe(true);
    expect(reachesTriggers({ source: "shoal", "detail-type": DETAIL_TYPES.task })).toBe(false);
  });

  it("a misfire event says how late the decision was", () => {
    const e = scheduleMisfireEvent(
      { scheduleId: "s", workflow: "w", nominalTime: T - 90_000, outcome: "SKIPPED_MISFIRE" },
      T,
    );
    expect(e.detail).toEqual({
      schemaVersion: 1,
      scheduleId: "s",
      workflow: "w",
      nominalTime: "2026-11-21T09:28:30.250Z",
      outcome: "SKIPPED_MISFIRE",
      latenessMs: 90_000,
    });
  });
});

describe("Embedded Metric Format", () => {
  it("names the namespace, the Prefix dimension and each metric with its unit and value", () => {
    const metrics = shoalMetrics("shoal");
    metrics.addMetric(METRICS.fireLatenessMs, MetricUnit.Milliseconds, 1200);
    metrics.addMetric(METRICS.fires, MetricUnit.Count, 3);
    metrics.setTimestamp(T);
    const doc = JSON.parse(JSON.stringify(metrics.serializeMetrics()));
    expect(doc).toEqual({
      _aws: {
        Timestamp: T,
        CloudWatchMetrics: [
          {
            Namespace: "Shoal",
            Dimensions: [["Prefix"]],
            Metrics: [
              { Name: "FireLatenessMs", Unit: "Milliseconds" },
              { Name: "Fires", Unit: "Count" },
            ],
          },
        ],
      },
      Prefix: "shoal",
      FireLatenessMs: 1200,
      Fires: 3,
    });
  });
});
