/**
 * The embedded SQS engine (lib/embedded/sqs-*.ts): FIFO queues (order within a group, group
 * locking, deduplication), dead-letter redrive, retention, and long polling in one process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedSQSClient } from "../../lib/embedded/sqs-client.js";

let dir: string;
let file: string;
/** The engine, typed as the SDK client Shoal takes it for. */
let sqs: SQSClient;
let n = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "embedded-sqs-fifo-"));
  file = join(dir, "q.db");
  sqs = new EmbeddedSQSClient({ file }) as unknown as SQSClient;
});
afterAll(() => {
  sqs.destroy();
  rmSync(dir, { recursive: true, force: true });
});

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).name;
  }
  return "no error";
}

async function queue(attrs: Record<string, string> = {}): Promise<string> {
  const fifo = attrs.FifoQueue === "true";
  const r = await sqs.send(
    new CreateQueueCommand({ QueueName: `q${++n}${fifo ? ".fifo" : ""}`, Attributes: attrs }),
  );
  return r.QueueUrl as string;
}

const arnOf = async (url: string) =>
  (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] })))
    .Attributes?.QueueArn as string;

async function receive(
  url: string,
  max = 10,
  extra: Record<string, unknown> = {},
): Promise<Message[]> {
  const r = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: max,
      MessageSystemAttributeNames: ["All"],
      ...extra,
    }),
  );
  return r.Messages ?? [];
}

async function remove(url: string, msgs: Message[]): Promise<void> {
  await sqs.send(
    new DeleteMessageBatchCommand({
      QueueUrl: url,
      Entries: msgs.map((m, i) => ({ Id: `${i}`, ReceiptHandle: m.ReceiptHandle })),
    }),
  );
}

const FIFO = { FifoQueue: "true", ContentBasedDeduplication: "true" };

describe("FIFO queues", () => {
  it("keeps a group's order and hands out nothing more of a group while one of its messages is in flight", async () => {
    const url = await queue(FIFO);
    const send = (body: string, group: string) =>
      sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageGroupId: group }));
    for (const [b, g] of [
      ["1", "g1"],
      ["a", "g2"],
      ["2", "g1"],
      ["b", "g2"],
      ["3", "g1"],
    ])
      await send(b as string, g as string);
    const first = await receive(url, 2);
    expect(first.map((m) => m.Body)).toEqual(["1", "2"]);
    expect(first[0]?.Attributes).toMatchObject({ MessageGroupId: "g1" });
    expect(first[0]?.Attributes?.MessageDeduplicationId).toMatch(/^[0-9a-f]{64}$/);
    expect(BigInt(first[1]?.Attributes?.SequenceNumber as string)).toBeGreaterThan(
      BigInt(first[0]?.Attributes?.SequenceNumber as string),
    );
    // g1 is locked by 1 and 2: only g2 comes.
    const second = await receive(url);
    expect(second.map((m) => m.Body)).toEqual(["a", "b"]);
    // 1 visible again, 2 still in flight: g1 stays locked.
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: first[0]?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    expect(await receive(url)).toEqual([]);
    await remove(url, [first[1] as Message, ...second]);
    // 1 comes again before 3.
    expect((await receive(url)).map((m) => m.Body)).toEqual(["1", "3"]);
  });

  it("deduplicates within the interval, by id or by content, per queue or per group", async () => {
    const url = await queue(FIFO);
    const a = await sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: "same", MessageGroupId: "g" }),
    );
    const b = await sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: "same", MessageGroupId: "h" }),
    );
    expect(b.MessageId).toBe(a.MessageId);
    expect(b.SequenceNumber).toBe(a.SequenceNumber);
    const perGroup = await queue({ FifoQueue: "true", DeduplicationScope: "messageGroup" });
    for (const g of ["g", "h", "h"])
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: perGroup,
          MessageBody: `to ${g}`,
          MessageGroupId: g,
          MessageDeduplicationId: "d1",
        }),
      );
    expect((await receive(perGroup)).map((m) => m.Body)).toEqual(["to g", "to h"]);
    expect((await receive(url)).map((m) => m.Body)).toEqual(["same"]);
  });

  it("requires a group, a deduplication id without content-based deduplication, and no per-message delay", async () => {
    const url = await queue({ FifoQueue: "true" });
    expect(
      await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "x" }))),
    ).toBe("MissingParameter");
    expect(
      await failure(
        sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "x", MessageGroupId: "g" })),
      ),
    ).toBe("InvalidParameterValue");
    const r = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "ok", MessageBody: "x", MessageGroupId: "g", MessageDeduplicationId: "1" },
          {
            Id: "late",
            MessageBody: "y",
            MessageGroupId: "g",
            MessageDeduplicationId: "2",
            DelaySeconds: 5,
          },
        ],
      }),
    );
    expect(r.Successful?.map((s) => s.Id)).toEqual(["ok"]);
    expect(r.Failed?.map((f) => [f.Id, f.Code])).toEqual([["late", "InvalidParameterValue"]]);
  });
});

describe("dead-letter queues and retention", () => {
  it("moves a message received maxReceiveCount times to the dead-letter queue on the next receive", async () => {
    const dlq = await queue();
    const url = await queue({
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: await arnOf(dlq), maxReceiveCount: 2 }),
    });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "poison" }));
    expect(await receive(url, 1, { VisibilityTimeout: 0 })).toHaveLength(1);
    expect(await receive(url, 1, { VisibilityTimeout: 0 })).toHaveLength(1);
    expect(await receive(url, 1, { VisibilityTimeout: 0 })).toEqual([]);
    const dead = await receive(dlq);
    expect(dead.map((m) => m.Body)).toEqual(["poison"]);
    expect(dead[0]?.Attributes?.DeadLetterQueueSourceArn).toBe(await arnOf(url));
  });

  it("keeps a FIFO group's order when its messages move to the dead-letter queue", async () => {
    const dlq = await queue({ FifoQueue: "true" });
    const url = await queue({
      ...FIFO,
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: await arnOf(dlq), maxReceiveCount: 1 }),
    });
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: ["1", "2", "3"].map((b) => ({ Id: b, MessageBody: b, MessageGroupId: "g" })),
      }),
    );
    expect((await receive(url, 10, { VisibilityTimeout: 0 })).map((m) => m.Body)).toEqual([
      "1",
      "2",
      "3",
    ]);
    expect(await receive(url)).toEqual([]);
    expect((await receive(dlq)).map((m) => m.Body)).toEqual(["1", "2", "3"]);
  });

  it("drops messages past the retention period", async () => {
    const url = await queue({ MessageRetentionPeriod: "60" });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "old" }));
    const later = new EmbeddedSQSClient({ file, now: () => Date.now() + 61_000 });
    try {
      const counts = await later.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ["ApproximateNumberOfMessages"],
        }),
      );
      expect(counts.Attributes?.ApproximateNumberOfMessages).toBe("0");
      expect(
        (await later.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages,
      ).toBeUndefined();
    } finally {
      later.destroy();
    }
    expect(await receive(url)).toEqual([]);
  });
});

describe("long polling", () => {
  it("answers a waiting receive as soon as a message is sent", async () => {
    const url = await queue();
    const t0 = performance.now();
    const waiting = receive(url, 10, { WaitTimeSeconds: 10 });
    setImmediate(
      () => void sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "now" })),
    );
    expect((await waiting).map((m) => m.Body)).toEqual(["now"]);
    expect(performance.now() - t0).toBeLessThan(500);
  });

  it("answers when a delayed or invisible message becomes visible, or when visibility is changed", async () => {
    const url = await queue();
    await sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: "later", DelaySeconds: 1 }),
    );
    const t0 = performance.now();
    const got = await receive(url, 10, { WaitTimeSeconds: 10, VisibilityTimeout: 1 });
    expect(got.map((m) => m.Body)).toEqual(["later"]);
    expect(performance.now() - t0).toBeGreaterThan(900);
    expect(performance.now() - t0).toBeLessThan(3_000);
    const t1 = performance.now();
    const held = await receive(url, 10, { WaitTimeSeconds: 10, VisibilityTimeout: 60 });
    expect(held.map((m) => m.Body)).toEqual(["later"]);
    expect(performance.now() - t1).toBeLessThan(3_000);
    // Made visible again while another receive waits: that receive gets it at once.
    const t2 = performance.now();
    const waiting = receive(url, 10, { WaitTimeSeconds: 10 });
    setImmediate(
      () =>
        void sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: url,
            ReceiptHandle: held[0]?.ReceiptHandle,
            VisibilityTimeout: 0,
          }),
        ),
    );
    expect((await waiting).map((m) => m.Body)).toEqual(["later"]);
    expect(performance.now() - t2).toBeLessThan(500);
  });

  it("ends waits when the client is destroyed", async () => {
    const url = await queue();
    const other = new EmbeddedSQSClient({ file });
    const t0 = performance.now();
    const waiting = other.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 }));
    setImmediate(() => other.destroy());
    expect((await waiting).Messages).toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(1_000);
  });
});
