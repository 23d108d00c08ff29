/**
 * 5. Per-request latency of the embedded emulators and the cost of spawning a task process,
 * measured alone (nothing else running), with the request shapes the engine sends. This is the
 * floor under every engine figure: a hop is a chain of these.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from "@aws-sdk/client-sqs";
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { createAwsClients } from "../lib/aws/clients.js";
import { resourceNames } from "../lib/aws/config.js";
import { INDEX } from "../lib/aws/resources.js";
import { startEmulators } from "../lib/standalone/emulators.js";
import { ensureEventsQueue, ensureTables, ensureTaskQueues } from "../lib/standalone/provision.js";
import { childCpuMs, machineBusyMs, waitForQuiet } from "./harness.js";
import type { ScenarioOptions, ScenarioResult } from "./scenarios.js";
import { round, summarize, table } from "./stats.js";

/** Process CPU (user+system, all threads: client, emulator, GC, libuv pool) per operation of the last timeEach/rate. */
let lastCpuMs = Number.NaN;

async function timeEach(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  const used = process.cpuUsage(cpu);
  lastCpuMs = n > 0 ? (used.user + used.system) / 1000 / n : Number.NaN;
  return out;
}

/** Operations per second with `concurrency` callers, `n` operations in all. */
async function rate(
  n: number,
  concurrency: number,
  fn: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const cpu = process.cpuUsage();
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++);
    }),
  );
  const used = process.cpuUsage(cpu);
  lastCpuMs = (used.user + used.system) / 1000 / n;
  return round(n / ((performance.now() - t) / 1000), 0);
}

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", "true"], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.once("error", reject);
    child.once("exit", () => resolve());
    child.stdout.resume();
    child.stderr.resume();
  });
}

interface Row {
  what: string;
  store: string;
  s: ReturnType<typeof summarize>;
  perSecond?: number;
  /** Process CPU per operation, ms. */
  cpuMs?: number;
}

/** The worker's claim as the engine sends it: conditional, sets the lease (GSI), ALL_NEW. */
function claim(table: string, taskKey: string): UpdateCommand {
  return new UpdateCommand({
    TableName: table,
    Key: { instanceId: "inst-1", taskKey },
    UpdateExpression: "SET #s = :r, startedAt = :now, leaseExpiresAt = :exp, leaseShard = :sh",
    ConditionExpression: "#s IN (:a, :b)",
    ExpressionAttributeNames: { "#s": "state" },
    ExpressionAttributeValues: {
      ":r": "RUNNING",
      ":now": Date.now(),
      ":exp": Date.now() + 10_000,
      ":sh": "L0",
      ":a": "SUBMITTED",
      ":b": "DISPATCHED",
    },
    ReturnValues: "ALL_NEW",
  });
}

async function measure(persist: boolean, rows: Row[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "shoal-bench-emu-"));
  const em = await startEmulators(persist ? { dataDir: dir } : {});
  const store = persist ? "on disk" : "in memory";
  try {
    // Clients come from the one factory, configured with these emulators' endpoints.
    const clients = createAwsClients({
      region: "us-east-1",
      endpoints: { dynamodb: em.dynamodbEndpoint, sqs: em.sqsEndpoint },
      credentials: { accessKeyId: "bench", secretAccessKey: "bench" },
    });
    const ddb = clients.dynamo;
    const sqs = clients.sqs;
    const prefix = "bench";
    const names = resourceNames(prefix);
    await ensureTables(ddb, names.tables);
    const eventsUrl = await ensureEventsQueue(sqs, prefix);
    const [, , taskUrl] = await ensureTaskQueues(sqs, prefix, "default");
    const N = 300;
    const add = (what: string, list: number[], perSecond?: number) =>
      rows.push({
        what,
        store,
        s: summarize(list),
        cpuMs: lastCpuMs,
        ...(perSecond !== undefined ? { perSecond } : {}),
      });

    // Task instance written by the dispatcher (conditional put).
    const taskItem = (i: number) => ({
      instanceId: "inst-1",
      taskKey: `task_${i}#0001`,
      workflow: "bench",
      code: `task_${i}`,
      attempt: 1,
      type: "SHELL",
      state: "DISPATCHED",
      priority: "MEDIUM",
      workerGroup: "default",
      submittedAt: Date.now(),
    });
    add(
      "DynamoDB PutItem task (attribute_not_exists)",
      await timeEach(N, (i) =>
        ddb.send(
          new PutCommand({
            TableName: names.tables.tasks,
            Item: taskItem(i),
            ConditionExpression: "attribute_not_exists(taskKey)",
          }),
        ),
      ),
    );
    // Worker claim: conditional update, sets the lease (GSI), returns ALL_NEW.
    add(
      "DynamoDB UpdateItem claim (cond., GSI, ALL_NEW)",
      await timeEach(N, (i) => ddb.send(claim(names.tables.tasks, `task_${i}#0001`))),
    );
    // Instance item with a 1,001-task progress string, rewritten with a rev condition.
    const inst = {
      instanceId: "inst-1",
      workflow: "bench",
      version: 1,
      state: "RUNNING",
      priority: "MEDIUM",
      failureStrategy: "END",
      commandType: "START_WORKFLOW",
      params: {},
      dryRun: false,
      taskScope: "DOWNSTREAM",
      createdAt: Date.now(),
      progress: { slots: "S".repeat(500) + "D".repeat(501), attempts: {} },
      listKey: "I",
      createdKey: `${new Date().toISOString()}#inst-1`,
      rev: 0,
    };
    await ddb.send(new PutCommand({ TableName: names.tables.instances, Item: inst }));
    let rev = 0;
    add(
      "DynamoDB PutItem instance (rev cond., 2 GSIs)",
      await timeEach(N, async () => {
        rev++;
        await ddb.send(
          new PutCommand({
            TableName: names.tables.instances,
            Item: { ...inst, rev },
            ConditionExpression: "rev = :prev",
            ExpressionAttributeValues: { ":prev": rev - 1 },
          }),
        );
      }),
    );
    add(
      "DynamoDB GetItem instance (consistent)",
      await timeEach(N, () =>
        ddb.send(
          new GetCommand({
            TableName: names.tables.instances,
            Key: { instanceId: "inst-1" },
            ConsistentRead: true,
          }),
        ),
      ),
    );
    add(
      "DynamoDB Query leases GSI (sweeper)",
      await timeEach(100, () =>
        ddb.send(
          new QueryCommand({
            TableName: names.tables.tasks,
            IndexName: INDEX.leases,
            KeyConditionExpression: "leaseShard = :s AND leaseExpiresAt < :now",
            ExpressionAttributeValues: { ":s": "L0", ":now": 0 },
            Limit: 100,
          }),
        ),
      ),
    );
    const putRate = await rate(1000, 16, (i) =>
      ddb.send(
        new PutCommand({
          TableName: names.tables.tasks,
          Item: taskItem(10_000 + i),
          ConditionExpression: "attribute_not_exists(taskKey)",
        }),
      ),
    );
    rows.push({
      what: "DynamoDB PutItem task, 16 concurrent",
      store,
      s: summarize([]),
      perSecond: putRate,
      cpuMs: lastCpuMs,
    });
    const updateRate = await rate(1000, 16, (i) =>
      ddb.send(claim(names.tables.tasks, `task_${10_000 + i}#0001`)),
    );
    rows.push({
      what: "DynamoDB UpdateItem claim, 16 concurrent",
      store,
      s: summarize([]),
      perSecond: updateRate,
      cpuMs: lastCpuMs,
    });

    // SQS: the task queue (standard) and the events queue (FIFO), one message at a time.
    const body = JSON.stringify({
      instanceId: "inst-1",
      code: "x".repeat(20),
      task: { type: "SHELL", command: "true" },
    });
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
    const B = 50;
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
    add(
      "DynamoDB BatchWriteItem 25 task items",
      await timeEach(B, (i) =>
        ddb.send(
          new BatchWriteCommand({
            RequestItems: {
              [names.tables.tasks]: Array.from({ length: 25 }, (_, k) => ({
                PutRequest: { Item: taskItem(100_000 + i * 25 + k) },
              })),
            },
          }),
        ),
      ),
    );
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
      await new Promise((r) => setTimeout(r, 5));
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
    clients.destroy();
  } finally {
    await em.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function emulators(_opts: ScenarioOptions): Promise<ScenarioResult> {
  const rows: Row[] = [];
  const othersBefore = await waitForQuiet();
  const machine0 = machineBusyMs();
  const own0 = process.cpuUsage();
  const children0 = childCpuMs();
  const t0 = performance.now();
  await measure(true, rows);
  await measure(false, rows);
  const spawnSeq = await timeEach(200, () => spawnTrue());
  rows.push({
    what: "spawn /bin/sh -c true until exit",
    store: "-",
    s: summarize(spawnSeq),
    cpuMs: lastCpuMs,
  });
  const spawnRate8 = await rate(400, 8, () => spawnTrue());
  rows.push({
    what: "spawn /bin/sh -c true, 8 concurrent",
    store: "-",
    s: summarize([]),
    perSecond: spawnRate8,
    cpuMs: lastCpuMs,
  });
  // How long the spawn() call itself blocks the event loop (fork/exec happen synchronously).
  const blocked: number[] = [];
  for (let i = 0; i < 200; i++) {
    let t = 0;
    await new Promise<void>((resolve, reject) => {
      t = performance.now();
      const child = spawn("/bin/sh", ["-c", "true"], {
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      blocked.push(performance.now() - t);
      child.once("error", reject);
      child.once("exit", () => resolve());
      child.stdout.resume();
      child.stderr.resume();
    });
  }
  rows.push({ what: "spawn() call blocking the event loop", store: "-", s: summarize(blocked) });
  const wall = performance.now() - t0;
  const own = process.cpuUsage(own0);
  const othersPct = round(
    ((machineBusyMs() - machine0 - (own.user + own.system) / 1000 - (childCpuMs() - children0)) /
      wall) *
      100,
    1,
  );
  const tables = [
    "== emulators: request latency, one caller, nothing else running (ms); the emulators run in this process here, " +
      `so 'CPU ms/op' is client + emulator (other processes on the machine: ${othersBefore}% before, ${othersPct}% during)`,
    table([
      ["request", "store", "n", "p50", "p90", "p99", "mean", "ops/s", "CPU ms/op"],
      ...rows.map((r) => [
        r.what,
        r.store,
        r.s.n,
        r.s.p50,
        r.s.p90,
        r.s.p99,
        r.s.mean,
        r.perSecond ?? Number.NaN,
        r.cpuMs === undefined ? Number.NaN : round(r.cpuMs, 2),
      ]),
    ]),
  ];
  return {
    name: "emulators",
    summary: Object.fromEntries([
      ["otherProcessesPct", { before: othersBefore, during: othersPct }],
      ...rows.map((r) => [
        `${r.what} [${r.store}]`,
        {
          ...r.s,
          ...(r.perSecond !== undefined ? { perSecond: r.perSecond } : {}),
          ...(r.cpuMs !== undefined ? { cpuMsPerOp: round(r.cpuMs, 3) } : {}),
        },
      ]),
    ]),
    tables,
  };
}
