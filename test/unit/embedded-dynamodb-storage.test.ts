/**
 * The embedded DynamoDB engine's storage (lib/embedded/dynamodb-store.ts, dynamodb-reads.ts,
 * dynamodb-writes.ts): key order, sparse GSIs and projections, paging, conditional writes,
 * ReturnValues, errors, and two connections on one file racing conditional updates.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import {
  CreateTableCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand as RawQuery,
} from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { EmbeddedDynamoDBClient } from "../../lib/embedded/dynamodb-client.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function table(db: EmbeddedDynamoDBClient, name: string, sk: "S" | "N" | "B" = "S") {
  await db.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" },
        { AttributeName: "sk", AttributeType: sk },
        { AttributeName: "g", AttributeType: "S" },
        { AttributeName: "gs", AttributeType: "N" },
      ],
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: "all",
          KeySchema: [
            { AttributeName: "g", KeyType: "HASH" },
            { AttributeName: "gs", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        },
        {
          IndexName: "keys",
          KeySchema: [{ AttributeName: "g", KeyType: "HASH" }],
          Projection: { ProjectionType: "KEYS_ONLY" },
        },
        {
          IndexName: "incl",
          KeySchema: [{ AttributeName: "g", KeyType: "HASH" }],
          Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: ["a"] },
        },
      ],
    }),
  );
}

let db: EmbeddedDynamoDBClient;
beforeEach(async () => {
  db = new EmbeddedDynamoDBClient({ file: ":memory:" });
  await table(db, "items");
});

// biome-ignore lint/suspicious/noExplicitAny: the embedded client answers as loosely as the SDK types allow
type Row = Record<string, any>;
const skOf = (items: Array<Record<string, unknown>> | undefined) =>
  (items ?? []).map((i: Row) => i.sk);

async function error(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
  return "no error";
}

describe("key order", () => {
  it("orders S by UTF-8 bytes", async () => {
    const keys = ["b", "a", "ab", "Z", "é", "😀", "\uffff", ""].filter((k) => k !== "");
    for (const sk of keys)
      await db.send(new PutCommand({ TableName: "items", Item: { pk: "p", sk } }));
    const out = await db.send(
      new QueryCommand({
        TableName: "items",
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": "p" },
      }),
    );
    const bytes = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(skOf(out.Items)).toEqual(bytes);
  });

  it("orders N numerically, exactly, negatives and decimals included", async () => {
    await table(db, "nums", "N");
    const nums = [
      "-1e10",
      "-100",
      "-2.5",
      "-2",
      "-0.001",
      "0",
      "0.001",
      "1",
      "1.5",
      "2",
      "10",
      "100",
      "9007199254740991",
      "1e30",
    ];
    for (const n of [...nums].reverse())
      await db.send(
        new PutItemCommand({ TableName: "nums", Item: { pk: { S: "p" }, sk: { N: n } } }),
      );
    const out = await db.send(
      new RawQuery({
        TableName: "nums",
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": { S: "p" } },
      }),
    );
    expect(out.Items?.map((i: Row) => i.sk?.N)).toEqual(
      nums.map((n) => (n === "-1e10" ? "-10000000000" : n === "1e30" ? `1${"0".repeat(30)}` : n)),
    );
    const desc = await db.send(
      new RawQuery({
        TableName: "nums",
        KeyConditionExpression: "pk = :p AND sk BETWEEN :a AND :b",
        ExpressionAttributeValues: { ":p": { S: "p" }, ":a": { N: "-2" }, ":b": { N: "1.5" } },
        ScanIndexForward: false,
      }),
    );
    expect(desc.Items?.map((i: Row) => i.sk?.N)).toEqual([
      "1.5",
      "1",
      "0.001",
      "0",
      "-0.001",
      "-2",
    ]);
  });

  it("orders B by bytes and returns binaries as Uint8Array", async () => {
    await table(db, "bins", "B");
    for (const b of [[2], [1, 255], [1], [0, 1]])
      await db.send(
        new PutItemCommand({
          TableName: "bins",
          Item: { pk: { S: "p" }, sk: { B: Uint8Array.from(b) } },
        }),
      );
    const out = await db.send(
      new RawQuery({
        TableName: "bins",
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": { S: "p" } },
      }),
    );
    expect((out.Items ?? []).map((i: Row) => [...(i.sk.B as Uint8Array)])).toEqual([
      [0, 1],
      [1],
      [1, 255],
      [2],
    ]);
  });

  it("applies range conditions: < <= > >= BETWEEN begins_with", async () => {
    for (const sk of ["a1", "a2", "b1", "b2", "c"])
      await db.send(new PutCommand({ TableName: "items", Item: { pk: "p", sk } }));
    const q = async (cond: string, v: Record<string, unknown>) =>
      skOf(
        (
          await db.send(
            new QueryCommand({
              TableName: "items",
              KeyConditionExpression: `pk = :p AND ${cond}`,
              ExpressionAttributeValues: { ":p": "p", ...v },
            }),
          )
        ).Items,
      );
    expect(await q("sk < :v", { ":v": "b1" })).toEqual(["a1", "a2"]);
    expect(await q("sk <= :v", { ":v": "b1" })).toEqual(["a1", "a2", "b1"]);
    expect(await q("sk > :v", { ":v": "b1" })).toEqual(["b2", "c"]);
    expect(await q("sk >= :v", { ":v": "b1" })).toEqual(["b1", "b2", "c"]);
    expect(await q("sk = :v", { ":v": "c" })).toEqual(["c"]);
    expect(await q("sk BETWEEN :a AND :b", { ":a": "a2", ":b": "b2" })).toEqual(["a2", "b1", "b2"]);
    expect(await q("begins_with(sk, :v)", { ":v": "b" })).toEqual(["b1", "b2"]);
  });
});

describe("GSIs", () => {
  it("are sparse, respect projections, and follow key changes and deletes", async () => {
    await db.send(
      new PutCommand({
        TableName: "items",
        Item: { pk: "1", sk: "x", g: "G", gs: 2, a: "A", other: "O" },
      }),
    );
    await db.send(
      new PutCommand({ TableName: "items", Item: { pk: "2", sk: "x", g: "G", gs: 1 } }),
    );
    await db.send(
      new PutCommand({ TableName: "items", Item: { pk: "3", sk: "x", a: "not indexed" } }),
    );
    const q = async (IndexName: string, g = "G") =>
      (
        await db.send(
          new QueryCommand({
            TableName: "items",
            IndexName,
            KeyConditionExpression: "g = :g",
            ExpressionAttributeValues: { ":g": g },
          }),
        )
      ).Items;
    expect((await q("all"))?.map((i: Row) => i.pk)).toEqual(["2", "1"]);
    expect(await q("keys")).toEqual(
      expect.arrayContaining([
        { pk: "1", sk: "x", g: "G" },
        { pk: "2", sk: "x", g: "G" },
      ]),
    );
    expect((await q("incl"))?.find((i: Row) => i.pk === "1")).toEqual({
      pk: "1",
      sk: "x",
      g: "G",
      a: "A",
    });
    const scan = await db.send(new ScanCommand({ TableName: "items", IndexName: "keys" }));
    expect(scan.Count).toBe(2);
    await db.send(
      new UpdateCommand({
        TableName: "items",
        Key: { pk: "1", sk: "x" },
        UpdateExpression: "SET g = :h",
        ExpressionAttributeValues: { ":h": "H" },
      }),
    );
    expect((await q("all"))?.map((i: Row) => i.pk)).toEqual(["2"]);
    expect((await q("all", "H"))?.map((i: Row) => i.pk)).toEqual(["1"]);
    await db.send(
      new UpdateCommand({
        TableName: "items",
        Key: { pk: "2", sk: "x" },
        UpdateExpression: "REMOVE gs",
      }),
    );
    expect(await q("all")).toEqual([]);
    expect((await q("keys"))?.map((i: Row) => i.pk)).toEqual(["2"]);
    await db.send(new DeleteCommand({ TableName: "items", Key: { pk: "2", sk: "x" } }));
    expect(await q("keys")).toEqual([]);
  });

  it("refuses ConsistentRead and ALL_ATTRIBUTES where DynamoDB does", async () => {
    expect(
      await error(
        db.send(
          new QueryCommand({
            TableName: "items",
            IndexName: "all",
            KeyConditionExpression: "g = :g",
            ExpressionAttributeValues: { ":g": "G" },
            ConsistentRead: true,
          }),
        ),
      ),
    ).toMatch(/Consistent reads are not supported on global secondary indexes/);
    expect(
      await error(
        db.send(
          new QueryCommand({
            TableName: "items",
            IndexName: "keys",
            KeyConditionExpression: "g = :g",
            ExpressionAttributeValues: { ":g": "G" },
            Select: "ALL_ATTRIBUTES",
          }),
        ),
      ),
    ).toMatch(/ValidationException/);
    expect(
      await error(
        db.send(
          new QueryCommand({
            TableName: "items",
            IndexName: "nope",
            KeyConditionExpression: "g = :g",
            ExpressionAttributeValues: { ":g": "G" },
          }),
        ),
      ),
    ).toMatch(/does not have the specified index: nope/);
  });
});

describe("paging", () => {
  it("counts Limit before the filter and resumes from LastEvaluatedKey, on tables and indexes", async () => {
    for (let i = 0; i < 10; i++)
      await db.send(
        new PutCommand({
          TableName: "items",
          Item: { pk: "p", sk: `k${i}`, g: "G", gs: i % 3, odd: i % 2 },
        }),
      );
    const first = await db.send(
      new QueryCommand({
        TableName: "items",
        KeyConditionExpression: "pk = :p",
        FilterExpression: "odd = :one",
        ExpressionAttributeValues: { ":p": "p", ":one": 1 },
        Limit: 4,
      }),
    );
    expect(first.ScannedCount).toBe(4);
    expect(skOf(first.Items)).toEqual(["k1", "k3"]);
    expect(first.LastEvaluatedKey).toEqual({ pk: "p", sk: "k3" });
    const seen: unknown[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await db.send(
        new QueryCommand({
          TableName: "items",
          IndexName: "all",
          KeyConditionExpression: "g = :g",
          ExpressionAttributeValues: { ":g": "G" },
          Limit: 3,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      seen.push(...skOf(page.Items));
      start = page.LastEvaluatedKey;
      if (start) expect(Object.keys(start).sort()).toEqual(["g", "gs", "pk", "sk"]);
    } while (start);
    expect(seen).toHaveLength(10);
    expect(new Set(seen).size).toBe(10);
    const count = await db.send(
      new ScanCommand({
        TableName: "items",
        Select: "COUNT",
        FilterExpression: "odd = :z",
        ExpressionAttributeValues: { ":z": 0 },
      }),
    );
    expect([count.Count, count.ScannedCount, count.Items]).toEqual([5, 10, undefined]);
  });

  it("stops a page at 1 MB read", async () => {
    const big = "x".repeat(300 * 1024);
    for (let i = 0; i < 5; i++)
      await db.send(new PutCommand({ TableName: "items", Item: { pk: "p", sk: `k${i}`, big } }));
    const page = await db.send(
      new QueryCommand({
        TableName: "items",
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": "p" },
        ProjectionExpression: "sk",
      }),
    );
    expect(page.Count).toBe(4);
    expect(page.LastEvaluatedKey).toEqual({ pk: "p", sk: "k3" });
  });

  it("splits a Scan into segments that cover every item once", async () => {
    for (let i = 0; i < 40; i++)
      await db.send(new PutCommand({ TableName: "items", Item: { pk: `p${i}`, sk: "s" } }));
    const all: unknown[] = [];
    for (let s = 0; s < 4; s++)
      all.push(
        ...(
          (await db.send(new ScanCommand({ TableName: "items", Segment: s, TotalSegments: 4 })))
            .Items ?? []
        ).map((i: Row) => i.pk),
      );
    expect(all.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `p${i}`).sort());
  });

  it("refuses a start key outside the query", async () => {
    expect(
      await error(
        db.send(
          new QueryCommand({
            TableName: "items",
            KeyConditionExpression: "pk = :p",
            ExpressionAttributeValues: { ":p": "p" },
            ExclusiveStartKey: { pk: "q", sk: "a" },
          }),
        ),
      ),
    ).toMatch(/outside query boundaries/);
    expect(
      await error(
        db.send(
          new QueryCommand({
            TableName: "items",
            KeyConditionExpression: "pk = :p",
            ExpressionAttributeValues: { ":p": "p" },
            ExclusiveStartKey: { pk: "p" },
          }),
        ),
      ),
    ).toMatch(/The provided starting key is invalid/);
  });
});

describe("writes", () => {
  it("checks conditions, returns ALL_OLD / ALL_NEW, and the old item on a failed condition when asked", async () => {
    const put = () =>
      db.send(
        new PutCommand({
          TableName: "items",
          Item: { pk: "p", sk: "s", v: 1 },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
    await put();
    const e = await put().catch((x) => x);
    expect([e.name, e.message, e.Item]).toEqual([
      "ConditionalCheckFailedException",
      "The conditional request failed",
      undefined,
    ]);
    const e2 = await db
      .send(
        new DeleteCommand({
          TableName: "items",
          Key: { pk: "p", sk: "s" },
          ConditionExpression: "v = :two",
          ExpressionAttributeValues: { ":two": 2 },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
      )
      .catch((x) => x);
    expect(e2.Item).toEqual({ pk: { S: "p" }, sk: { S: "s" }, v: { N: "1" } });
    const old = await db.send(
      new PutCommand({
        TableName: "items",
        Item: { pk: "p", sk: "s", v: 2 },
        ReturnValues: "ALL_OLD",
      }),
    );
    expect(old.Attributes).toEqual({ pk: "p", sk: "s", v: 1 });
    const created = await db.send(
      new UpdateCommand({
        TableName: "items",
        Key: { pk: "n", sk: "s" },
        UpdateExpression: "SET v = :v",
        ExpressionAttributeValues: { ":v": 1 },
        ReturnValues: "ALL_NEW",
      }),
    );
    expect(created.Attributes).toEqual({ pk: "n", sk: "s", v: 1 });
    const none = await db.send(
      new DeleteCommand({ TableName: "items", Key: { pk: "n", sk: "s" } }),
    );
    expect(none.Attributes).toBeUndefined();
    expect(
      (await db.send(new GetCommand({ TableName: "items", Key: { pk: "n", sk: "s" } }))).Item,
    ).toBeUndefined();
    expect(
      await error(
        db.send(
          new PutCommand({
            TableName: "items",
            Item: { pk: "p", sk: "s" },
            ReturnValues: "ALL_NEW",
          }),
        ),
      ),
    ).toMatch(/ValidationException/);
  });

  it("refuses bad keys, big items, unknown tables and transactions as DynamoDB does", async () => {
    expect(await error(db.send(new PutCommand({ TableName: "items", Item: { pk: "p" } })))).toBe(
      "ValidationException: One or more parameter values were invalid: Missing the key sk in the item",
    );
    expect(
      await error(db.send(new PutCommand({ TableName: "items", Item: { pk: 1, sk: "s" } }))),
    ).toBe(
      "ValidationException: One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N",
    );
    expect(
      await error(db.send(new PutCommand({ TableName: "items", Item: { pk: "", sk: "s" } }))),
    ).toMatch(/cannot contain an empty string value. Key: pk/);
    expect(
      await error(
        db.send(new PutCommand({ TableName: "items", Item: { pk: "p", sk: "s", g: 5 } })),
      ),
    ).toMatch(/Type mismatch for Index Key g/);
    expect(
      await error(
        db.send(
          new PutCommand({
            TableName: "items",
            Item: { pk: "p", sk: "s", big: "x".repeat(400 * 1024) },
          }),
        ),
      ),
    ).toBe("ValidationException: Item size has exceeded the maximum allowed size");
    expect(await error(db.send(new GetCommand({ TableName: "items", Key: { pk: "p" } })))).toBe(
      "ValidationException: The provided key element does not match the schema",
    );
    expect(
      await error(db.send(new GetCommand({ TableName: "nope", Key: { pk: "p", sk: "s" } }))),
    ).toBe("ResourceNotFoundException: Requested resource not found");
    const { TransactWriteItemsCommand } = await import("@aws-sdk/client-dynamodb");
    expect(await error(db.send(new TransactWriteItemsCommand({ TransactItems: [] })))).toMatch(
      /not supported by the embedded backend/,
    );
  });

  it("batches gets and writes, refusing duplicates and oversize batches", async () => {
    await db.send(
      new BatchWriteCommand({
        RequestItems: {
          items: Array.from({ length: 25 }, (_, i) => ({
            PutRequest: { Item: { pk: `b${i}`, sk: "s" } },
          })),
        },
      }),
    );
    const got = await db.send(
      new BatchGetCommand({
        RequestItems: {
          items: {
            Keys: [
              { pk: "b1", sk: "s" },
              { pk: "b24", sk: "s" },
              { pk: "zz", sk: "s" },
            ],
          },
        },
      }),
    );
    expect(got.Responses?.items?.map((i: Row) => i.pk).sort()).toEqual(["b1", "b24"]);
    expect(got.UnprocessedKeys).toEqual({});
    expect(
      await error(
        db.send(
          new BatchWriteCommand({
            RequestItems: {
              items: Array.from({ length: 26 }, (_, i) => ({
                PutRequest: { Item: { pk: `c${i}`, sk: "s" } },
              })),
            },
          }),
        ),
      ),
    ).toMatch(/ValidationException/);
    expect(
      await error(
        db.send(
          new BatchGetCommand({
            RequestItems: {
              items: {
                Keys: [
                  { pk: "b1", sk: "s" },
                  { pk: "b1", sk: "s" },
                ],
              },
            },
          }),
        ),
      ),
    ).toMatch(/duplicates/);
    const del = await db.send(
      new BatchWriteCommand({
        RequestItems: { items: [{ DeleteRequest: { Key: { pk: "b1", sk: "s" } } }] },
      }),
    );
    expect(del.UnprocessedItems).toEqual({});
    expect(
      (
        await db.send(
          new GetItemCommand({ TableName: "items", Key: { pk: { S: "b1" }, sk: { S: "s" } } }),
        )
      ).Item,
    ).toBeUndefined();
  });
});

describe("one file, several connections", () => {
  it("lets exactly one of many racing conditional updates win, and finds tables made elsewhere", async () => {
    const dir = mkdtempSync(join(tmpdir(), "emb-ddb-"));
    dirs.push(dir);
    const file = join(dir, "d.sqlite");
    const a = new EmbeddedDynamoDBClient({ file });
    const b = new EmbeddedDynamoDBClient({ file });
    await table(a, "race");
    await b.send(new PutCommand({ TableName: "race", Item: { pk: "p", sk: "s", rev: 0 } }));
    for (let round = 0; round < 20; round++) {
      const claim = (c: EmbeddedDynamoDBClient, who: string) =>
        c
          .send(
            new UpdateCommand({
              TableName: "race",
              Key: { pk: "p", sk: "s" },
              UpdateExpression: "SET rev = :next, who = :who",
              ConditionExpression: "rev = :rev",
              ExpressionAttributeValues: { ":rev": round, ":next": round + 1, ":who": who },
            }),
          )
          .then(
            () => who,
            (e) => (e.name === "ConditionalCheckFailedException" ? undefined : Promise.reject(e)),
          );
      const wins = (
        await Promise.all([claim(a, "a"), claim(b, "b"), claim(a, "a2"), claim(b, "b2")])
      ).filter(Boolean);
      expect(wins).toHaveLength(1);
      const now = await a.send(
        new GetCommand({ TableName: "race", Key: { pk: "p", sk: "s" }, ConsistentRead: true }),
      );
      expect(now.Item).toMatchObject({ rev: round + 1, who: wins[0] });
    }
    a.destroy();
    b.destroy();
  });

  it("writes to a table another connection deleted and re-created under the new table", async () => {
    const dir = mkdtempSync(join(tmpdir(), "emb-ddb-"));
    dirs.push(dir);
    const file = join(dir, "d.sqlite");
    const a = new EmbeddedDynamoDBClient({ file });
    const b = new EmbeddedDynamoDBClient({ file });
    await table(a, "again");
    await a.send(new PutCommand({ TableName: "again", Item: { pk: "p", sk: "old" } }));
    const { DeleteTableCommand } = await import("@aws-sdk/client-dynamodb");
    await b.send(new DeleteTableCommand({ TableName: "again" }));
    await table(b, "again");
    await a.send(new PutCommand({ TableName: "again", Item: { pk: "p", sk: "new" } }));
    const seen = await b.send(
      new QueryCommand({
        TableName: "again",
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": "p" },
      }),
    );
    expect(skOf(seen.Items)).toEqual(["new"]);
    a.destroy();
    b.destroy();
  });

  it("rolls back a transaction left open before the next write", async () => {
    await db.send(new PutCommand({ TableName: "items", Item: { pk: "p", sk: "kept" } }));
    db.engine.file.db.exec("BEGIN");
    db.engine.file.db.exec("DELETE FROM ddb_items");
    await db.send(new PutCommand({ TableName: "items", Item: { pk: "p", sk: "next" } }));
    const got = await db.send(
      new QueryCommand({
        TableName: "items",
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": "p" },
      }),
    );
    expect(skOf(got.Items)).toEqual(["kept", "next"]);
  });

  it("keeps conditional increments from two processes exact (no lost update, no lock error)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "emb-ddb-"));
    dirs.push(dir);
    const file = join(dir, "d.sqlite");
    const a = new EmbeddedDynamoDBClient({ file });
    await table(a, "counter");
    await a.send(new PutCommand({ TableName: "counter", Item: { pk: "p", sk: "s", n: 0 } }));
    const client = resolve("lib/embedded/dynamodb-client.ts");
    // Each child reads n and writes n + 1 on condition n = what it read, until it has won 150 times.
    const child = `
      const { EmbeddedDynamoDBClient } = await import(${JSON.stringify(client)});
      const { GetCommand, UpdateCommand } = await import("@aws-sdk/lib-dynamodb");
      const db = new EmbeddedDynamoDBClient({ file: ${JSON.stringify(file)} });
      let wins = 0, losses = 0;
      while (wins < 150) {
        const n = (await db.send(new GetCommand({ TableName: "counter", Key: { pk: "p", sk: "s" }, ConsistentRead: true }))).Item.n;
        try {
          await db.send(new UpdateCommand({ TableName: "counter", Key: { pk: "p", sk: "s" }, UpdateExpression: "SET n = :next", ConditionExpression: "n = :n", ExpressionAttributeValues: { ":n": n, ":next": n + 1 } }));
          wins++;
        } catch (e) { if (e.name !== "ConditionalCheckFailedException") throw e; losses++; }
      }
      console.log(JSON.stringify({ wins, losses }));`;
    const run = () =>
      promisify(execFile)(
        process.execPath,
        ["--import", "tsx", "--no-warnings", "--input-type=module", "-e", child],
        { cwd: process.cwd() },
      );
    const outs = await Promise.all([run(), run()]);
    const results = outs.map((o) => JSON.parse(o.stdout.trim()) as { wins: number });
    expect(results.map((r) => r.wins)).toEqual([150, 150]);
    const final = await a.send(
      new GetCommand({ TableName: "counter", Key: { pk: "p", sk: "s" }, ConsistentRead: true }),
    );
    expect(final.Item?.n).toBe(300);
    a.destroy();
  }, 60_000);
});
