/**
 * Worker heartbeats against the emulators: the WorkerHeartbeatStore conformance suite (every
 * implementation; today DynamoDB, on dynalite through the real AWS SDK), the worker-side
 * heartbeat that writes at most once a minute, and the SQS queue depths explain reads.
 */
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { dynamoClient, sqsClient } from "../../lib/aws/clients.js";
import { ensureTaskQueues } from "../../lib/aws/resources.js";
import { HEARTBEAT_INTERVAL_MS, WorkerHeartbeat } from "../../lib/engine/worker-heartbeat.js";
import { SqsTaskQueueDepths } from "../../lib/queue/task-queue-depths.js";
import { DynamoLeases } from "../../lib/store/dynamo-leases.js";
import { DynamoWorkerHeartbeats } from "../../lib/store/dynamo-worker-heartbeats.js";
import type { WorkerHeartbeatStore } from "../../lib/store/worker-heartbeats.js";
import { type TestAws, useTestAws } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";

let aws: TestAws;
beforeAll(async () => {
  aws = await useTestAws();
});

const stores: Array<[string, () => WorkerHeartbeatStore]> = [
  [
    "DynamoWorkerHeartbeats",
    () => new DynamoWorkerHeartbeats(dynamoClient(), aws.config.tables.leases),
  ],
];

const T0 = 1_700_000_000_000;
const MINUTE = 60_000;

describe.each(stores)("%s conformance", (_name, make) => {
  it("records the first poll of a group and reads it back", async () => {
    const store = make();
    expect(await store.getHeartbeat("first")).toBeUndefined();
    expect(await store.recordPoll("first", "w1", T0, MINUTE)).toBe(true);
    expect(await store.getHeartbeat("first")).toEqual({
      group: "first",
      lastPollAt: T0,
      worker: "w1",
    });
  });

  it("writes again only once the stored heartbeat is minIntervalMs old, whoever writes", async () => {
    const store = make();
    expect(await store.recordPoll("gpu", "w1", T0, MINUTE)).toBe(true);
    expect(await store.recordPoll("gpu", "w1", T0 + MINUTE - 1, MINUTE)).toBe(false);
    expect(await store.recordPoll("gpu", "w2", T0 + 30_000, MINUTE)).toBe(false);
    expect((await store.getHeartbeat("gpu"))?.worker).toBe("w1");
    expect(await store.recordPoll("gpu", "w2", T0 + MINUTE, MINUTE)).toBe(true);
    expect(await store.getHeartbeat("gpu")).toEqual({
      group: "gpu",
      lastPollAt: T0 + MINUTE,
      worker: "w2",
    });
  });

  it("of workers racing for the same minute exactly one writes", async () => {
    const store = make();
    const won = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.recordPoll("race", `w${i}`, T0, MINUTE)),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
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
    const leases = new DynamoLeases(dynamoClient(), aws.config.tables.leases);
    const beats = new DynamoWorkerHeartbeats(dynamoClient(), aws.config.tables.leases);
    expect(await leases.claimLease("shared", "me", T0, 1_000)).toBeDefined();
    expect(await beats.recordPoll("shared", "w", T0, MINUTE)).toBe(true);
    expect((await leases.getLease("shared"))?.owner).toBe("me");
    expect((await beats.getHeartbeat("shared"))?.worker).toBe("w");
  });
});

describe("WorkerHeartbeat (the worker side)", () => {
  it("writes on the first poll and then at most once per interval, without waiting", async () => {
    const store = new DynamoWorkerHeartbeats(dynamoClient(), aws.config.tables.leases);
    let now = T0;
    let writes = 0;
    const counting: WorkerHeartbeatStore = {
      recordPoll: (...args) => {
        writes++;
        return store.recordPoll(...args);
      },
      getHeartbeat: (g) => store.getHeartbeat(g),
    };
    const hb = new WorkerHeartbeat({
      store: counting,
      group: "beat",
      worker: "w1",
      now: () => now,
    });
    for (let i = 0; i < 50; i++) hb.polled(); // one long-poll burst
    await hb.flush();
    expect(writes).toBe(1);
    now += HEARTBEAT_INTERVAL_MS - 1;
    hb.polled();
    await hb.flush();
    expect(writes).toBe(1);
    now += 1;
    hb.polled();
    await hb.flush();
    expect(writes).toBe(2);
    expect(await store.getHeartbeat("beat")).toEqual({
      group: "beat",
      lastPollAt: T0 + HEARTBEAT_INTERVAL_MS,
      worker: "w1",
    });
  });

  it("a failing store is logged, never thrown, and tried again next interval", async () => {
    const logged: string[] = [];
    let now = T0;
    const hb = new WorkerHeartbeat({
      store: {
        recordPoll: async () => {
          throw new Error("AccessDeniedException");
        },
        getHeartbeat: async () => undefined,
      },
      group: "g",
      worker: "w",
      now: () => now,
      log: (msg) => logged.push(msg),
    });
    hb.polled();
    await hb.flush();
    now += HEARTBEAT_INTERVAL_MS;
    hb.polled();
    await hb.flush();
    expect(logged).toEqual(["worker: recording the heartbeat failed"]);
  });
});

describe("SqsTaskQueueDepths", () => {
  it("counts visible messages per tier, and says when a group has no queues", async () => {
    const depths = new SqsTaskQueueDepths(sqsClient(), aws.config.prefix);
    expect(await depths.depths("nosuchgroup")).toBe("missing");
    const [highest, , medium] = await ensureTaskQueues(sqsClient(), aws.config.prefix, "depth");
    for (const [url, n] of [
      [highest, 2],
      [medium, 1],
    ] as const) {
      for (let i = 0; i < n; i++) {
        await sqsClient().send(new SendMessageCommand({ QueueUrl: url, MessageBody: "{}" }));
      }
    }
    await until(async () => {
      const d = await depths.depths("depth");
      return d !== "missing" && d.HIGHEST === 2 && d.MEDIUM === 1 ? d : undefined;
    });
    expect(await depths.depths("depth")).toEqual({
      HIGHEST: 2,
      HIGH: 0,
      MEDIUM: 1,
      LOW: 0,
      LOWEST: 0,
    });
  });
});
