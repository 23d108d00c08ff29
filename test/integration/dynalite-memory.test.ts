/**
 * dynalite must close the LevelDB iterators of its Queries and Scans
 * (lib/standalone/dynalite-memory.ts). dynalite 4.0.0 released them with `iterator.return()`,
 * which abstract-level iterators do not have, so every Query left its iterators open and the
 * emulator's memory grew without bound under the sweeper's Query-with-Limit every second. Here
 * the database's open resources (iterators) are counted through abstract-level's
 * attachResource/detachResource, around Queries that stop early (Limit), run to their end, page,
 * and Scans, on a data dir as standalone uses.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  UpdateItemCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { boundDynaliteMemory } from "../../lib/standalone/dynalite-memory.js";
import { type Emulators, startEmulators } from "../../lib/standalone/emulators.js";

interface LevelProto {
  attachResource(r: object): void;
  detachResource(r: object): void;
}

/** The AbstractLevel class of the abstract-level copy dynalite's `level` uses. */
function abstractLevelOfDynalite(): { prototype: LevelProto } {
  let req = createRequire(import.meta.url);
  for (const dep of ["dynalite", "level", "classic-level"]) req = createRequire(req.resolve(dep));
  return (req("abstract-level") as { AbstractLevel: { prototype: LevelProto } }).AbstractLevel;
}

/** Counts the iterators (and other resources) the databases of this process hold open. */
function countOpenResources(): { open: () => number; opened: () => number } {
  const proto = abstractLevelOfDynalite().prototype;
  const live = new Set<object>();
  let opened = 0;
  const attach = proto.attachResource;
  const detach = proto.detachResource;
  proto.attachResource = function (r) {
    if (!live.has(r)) opened++;
    live.add(r);
    attach.call(this, r);
  };
  proto.detachResource = function (r) {
    live.delete(r);
    detach.call(this, r);
  };
  return { open: () => live.size, opened: () => opened };
}

describe("dynalite iterators", () => {
  const dir = mkdtempSync(join(tmpdir(), "shoal-dynmem-"));
  const resources = countOpenResources();
  let emulators: Emulators;
  let ddb: DynamoDBClient;
  const TableName = "tasks";

  beforeAll(async () => {
    boundDynaliteMemory();
    boundDynaliteMemory(); // idempotent
    emulators = await startEmulators({ dataDir: dir, only: "dynamodb" });
    ddb = new DynamoDBClient({
      endpoint: emulators.dynamodbEndpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "x", secretAccessKey: "x" },
      maxAttempts: 1,
    });
    await ddb.send(
      new CreateTableCommand({
        TableName,
        BillingMode: "PAY_PER_REQUEST",
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
            Projection: { ProjectionType: "ALL" },
          },
        ],
      }),
    );
    // dynalite marks a table ACTIVE on a timer after it answers: a put before that, on a busy
    // machine, is a ResourceNotFoundException.
    await waitUntilTableExists({ client: ddb, maxWaitTime: 30 }, { TableName });
    for (let i = 0; i < 30; i++) {
      await ddb.send(
        new PutItemCommand({
          TableName,
          Item: {
            instanceId: { S: `i${i % 3}` },
            taskKey: { S: `t${String(i).padStart(2, "0")}` },
            leaseShard: { S: "L0" },
            leaseExpiresAt: { N: String(1000 + i) },
          },
        }),
      );
    }
  });

  afterAll(async () => {
    ddb?.destroy();
    await emulators?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Waits (up to 2 s) for the iterators to be closed: closing is asynchronous. */
  async function openAfterSettling(): Promise<number> {
    for (let i = 0; i < 100 && resources.open() > 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    return resources.open();
  }

  const leases = (extra: Partial<QueryCommandInput> = {}) =>
    new QueryCommand({
      TableName,
      IndexName: "leases",
      KeyConditionExpression: "leaseShard = :s AND leaseExpiresAt < :now",
      ExpressionAttributeValues: { ":s": { S: "L0" }, ":now": { N: "2000" } },
      ...extra,
    });

  it("closes them after Queries on a GSI that stop at their Limit, as the sweeper's", async () => {
    const before = resources.opened();
    for (let i = 0; i < 20; i++) {
      const r = await ddb.send(leases({ Limit: 5 }));
      expect(r.Items?.length).toBe(5);
      expect(r.LastEvaluatedKey).toBeDefined();
    }
    expect(resources.opened() - before).toBeGreaterThanOrEqual(20);
    expect(await openAfterSettling()).toBe(0);
  });

  it("closes them after Queries that read to the end, page, or filter, and after Scans", async () => {
    const before = resources.opened();
    expect((await ddb.send(leases())).Items?.length).toBe(30);
    let start: QueryCommandInput["ExclusiveStartKey"];
    let paged = 0;
    do {
      const r = await ddb.send(leases({ Limit: 7, ExclusiveStartKey: start }));
      paged += r.Items?.length ?? 0;
      start = r.LastEvaluatedKey;
    } while (start);
    expect(paged).toBe(30);
    const filtered = await ddb.send(
      leases({
        Limit: 10,
        FilterExpression: "taskKey = :k",
        ExpressionAttributeValues: { ":s": { S: "L0" }, ":now": { N: "2000" }, ":k": { S: "t03" } },
      }),
    );
    expect(filtered.Items?.length).toBe(1);
    const base = await ddb.send(
      new QueryCommand({
        TableName,
        KeyConditionExpression: "instanceId = :i",
        ExpressionAttributeValues: { ":i": { S: "i1" } },
        Limit: 3,
      }),
    );
    expect(base.Items?.length).toBe(3);
    expect((await ddb.send(new ScanCommand({ TableName, Limit: 4 }))).Items?.length).toBe(4);
    expect((await ddb.send(new ScanCommand({ TableName }))).Items?.length).toBe(30);
    expect((await ddb.send(new ListTablesCommand({}))).TableNames).toEqual([TableName]);
    expect(resources.opened() - before).toBeGreaterThan(8);
    expect(await openAfterSettling()).toBe(0);
  });

  it("closes them when writes to the index interleave with Queries", async () => {
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < 30; i++) {
      sends.push(
        ddb.send(
          new UpdateItemCommand({
            TableName,
            Key: {
              instanceId: { S: `i${i % 3}` },
              taskKey: { S: `t${String(i).padStart(2, "0")}` },
            },
            UpdateExpression: "SET leaseExpiresAt = :e",
            ExpressionAttributeValues: { ":e": { N: String(1500 + i) } },
          }),
        ),
        ddb.send(leases({ Limit: 3 })),
      );
    }
    await Promise.all(sends);
    expect(await openAfterSettling()).toBe(0);
  });
});
