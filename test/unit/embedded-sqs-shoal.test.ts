/**
 * Shoal's own SQS code on the embedded engine, as on the emulators: provisioning
 * (lib/standalone/provision.ts), SqsQueues' batching and coalescing (lib/queue/sqs-queues.ts, as
 * test/integration/queues.test.ts checks it), queue depths (lib/queue/task-queue-depths.ts) and
 * the poller's recovery after an outage (lib/standalone/poller.ts, as
 * test/integration/poller-recovery.test.ts checks it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";
import { EmbeddedSQSClient } from "../../lib/embedded/sqs-client.js";
import { type TaskMessage, taskEventsOf } from "../../lib/queue/messages.js";
import { SqsQueues } from "../../lib/queue/sqs-queues.js";
import { SqsTaskQueueDepths } from "../../lib/queue/task-queue-depths.js";
import { QueuePoller } from "../../lib/standalone/poller.js";
import {
  ensureEventsQueue,
  ensureTaskQueues,
  queueCreator,
} from "../../lib/standalone/provision.js";
import { until } from "../helpers/poll.js";

let dir: string;
let engine: EmbeddedSQSClient;
let sqs: SQSClient;
const counts = new Map<string, number>();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "embedded-sqs-shoal-"));
  engine = new EmbeddedSQSClient({ file: join(dir, "q.db") });
  engine.middlewareStack.add(
    (next, context) => async (args) => {
      counts.set(context.commandName, (counts.get(context.commandName) ?? 0) + 1);
      return next(args);
    },
    { step: "initialize", name: "count" },
  );
  sqs = engine as unknown as SQSClient;
});
afterAll(() => {
  engine.destroy();
  rmSync(dir, { recursive: true, force: true });
});

async function drain(url: string, max = 50): Promise<string[]> {
  const bodies: string[] = [];
  for (let i = 0; i < max; i++) {
    const r = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!r.Messages?.length) break;
    for (const m of r.Messages) {
      bodies.push(m.Body as string);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
    }
  }
  return bodies;
}

describe("SqsQueues on the embedded engine", () => {
  let queues: SqsQueues;
  let eventsUrl: string;
  beforeAll(async () => {
    eventsUrl = await ensureEventsQueue(sqs, "emb");
    // Idempotent, as standalone relies on at every start.
    expect(await ensureEventsQueue(sqs, "emb")).toBe(eventsUrl);
    await ensureTaskQueues(sqs, "emb", "default");
    queues = new SqsQueues(sqs, {
      prefix: "emb",
      eventsQueueUrl: eventsUrl,
      createQueues: queueCreator(sqs, "emb"),
      coalesce: true,
    });
  });

  it("splits task sends so no batch exceeds 1 MiB, creates a new group's queues, and counts them", async () => {
    const def = parseWorkflowDefinition({
      tasks: [{ code: "big", type: "SHELL", command: "x".repeat(60_000) }],
    });
    const task = def.tasks[0] as TaskMessage["task"];
    const messages = Array.from({ length: 10 }, (_, i) => ({
      message: {
        instanceId: "i",
        workflow: "w",
        version: 1,
        code: `big${i}`,
        attempt: 1,
        instancePriority: "MEDIUM" as const,
        dryRun: false,
        submittedAt: 0,
        task,
        params: { blob: "z".repeat(100_000) },
      },
      workerGroup: "bulk",
      delaySeconds: 0,
    }));
    await queues.sendTasks(messages);
    const depths = await new SqsTaskQueueDepths(sqs, "emb").depths("bulk");
    expect(depths).not.toBe("missing");
    if (depths !== "missing") expect(depths.visible.MEDIUM).toBe(10);
    expect(await new SqsTaskQueueDepths(sqs, "emb").depths("nobody")).toBe("missing");
    const url = await queues.taskQueueUrl("bulk", "MEDIUM");
    const got = (await drain(url)).map((b) => JSON.parse(b).code);
    expect(got.sort()).toEqual(messages.map((m) => m.message.code).sort());
  });

  it("coalesces events sent close together into few requests", async () => {
    const before = counts.get("SendMessageBatchCommand") ?? 0;
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        queues.sendToDispatcher([
          { kind: "task", instanceId: `g${i % 3}`, code: `c${i}`, attempt: 1, state: "SUCCESS" },
        ]),
      ),
    );
    expect((counts.get("SendMessageBatchCommand") ?? 0) - before).toBeLessThanOrEqual(6);
    const seen = new Set<string>();
    for (const b of await drain(eventsUrl))
      for (const e of taskEventsOf(JSON.parse(b))) seen.add(e.code);
    expect(seen.size).toBe(25);
  });
});

describe("a poller on the embedded engine after an outage", () => {
  it("hands a backed-off FIFO message over again at the first invocation that succeeds", async () => {
    const url = (
      await engine.send(
        new CreateQueueCommand({
          QueueName: "recovery.fifo",
          Attributes: {
            FifoQueue: "true",
            ContentBasedDeduplication: "true",
            VisibilityTimeout: "30",
          },
        }),
      )
    ).QueueUrl as string;
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
      expect(g1.at - back).toBeLessThan(4_000);
      expect(attempts.filter((a) => a.group === "g1" && !a.ok)).toHaveLength(4);
    } finally {
      await poller.stop(0);
    }
  });
});
