/** SqsQueues against fauxqs through the real AWS SDK: batching limits and coalescing. */
import { beforeAll, describe, expect, it } from "vitest";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";
import { type TaskMessage, taskEventsOf } from "../../lib/queue/messages.js";
import { SqsQueues } from "../../lib/queue/sqs-queues.js";
import { queueCreator } from "../../lib/standalone/provision.js";
import { type TestAws, testClients, useTestAws } from "../helpers/aws-env.js";
import { receiveRecords } from "../helpers/sqs.js";

describe("SqsQueues", () => {
  let aws: TestAws;
  let queues: SqsQueues;
  beforeAll(async () => {
    aws = await useTestAws();
    queues = new SqsQueues(testClients().sqs, {
      prefix: aws.config.prefix,
      eventsQueueUrl: aws.eventsUrl,
      createQueues: queueCreator(testClients().sqs, aws.config.prefix),
      coalesce: true,
    });
  });

  it("splits task sends so no batch exceeds SQS's 1 MiB, and creates a new group's queues", async () => {
    const def = parseWorkflowDefinition({
      tasks: [
        {
          code: "big",
          type: "SHELL",
          command: "x".repeat(60_000),
          params: { p: "y".repeat(4000) },
        },
      ],
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
    const url = await queues.taskQueueUrl("bulk", "MEDIUM");
    const got: string[] = [];
    for (let i = 0; i < 5 && got.length < 10; i++) {
      got.push(...(await receiveRecords(url)).map((r) => JSON.parse(r.body).code));
    }
    expect(got.sort()).toEqual(messages.map((m) => m.message.code).sort());
  });

  it("coalesces events sent close together into few requests, each call settling", async () => {
    const before = testClients().counter.counts.get("SQS.SendMessageBatch") ?? 0;
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        queues.sendToDispatcher([
          { kind: "task", instanceId: `g${i % 3}`, code: `c${i}`, attempt: 1, state: "SUCCESS" },
        ]),
      ),
    );
    const used = (testClients().counter.counts.get("SQS.SendMessageBatch") ?? 0) - before;
    expect(used).toBeLessThanOrEqual(6);
    const seen = new Set<string>();
    for (let i = 0; i < 20 && seen.size < 25; i++) {
      const recs = await receiveRecords(aws.eventsUrl, { waitSeconds: 0 });
      // Events of one instance that left together arrive packed in one message.
      for (const r of recs) for (const e of taskEventsOf(JSON.parse(r.body))) seen.add(e.code);
      const { deleteRecords } = await import("../helpers/sqs.js");
      await deleteRecords(aws.eventsUrl, recs);
    }
    expect(seen.size).toBe(25);
  });
});
