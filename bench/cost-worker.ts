/**
 * The cost meter inside a `shoal worker` child of the benchmarks (bench/worker-child.ts, when
 * SHOAL_BENCH_COST=1): meters every DynamoDB and SQS client the worker builds (cost-meter.ts) and
 * times the worker handler (what a Lambda worker invocation would run: `cost.lambda.worker.*`).
 */
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { configFromEnv } from "../lib/aws/config.js";
import { EmbeddedDynamoDBClient } from "../lib/embedded/dynamodb-client.js";
import { EmbeddedSQSClient } from "../lib/embedded/sqs-client.js";
import { Worker } from "../lib/engine/worker.js";
import { type CostCounts, CostMeter, meterEveryClient } from "./cost-meter.js";
import { rawDynamoClient } from "./cost-wire.js";

/** Strips the deployment prefix from table names (`shoal-x-tasks` → `tasks`). */
export const prefixStripper =
  (prefix: string) =>
  (name: string): string =>
    name.startsWith(`${prefix}-`) ? name.slice(prefix.length + 1) : name;

/** Sets up metering in this process; `counts()` includes the worker handler's calls and ms. */
export async function costMeterForWorker(): Promise<{ reset(): void; counts(): CostCounts }> {
  const config = configFromEnv(process.env);
  const meter = new CostMeter(rawDynamoClient(config.aws), prefixStripper(config.prefix));
  // SDK clients on the emulators; the embedded backend's own clients otherwise.
  meterEveryClient(
    meter,
    [
      [DynamoDBDocumentClient, "dynamo"],
      [SQSClient, "sqs"],
      [EmbeddedDynamoDBClient, "dynamo"],
      [EmbeddedSQSClient, "sqs"],
    ],
    [meter.raw],
  );
  const handler = { calls: 0, ms: 0 };
  const proto = Worker.prototype as unknown as {
    handleBatch: (...a: unknown[]) => Promise<unknown>;
  };
  const orig = proto.handleBatch;
  proto.handleBatch = async function (this: unknown, ...a: unknown[]) {
    const t = performance.now();
    try {
      return await orig.apply(this, a);
    } finally {
      handler.calls++;
      handler.ms += Math.ceil(performance.now() - t); // Lambda bills whole ms
    }
  };
  return {
    reset() {
      meter.reset();
      handler.calls = 0;
      handler.ms = 0;
    },
    counts: () => ({
      ...meter.counts,
      "lambda.worker.calls": handler.calls,
      "lambda.worker.ms": handler.ms,
    }),
  };
}
