/**
 * An item write cut short must leave no index entry the item does not have
 * (lib/standalone/dynalite-atomic-writes.ts). dynalite wrote the index entries first and the item
 * after; a DynamoDB emulator that died in between (`kill -9`, or its disk full) kept an index that
 * said SUCCESS while the item said RUNNING (chaos seed 2030, disk-full), and the sweeper sent
 * that task event again every second. Here dynalite (on disk, in a child process) kills itself
 * with SIGKILL at the first write of the item's key, then starts again on the same data.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Child, forkChild } from "../../lib/standalone/child-process.js";

const CHILD = new URL("../helpers/dynalite-kill-child.ts", import.meta.url).pathname;

describe("dynalite item writes with their index entries", () => {
  const dir = mkdtempSync(join(tmpdir(), "shoal-atomic-"));
  let child: Child<string> | undefined;
  let ddb: DynamoDBClient;
  const TableName = "atomic";

  /** (Re)starts dynalite on the same data and points the client at it. */
  async function start(): Promise<void> {
    child = await forkChild(CHILD, [dir], "dynalite", (m) => (m as { endpoint: string }).endpoint);
    ddb?.destroy();
    ddb = new DynamoDBClient({
      endpoint: child.ready,
      region: "us-east-1",
      credentials: { accessKeyId: "x", secretAccessKey: "x" },
      maxAttempts: 1,
    });
  }

  /** Arms the kill, sends `write` (which the kill cuts short), and starts dynalite again. */
  async function cutShort(write: () => Promise<unknown>): Promise<void> {
    const c = child as Child<string>;
    const armed = new Promise((resolve) => c.process.once("message", resolve));
    c.process.send("arm");
    await armed;
    const exited = new Promise((resolve) =>
      c.process.once("exit", (_code, signal) => resolve(signal)),
    );
    await expect(write()).rejects.toThrow();
    expect(await exited).toBe("SIGKILL");
    await start();
  }

  beforeAll(async () => {
    await start();
    await ddb.send(
      new CreateTableCommand({
        TableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "leaseShard", AttributeType: "S" },
          { AttributeName: "leaseAt", AttributeType: "N" },
        ],
        KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
        GlobalSecondaryIndexes: [
          {
            IndexName: "leases",
            KeySchema: [
              { AttributeName: "leaseShard", KeyType: "HASH" },
              { AttributeName: "leaseAt", KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: ["state"] },
          },
        ],
      }),
    );
    // dynalite marks a table ACTIVE on a timer after it answers (a put before that fails).
    await waitUntilTableExists({ client: ddb, maxWaitTime: 30 }, { TableName });
  });

  afterEach(() => {
    expect(child?.process.exitCode).toBe(null);
  });

  afterAll(async () => {
    ddb?.destroy();
    await child?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const shard = async (s: string) =>
    (
      await ddb.send(
        new QueryCommand({
          TableName,
          IndexName: "leases",
          KeyConditionExpression: "leaseShard = :s",
          ExpressionAttributeValues: { ":s": { S: s } },
        }),
      )
    ).Items ?? [];

  it("a failed update leaves the item and its index entry as they were", async () => {
    await ddb.send(
      new PutItemCommand({
        TableName,
        Item: {
          pk: { S: "a" },
          state: { S: "RUNNING" },
          leaseShard: { S: "L" },
          leaseAt: { N: "100" },
        },
      }),
    );
    await cutShort(() =>
      ddb.send(
        new UpdateItemCommand({
          TableName,
          Key: { pk: { S: "a" } },
          UpdateExpression: "SET #s = :s, leaseShard = :e, leaseAt = :d",
          ExpressionAttributeNames: { "#s": "state" },
          ExpressionAttributeValues: {
            ":s": { S: "SUCCESS" },
            ":e": { S: "E0" },
            ":d": { N: "5" },
          },
        }),
      ),
    );
    const item = await ddb.send(new GetItemCommand({ TableName, Key: { pk: { S: "a" } } }));
    expect(item.Item?.state?.S).toBe("RUNNING");
    // No entry the item does not have (the outbox shard), and the lease entry it has is kept.
    expect(await shard("E0")).toEqual([]);
    expect((await shard("L")).map((i) => i.state?.S)).toEqual(["RUNNING"]);
  });

  it("a failed delete keeps the item's index entry", async () => {
    await ddb.send(
      new PutItemCommand({
        TableName,
        Item: {
          pk: { S: "b" },
          state: { S: "RUNNING" },
          leaseShard: { S: "M" },
          leaseAt: { N: "1" },
        },
      }),
    );
    await cutShort(() =>
      ddb.send(
        new UpdateItemCommand({
          TableName,
          Key: { pk: { S: "b" } },
          UpdateExpression: "REMOVE leaseShard, leaseAt",
        }),
      ),
    );
    expect((await shard("M")).map((i) => i.pk?.S)).toEqual(["b"]);
  });

  it("writes that succeed keep the index in step", async () => {
    await ddb.send(
      new UpdateItemCommand({
        TableName,
        Key: { pk: { S: "a" } },
        UpdateExpression: "SET #s = :s, leaseShard = :e, leaseAt = :d",
        ExpressionAttributeNames: { "#s": "state" },
        ExpressionAttributeValues: { ":s": { S: "SUCCESS" }, ":e": { S: "E0" }, ":d": { N: "5" } },
      }),
    );
    expect((await shard("E0")).map((i) => i.state?.S)).toEqual(["SUCCESS"]);
    expect(await shard("L")).toEqual([]);
  });
});
