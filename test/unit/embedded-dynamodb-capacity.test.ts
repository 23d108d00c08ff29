/**
 * Consumed capacity of the embedded DynamoDB engine (lib/embedded/dynamodb-capacity.ts) against
 * the worked examples of the AWS Developer Guide ("Item sizes and formats", "DynamoDB read and
 * write operations", "Global secondary indexes: provisioned throughput considerations").
 */
import { CreateTableCommand } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { beforeEach, describe, expect, it } from "vitest";
import { EmbeddedDynamoDBClient } from "../../lib/embedded/dynamodb-client.js";
import { itemSize } from "../../lib/embedded/dynamodb-values.js";

let db: EmbeddedDynamoDBClient;
let seen: Array<{ op: string; table: string; consumed: Record<string, unknown> }>;

beforeEach(async () => {
  seen = [];
  db = new EmbeddedDynamoDBClient({
    file: ":memory:",
    onCapacity: (op, table, consumed) => seen.push({ op, table, consumed }),
  });
  await db.send(
    new CreateTableCommand({
      TableName: "cap",
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" },
        { AttributeName: "sk", AttributeType: "S" },
        { AttributeName: "g", AttributeType: "S" },
      ],
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: "all",
          KeySchema: [{ AttributeName: "g", KeyType: "HASH" }],
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
});

/** An item of exactly `bytes` bytes: pk "p" (3) + sk (3) + data (4 + n). */
const sized = (bytes: number, sk = "s", extra: Record<string, unknown> = {}) => ({
  pk: "p",
  sk,
  ...extra,
  data: "x".repeat(bytes - 10 - itemSize(toAv(extra))),
});
function toAv(o: Record<string, unknown>) {
  return Object.fromEntries(
    Object.entries(o).map(([k, v]) => [
      k,
      typeof v === "number" ? { N: String(v) } : { S: String(v) },
    ]),
  );
}

describe("item sizes", () => {
  it("adds attribute names and values as the guide says", () => {
    expect(itemSize({ name: { S: "abc" } })).toBe(7);
    expect(itemSize({ n: { N: "12345" } })).toBe(1 + 3 + 1);
    expect(itemSize({ n: { N: "-0.00100" } })).toBe(1 + 1 + 1);
    expect(itemSize({ b: { B: Buffer.from([1, 2, 3]).toString("base64") } })).toBe(4);
    expect(itemSize({ t: { BOOL: true }, z: { NULL: true } })).toBe(4);
    expect(itemSize({ l: { L: [{ S: "ab" }, { N: "1" }] } })).toBe(1 + 3 + (2 + 1) + (2 + 1));
    expect(itemSize({ m: { M: { k: { S: "v" } } } })).toBe(1 + 3 + (1 + 1 + 1));
    expect(itemSize({ e: { M: {} } })).toBe(4);
  });
});

describe("reads", () => {
  it("GetItem: 3,500 bytes is one unit, 10 KB is three; eventually consistent halves them", async () => {
    await db.send(new PutCommand({ TableName: "cap", Item: sized(3500) }));
    await db.send(new PutCommand({ TableName: "cap", Item: sized(10 * 1024, "big") }));
    const small = await db.send(
      new GetCommand({
        TableName: "cap",
        Key: { pk: "p", sk: "s" },
        ConsistentRead: true,
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    expect(small.ConsumedCapacity).toEqual({
      TableName: "cap",
      CapacityUnits: 1,
      ReadCapacityUnits: 1,
    });
    const big = await db.send(
      new GetCommand({
        TableName: "cap",
        Key: { pk: "p", sk: "big" },
        ConsistentRead: true,
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    expect(big.ConsumedCapacity?.CapacityUnits).toBe(3);
    const eventual = await db.send(
      new GetCommand({
        TableName: "cap",
        Key: { pk: "p", sk: "big" },
        ReturnConsumedCapacity: "INDEXES",
      }),
    );
    expect(eventual.ConsumedCapacity).toEqual({
      TableName: "cap",
      CapacityUnits: 1.5,
      ReadCapacityUnits: 1.5,
      Table: { CapacityUnits: 1.5, ReadCapacityUnits: 1.5 },
    });
  });

  it("BatchGetItem rounds each item: 1.5 KB + 6.5 KB is 12 KB, three units", async () => {
    await db.send(new PutCommand({ TableName: "cap", Item: sized(1536, "a") }));
    await db.send(new PutCommand({ TableName: "cap", Item: sized(6656, "b") }));
    const out = await db.send(
      new BatchGetCommand({
        RequestItems: {
          cap: {
            Keys: [
              { pk: "p", sk: "a" },
              { pk: "p", sk: "b" },
            ],
            ConsistentRead: true,
          },
        },
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    expect(out.ConsumedCapacity).toEqual([
      { TableName: "cap", CapacityUnits: 3, ReadCapacityUnits: 3 },
    ]);
  });

  it("Query sums the items read before the filter: 10 items of 40.8 KB are 44 KB, eleven units", async () => {
    for (let i = 0; i < 10; i++)
      await db.send(new PutCommand({ TableName: "cap", Item: sized(4178, `q${i}`) }));
    const out = await db.send(
      new QueryCommand({
        TableName: "cap",
        KeyConditionExpression: "pk = :p",
        FilterExpression: "sk = :none",
        ExpressionAttributeValues: { ":p": "p", ":none": "none" },
        ConsistentRead: true,
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    expect(out.Count).toBe(0);
    expect(out.ConsumedCapacity?.CapacityUnits).toBe(11);
  });
});

describe("writes", () => {
  it("PutItem: the larger of old and new, one unit per KB; each GSI its projected size", async () => {
    const put = await db.send(
      new PutCommand({
        TableName: "cap",
        Item: sized(1536, "s", { g: "G", a: "A" }),
        ReturnConsumedCapacity: "INDEXES",
      }),
    );
    expect(put.ConsumedCapacity).toEqual({
      TableName: "cap",
      CapacityUnits: 2 + 2 + 1 + 1,
      WriteCapacityUnits: 6,
      Table: { CapacityUnits: 2, WriteCapacityUnits: 2 },
      GlobalSecondaryIndexes: {
        all: { CapacityUnits: 2, WriteCapacityUnits: 2 },
        keys: { CapacityUnits: 1, WriteCapacityUnits: 1 },
        incl: { CapacityUnits: 1, WriteCapacityUnits: 1 },
      },
    });
    const smaller = await db.send(
      new PutCommand({
        TableName: "cap",
        Item: { pk: "p", sk: "s", g: "G", a: "A" },
        ReturnConsumedCapacity: "INDEXES",
      }),
    );
    expect(smaller.ConsumedCapacity?.Table).toEqual({ CapacityUnits: 2, WriteCapacityUnits: 2 });
    // ALL changed (data removed), KEYS_ONLY and INCLUDE did not.
    expect(smaller.ConsumedCapacity?.GlobalSecondaryIndexes).toEqual({
      all: { CapacityUnits: 1, WriteCapacityUnits: 1 },
    });
  });

  it("UpdateItem: a small change to a 3.5 KB item costs four; GSI key change delete + put; non-projected change nothing", async () => {
    await db.send(new PutCommand({ TableName: "cap", Item: sized(3584, "s", { g: "G", a: "A" }) }));
    const up = await db.send(
      new UpdateCommand({
        TableName: "cap",
        Key: { pk: "p", sk: "s" },
        UpdateExpression: "SET o = :v",
        ExpressionAttributeValues: { ":v": 1 },
        ReturnConsumedCapacity: "INDEXES",
      }),
    );
    expect(up.ConsumedCapacity?.Table?.CapacityUnits).toBe(4);
    expect(up.ConsumedCapacity?.GlobalSecondaryIndexes).toEqual({
      all: { CapacityUnits: 4, WriteCapacityUnits: 4 },
    });
    const key = await db.send(
      new UpdateCommand({
        TableName: "cap",
        Key: { pk: "p", sk: "s" },
        UpdateExpression: "SET g = :h",
        ExpressionAttributeValues: { ":h": "H" },
        ReturnConsumedCapacity: "INDEXES",
      }),
    );
    expect(key.ConsumedCapacity?.GlobalSecondaryIndexes).toEqual({
      all: { CapacityUnits: 5, WriteCapacityUnits: 5 },
      keys: { CapacityUnits: 2, WriteCapacityUnits: 2 },
      incl: { CapacityUnits: 2, WriteCapacityUnits: 2 },
    });
    const gone = await db.send(
      new UpdateCommand({
        TableName: "cap",
        Key: { pk: "p", sk: "s" },
        UpdateExpression: "REMOVE g",
        ReturnConsumedCapacity: "INDEXES",
      }),
    );
    expect(gone.ConsumedCapacity?.GlobalSecondaryIndexes).toEqual({
      all: { CapacityUnits: 1, WriteCapacityUnits: 1 },
      keys: { CapacityUnits: 1, WriteCapacityUnits: 1 },
      incl: { CapacityUnits: 1, WriteCapacityUnits: 1 },
    });
  });

  it("DeleteItem: the deleted item's size (at least one); a failed condition still consumes, seen only by the observer", async () => {
    await db.send(new PutCommand({ TableName: "cap", Item: sized(2048, "s", { g: "G" }) }));
    seen = [];
    const err = await db
      .send(
        new DeleteCommand({
          TableName: "cap",
          Key: { pk: "p", sk: "s" },
          ConditionExpression: "attribute_not_exists(pk)",
          ReturnConsumedCapacity: "TOTAL",
        }),
      )
      .catch((e) => e);
    expect(err.name).toBe("ConditionalCheckFailedException");
    expect(err.ConsumedCapacity).toBeUndefined();
    expect(seen).toEqual([
      {
        op: "DeleteItem",
        table: "cap",
        consumed: {
          TableName: "cap",
          CapacityUnits: 2,
          WriteCapacityUnits: 2,
          Table: { CapacityUnits: 2, WriteCapacityUnits: 2 },
        },
      },
    ]);
    const del = await db.send(
      new DeleteCommand({
        TableName: "cap",
        Key: { pk: "p", sk: "s" },
        ReturnConsumedCapacity: "INDEXES",
      }),
    );
    expect(del.ConsumedCapacity?.Table?.CapacityUnits).toBe(2);
    expect(del.ConsumedCapacity?.GlobalSecondaryIndexes).toEqual({
      all: { CapacityUnits: 1, WriteCapacityUnits: 1 },
      keys: { CapacityUnits: 1, WriteCapacityUnits: 1 },
      incl: { CapacityUnits: 1, WriteCapacityUnits: 1 },
    });
    const missing = await db.send(
      new DeleteCommand({
        TableName: "cap",
        Key: { pk: "p", sk: "s" },
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    expect(missing.ConsumedCapacity?.CapacityUnits).toBe(1);
  });
});
