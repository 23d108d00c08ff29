/**
 * The embedded SQS engine (lib/embedded/sqs-*.ts) through EmbeddedSQSClient with the SDK's
 * commands: queues, sending, receiving, deleting and visibility, as SQS documents them.
 */

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  PurgeQueueCommand,
  type QueueAttributeName,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedSQSClient } from "../../lib/embedded/sqs-client.js";

let dir: string;
/** The engine, typed as the SDK client Shoal takes it for. */
let sqs: SQSClient;
let n = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "embedded-sqs-"));
  sqs = new EmbeddedSQSClient({
    file: join(dir, "q.db"),
    region: "eu-west-1",
  }) as unknown as SQSClient;
});
afterAll(() => {
  sqs.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** The error name a call fails with. */
async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).name;
  }
  return "no error";
}

async function queue(attrs: Record<string, string> = {}, suffix = ""): Promise<string> {
  const r = await sqs.send(
    new CreateQueueCommand({ QueueName: `q${++n}${suffix}`, Attributes: attrs }),
  );
  return r.QueueUrl as string;
}

const attrsOf = async (url: string, names: string[] = ["All"]) =>
  (
    await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: names as QueueAttributeName[],
      }),
    )
  ).Attributes ?? {};

describe("queues", () => {
  it("creates a queue idempotently and refuses the name with other attributes", async () => {
    const a = await sqs.send(
      new CreateQueueCommand({ QueueName: "same", Attributes: { VisibilityTimeout: "40" } }),
    );
    expect(a.QueueUrl).toBe("http://sqs.eu-west-1.localhost/000000000000/same");
    const b = await sqs.send(
      new CreateQueueCommand({ QueueName: "same", Attributes: { VisibilityTimeout: "40" } }),
    );
    expect(b.QueueUrl).toBe(a.QueueUrl);
    expect(
      await failure(
        sqs.send(
          new CreateQueueCommand({ QueueName: "same", Attributes: { VisibilityTimeout: "41" } }),
        ),
      ),
    ).toBe("QueueNameExists");
  });

  it("checks names and attribute values", async () => {
    expect(await failure(sqs.send(new CreateQueueCommand({ QueueName: "bad name" })))).toBe(
      "InvalidParameterValue",
    );
    expect(
      await failure(
        sqs.send(
          new CreateQueueCommand({ QueueName: "nofifo", Attributes: { FifoQueue: "true" } }),
        ),
      ),
    ).toBe("InvalidParameterValue");
    expect(await failure(sqs.send(new CreateQueueCommand({ QueueName: "x.fifo" })))).toBe(
      "InvalidParameterValue",
    );
    expect(
      await failure(
        sqs.send(
          new CreateQueueCommand({ QueueName: "v", Attributes: { VisibilityTimeout: "43201" } }),
        ),
      ),
    ).toBe("InvalidAttributeValue");
    expect(
      await failure(
        sqs.send(
          new CreateQueueCommand({
            QueueName: "v",
            Attributes: { Nope: "1" } as Record<string, string>,
          }),
        ),
      ),
    ).toBe("InvalidAttributeName");
    expect(
      await failure(
        sqs.send(
          new CreateQueueCommand({
            QueueName: "v",
            Attributes: {
              RedrivePolicy: JSON.stringify({
                deadLetterTargetArn: "arn:aws:sqs:eu-west-1:000000000000:missing",
                maxReceiveCount: 3,
              }),
            },
          }),
        ),
      ),
    ).toBe("InvalidAttributeValue");
  });

  it("finds queues by name, by any URL ending in account/name, and lists them by prefix in pages", async () => {
    for (const name of ["list-a", "list-b", "list-c"])
      await sqs.send(new CreateQueueCommand({ QueueName: name }));
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: "list-b" }));
    expect(QueueUrl).toMatch(/\/000000000000\/list-b$/);
    expect(await failure(sqs.send(new GetQueueUrlCommand({ QueueName: "nope" })))).toBe(
      "QueueDoesNotExist",
    );
    const other = "http://localhost:4566/000000000000/list-b";
    expect((await attrsOf(other, ["QueueArn"])).QueueArn).toBe(
      "arn:aws:sqs:eu-west-1:000000000000:list-b",
    );
    const all = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: "list-" }));
    expect(all.QueueUrls?.map((u) => u.split("/").pop())).toEqual(["list-a", "list-b", "list-c"]);
    const p1 = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: "list-", MaxResults: 2 }));
    expect(p1.QueueUrls).toHaveLength(2);
    const p2 = await sqs.send(
      new ListQueuesCommand({ QueueNamePrefix: "list-", MaxResults: 2, NextToken: p1.NextToken }),
    );
    expect(p2.QueueUrls?.map((u) => u.split("/").pop())).toEqual(["list-c"]);
    expect(p2.NextToken).toBeUndefined();
    expect(
      (await sqs.send(new ListQueuesCommand({ QueueNamePrefix: "zzz" }))).QueueUrls,
    ).toBeUndefined();
  });

  it("reports counts and settings, changes settings, purges and deletes", async () => {
    const url = await queue({ DelaySeconds: "0" });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "a" }));
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "b" }));
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "c", DelaySeconds: 60 }));
    await sqs.send(new ReceiveMessageCommand({ QueueUrl: url }));
    const a = await attrsOf(url);
    expect(a).toMatchObject({
      ApproximateNumberOfMessages: "1",
      ApproximateNumberOfMessagesNotVisible: "1",
      ApproximateNumberOfMessagesDelayed: "1",
      VisibilityTimeout: "30",
      MessageRetentionPeriod: "345600",
      MaximumMessageSize: "1048576",
      ReceiveMessageWaitTimeSeconds: "0",
    });
    expect(a.FifoQueue).toBeUndefined();
    expect(await attrsOf(url, ["ApproximateNumberOfMessages"])).toEqual({
      ApproximateNumberOfMessages: "1",
    });
    expect(await failure(attrsOf(url, ["Bogus"]))).toBe("InvalidAttributeName");
    await sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: "5" } }),
    );
    expect((await attrsOf(url, ["VisibilityTimeout"])).VisibilityTimeout).toBe("5");
    expect(
      await failure(
        sqs.send(
          new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { FifoQueue: "true" } }),
        ),
      ),
    ).toBe("InvalidAttributeName");
    await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    expect((await attrsOf(url)).ApproximateNumberOfMessagesDelayed).toBe("0");
    await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    expect(await failure(attrsOf(url))).toBe("QueueDoesNotExist");
    expect(
      await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "x" }))),
    ).toBe("QueueDoesNotExist");
  });
});

describe("messages", () => {
  it("answers MD5s as SQS computes them and gives back attributes asked for", async () => {
    const url = await queue();
    const sent = await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: "héllo",
        MessageAttributes: {
          b: { DataType: "Binary", BinaryValue: new Uint8Array([1, 2, 3]) },
          a: { DataType: "String", StringValue: "x" },
          "n.x": { DataType: "Number", StringValue: "42" },
        },
      }),
    );
    expect(sent.MD5OfMessageBody).toBe(createHash("md5").update("héllo").digest("hex"));
    expect(sent.MD5OfMessageAttributes).toMatch(/^[0-9a-f]{32}$/);
    const r = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MessageAttributeNames: ["a", "n.*"],
        MessageSystemAttributeNames: ["SentTimestamp", "ApproximateReceiveCount"],
      }),
    );
    const m = r.Messages?.[0];
    expect(m?.Body).toBe("héllo");
    expect(m?.MessageId).toBe(sent.MessageId);
    expect(m?.MD5OfBody).toBe(sent.MD5OfMessageBody);
    expect(Object.keys(m?.MessageAttributes ?? {}).sort()).toEqual(["a", "n.x"]);
    expect(m?.MD5OfMessageAttributes).toBe(sent.MD5OfMessageAttributes);
    expect(Object.keys(m?.Attributes ?? {}).sort()).toEqual([
      "ApproximateReceiveCount",
      "SentTimestamp",
    ]);
    expect(m?.Attributes?.ApproximateReceiveCount).toBe("1");
  });

  it("refuses bad messages: empty, too large, bad characters, bad delay", async () => {
    const url = await queue({ MaximumMessageSize: "1024" });
    expect(
      await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "" }))),
    ).toBe("MissingParameter");
    expect(
      await failure(
        sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "x".repeat(1025) })),
      ),
    ).toBe("InvalidParameterValue");
    expect(
      await failure(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "a\u0001" }))),
    ).toBe("InvalidMessageContents");
    expect(
      await failure(
        sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "x", DelaySeconds: 901 })),
      ),
    ).toBe("InvalidParameterValue");
    expect(
      await failure(
        sqs.send(
          new SendMessageCommand({ QueueUrl: url, MessageBody: "x", MessageDeduplicationId: "d" }),
        ),
      ),
    ).toBe("InvalidParameterValue");
  });

  it("checks batches as a whole and reports bad entries one by one", async () => {
    const url = await queue();
    const send = (Entries: Array<{ Id: string; MessageBody: string; DelaySeconds?: number }>) =>
      sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries }));
    expect(await failure(send([]))).toBe("EmptyBatchRequest");
    expect(
      await failure(send(Array.from({ length: 11 }, (_, i) => ({ Id: `${i}`, MessageBody: "x" })))),
    ).toBe("TooManyEntriesInBatchRequest");
    expect(
      await failure(
        send([
          { Id: "a", MessageBody: "x" },
          { Id: "a", MessageBody: "y" },
        ]),
      ),
    ).toBe("BatchEntryIdsNotDistinct");
    expect(await failure(send([{ Id: "a b", MessageBody: "x" }]))).toBe("InvalidBatchEntryId");
    expect(
      await failure(
        send(
          Array.from({ length: 2 }, (_, i) => ({ Id: `${i}`, MessageBody: "x".repeat(600_000) })),
        ),
      ),
    ).toBe("BatchRequestTooLong");
    const r = await send([
      { Id: "ok", MessageBody: "x" },
      { Id: "late", MessageBody: "y", DelaySeconds: 1000 },
    ]);
    expect(r.Successful?.map((s) => s.Id)).toEqual(["ok"]);
    expect(r.Failed).toEqual([
      expect.objectContaining({ Id: "late", SenderFault: true, Code: "InvalidParameterValue" }),
    ]);
  });

  it("receives 1..10 at a time, with a visibility timeout of the request's or the queue's", async () => {
    const url = await queue({ VisibilityTimeout: "1" });
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `${i}`, MessageBody: `m${i}` })),
      }),
    );
    expect(
      await failure(
        sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 11 })),
      ),
    ).toBe("InvalidParameterValue");
    expect(
      await failure(sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 21 }))),
    ).toBe("InvalidParameterValue");
    const first = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 4 }),
    );
    expect(first.Messages).toHaveLength(4);
    const rest = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 60 }),
    );
    expect(rest.Messages).toHaveLength(6);
    // The first four come back after their 1 s (the queue's), received a second time.
    const again = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 5,
        MessageSystemAttributeNames: ["All"],
      }),
    );
    expect(again.Messages?.map((m) => m.Body).sort()).toEqual(
      first.Messages?.map((m) => m.Body).sort(),
    );
    expect(again.Messages?.every((m) => m.Attributes?.ApproximateReceiveCount === "2")).toBe(true);
  });

  it("deletes with the latest receipt handle only, and refuses malformed handles", async () => {
    const url = await queue();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "d" }));
    const r1 = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 0 }));
    const r2 = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 30 }));
    const old = r1.Messages?.[0]?.ReceiptHandle as string;
    const latest = r2.Messages?.[0]?.ReceiptHandle as string;
    expect(old).not.toBe(latest);
    expect(
      await failure(
        sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: "garbage" })),
      ),
    ).toBe("ReceiptHandleIsInvalid");
    // An earlier handle: success, but the message stays (DeleteMessage's documentation).
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: old }));
    expect((await attrsOf(url)).ApproximateNumberOfMessagesNotVisible).toBe("1");
    const batch = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "good", ReceiptHandle: latest },
          { Id: "bad", ReceiptHandle: "nope" },
        ],
      }),
    );
    expect(batch.Successful).toEqual([{ Id: "good" }]);
    expect(batch.Failed?.[0]).toMatchObject({ Id: "bad", Code: "ReceiptHandleIsInvalid" });
    expect((await attrsOf(url)).ApproximateNumberOfMessagesNotVisible).toBe("0");
    // Deleting again: the message is gone, and SQS answers success.
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: latest }));
  });

  it("changes visibility of messages in flight only, within 0..43200 s", async () => {
    const url = await queue();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "v" }));
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 60 }));
    const handle = r.Messages?.[0]?.ReceiptHandle as string;
    const change = (VisibilityTimeout: number) =>
      sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: url,
          ReceiptHandle: handle,
          VisibilityTimeout,
        }),
      );
    expect(await failure(change(43_201))).toBe("InvalidParameterValue");
    await change(0);
    expect(await failure(change(10))).toBe("MessageNotInflight");
    const again = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url }));
    expect(again.Messages?.[0]?.Body).toBe("v");
    const h2 = again.Messages?.[0]?.ReceiptHandle as string;
    const batch = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: "new", ReceiptHandle: h2, VisibilityTimeout: 120 },
          { Id: "old", ReceiptHandle: handle, VisibilityTimeout: 120 },
        ],
      }),
    );
    expect(batch.Successful).toEqual([{ Id: "new" }]);
    expect(batch.Failed?.[0]).toMatchObject({ Id: "old", Code: "MessageNotInflight" });
  });
});
