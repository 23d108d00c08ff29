/**
 * The emulators scenario's SQS figures (fauxqs): the task queue (standard) one message at a
 * time and in batches of 10, the events queue (FIFO), how many messages of one FIFO group one
 * receive returns, and how fast a waiting long poll answers a send.
 */
import { setTimeout as delay } from "node:timers/promises";
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from "@aws-sdk/client-sqs";
import { type MeasureContext, timeEach } from "./emulators-measure.js";
import { summarize } from "./stats.js";

/** A task message about the size the dispatcher sends. */
const body = JSON.stringify({
  instanceId: "inst-1",
  code: "x".repeat(20),
  task: { type: "SHELL", command: "true" },
});

/**
 * The task queue (standard): send, short receive and delete of one message, then of 10 per
 * request (what one request of 10 costs, to weigh batching).
 */
export async function measureSqsStandard(ctx: MeasureContext): Promise<void> {
  const { sqs, taskUrl, N, B, add } = ctx;
  add(
    "SQS SendMessageBatch 1 msg (standard)",
    await timeEach(N, (i) =>
      sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: taskUrl,
          Entries: [{ Id: "0", MessageBody: `${body}${i}` }],
        }),
      ),
    ),
  );
  const handles: string[] = [];
  add(
    "SQS ReceiveMessage short, 1 available",
    await timeEach(N, async () => {
      const r = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: taskUrl,
          MaxNumberOfMessages: 1,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ["All"],
        }),
      );
      for (const m of r.Messages ?? []) handles.push(m.ReceiptHandle as string);
    }),
  );
  add(
    "SQS DeleteMessageBatch 1 msg",
    await timeEach(Math.min(N, handles.length), (i) =>
      sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: taskUrl,
          Entries: [{ Id: "0", ReceiptHandle: handles[i] as string }],
        }),
      ),
    ),
  );
  // Batched forms: what one request of 10 (25) items costs, to weigh batching.
  add(
    "SQS SendMessageBatch 10 msgs (standard)",
    await timeEach(B, (i) =>
      sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: taskUrl,
          Entries: Array.from({ length: 10 }, (_, k) => ({
            Id: String(k),
            MessageBody: `${body}${i}.${k}`,
          })),
        }),
      ),
    ),
  );
  const handles10: string[][] = [];
  add(
    "SQS ReceiveMessage short, 10 returned",
    await timeEach(B, async () => {
      const r = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: taskUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ["All"],
        }),
      );
      handles10.push((r.Messages ?? []).map((m) => m.ReceiptHandle as string));
    }),
  );
  add(
    "SQS DeleteMessageBatch 10 msgs",
    await timeEach(handles10.length, (i) =>
      sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: taskUrl,
          Entries: (handles10[i] ?? []).map((h, k) => ({ Id: String(k), ReceiptHandle: h })),
        }),
      ),
    ),
  );
}

/** The events queue (FIFO): send one message, receive 10 of one group; then a long poll's wake-up. */
export async function measureSqsFifoAndWakeUp(ctx: MeasureContext): Promise<void> {
  const { sqs, eventsUrl, taskUrl, N, store, rows, add } = ctx;
  add(
    "SQS SendMessageBatch 1 msg (FIFO events)",
    await timeEach(N, (i) =>
      sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: eventsUrl,
          Entries: [
            {
              Id: "0",
              MessageBody: `${body}${i}`,
              MessageGroupId: "inst-1",
              MessageDeduplicationId: `d${i}`,
            },
          ],
        }),
      ),
    ),
  );
  // FIFO: how many messages of one group does one receive return? (Real SQS: up to 10.)
  const fifoBatch: number[] = [];
  for (let k = 0; k < 20; k++) {
    const r = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: eventsUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
      }),
    );
    fifoBatch.push(r.Messages?.length ?? 0);
    const entries = (r.Messages ?? []).map((m, i) => ({
      Id: String(i),
      ReceiptHandle: m.ReceiptHandle as string,
    }));
    if (entries.length)
      await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: eventsUrl, Entries: entries }));
  }
  rows.push({
    what: `SQS FIFO receive of 10 from one group (${N} queued) → messages returned`,
    store,
    s: summarize(fifoBatch),
  });
  // Long-poll wake-up: a waiting receive answers once a message is sent.
  const wake: number[] = [];
  for (let k = 0; k < 50; k++) {
    const waiting = sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: taskUrl,
        MaxNumberOfMessages: 1,
        WaitTimeSeconds: 5,
      }),
    );
    await delay(5);
    const t = performance.now();
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: taskUrl,
        Entries: [{ Id: "0", MessageBody: body }],
      }),
    );
    const r = await waiting;
    wake.push(performance.now() - t);
    for (const m of r.Messages ?? [])
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: taskUrl,
          Entries: [{ Id: "0", ReceiptHandle: m.ReceiptHandle as string }],
        }),
      );
  }
  add("SQS send → waiting long poll returns", wake);
}
