/**
 * Worker heartbeats against the emulators: the WorkerHeartbeatStore conformance suite (every
 * implementation; today DynamoDB, on dynalite through the real AWS SDK), the worker-side
 * heartbeat that writes on a timer with the worker's load, and the SQS queue depths (visible
 * and in flight) explain reads.
 */
import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { HEARTBEAT_INTERVAL_MS, WorkerHeartbeat } from "../../lib/engine/worker-heartbeat.js";
import { SqsTaskQueueDepths } from "../../lib/queue/task-queue-depths.js";
import { ensureTaskQueues } from "../../lib/standalone/provision.js";
import { DynamoLeases } from "../../lib/store/dynamo-leases.js";
import { DynamoWorkerHeartbeats } from "../../lib/store/dynamo-worker-heartbeats.js";
import { FORGET_WORKER_MS, type WorkerHeartbeatStore } from "../../lib/store/worker-heartbeats.js";
import { type TestAws, testClients, useTestAws } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";

let aws: TestAws;
beforeAll(async () => {
  aws = await useTestAws();
});

const stores: Array<[string, () => WorkerHeartbeatStore]> = [
  [
    "DynamoWorkerHeartbeats",
    () => new DynamoWorkerHeartbeats(testClients().dynamo, aws.config.tables.leases),
  ],
];

const T0 = 1_700_000_000_000;
const MINUTE = 60_000;

describe.each(stores)("%s conformance", (_name, make) => {
  it("records the first heartbeat of a group, with the worker's load, and reads it back", async () => {
    const store = make();
    expect(await store.getHeartbeat("first")).toBeUndefined();
    expect(await store.recordPoll("first", "w1", T0, MINUTE, { used: 3, slots: 4, held: 1 })).toBe(
      true,
    );
    expect(await store.getHeartbeat("first")).toEqual({
      group: "first",
      lastPollAt: T0,
      worker: "w1",
      workers: [{ worker: "w1", at: T0, used: 3, slots: 4, held: 1 }],
    });
  });

  it("each worker writes its own entry, again only once it is minIntervalMs old", async () => {
    const store = make();
    const load = { used: 1, slots: 2, held: 0 };
    expect(await store.recordPoll("gpu", "w1", T0, MINUTE, load)).toBe(true);
    expect(await store.recordPoll("gpu", "w1", T0 + MINUTE - 1, MINUTE, load)).toBe(false);
    // Another worker of the group is not held back by w1's heartbeat.
    expect(await store.recordPoll("gpu", "w2", T0 + 30_000, MINUTE, load)).toBe(true);
    expect(await store.recordPoll("gpu", "w1", T0 + MINUTE, MINUTE, { ...load, used: 2 })).toBe(
      true,
    );
    expect(await store.getHeartbeat("gpu")).toEqual({
      group: "gpu",
      lastPollAt: T0 + MINUTE,
      worker: "w1",
      workers: [
        { worker: "w1", at: T0 + MINUTE, used: 2, slots: 2, held: 0 },
        { worker: "w2", at: T0 + 30_000, used: 1, slots: 2, held: 0 },
      ],
    });
  });

  it("of writes racing for one worker's minute exactly one lands", async () => {
    const store = make();
    const won = await Promise.all(
      Array.from({ length: 8 }, () => store.recordPoll("race", "w", T0, MINUTE)),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
  });

  it("a worker that stops is forgotten; one gone silent for an hour is removed by a writer", async () => {
    const store = make();
    const load = { used: 0, slots: 4, held: 0 };
    await store.recordPoll("churn", "stopping", T0, MINUTE, load);
    await store.recordPoll("churn", "dead", T0, MINUTE, load);
    await store.forgetWorker("churn", "stopping");
    await store.forgetWorker("never-written", "w"); // no item is made for it
    expect(await store.getHeartbeat("never-written")).toBeUndefined();
    expect((await store.getHeartbeat("churn"))?.workers.map((w) => w.worker)).toEqual(["dead"]);
    // Within the hour the silent worker's entry stays (explain judges it by its age) …
    await store.recordPoll("churn", "live", T0 + FORGET_WORKER_MS, MINUTE, load);
    expect((await store.getHeartbeat("churn"))?.workers.map((w) => w.worker)).toEqual([
      "dead",
      "live",
    ]);
    // … after it, the next writer removes it; the group's last heartbeat stays.
    await store.recordPoll("churn", "live", T0 + FORGET_WORKER_MS + MINUTE + 1, MINUTE, load);
    const beat = await store.getHeartbeat("churn");
    expect(beat?.workers.map((w) => w.worker)).toEqual(["live"]);
    expect(beat).toMatchObject({ worker: "live", lastPollAt: T0 + FORGET_WORKER_MS + MINUTE + 1 });
  });

  it("keeps groups apart and refuses a bad interval", async () => {
    const store = make();
    await store.recordPoll("a", "w", T0, MINUTE);
    expect(await store.getHeartbeat("b")).toBeUndefined();
    expect(() => store.recordPoll("a", "w", T0, -1)).toThrow(RangeError);
  });
});

describe("heartbeats share the leases table with leases", () => {
  it("a lease and a heartbeat of the same name stem do not meet", async () => {
    const leases = new DynamoLeases(testClients().dynamo, aws.config.tables.leases);
    const beats = new DynamoWorkerHeartbeats(testClients().dynamo, aws.config.tables.leases);
    expect(await leases.claimLease("shared", "me", T0, 1_000)).toBeDefined();
    expect(await beats.recordPoll("shared", "w", T0, MINUTE)).toBe(true);
    expect((await leases.getLease("shared"))?.owner).toBe("me");
    expect((await beats.getHeartbeat("shared"))?.worker).toBe("w");
  });
});

describe("WorkerHeartbeat (the worker side)", () => {
  /** The store, counting the writes made through it. */
  const counting = () => {
    const store = new DynamoWorkerHeartbeats(testClients().dynamo, aws.config.tables.leases);
    const seen = { writes: 0, forgets: 0 };
    const wrapped: WorkerHeartbeatStore = {
      recordPoll: (...args) => {
        seen.writes++;
        return store.recordPoll(...args);
      },
      forgetWorker: (g, w) => {
        seen.forgets++;
        return store.forgetWorker(g, w);
      },
      getHeartbeat: (g) => store.getHeartbeat(g),
    };
    return { store, wrapped, seen };
  };

  it("writes on a timer, busy or idle, with the worker's load; stop forgets the worker", async () => {
    const { store, wrapped, seen } = counting();
    let load = { used: 4, slots: 4, held: 2 };
    // A short interval for the test; the store's guard is half of it.
    const hb = new WorkerHeartbeat({
      store: wrapped,
      group: "timed",
      worker: "w1",
      now: () => Date.now(),
      intervalMs: 200,
      load: () => load,
    });
    hb.start();
    await hb.flush();
    expect((await store.getHeartbeat("timed"))?.workers).toEqual([
      expect.objectContaining({ worker: "w1", used: 4, slots: 4, held: 2 }),
    ]);
    // No poll happens here at all (every slot busy): the heartbeat still comes, each interval.
    load = { used: 1, slots: 4, held: 0 };
    await until(async () => (await store.getHeartbeat("timed"))?.workers[0]?.used === 1, {
      what: "a heartbeat written by the timer",
    });
    expect(seen.writes).toBeGreaterThanOrEqual(2);
    await hb.stop();
    const writes = seen.writes;
    expect(seen.forgets).toBe(1);
    expect((await store.getHeartbeat("timed"))?.workers).toEqual([]);
    expect((await store.getHeartbeat("timed"))?.worker).toBe("w1");
    expect(seen.writes).toBe(writes);
  });

  it("one write a minute, however busy, and none after stop (fake clock, in-memory store)", async () => {
    vi.useFakeTimers({ now: T0 });
    try {
      const at: number[] = [];
      const hb = new WorkerHeartbeat({
        store: {
          recordPoll: async (_g, _w, now) => {
            at.push(now);
            return true;
          },
          forgetWorker: async () => {},
          getHeartbeat: async () => undefined,
        },
        group: "g",
        worker: "w",
        now: () => Date.now(),
      });
      hb.start();
      for (let i = 0; i < 50; i++) hb.beat(); // one write under way: the rest are dropped
      await vi.advanceTimersByTimeAsync(5 * HEARTBEAT_INTERVAL_MS);
      expect(at).toEqual([0, 1, 2, 3, 4, 5].map((m) => T0 + m * HEARTBEAT_INTERVAL_MS));
      await hb.stop();
      await vi.advanceTimersByTimeAsync(5 * HEARTBEAT_INTERVAL_MS);
      expect(at).toHaveLength(6);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a failing store is logged, never thrown, and tried again next beat", async () => {
    const logged: string[] = [];
    const hb = new WorkerHeartbeat({
      store: {
        recordPoll: async () => {
          throw new Error("AccessDeniedException");
        },
        forgetWorker: async () => {
          throw new Error("AccessDeniedException");
        },
        getHeartbeat: async () => undefined,
      },
      group: "g",
      worker: "w",
      now: () => T0,
      log: (msg) => logged.push(msg),
    });
    hb.beat();
    await hb.flush();
    hb.beat();
    await hb.flush();
    await hb.stop();
    expect(logged).toEqual([
      "worker: recording the heartbeat failed",
      "worker: removing the heartbeat failed",
    ]);
  });
});

describe("SqsTaskQueueDepths", () => {
  it("counts visible and in-flight messages per tier, and says when a group has no queues", async () => {
    const depths = new SqsTaskQueueDepths(testClients().sqs, aws.config.prefix);
    expect(await depths.depths("nosuchgroup")).toBe("missing");
    const [highest, , medium] = await ensureTaskQueues(
      testClients().sqs,
      aws.config.prefix,
      "depth",
    );
    for (const [url, n] of [
      [highest, 2],
      [medium, 3],
    ] as const) {
      for (let i = 0; i < n; i++) {
        await testClients().sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "{}" }));
      }
    }
    // A worker's prefetch: two MEDIUM messages received, held, not deleted.
    const got = await testClients().sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: medium,
        MaxNumberOfMessages: 2,
        VisibilityTimeout: 300,
      }),
    );
    expect(got.Messages).toHaveLength(2);
    const zero = { HIGHEST: 0, HIGH: 0, MEDIUM: 0, LOW: 0, LOWEST: 0 };
    const expected = {
      visible: { ...zero, HIGHEST: 2, MEDIUM: 1 },
      inFlight: { ...zero, MEDIUM: 2 },
    };
    await until(
      async () => JSON.stringify(await depths.depths("depth")) === JSON.stringify(expected),
      { what: "the queue depths" },
    );
    expect(await depths.depths("depth")).toEqual(expected);
  });
});
