/**
 * The embedded SQS engine (lib/embedded/sqs-*.ts) where long polls end and wake: a destroyed or
 * aborted receive takes nothing, deleting a FIFO message wakes a waiting receive, a receive
 * woken by another connection's commit reads before it locks, and the FIFO group table
 * (sqs_fifo_groups) keeps group order and locks, also in a file made before it existed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedSQSClient } from "../../lib/embedded/sqs-client.js";
import { until } from "../helpers/poll.js";

const { DatabaseSync } = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite");

let dir: string;
let file: string;
/** The engine, typed as the SDK client Shoal takes it for. */
let sqs: SQSClient;
let n = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "embedded-sqs-review-"));
  file = join(dir, "q.db");
  sqs = new EmbeddedSQSClient({ file }) as unknown as SQSClient;
});
afterAll(() => {
  sqs.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const FIFO = { FifoQueue: "true", ContentBasedDeduplication: "true" };

async function queue(fifo: boolean, client: SQSClient = sqs): Promise<string> {
  const r = await client.send(
    new CreateQueueCommand({
      QueueName: `r${++n}${fifo ? ".fifo" : ""}`,
      Attributes: fifo ? FIFO : {},
    }),
  );
  return r.QueueUrl as string;
}

async function send(url: string, bodies: string[], group?: string): Promise<void> {
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: url,
      Entries: bodies.map((b, i) => ({
        Id: String(i),
        MessageBody: b,
        ...(group ? { MessageGroupId: group } : {}),
      })),
    }),
  );
}

async function receive(url: string, extra: Record<string, unknown> = {}): Promise<Message[]> {
  const r = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, ...extra }),
  );
  return r.Messages ?? [];
}

async function counts(url: string): Promise<{ visible: string; hidden: string }> {
  const a = (
    await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    )
  ).Attributes;
  return {
    visible: a?.ApproximateNumberOfMessages as string,
    hidden: a?.ApproximateNumberOfMessagesNotVisible as string,
  };
}

/** Resolves once `client` has a receive waiting (its first look found nothing). */
function waiting(client: EmbeddedSQSClient): Promise<true> {
  const waits = (client as unknown as { waits: Set<unknown> }).waits;
  return until(() => waits.size > 0, { intervalMs: 5, what: "a waiting receive" });
}

async function errorName(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).name;
  }
  return "no error";
}

describe("a long poll that is ended", () => {
  it("takes nothing after its client is destroyed, even when a message becomes receivable at that moment", async () => {
    const url = await queue(true);
    await send(url, ["m1", "m2"], "g");
    // A's clock can jump: m1 (in flight for 30 s) is due again by A's clock at destroy time.
    let clock = Date.now();
    const a = new EmbeddedSQSClient({ file, now: () => clock });
    const [m1] = (await a.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages ?? [];
    expect(m1?.Body).toBe("m1");
    const poll = a.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 5 }));
    await waiting(a);
    clock += 60_000;
    a.destroy();
    expect((await poll).Messages).toBeUndefined();
    // m1 is still under the first receive: its handle deletes it, and m2 comes next.
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m1?.ReceiptHandle }));
    expect((await receive(url)).map((m) => m.Body)).toEqual(["m2"]);
  });

  it("throws AbortError when its abortSignal aborts, and takes nothing", async () => {
    const url = await queue(false);
    const a = new EmbeddedSQSClient({ file });
    const controller = new AbortController();
    const t0 = performance.now();
    const poll = a.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 10 }), {
      abortSignal: controller.signal,
    });
    await waiting(a);
    controller.abort();
    expect(await errorName(poll)).toBe("AbortError");
    expect(performance.now() - t0).toBeLessThan(2_000);
    // Already aborted: nothing is taken although a message is there.
    await send(url, ["kept"]);
    expect(
      await errorName(
        a.send(new ReceiveMessageCommand({ QueueUrl: url }), { abortSignal: controller.signal }),
      ),
    ).toBe("AbortError");
    expect(await counts(url)).toEqual({ visible: "1", hidden: "0" });
    // Aborted at the moment a message becomes receivable (by its clock): nothing is taken.
    let clock = Date.now();
    const b = new EmbeddedSQSClient({ file, now: () => clock });
    const [held] = (await b.send(new ReceiveMessageCommand({ QueueUrl: url }))).Messages ?? [];
    expect(held?.Body).toBe("kept");
    const second = new AbortController();
    const late = b.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 5 }), {
      abortSignal: second.signal,
    });
    await waiting(b);
    clock += 60_000;
    second.abort();
    expect(await errorName(late)).toBe("AbortError");
    expect(await counts(url)).toEqual({ visible: "0", hidden: "1" });
    a.destroy();
    b.destroy();
  });
});

describe("waking long polls", () => {
  it("answers a receive waiting on a FIFO group as soon as the group's message in flight is deleted", async () => {
    const url = await queue(true);
    await send(url, ["m1", "m2"], "g");
    const [m1] = await receive(url, { MaxNumberOfMessages: 1 });
    const b = new EmbeddedSQSClient({ file });
    const t0 = performance.now();
    const poll = b.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 10 }));
    await waiting(b);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m1?.ReceiptHandle }));
    expect(((await poll).Messages ?? []).map((m: Message) => m.Body)).toEqual(["m2"]);
    expect(performance.now() - t0).toBeLessThan(2_000);
    b.destroy();
  });

  it("does not take the write lock when woken by another connection while nothing is receivable", async () => {
    const url = await queue(true);
    await send(url, ["m1", "m2"], "g");
    await receive(url, { MaxNumberOfMessages: 1 }); // the group is locked; m2 waits behind m1
    const other = new DatabaseSync(file);
    other.exec("PRAGMA busy_timeout = 100");
    const t0 = performance.now();
    const poll = sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 2 }));
    // Another connection commits (waking every long poll of this file), then holds the write
    // lock: a receive that took BEGIN IMMEDIATE now would wait for it and fail.
    other.exec("CREATE TABLE IF NOT EXISTS unrelated (x); INSERT INTO unrelated VALUES (1)");
    other.exec("BEGIN IMMEDIATE");
    try {
      expect((await poll).Messages).toBeUndefined();
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(performance.now() - t0).toBeLessThan(4_000);
  });
});

describe("FIFO groups", () => {
  it("keeps a group locked while a later message of it is in flight, and hands out many groups in one receive", async () => {
    const url = await queue(true);
    await send(url, ["a1", "a2", "a3"], "a");
    await send(url, ["b1"], "b");
    const first = await receive(url, { MaxNumberOfMessages: 2 });
    expect(first.map((m) => m.Body)).toEqual(["a1", "a2"]);
    // a1 is visible again but a2 is still in flight: group a stays locked.
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: first[0]?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    expect((await receive(url)).map((m) => m.Body)).toEqual(["b1"]);
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: first[1]?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    expect((await receive(url)).map((m) => m.Body)).toEqual(["a1", "a2", "a3"]);
    // 30 groups of one message: one receive takes 10, each group once.
    const many = await queue(true);
    for (let g = 0; g < 30; g++) await send(many, [`g${g}`], `g${g}`);
    const got = await receive(many);
    expect(got.map((m) => m.Body)).toEqual(Array.from({ length: 10 }, (_, g) => `g${g}`));
    expect((await receive(many, { VisibilityTimeout: 0 })).length).toBe(10);
  });

  it("fills the group table of a file made before it existed", async () => {
    const old = join(dir, "old.db");
    const a = new EmbeddedSQSClient({ file: old }) as unknown as SQSClient;
    const url = await queue(true, a);
    await a.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: ["x1", "x2", "y1"].map((b, i) => ({
          Id: String(i),
          MessageBody: b,
          MessageGroupId: b.slice(0, 1),
        })),
      }),
    );
    const [x1] =
      (await a.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 1 })))
        .Messages ?? [];
    a.destroy();
    const raw = new DatabaseSync(old);
    for (const t of ["insert", "update", "later", "delete"])
      raw.exec(`DROP TRIGGER sqs_fifo_groups_${t}`);
    raw.exec("DROP TABLE sqs_fifo_groups");
    raw.close();
    const b = new EmbeddedSQSClient({ file: old }) as unknown as SQSClient;
    const next = async () =>
      (
        (await b.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 })))
          .Messages ?? []
      ).map((m) => m.Body);
    expect(await next()).toEqual(["y1"]);
    await b.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: x1?.ReceiptHandle }));
    expect(await next()).toEqual(["x2"]);
    b.destroy();
  });
});
