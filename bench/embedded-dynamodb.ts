/**
 * Latency of the embedded DynamoDB engine in-process (lib/embedded/dynamodb-client.ts): GetItem,
 * PutItem and a conditional UpdateItem of a ~1 KB item through the document commands Shoal
 * sends, on an SQLite file (WAL, synchronous=NORMAL) and on `:memory:`, side by side in one run.
 * Prints median and p90 in µs per operation, and SQLite's own floor on the same storage (one
 * `BEGIN IMMEDIATE; INSERT OR REPLACE` of a 1 KB row `; COMMIT`, and one primary-key SELECT, with
 * no engine around them), so the engine's share is visible.
 * Run: `npx tsx bench/embedded-dynamodb.ts [ops] [runs]`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { CreateTableCommand } from "@aws-sdk/client-dynamodb";
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { EmbeddedDynamoDBClient } from "../lib/embedded/dynamodb-client.js";

const OPS = Number(process.argv[2] ?? 5000);
const RUNS = Number(process.argv[3] ?? 3);

/** A task-like item of about 1 KB. */
function item(i: number): Record<string, unknown> {
  return {
    instanceId: "inst-1",
    taskKey: `task-${i}`,
    state: "SUBMITTED",
    rev: 0,
    workflow: "bench-workflow",
    params: { a: "x".repeat(300), b: [1, 2, 3], c: { d: true } },
    script: "y".repeat(500),
    createdAt: 1_700_000_000_000 + i,
  };
}

async function open(file: string): Promise<EmbeddedDynamoDBClient> {
  const db = new EmbeddedDynamoDBClient({ file });
  await db.send(
    new CreateTableCommand({
      TableName: "tasks",
      AttributeDefinitions: [
        { AttributeName: "instanceId", AttributeType: "S" },
        { AttributeName: "taskKey", AttributeType: "S" },
        { AttributeName: "leaseShard", AttributeType: "S" },
        { AttributeName: "leaseExpiresAt", AttributeType: "N" },
      ],
      KeySchema: [
        { AttributeName: "instanceId", KeyType: "HASH" },
        { AttributeName: "taskKey", KeyType: "RANGE" },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: "leases",
          KeySchema: [
            { AttributeName: "leaseShard", KeyType: "HASH" },
            { AttributeName: "leaseExpiresAt", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "KEYS_ONLY" },
        },
      ],
    }),
  );
  return db;
}

async function time(n: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await op(i);
    out.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  return out.sort((a, b) => a - b);
}

const pct = (s: number[], p: number) =>
  (s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0).toFixed(1);

async function measure(label: string, file: string) {
  const db = await open(file);
  const put = await time(OPS, (i) =>
    db.send(new PutCommand({ TableName: "tasks", Item: item(i) })),
  );
  const get = await time(OPS, (i) =>
    db.send(
      new GetCommand({
        TableName: "tasks",
        Key: { instanceId: "inst-1", taskKey: `task-${i}` },
        ConsistentRead: true,
      }),
    ),
  );
  const update = await time(OPS, (i) =>
    db.send(
      new UpdateCommand({
        TableName: "tasks",
        Key: { instanceId: "inst-1", taskKey: `task-${i}` },
        UpdateExpression: "SET #s = :r, rev = rev + :one, leaseShard = :sh, leaseExpiresAt = :exp",
        ConditionExpression: "#s IN (:a, :b)",
        ExpressionAttributeNames: { "#s": "state" },
        ExpressionAttributeValues: {
          ":r": "RUNNING",
          ":one": 1,
          ":sh": "L0",
          ":exp": 1_700_000_010_000 + i,
          ":a": "SUBMITTED",
          ":b": "QUEUED",
        },
        ReturnValues: "ALL_NEW",
      }),
    ),
  );
  db.destroy();
  for (const [name, s] of [
    ["GetItem", get],
    ["PutItem", put],
    ["UpdateItem (conditional)", update],
  ] as const)
    console.log(
      `${label.padEnd(8)} ${name.padEnd(26)} median ${pct(s, 0.5).padStart(7)} µs   p90 ${pct(s, 0.9).padStart(7)} µs`,
    );
}

/** Raw node:sqlite with the engine's settings: a write transaction and a read, no engine. */
function floor(label: string, file: string) {
  const db = new DatabaseSync(file);
  db.exec("PRAGMA busy_timeout = 10000");
  if (file !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL; CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const put = db.prepare("INSERT OR REPLACE INTO t VALUES (?, ?)");
  const get = db.prepare("SELECT v FROM t WHERE k = ?");
  const v = "x".repeat(1000);
  const w: number[] = [];
  const r: number[] = [];
  for (let i = 0; i < OPS; i++) {
    const t = process.hrtime.bigint();
    begin.run();
    put.run(i, v);
    commit.run();
    w.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  for (let i = 0; i < OPS; i++) {
    const t = process.hrtime.bigint();
    get.get(i);
    r.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  db.close();
  for (const [name, s] of [
    ["SQLite read (floor)", r.sort((a, b) => a - b)],
    ["SQLite write txn (floor)", w.sort((a, b) => a - b)],
  ] as const)
    console.log(
      `${label.padEnd(8)} ${name.padEnd(26)} median ${pct(s, 0.5).padStart(7)} µs   p90 ${pct(s, 0.9).padStart(7)} µs`,
    );
}

const dir = mkdtempSync(join(tmpdir(), "bench-embedded-ddb-"));
try {
  console.log(`embedded DynamoDB, ${OPS} operations of each kind, ~1 KB items, ${RUNS} runs`);
  for (let run = 1; run <= RUNS; run++) {
    console.log(`run ${run}`);
    await measure("file", join(dir, `run${run}.sqlite`));
    floor("file", join(dir, `floor${run}.sqlite`));
    await measure("memory", ":memory:");
    floor("memory", ":memory:");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
