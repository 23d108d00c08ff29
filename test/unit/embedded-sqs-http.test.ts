/**
 * The embedded SQS engine on the wire (lib/embedded/sqs-http.ts): the real @aws-sdk/client-sqs
 * against a small HTTP server around `handleSqsHttp` (the SDK validates the MD5s and maps the
 * errors), and MD5OfMessageAttributes compared with fauxqs's on the same attributes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueUrlCommand,
  type MessageAttributeValue,
  QueueDoesNotExist,
  ReceiptHandleIsInvalid,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
  TooManyEntriesInBatchRequest,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { EmbeddedSQSClient } from "../../lib/embedded/sqs-client.js";
import { handleSqsHttp } from "../../lib/embedded/sqs-http.js";

let dir: string;
let engine: EmbeddedSQSClient;
let server: Server;
let sdk: SQSClient;

const credentials = { accessKeyId: "x", secretAccessKey: "x" };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "embedded-sqs-http-"));
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const out = await handleSqsHttp(
        engine,
        req.headers["x-amz-target"] as string | undefined,
        Buffer.concat(chunks).toString(),
      );
      res.writeHead(out.status, out.headers).end(out.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  engine = new EmbeddedSQSClient({ file: join(dir, "q.db"), urlBase: endpoint });
  sdk = new SQSClient({ endpoint, region: "us-east-1", credentials, useQueueUrlAsEndpoint: false });
});

afterAll(async () => {
  sdk?.destroy();
  engine?.destroy();
  await new Promise((r) => server?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const ATTRIBUTES: Record<string, MessageAttributeValue> = {
  kind: { DataType: "String", StringValue: "task" },
  size: { DataType: "Number", StringValue: "12" },
  blob: { DataType: "Binary", BinaryValue: new Uint8Array([0, 1, 254, 255]) },
  "custom.label": { DataType: "String.mine", StringValue: "é" },
};

describe("SQS over HTTP with the real SDK client", () => {
  it("creates, sends, receives and deletes, the SDK checking every MD5", async () => {
    const { QueueUrl } = await sdk.send(new CreateQueueCommand({ QueueName: "wire" }));
    expect(QueueUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/000000000000\/wire$/);
    const sent = await sdk.send(
      new SendMessageCommand({ QueueUrl, MessageBody: "hello ✓", MessageAttributes: ATTRIBUTES }),
    );
    const batch = await sdk.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: [
          { Id: "a", MessageBody: "a" },
          { Id: "b", MessageBody: "b", DelaySeconds: 2000 },
        ],
      }),
    );
    expect(batch.Successful?.map((s) => s.Id)).toEqual(["a"]);
    expect(batch.Failed?.[0]).toMatchObject({
      Id: "b",
      Code: "InvalidParameterValue",
      SenderFault: true,
    });
    const r = await sdk.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["All"],
      }),
    );
    expect(r.Messages?.map((m) => m.Body)).toEqual(["hello ✓", "a"]);
    const first = r.Messages?.[0];
    expect(first?.MessageId).toBe(sent.MessageId);
    expect(first?.MD5OfMessageAttributes).toBe(sent.MD5OfMessageAttributes);
    expect(first?.MessageAttributes?.blob?.BinaryValue).toEqual(new Uint8Array([0, 1, 254, 255]));
    expect(first?.Attributes?.ApproximateReceiveCount).toBe("1");
    const del = await sdk.send(
      new DeleteMessageBatchCommand({
        QueueUrl,
        Entries: (r.Messages ?? []).map((m, i) => ({ Id: `${i}`, ReceiptHandle: m.ReceiptHandle })),
      }),
    );
    expect(del.Successful).toHaveLength(2);
  });

  it("throws the SDK's error classes", async () => {
    const missing = await sdk.send(new GetQueueUrlCommand({ QueueName: "none" })).catch((e) => e);
    expect(missing).toBeInstanceOf(QueueDoesNotExist);
    expect(missing.$metadata.httpStatusCode).toBe(400);
    const { QueueUrl } = await sdk.send(new CreateQueueCommand({ QueueName: "errors" }));
    const tooMany = await sdk
      .send(
        new SendMessageBatchCommand({
          QueueUrl,
          Entries: Array.from({ length: 11 }, (_, i) => ({ Id: `${i}`, MessageBody: "x" })),
        }),
      )
      .catch((e) => e);
    expect(tooMany).toBeInstanceOf(TooManyEntriesInBatchRequest);
    const bad = await sdk
      .send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 20 }))
      .catch((e) => e);
    expect(bad.name).toBe("InvalidParameterValue");
    const handle = await sdk
      .send(
        new DeleteMessageBatchCommand({ QueueUrl, Entries: [{ Id: "x", ReceiptHandle: "junk" }] }),
      )
      .catch((e) => e);
    expect(handle.Failed?.[0]?.Code).toBe("ReceiptHandleIsInvalid");
    const single = await sdk
      .send(
        new ChangeMessageVisibilityCommand({
          QueueUrl,
          ReceiptHandle: "junk",
          VisibilityTimeout: 1,
        }),
      )
      .catch((e) => e);
    expect(single).toBeInstanceOf(ReceiptHandleIsInvalid);
  });

  it("computes MD5OfMessageAttributes as fauxqs does", async () => {
    const fauxqs = new SQSClient({
      endpoint: inject("sqsEndpoint"),
      region: "us-east-1",
      credentials,
    });
    try {
      const { QueueUrl } = await fauxqs.send(
        new CreateQueueCommand({ QueueName: `md5-${Date.now()}` }),
      );
      const theirs = await fauxqs.send(
        new SendMessageCommand({ QueueUrl, MessageBody: "m", MessageAttributes: ATTRIBUTES }),
      );
      const mine = await engine.send(
        new SendMessageCommand({
          QueueUrl: (await engine.send(new CreateQueueCommand({ QueueName: "md5" }))).QueueUrl,
          MessageBody: "m",
          MessageAttributes: ATTRIBUTES,
        }),
      );
      expect(mine.MD5OfMessageAttributes).toBe(theirs.MD5OfMessageAttributes);
    } finally {
      fauxqs.destroy();
    }
  });
});
