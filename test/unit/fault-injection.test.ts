/**
 * The SHOAL_TEST_FAULTS hook (lib/aws/fault-injection.ts): its format, and that an injected
 * error goes through the SDK's retries as a real one would.
 */
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { createAwsClients } from "../../lib/aws/clients.js";
import { awsConfigFromEnv } from "../../lib/aws/config.js";
import { injectedFaults, parseFaultSpec } from "../../lib/aws/fault-injection.js";

const CREDENTIALS = { accessKeyId: "x", secretAccessKey: "x" };

describe("parseFaultSpec", () => {
  it("reads errors and latencies per service", () => {
    expect(parseFaultSpec("dynamodb:error=0.05,latency=0.1:50ms;sqs:error=0.03")).toEqual({
      dynamodb: { error: 0.05, latency: 0.1, latencyMs: { min: 50, max: 50 } },
      sqs: { error: 0.03, latency: 0, latencyMs: { min: 0, max: 0 } },
    });
    expect(parseFaultSpec(" SQS : latency=1:20-200ms ; ")).toEqual({
      sqs: { error: 0, latency: 1, latencyMs: { min: 20, max: 200 } },
    });
    expect(parseFaultSpec("dynamodb:latency=0.5:2s").dynamodb?.latencyMs).toEqual({
      min: 2000,
      max: 2000,
    });
    expect(parseFaultSpec("")).toEqual({});
  });

  it.each([
    ["error=0.1", "names no service"],
    ["lambda:error=0.1", "unknown service 'lambda'"],
    ["dynamodb:error=2", "'2' is not a fraction"],
    ["dynamodb:error=", "'' is not a fraction"],
    ["dynamodb:latency=0.1", "needs a delay"],
    ["dynamodb:latency=0.1:50", "must look like 50ms"],
    ["dynamodb:latency=0.1:90-10ms", "runs backwards"],
    ["dynamodb:errors=0.1", "unknown key 'errors'"],
    ["sqs:error=0.1;sqs:error=0.2", "given twice"],
  ])("refuses %s", (text, message) => {
    expect(() => parseFaultSpec(text)).toThrow(message);
  });

  it("reaches the AWS configuration through SHOAL_TEST_FAULTS only", () => {
    expect(awsConfigFromEnv({}).faults).toBeUndefined();
    expect(awsConfigFromEnv({ SHOAL_TEST_FAULTS: "sqs:error=1" }).faults).toEqual({
      sqs: { error: 1, latency: 0, latencyMs: { min: 0, max: 0 } },
    });
    expect(() => awsConfigFromEnv({ SHOAL_TEST_FAULTS: "s3:error=1" })).toThrow(
      "SHOAL_TEST_FAULTS: unknown service 's3'",
    );
  });
});

describe("injected errors", () => {
  // Nothing listens on port 9: an attempt that got past the fault would fail differently.
  const endpoint = "http://127.0.0.1:9";

  it("are retried by the SDK as throttling or server errors, every attempt drawn anew", async () => {
    const clients = createAwsClients({
      region: "us-east-1",
      credentials: CREDENTIALS,
      endpoints: { dynamodb: endpoint, sqs: endpoint },
      faults: parseFaultSpec("dynamodb:error=1;sqs:error=1"),
    });
    try {
      const before = injectedFaults.errors;
      const e = (await clients.dynamo
        .send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "k" } } }))
        .catch((x: unknown) => x)) as Record<string, unknown> & Error;
      expect([
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "ThrottlingException",
        "InternalServerError",
        "ServiceUnavailable",
      ]).toContain(e.name);
      expect(e.message).toContain("injected fault");
      // createAwsClients allows 4 attempts: the retry strategy took every one.
      expect((e.$metadata as { attempts?: number }).attempts).toBe(4);
      expect(injectedFaults.errors - before).toBe(4);
      expect([400, 500, 503]).toContain((e.$metadata as { httpStatusCode: number }).httpStatusCode);
      expect(["client", "server"]).toContain(e.$fault);

      const s = (await clients.sqs
        .send(new GetQueueUrlCommand({ QueueName: "q" }))
        .catch((x: unknown) => x)) as Record<string, unknown> & Error;
      expect(["RequestThrottled", "InternalError", "ServiceUnavailable"]).toContain(s.name);
      expect((s.$metadata as { attempts?: number }).attempts).toBe(4);
    } finally {
      clients.destroy();
    }
  }, 30_000);

  it("leave a service without faults alone", async () => {
    const clients = createAwsClients({
      region: "us-east-1",
      credentials: CREDENTIALS,
      endpoints: { sqs: endpoint },
      faults: parseFaultSpec("dynamodb:error=1"),
    });
    try {
      const e = (await clients.sqs
        .send(new GetQueueUrlCommand({ QueueName: "q" }))
        .catch((x: unknown) => x)) as Error;
      expect(e.message).not.toContain("injected fault");
    } finally {
      clients.destroy();
    }
  }, 30_000);
});
