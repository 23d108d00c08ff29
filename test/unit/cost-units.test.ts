import { describe, expect, it } from "vitest";
import {
  indexWriteUnits,
  itemSize,
  numberSize,
  queryReadUnits,
  readUnits,
  type TableShape,
  tableShape,
  writeCharge,
  writeUnits,
} from "../../bench/cost-units.js";
import { isWireItem } from "../../bench/cost-wire.js";

// The tasks table's shape as DescribeTable gives it: the `leases` GSI holds running tasks only.
const TASKS: TableShape = tableShape({
  KeySchema: [{ AttributeName: "instanceId" }, { AttributeName: "code" }],
  GlobalSecondaryIndexes: [
    {
      IndexName: "leases",
      KeySchema: [{ AttributeName: "leaseShard" }, { AttributeName: "leaseUntil" }],
      Projection: { ProjectionType: "KEYS_ONLY" },
    },
  ],
});

describe("item sizes (DynamoDB Developer Guide, 'Item sizes and formats')", () => {
  it("counts names and UTF-8 bytes of strings", () => {
    expect(itemSize({ a: { S: "hello" } })).toBe(1 + 5);
    expect(itemSize({ ä: { S: "é" } })).toBe(2 + 2);
  });

  it("counts numbers as one byte per two significant digits plus one", () => {
    expect(numberSize("7")).toBe(2);
    expect(numberSize("1234")).toBe(3);
    expect(numberSize("12345")).toBe(4);
    expect(numberSize("1000")).toBe(2); // trailing zeros trimmed
    expect(numberSize("0.001")).toBe(2); // leading zeros trimmed
    expect(numberSize("-12")).toBe(3);
  });

  it("counts lists and maps with 3 bytes of overhead and 1 byte per element", () => {
    expect(itemSize({ l: { L: [] } })).toBe(1 + 3);
    expect(itemSize({ l: { L: [{ S: "ab" }, { BOOL: true }] } })).toBe(1 + 3 + (1 + 2) + (1 + 1));
    expect(itemSize({ m: { M: { k: { S: "v" } } } })).toBe(1 + 3 + 1 + 1 + 1);
    expect(itemSize({ n: { NULL: true } })).toBe(2);
    expect(itemSize({ b: { B: new Uint8Array(10) } })).toBe(11);
    expect(itemSize({ s: { SS: ["a", "bc"] } })).toBe(1 + 3);
  });
});

describe("write and read units", () => {
  it("charges 1 KB write units, at least one", () => {
    expect(writeUnits(0)).toBe(1);
    expect(writeUnits(1024)).toBe(1);
    expect(writeUnits(1025)).toBe(2);
  });

  it("charges 4 KB read units, half when eventually consistent", () => {
    expect(readUnits(100, true)).toBe(1);
    expect(readUnits(100, false)).toBe(0.5);
    expect(readUnits(4097, true)).toBe(2);
    // A query adds its items up and rounds once.
    expect(
      queryReadUnits([{ a: { S: "x".repeat(3000) } }, { a: { S: "y".repeat(3000) } }], true),
    ).toBe(2);
  });

  it("charges the larger of the before and after images", () => {
    const small = { instanceId: { S: "i" }, code: { S: "c" } };
    const big = { ...small, blob: { S: "x".repeat(3000) } };
    expect(writeCharge(TASKS, big, small).table).toBe(3);
    expect(writeCharge(TASKS, small, big).table).toBe(3);
    expect(writeCharge(TASKS, big, undefined).table).toBe(3); // a delete
  });

  it("charges a failed conditional write the existing item, and no index", () => {
    const leased = {
      instanceId: { S: "i" },
      code: { S: "c" },
      leaseShard: { N: "3" },
      leaseUntil: { N: "1700000000000" },
    };
    expect(writeCharge(TASKS, leased, undefined, true)).toEqual({ table: 1, indexes: {} });
    expect(writeCharge(TASKS, undefined, undefined, true).table).toBe(1);
  });
});

describe("GSI write units (Developer Guide, 'Global secondary indexes')", () => {
  const ix = TASKS.indexes[0] as TableShape["indexes"][number];
  const base = { instanceId: { S: "i" }, code: { S: "c" }, state: { S: "RUNNING" } };
  const leased = (until: string) => ({
    ...base,
    leaseShard: { N: "3" },
    leaseUntil: { N: until },
  });

  it("costs nothing when the item is in the index neither before nor after", () => {
    expect(indexWriteUnits(TASKS, ix, base, { ...base, state: { S: "SUCCESS" } })).toBe(0);
  });

  it("costs one write to put an item in, and one to take it out", () => {
    expect(indexWriteUnits(TASKS, ix, base, leased("1"))).toBe(1);
    expect(indexWriteUnits(TASKS, ix, leased("1"), base)).toBe(1);
    expect(indexWriteUnits(TASKS, ix, leased("1"), undefined)).toBe(1);
  });

  it("costs two writes when an index key changes (a lease renewal)", () => {
    expect(indexWriteUnits(TASKS, ix, leased("1"), leased("2"))).toBe(2);
  });

  it("costs nothing when only unprojected attributes change (KEYS_ONLY)", () => {
    expect(indexWriteUnits(TASKS, ix, leased("1"), { ...leased("1"), state: { S: "X" } })).toBe(0);
  });

  it("costs one write when a projected non-key attribute changes (ALL)", () => {
    const all: TableShape = { keys: TASKS.keys, indexes: [{ ...ix, projection: "ALL" }] };
    const i = all.indexes[0] as TableShape["indexes"][number];
    expect(indexWriteUnits(all, i, leased("1"), { ...leased("1"), state: { S: "X" } })).toBe(1);
  });

  it("adds index units by name to a write's charge", () => {
    expect(writeCharge(TASKS, base, leased("1"))).toEqual({ table: 1, indexes: { leases: 1 } });
  });
});

describe("wire form detection", () => {
  it("tells a wire item from a document client's plain values", () => {
    expect(isWireItem({ a: { S: "x" }, b: { N: "1" } })).toBe(true);
    expect(isWireItem({ a: "x" })).toBe(false);
    expect(isWireItem({ a: { S: "x", extra: 1 } })).toBe(false);
    expect(isWireItem({ a: new Set(["x"]) })).toBe(false);
  });
});
