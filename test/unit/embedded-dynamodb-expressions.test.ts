/**
 * The embedded DynamoDB engine's expressions (lib/embedded/dynamodb-parse.ts, dynamodb-eval.ts):
 * every condition, update and projection feature, and DynamoDB's validation messages.
 */

import { CreateTableCommand } from "@aws-sdk/client-dynamodb";
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { beforeEach, describe, expect, it } from "vitest";
import { EmbeddedDynamoDBClient } from "../../lib/embedded/dynamodb-client.js";

const T = "exprs";
let db: EmbeddedDynamoDBClient;

beforeEach(async () => {
  db = new EmbeddedDynamoDBClient({ file: ":memory:" });
  await db.send(
    new CreateTableCommand({
      TableName: T,
      AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
    }),
  );
  await db.send(
    new PutCommand({
      TableName: T,
      Item: {
        pk: "a",
        n: 5,
        s: "hello",
        l: [1, "two", { three: 3 }],
        m: { x: { y: 1 } },
        ss: new Set(["p", "q"]),
        b: true,
        z: null,
      },
    }),
  );
});

/** Whether `cond` holds on item `a` (a conditional no-op update that succeeds or fails). */
async function holds(
  cond: string,
  values?: Record<string, unknown>,
  names?: Record<string, string>,
) {
  try {
    await db.send(
      new UpdateCommand({
        TableName: T,
        Key: { pk: "a" },
        UpdateExpression: "SET touched = :__t",
        ConditionExpression: cond,
        ExpressionAttributeValues: { ":__t": 1, ...values },
        ...(names ? { ExpressionAttributeNames: names } : {}),
      }),
    );
    return true;
  } catch (e) {
    if ((e as Error).name === "ConditionalCheckFailedException") return false;
    throw e;
  }
}

async function update(
  expr: string,
  values?: Record<string, unknown>,
  names?: Record<string, string>,
) {
  return db.send(
    new UpdateCommand({
      TableName: T,
      Key: { pk: "a" },
      UpdateExpression: expr,
      ...(values ? { ExpressionAttributeValues: values } : {}),
      ...(names ? { ExpressionAttributeNames: names } : {}),
      ReturnValues: "ALL_NEW",
    }),
  );
}

async function error(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
  return "no error";
}

describe("conditions", () => {
  it("compares with = <> < <= > >= on numbers, strings, and across types", async () => {
    expect(await holds("n = :v", { ":v": 5 })).toBe(true);
    expect(await holds("n <> :v", { ":v": 5 })).toBe(false);
    expect(await holds("n < :v", { ":v": 10 })).toBe(true);
    expect(await holds("n <= :v", { ":v": 5 })).toBe(true);
    expect(await holds("n > :v", { ":v": 5 })).toBe(false);
    expect(await holds("n >= :v", { ":v": 4.5 })).toBe(true);
    expect(await holds("s > :v", { ":v": "hell" })).toBe(true);
    expect(await holds("n = :v", { ":v": "5" })).toBe(false);
    expect(await holds("n < :v", { ":v": "9" })).toBe(false);
    expect(await holds("absent = :v", { ":v": 1 })).toBe(false);
    expect(await holds("absent <> :v", { ":v": 1 })).toBe(true);
  });

  it("evaluates BETWEEN, IN, AND, OR, NOT and parentheses", async () => {
    expect(await holds("n BETWEEN :a AND :b", { ":a": 1, ":b": 5 })).toBe(true);
    expect(await holds("n BETWEEN :a AND :b", { ":a": 6, ":b": 9 })).toBe(false);
    expect(await holds("n IN (:a, :b)", { ":a": 1, ":b": 5 })).toBe(true);
    expect(await holds("s IN (:a)", { ":a": "nope" })).toBe(false);
    expect(await holds("n = :a OR n = :b AND s = :c", { ":a": 5, ":b": 0, ":c": "x" })).toBe(true);
    expect(await holds("(n = :a OR n = :b) AND s = :c", { ":a": 5, ":b": 0, ":c": "x" })).toBe(
      false,
    );
    expect(await holds("NOT n = :a", { ":a": 5 })).toBe(false);
    expect(await holds("not (n = :a and s = :b)", { ":a": 5, ":b": "x" })).toBe(true);
  });

  it("has attribute_exists, attribute_not_exists, attribute_type, begins_with, contains, size", async () => {
    expect(await holds("attribute_exists(m.x.y)")).toBe(true);
    expect(await holds("attribute_exists(l[2].three)")).toBe(true);
    expect(await holds("attribute_not_exists(l[5])")).toBe(true);
    expect(await holds("attribute_type(ss, :t)", { ":t": "SS" })).toBe(true);
    expect(await holds("attribute_type(z, :t)", { ":t": "NULL" })).toBe(true);
    expect(await holds("begins_with(s, :p)", { ":p": "he" })).toBe(true);
    expect(await holds("begins_with(s, :p)", { ":p": "lo" })).toBe(false);
    expect(await holds("contains(s, :p)", { ":p": "ell" })).toBe(true);
    expect(await holds("contains(ss, :p)", { ":p": "q" })).toBe(true);
    expect(await holds("contains(l, :p)", { ":p": "two" })).toBe(true);
    expect(await holds("size(s) = :n", { ":n": 5 })).toBe(true);
    expect(await holds("size(l) > :n", { ":n": 2 })).toBe(true);
    expect(await holds("size(m) = :n", { ":n": 1 })).toBe(true);
  });

  it("resolves #name placeholders, also inside paths", async () => {
    expect(await holds("#m.#x.y = :v", { ":v": 1 }, { "#m": "m", "#x": "x" })).toBe(true);
  });
});

describe("updates", () => {
  it("SET with + and -, if_not_exists and list_append, on nested paths", async () => {
    const out = await update(
      "SET n = n + :one, c = if_not_exists(c, :zero) - :one, l = list_append(l, :more), m.x.w = :one",
      { ":one": 1, ":zero": 0, ":more": ["four"] },
    );
    expect(out.Attributes).toMatchObject({
      n: 6,
      c: -1,
      l: [1, "two", { three: 3 }, "four"],
      m: { x: { y: 1, w: 1 } },
    });
    expect((await update("SET l[0] = :zero, l[9] = :zero", { ":zero": 0 })).Attributes?.l).toEqual([
      0,
      "two",
      { three: 3 },
      "four",
      0,
    ]);
  });

  it("adds numbers exactly (decimals, large integers)", async () => {
    await update("SET d = :a", { ":a": 0.1 });
    expect((await update("SET d = d + :b", { ":b": 0.2 })).Attributes?.d).toBe(0.3);
    await update("SET big = :a", { ":a": 2 ** 53 - 2 });
    expect((await update("ADD big :b", { ":b": 1 })).Attributes?.big).toBe(2 ** 53 - 1);
  });

  it("REMOVE attributes and list elements; ADD and DELETE on numbers and sets", async () => {
    await update("DELETE ss :del", { ":del": new Set(["p"]) });
    const out = await update("REMOVE s, l[1] ADD n :two, ss :add, fresh :two", {
      ":two": 2,
      ":add": new Set(["r"]),
    });
    expect(out.Attributes?.s).toBeUndefined();
    expect(out.Attributes?.l).toEqual([1, { three: 3 }]);
    expect(out.Attributes?.n).toBe(7);
    expect(out.Attributes?.fresh).toBe(2);
    expect(out.Attributes?.ss).toEqual(new Set(["q", "r"]));
    const gone = await update("DELETE ss :all", { ":all": new Set(["q", "r"]) });
    expect(gone.Attributes?.ss).toBeUndefined();
  });

  it("REMOVE of several list elements names the list as it was", async () => {
    await update("SET l5 = :l", { ":l": [0, 1, 2, 3, 4] });
    expect((await update("REMOVE l5[0], l5[1]")).Attributes?.l5).toEqual([2, 3, 4]);
    await update("SET l5 = :l", { ":l": [0, 1, 2, 3, 4] });
    expect((await update("REMOVE l5[1], l5[4], l5[2]")).Attributes?.l5).toEqual([0, 3]);
  });

  it("SET from a path the item lacks fails and changes nothing", async () => {
    expect(await error(update("SET a = nothere"))).toBe(
      "ValidationException: The provided expression refers to an attribute that does not exist in the item",
    );
    expect(await error(update("SET n = :v, q = m.nope", { ":v": 1 }))).toMatch(
      /refers to an attribute that does not exist in the item/,
    );
    const item = await db.send(new GetCommand({ TableName: T, Key: { pk: "a" } }));
    expect(item.Item?.n).toBe(5);
    expect(item.Item && "a" in item.Item).toBe(false);
  });

  it("returns UPDATED_OLD and UPDATED_NEW as the updated paths only", async () => {
    const out = await db.send(
      new UpdateCommand({
        TableName: T,
        Key: { pk: "a" },
        UpdateExpression: "SET n = :v, m.x.y = :v",
        ExpressionAttributeValues: { ":v": 9 },
        ReturnValues: "UPDATED_OLD",
      }),
    );
    expect(out.Attributes).toEqual({ n: 5, m: { x: { y: 1 } } });
  });

  it("refuses key attributes, overlapping paths, wrong types and missing operands", async () => {
    expect(await error(update("SET pk = :v", { ":v": "b" }))).toMatch(
      /Cannot update attribute pk. This attribute is part of the key/,
    );
    expect(await error(update("SET m.x = :v, m.x.y = :v", { ":v": 1 }))).toMatch(
      /Two document paths overlap/,
    );
    expect(await error(update("SET s = s + :v", { ":v": 1 }))).toMatch(/incorrect data type/);
    expect(await error(update("SET q = nothere + :v", { ":v": 1 }))).toMatch(
      /refers to an attribute that does not exist/,
    );
    expect(await error(update("SET nope.deep = :v", { ":v": 1 }))).toMatch(
      /document path provided in the update expression is invalid/,
    );
    expect(await error(update("SET a = :v SET b = :v", { ":v": 1 }))).toMatch(
      /"SET" section can only be used once/,
    );
    expect(await error(update("ADD ss :v DELETE ss :v", { ":v": new Set(["p"]) }))).toMatch(
      /Two document paths overlap/,
    );
  });
});

describe("validation", () => {
  it("names undefined and unused placeholders as DynamoDB does", async () => {
    expect(await error(update("SET a = :v", { ":v": 1, ":x": 2 }))).toBe(
      "ValidationException: Value provided in ExpressionAttributeValues unused in expressions: keys: {:x}",
    );
    expect(await error(update("SET a = :v", { ":v": 1 }, { "#n": "n" }))).toBe(
      "ValidationException: Value provided in ExpressionAttributeNames unused in expressions: keys: {#n}",
    );
    expect(await error(update("SET a = :nope", { ":v": 1 }))).toBe(
      "ValidationException: Invalid UpdateExpression: An expression attribute value used in expression is not defined; attribute value: :nope",
    );
    expect(await error(update("SET #a = :v", { ":v": 1 }))).toMatch(
      /^ValidationException: Invalid UpdateExpression: An expression attribute name used in the document path is not defined; attribute name: #a$/,
    );
    expect(await error(update("SET a = :v", {}))).toBe(
      "ValidationException: ExpressionAttributeValues must not be empty",
    );
  });

  it("refuses reserved words outside #name placeholders", async () => {
    expect(await error(update("SET status = :v", { ":v": 1 }))).toBe(
      "ValidationException: Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: status",
    );
    expect((await update("SET #s = :v", { ":v": 1 }, { "#s": "status" })).Attributes?.status).toBe(
      1,
    );
  });

  it("names the token of a syntax error", async () => {
    expect(await error(update("SET a = = :v", { ":v": 1 }))).toMatch(
      /Invalid UpdateExpression: Syntax error; token: "=", near: "= = :v"/,
    );
    expect(await error(holds("n == :v", { ":v": 1 }))).toMatch(
      /Invalid ConditionExpression: Syntax error; token: "="/,
    );
    expect(await error(holds("n = :v AND", { ":v": 1 }))).toMatch(/Syntax error; token: "<EOF>"/);
    expect(await error(holds("", {}))).toMatch(/The expression can not be empty/);
  });

  it("projects nested paths and list elements", async () => {
    const out = await db.send(
      new GetCommand({
        TableName: T,
        Key: { pk: "a" },
        ProjectionExpression: "m.x, l[2].three, l[0], #s",
        ExpressionAttributeNames: { "#s": "s" },
      }),
    );
    expect(out.Item).toEqual({ m: { x: { y: 1 } }, l: [1, { three: 3 }], s: "hello" });
  });
});
