/**
 * The embedded SQS engine's figures (lib/embedded/sqs-*.ts), on a file in a temporary directory:
 * SendMessageBatch, ReceiveMessage and DeleteMessageBatch of 10 messages in-process (µs per
 * request), also FIFO with 100,000 message groups and with 10,000 groups locked; how soon a
 * long poll waiting in this process, and in ANOTHER process, gets a message sent here (ms); and
 * the CPU an idle process with a waiting long poll uses.
 *
 *   npx tsx bench/embedded-sqs.ts [rounds]     (default 2,000 in-process, 300 cross-process)
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { EmbeddedSQSClient } from "../lib/embedded/sqs-client.js";
import { percentile } from "./stats.js";

const nowMs = () => performance.timeOrigin + performance.now();

/** A task message about the size the dispatcher sends. */
const BODY = JSON.stringify({
  instanceId: "inst-1",
  code: "x".repeat(20),
  task: { type: "SHELL", command: "true" },
});

/** Child mode: long-poll `url` forever, report each message's arrival time, delete it. */
async function child(file: string, url: string): Promise<void> {
  const sqs = new EmbeddedSQSClient({ file });
  process.on("message", (m: { op: string }) => {
    if (m.op === "cpu") process.send?.({ cpu: process.cpuUsage(), at: nowMs() });
    if (m.op === "exit") process.exit(0);
  });
  process.send?.({ ready: true });
  for (;;) {
    const r = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20, MaxNumberOfMessages: 10 }),
    );
    const at = nowMs();
    for (const m of r.Messages ?? []) {
      process.send?.({ body: m.Body, at });
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
    }
  }
}

function line(what: string, values: number[], unit: string): void {
  const f = (v: number) => v.toFixed(unit === "µs" ? 0 : 2);
  console.log(
    `${what.padEnd(44)} p50 ${f(percentile(values, 50)).padStart(7)} ${unit}   p90 ${f(percentile(values, 90)).padStart(7)} ${unit}   (n=${values.length})`,
  );
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 2000);
  const dir = mkdtempSync(join(tmpdir(), "bench-embedded-sqs-"));
  const file = join(dir, "queues.db");
  const sqs = new EmbeddedSQSClient({ file }) as unknown as SQSClient;
  try {
    const { QueueUrl: url } = await sqs.send(new CreateQueueCommand({ QueueName: "tasks" }));
    const entries = Array.from({ length: 10 }, (_, i) => ({
      Id: String(i),
      MessageBody: `${BODY}${i}`,
    }));
    const send: number[] = [];
    const receive: number[] = [];
    const del: number[] = [];
    for (let i = 0; i < rounds; i++) {
      let t = performance.now();
      await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
      send.push((performance.now() - t) * 1000);
      t = performance.now();
      const r = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }),
      );
      receive.push((performance.now() - t) * 1000);
      if (r.Messages?.length !== 10) throw new Error(`received ${r.Messages?.length}`);
      t = performance.now();
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: r.Messages.map((m, n) => ({ Id: String(n), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
      del.push((performance.now() - t) * 1000);
    }
    console.log(`embedded SQS on ${file} (Node ${process.version}, ${rounds} rounds)`);
    line("SendMessageBatch of 10 (in-process)", send, "µs");
    line("ReceiveMessage of 10 (in-process)", receive, "µs");
    line("DeleteMessageBatch of 10 (in-process)", del, "µs");

    // FIFO: a backlog of 10,000 events of one instance (one message group), received 10 at a
    // time and deleted, as the dispatcher's poller does.
    const { QueueUrl: fifo } = await sqs.send(
      new CreateQueueCommand({
        QueueName: "events.fifo",
        Attributes: { FifoQueue: "true", ContentBasedDeduplication: "true" },
      }),
    );
    for (let b = 0; b < 1000; b++)
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: fifo,
          Entries: entries.map((e, i) => ({
            ...e,
            MessageBody: `${BODY}${b}-${i}`,
            MessageGroupId: b % 2 === 0 ? "instance-1" : "instance-2",
          })),
        }),
      );
    const fifoReceive: number[] = [];
    for (let i = 0; i < 500; i++) {
      const t = performance.now();
      const r = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: fifo, MaxNumberOfMessages: 10 }),
      );
      fifoReceive.push((performance.now() - t) * 1000);
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: fifo,
          Entries: (r.Messages ?? []).map((m, n) => ({
            Id: String(n),
            ReceiptHandle: m.ReceiptHandle,
          })),
        }),
      );
    }
    line("ReceiveMessage of 10, FIFO, 10,000 waiting", fifoReceive, "µs");

    // FIFO with many groups, as Shoal's events queue has (one group per workflow instance):
    // 100,000 groups of one message; then 10,000 groups locked by a message in flight (each with
    // a second message waiting behind it) beside 10,000 free groups.
    const fill = async (queueUrl: string, groups: number, perGroup: number, prefix: string) => {
      const all = Array.from({ length: groups * perGroup }, (_, k) => ({
        group: `${prefix}${Math.floor(k / perGroup)}`,
        body: `${BODY}${prefix}${k}`,
      }));
      for (let k = 0; k < all.length; k += 10)
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: all.slice(k, k + 10).map((m, i) => ({
              Id: String(i),
              MessageBody: m.body,
              MessageGroupId: m.group,
            })),
          }),
        );
    };
    const receiveAndDelete = async (queueUrl: string, times: number): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < times; i++) {
        const t = performance.now();
        const r = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }),
        );
        out.push((performance.now() - t) * 1000);
        if (r.Messages?.length !== 10) throw new Error(`received ${r.Messages?.length}`);
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: r.Messages.map((m, k) => ({ Id: String(k), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
      }
      return out;
    };
    const attrs = { FifoQueue: "true", ContentBasedDeduplication: "true" };
    const { QueueUrl: wide } = await sqs.send(
      new CreateQueueCommand({ QueueName: "wide.fifo", Attributes: attrs }),
    );
    await fill(wide as string, 100_000, 1, "w");
    line(
      "ReceiveMessage of 10, FIFO, 100,000 groups",
      await receiveAndDelete(wide as string, 500),
      "µs",
    );
    const { QueueUrl: locked } = await sqs.send(
      new CreateQueueCommand({ QueueName: "locked.fifo", Attributes: attrs }),
    );
    await fill(locked as string, 10_000, 2, "l");
    // Receives of 1 take each group's head only (one of 10 would take both of a group's messages).
    for (let i = 0; i < 10_000; i++) {
      const r = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: locked,
          MaxNumberOfMessages: 1,
          VisibilityTimeout: 3600,
        }),
      );
      if (r.Messages?.length !== 1) throw new Error(`locked ${r.Messages?.length}`);
    }
    const idle: number[] = [];
    for (let i = 0; i < 500; i++) {
      const t = performance.now();
      const r = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: locked, MaxNumberOfMessages: 10 }),
      );
      idle.push((performance.now() - t) * 1000);
      if (r.Messages?.length) throw new Error("a locked group was handed out");
    }
    line("ReceiveMessage, FIFO, 10,000 groups locked", idle, "µs");
    await fill(locked as string, 10_000, 1, "f");
    line(
      "ReceiveMessage of 10, FIFO, + 10,000 free",
      await receiveAndDelete(locked as string, 500),
      "µs",
    );

    // A long poll waiting in this process.
    const local: number[] = [];
    for (let i = 0; i < Math.min(300, rounds); i++) {
      const answer = sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 20 }));
      await delay(1);
      const sent = nowMs();
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "x" }));
      const r = await answer;
      local.push(nowMs() - sent);
      await sqs.send(
        new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: r.Messages?.[0]?.ReceiptHandle }),
      );
    }
    line("send → long poll in this process", local, "ms");

    // A long poll waiting in another process.
    const proc = fork(fileURLToPath(import.meta.url), ["--child", file, url as string], {
      execArgv: ["--import", "tsx", "--no-warnings"],
    });
    const arrivals = new Map<string, number>();
    const waiting = new Map<string, () => void>();
    let cpuReply: ((m: { cpu: NodeJS.CpuUsage; at: number }) => void) | undefined;
    await new Promise<void>((ready) =>
      proc.on(
        "message",
        (m: { ready?: boolean; body?: string; at: number; cpu?: NodeJS.CpuUsage }) => {
          if (m.ready) ready();
          else if (m.cpu) cpuReply?.(m as { cpu: NodeJS.CpuUsage; at: number });
          else if (m.body) {
            arrivals.set(m.body, m.at);
            waiting.get(m.body)?.();
          }
        },
      ),
    );
    const cross: number[] = [];
    for (let i = 0; i < Math.min(300, rounds); i++) {
      await delay(3); // the child is back in its long poll
      const body = `c${i}`;
      const got = new Promise<void>((r) => waiting.set(body, r));
      const sent = nowMs();
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
      await got;
      cross.push((arrivals.get(body) as number) - sent);
    }
    line("send → long poll in another process", cross, "ms");

    // An idle process whose long poll waits: CPU over 3 s.
    const cpu = () =>
      new Promise<{ cpu: NodeJS.CpuUsage; at: number }>((r) => {
        cpuReply = r;
        proc.send({ op: "cpu" });
      });
    await delay(500);
    const a = await cpu();
    await delay(3000);
    const b = await cpu();
    const used = (b.cpu.user + b.cpu.system - a.cpu.user - a.cpu.system) / 1000;
    console.log(
      `${"idle process with a waiting long poll".padEnd(44)} CPU ${((100 * used) / (b.at - a.at)).toFixed(2)} % (${used.toFixed(1)} ms in ${((b.at - a.at) / 1000).toFixed(1)} s)`,
    );
    proc.send({ op: "exit" });
    await new Promise((r) => proc.once("exit", r));
  } finally {
    sqs.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child")
  await child(process.argv[3] as string, process.argv[4] as string);
else await main();
