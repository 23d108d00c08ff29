import { describe, expect, it } from "vitest";
import {
  HOURS_PER_MONTH,
  mwaaMonthlyFloor,
  PRICES,
  perMillionTasks,
  priceUsage,
  sfnExpressPerMillion,
  sfnStandardPerMillion,
  sfnTransitions,
  type Usage,
} from "../../bench/cost-prices.js";
import {
  fanOuts,
  meter,
  writeUnitsByOperation,
  writeUnitsBySource,
} from "../../bench/cost-report.js";

const none: Usage = {
  tasks: 1_000_000,
  writeUnits: 0,
  readUnits: 0,
  sqsStandardRequests: 0,
  sqsFifoRequests: 0,
  lambdaInvocations: 0,
  lambdaGbSeconds: 0,
  eventEntries: 0,
  logBytes: 0,
};

describe("prices", () => {
  it("names a source page for every price", () => {
    for (const p of Object.values(PRICES)) expect(p.url).toMatch(/^https:\/\/aws\.amazon\.com\//);
  });

  it("prices one million write units at $0.625 and one million task events at $1", () => {
    expect(priceUsage({ ...none, writeUnits: 1e6 }).total).toBeCloseTo(0.625, 6);
    expect(perMillionTasks({ ...none, eventEntries: 1e6 }).total).toBeCloseTo(1, 6);
  });

  it("prices FIFO and standard SQS requests apart", () => {
    const p = priceUsage({ ...none, sqsFifoRequests: 1e6, sqsStandardRequests: 1e6 });
    expect(p.sqs).toBeCloseTo(0.9, 6);
  });

  it("prices Lambda at arm64 GB-seconds, the stack's architecture", () => {
    expect(priceUsage({ ...none, lambdaGbSeconds: 1 }).lambdaDuration).toBeCloseTo(
      PRICES.lambdaArmGbSecond.usd,
      12,
    );
  });

  it("prices log bytes per GB ingested", () => {
    expect(priceUsage({ ...none, logBytes: 2 ** 30 }).logs).toBeCloseTo(0.5, 6);
  });
});

describe("Step Functions and MWAA", () => {
  it("counts one transition per task, two per Map/Parallel, and the start and end", () => {
    expect(sfnTransitions({ tasks: 100, fanOuts: 0 })).toBe(102);
    expect(sfnTransitions({ tasks: 1001, fanOuts: 1 })).toBe(1005);
  });

  it("costs about $25 per million tasks on Standard", () => {
    expect(sfnStandardPerMillion({ tasks: 1_000_000, fanOuts: 0 })).toBeCloseTo(25, 1);
  });

  it("costs Express one request per DAG plus its duration", () => {
    const oneSecond = sfnExpressPerMillion({ tasks: 1, fanOuts: 0 }, 1);
    expect(oneSecond).toBeCloseTo(1 + (64 / 1024) * PRICES.sfnExpressGbSecond.usd * 1e6, 6);
  });

  it("puts MWAA's floor at its hourly price all month", () => {
    expect(mwaaMonthlyFloor()).toBeCloseTo(PRICES.mwaaSmallHour.usd * HOURS_PER_MONTH, 6);
  });

  it("counts the fan-outs a state machine needs", () => {
    const t = (code: string, upstream: string[] = []) => ({ code, upstream });
    expect(fanOuts([t("a"), t("b", ["a"]), t("c", ["b"])])).toBe(0);
    expect(fanOuts([t("a"), t("b"), t("j", ["a", "b"])])).toBe(1);
    expect(fanOuts([t("r"), t("a", ["r"]), t("b", ["r"])])).toBe(1);
  });
});

describe("metered counts to usage", () => {
  const counts = {
    "ddb.cmp.w.tasks": 4,
    "ddb.cmp.w.tasks/leases": 2,
    "ddb.cmp.w.tasks.UpdateItem": 3,
    "ddb.cmp.wok.tasks": 4,
    "ddb.rep.w.tasks": 4,
    "bg.ddb.cmp.w.leases": 50,
    "ddb.cmp.r.instances": 1.5,
    "sqs.fifo.shoal-events.fifo.SendMessageBatch": 2,
    "sqs.std.shoal-tasks.ReceiveMessage": 3,
    "lambda.dispatcher.calls": 2,
    "lambda.dispatcher.ms": 1000,
    "meter.ms.dispatcher": 200,
    "lambda.worker.calls": 1,
    "lambda.worker.ms": 3000,
    "meter.ms.worker": 500,
    "events.billed": 2,
    "events.instance": 1,
    "logs.bytes": 100,
    "logs.lines": 2,
    "lambda.api.calls": 1,
  };

  it("adds tables and GSIs, leaves background and per-operation labels out", () => {
    const m = meter(counts, 1, 1000);
    expect(m.writeUnits).toBe(6);
    expect(m.computedIndexWrites).toBe(2);
    expect(m.readUnits).toBe(1.5);
    expect(m.sqsFifoRequests).toBe(2);
    expect(m.sqsStandardRequests).toBe(3);
    expect(m.lambdaInvocations).toBe(2 + 1 + 1 + 1);
    // Dispatcher 0.8 s at 0.5 GB; worker 3 − 0.5 − 1 (the task) = 1.5 s at 1 GB.
    expect(m.lambdaGbSeconds).toBeCloseTo(0.4 + 1.5, 6);
    expect(m.logBytes).toBe(100 + 2 * 26);
    expect(writeUnitsBySource(counts)).toEqual({ tasks: 4, "tasks/leases": 2 });
    expect(writeUnitsByOperation(counts)).toEqual({ "tasks.UpdateItem": 3 });
  });
});
