/**
 * Messages a poller gave back with a long backoff while their handler failed (the store out of
 * reach) go again as soon as the handler gets through, not after the backoff: the dispatcher's
 * FIFO group of an instance was blocked ~30 s after the DynamoDB emulator came back (chaos,
 * repeated emulator kills). lib/standalone/poller.ts `retryBackedOff`.
 */
import { CreateQueueCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulators, startEmulators } from "../../lib/standalone/emulators.js";
import { QueuePoller } from "../../lib/standalone/poller.js";
import { until } from "../helpers/poll.js";

describe("a poller after an outage", () => {
  let emulators: Emulators;
  let sqs: SQSClient;

  beforeAll(async () => {
    emulators = await startEmulators({ only: "sqs" });
    sqs = new SQSClient({
      endpoint: emulators.sqsEndpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "x", secretAccessKey: "x" },
    });
  });

  afterAll(async () => {
    sqs?.destroy();
    await emulators?.stop();
  });

  it("hands a backed-off FIFO message over again at the first invocation that succeeds", async () => {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: "recovery.fifo",
        Attributes: {
          FifoQueue: "true",
          ContentBasedDeduplication: "true",
          VisibilityTimeout: "30",
        },
      }),
    );
    const url = QueueUrl as string;
    let down = true;
    const attempts: Array<{ group: string; at: number; ok: boolean }> = [];
    const poller = new QueuePoller({
      sqs,
      queueUrls: [url],
      slots: 4,
      batchSize: 10,
      waitSeconds: 1,
      region: "us-east-1",
      fifo: true,
      handler: async (event: SQSEvent) => {
        for (const r of event.Records)
          attempts.push({ group: r.body, at: performance.now(), ok: !down });
        return {
          batchItemFailures: down
            ? event.Records.map((r) => ({ itemIdentifier: r.messageId }))
            : [],
        };
      },
    });
    poller.start();
    try {
      await sqs.send(
        new SendMessageCommand({ QueueUrl: url, MessageBody: "g1", MessageGroupId: "g1" }),
      );
      // Four failures: given back for 1, 2, 4, then 8 s.
      await until(() => attempts.length >= 4, { timeoutMs: 20_000, what: "four failed attempts" });
      down = false;
      const back = performance.now();
      await sqs.send(
        new SendMessageCommand({ QueueUrl: url, MessageBody: "g2", MessageGroupId: "g2" }),
      );
      const g1 = await until(() => attempts.find((a) => a.group === "g1" && a.ok), {
        timeoutMs: 15_000,
        what: "g1 handled after the store came back",
      });
      // Within a few seconds, not at the end of its 8 s backoff.
      expect(g1.at - back).toBeLessThan(4_000);
      expect(attempts.filter((a) => a.group === "g1" && !a.ok)).toHaveLength(4);
    } finally {
      await poller.stop(0);
    }
  });
});
