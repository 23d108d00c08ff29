/**
 * A second process on the embedded SQS engine's file, for test/unit/embedded-sqs-processes.test.ts
 * and bench/embedded-sqs.ts: forked with `--import tsx`, the file path as its argument; it answers
 * requests over IPC (`{ n, op, … }` → `{ n, … }`).
 */
import {
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { EmbeddedSQSClient } from "../../lib/embedded/sqs-client.js";

const sqs = new EmbeddedSQSClient({ file: process.argv[2] as string });

/** Epoch ms with sub-ms precision (comparable between processes of one machine). */
const nowMs = () => performance.timeOrigin + performance.now();

interface Request {
  n: number;
  op: "receive" | "send" | "flood" | "drain" | "exit";
  url: string;
  wait?: number;
  max?: number;
  visibility?: number;
  body?: string;
}

async function serve(r: Request): Promise<unknown> {
  switch (r.op) {
    case "receive": {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: r.url,
          WaitTimeSeconds: r.wait ?? 0,
          MaxNumberOfMessages: r.max ?? 10,
          ...(r.visibility !== undefined ? { VisibilityTimeout: r.visibility } : {}),
        }),
      );
      const at = nowMs();
      return { at, bodies: (out.Messages ?? []).map((m: { Body: string }) => m.Body) };
    }
    case "send": {
      const out = await sqs.send(new SendMessageCommand({ QueueUrl: r.url, MessageBody: r.body }));
      return { id: out.MessageId, at: nowMs() };
    }
    case "drain": {
      // Receive without deleting until an empty answer: every body seen.
      const bodies: string[] = [];
      for (;;) {
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: r.url,
            MaxNumberOfMessages: r.max ?? 10,
            VisibilityTimeout: r.visibility ?? 60,
          }),
        );
        if (!out.Messages?.length) return { bodies };
        for (const m of out.Messages) bodies.push(m.Body as string);
      }
    }
    case "flood": {
      // Batches of 10 until killed; each batch is reported once SendMessageBatch answered.
      for (let b = 0; ; b++) {
        const bodies = Array.from({ length: 10 }, (_, i) => `${b}-${i}`);
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: r.url,
            Entries: bodies.map((body, i) => ({ Id: String(i), MessageBody: body })),
          }),
        );
        process.send?.({ n: r.n, acked: bodies });
      }
    }
    case "exit":
      sqs.destroy();
      setImmediate(() => process.exit(0));
      return {};
  }
}

process.on("message", (r: Request) => {
  serve(r).then(
    (out) => process.send?.({ n: r.n, ...(out as object) }),
    (e) => process.send?.({ n: r.n, error: String(e) }),
  );
});
process.send?.({ ready: true });
