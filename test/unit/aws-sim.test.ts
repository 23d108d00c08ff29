import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { simWorkerProps } from "../../bench/aws-sim.js";
import { allowedPollers, esmDrainMs, recordsToDelete } from "../../bench/aws-sim-esm.js";
import { pollerCycleMs } from "../../bench/aws-sim-fanout.js";
import {
  AWS_LATENCY,
  LatencySampler,
  latencyAt,
  operationName,
  seededRandom,
} from "../../bench/aws-sim-latency.js";
import { standInShell } from "../../bench/aws-sim-tasks.js";

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};

describe("latency distributions", () => {
  it("pass through the three percentiles they are given", () => {
    const p = { p50: 6, p90: 10, p99: 30 };
    expect(latencyAt(p, 0)).toBeCloseTo(6, 6);
    expect(latencyAt(p, 1.2815515655446004)).toBeCloseTo(10, 6);
    expect(latencyAt(p, 2.3263478740408408)).toBeCloseTo(30, 6);
  });

  it("draw samples whose percentiles match the model, the same ones for the same seed", () => {
    const a = new LatencySampler(seededRandom(7));
    const xs = Array.from({ length: 40_000 }, () => a.draw("DynamoDB.PutItem"));
    const p = AWS_LATENCY["DynamoDB.PutItem"];
    expect(quantile(xs, 0.5)).toBeGreaterThan((p?.p50 ?? 0) * 0.95);
    expect(quantile(xs, 0.5)).toBeLessThan((p?.p50 ?? 0) * 1.05);
    expect(quantile(xs, 0.9)).toBeCloseTo(p?.p90 ?? 0, 0);
    expect(quantile(xs, 0.99)).toBeGreaterThan((p?.p99 ?? 0) * 0.85);
    expect(quantile(xs, 0.99)).toBeLessThan((p?.p99 ?? 0) * 1.15);
    const b = new LatencySampler(seededRandom(7));
    expect(Array.from({ length: 5 }, () => b.draw("DynamoDB.PutItem"))).toEqual(xs.slice(0, 5));
  });

  it("fall back to the service's default and to zero for unknown services", () => {
    const s = new LatencySampler(seededRandom(1));
    expect(s.draw("DynamoDB.Scan")).toBeGreaterThan(0);
    expect(s.draw("Unknown.Thing")).toBe(0);
  });

  it("refuse percentiles out of order", () => {
    expect(() => latencyAt({ p50: 10, p90: 5, p99: 20 }, 0)).toThrow(/p50 ≤ p90 ≤ p99/);
  });

  it("name document-client commands by the operation they send", () => {
    expect(operationName("DynamoDB", "GetCommand")).toBe("DynamoDB.GetItem");
    expect(operationName("DynamoDB", "UpdateItemCommand")).toBe("DynamoDB.UpdateItem");
    expect(operationName("SQS", "SendMessageBatchCommand")).toBe("SQS.SendMessageBatch");
  });
});

describe("event source mapping rules", () => {
  const recs = ["a", "b", "c", "d"].map((messageId) => ({ messageId }));

  it("scale from five batches by up to 300 a minute, within the maximum concurrency", () => {
    expect(allowedPollers(0, 50)).toBe(5);
    expect(allowedPollers(1_000, 50)).toBe(10);
    expect(allowedPollers(60_000, 1000)).toBe(305);
    expect(allowedPollers(60_000, 6)).toBe(6);
    expect(allowedPollers(0, 2)).toBe(2);
  });

  it("delete the successes of a standard batch and keep its failures", () => {
    const kept = recordsToDelete(recs, { batchItemFailures: [{ itemIdentifier: "b" }] }, false);
    expect(kept.map((r) => r.messageId)).toEqual(["a", "c", "d"]);
  });

  it("keep a FIFO batch from its first failure on, so the group's order holds", () => {
    const kept = recordsToDelete(recs, { batchItemFailures: [{ itemIdentifier: "b" }] }, true);
    expect(kept.map((r) => r.messageId)).toEqual(["a"]);
  });

  it("delete nothing when the invocation failed or named a record not in the batch", () => {
    expect(recordsToDelete(recs, undefined, false, true)).toEqual([]);
    expect(recordsToDelete(recs, { batchItemFailures: [{ itemIdentifier: "zz" }] }, false)).toEqual(
      [],
    );
    expect(recordsToDelete(recs, { batchItemFailures: [] }, true)).toHaveLength(4);
  });
});

describe("the simulation's worker settings and task stand-ins", () => {
  it("raise MEDIUM's concurrency as the construct allows it, with the batch size", () => {
    expect(simWorkerProps({})).toEqual({});
    expect(simWorkerProps({ awsSimWorkerSlots: 300, awsSimWorkerBatch: 10 })).toEqual({
      workerConcurrency: { HIGHEST: 300, HIGH: 300, MEDIUM: 300 },
      workerBatchSize: 10,
    });
    // Below the defaults of the higher tiers, those stay.
    expect(simWorkerProps({ awsSimWorkerSlots: 8 }).workerConcurrency).toEqual({
      HIGHEST: 20,
      HIGH: 10,
      MEDIUM: 8,
    });
  });

  const run = (command: string, signal = new AbortController().signal) =>
    standInShell({
      task: { code: "t", type: "SHELL", upstream: [], command } as never,
      params: {},
      env: {},
      log: { write: () => {}, close: async () => {} },
      signal,
      workDir: tmpdir(),
      clients: {} as never,
    });

  it("price Lambda's scaling by a poller's whole cycle: receive, hand-over and invocation", () => {
    // The model's medians: ReceiveMessage 20 ms, the mapping's hand-over 10 ms.
    expect(pollerCycleMs(140)).toBe(170);
    // Five pollers at first, 300 more a minute: 1,000 batches of 170 ms take several seconds,
    // more with a longer cycle.
    const floor = esmDrainMs(1_000, pollerCycleMs(140), 300);
    expect(floor).toBeGreaterThan(5_000);
    expect(floor).toBeLessThan(esmDrainMs(1_000, pollerCycleMs(400), 300));
  });

  it("run `true` and `sleep N` on a timer, anything else as the worker would", async () => {
    expect(await run("true")).toEqual({ state: "SUCCESS", exitCode: 0 });
    const t = performance.now();
    expect(await run("sleep 0.05")).toEqual({ state: "SUCCESS", exitCode: 0 });
    expect(performance.now() - t).toBeGreaterThanOrEqual(45);
    expect(await run("exit 3")).toMatchObject({ state: "FAILURE", exitCode: 3 });
  });

  it("end KILLED with the kill's reason when aborted", async () => {
    const kill = new AbortController();
    const r = run("sleep 30", kill.signal);
    kill.abort("killed: the instance was stopped");
    expect(await r).toEqual({ state: "KILLED", error: "killed: the instance was stopped" });
  });
});
