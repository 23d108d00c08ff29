/**
 * What DynamoDB bills for one request, computed from the items (pure): item sizes, write units of
 * the table and of each global secondary index, read units. The rules are the AWS DynamoDB
 * Developer Guide's:
 * - "DynamoDB item sizes and formats" (CapacityUnitCalculations.html): an item's size is the sum
 *   of its attribute names' and values' sizes; strings are UTF-8 bytes, numbers (1 byte per two
 *   significant digits) + 1, binaries raw bytes, null/Boolean 1, lists and maps 3 bytes + 1 byte
 *   per element + their elements;
 * - "Read/write capacity mode" (read-write-operations.html): one write unit per 1 KB of the
 *   larger of the item's before and after images (PutItem, UpdateItem; DeleteItem: the deleted
 *   item), at least 1; a write whose condition fails still consumes the units of the existing
 *   item (at least 1) and writes no index; one read unit per 4 KB (strongly consistent), half of
 *   it eventually consistent; a Query adds up the items it reads and rounds once;
 * - "Global secondary indexes" (GSI.html, "Provisioned throughput considerations"): putting an
 *   item into an index, or taking it out, is one index write of the index entry's size; changing
 *   an index key attribute is two (delete + put); changing only projected attributes is one;
 *   an item absent from the index before and after costs the index nothing. An index entry holds
 *   the table's key, the index's key and the projected attributes.
 * Items here are in the wire form (`{ S: "x" }`, `{ N: "1" }`, …: `marshall` from
 * @aws-sdk/util-dynamodb gives it for a document client's values).
 */

/** An attribute value in DynamoDB's wire form. */
export type AttributeValue = Record<string, unknown>;
/** An item in DynamoDB's wire form. */
export type WireItem = Record<string, AttributeValue>;

/** A table's description, as far as the units depend on it (from DescribeTable). */
export interface TableShape {
  /** The table's key attribute names (partition, then sort). */
  keys: string[];
  indexes: IndexShape[];
}

/** One global secondary index of a table. */
export interface IndexShape {
  name: string;
  /** The index's key attribute names. */
  keys: string[];
  /** ALL, KEYS_ONLY or INCLUDE (with `include`: the non-key attributes projected). */
  projection: "ALL" | "KEYS_ONLY" | "INCLUDE";
  include?: string[];
}

const utf8 = (s: string): number => Buffer.byteLength(s, "utf8");

/** Size of a number as DynamoDB counts it: 1 byte per two significant digits, plus 1 (plus 1 when negative). */
export function numberSize(n: string): number {
  const negative = n.trim().startsWith("-");
  const [mantissa = ""] = n.trim().replace(/^[-+]/, "").toLowerCase().split("e");
  const digits = mantissa.replace(".", "").replace(/^0+/, "").replace(/0+$/, "");
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1 + (negative ? 1 : 0);
}

/** Size in bytes of one attribute value (without its name). */
export function valueSize(v: AttributeValue): number {
  if ("S" in v) return utf8(String(v.S));
  if ("N" in v) return numberSize(String(v.N));
  if ("B" in v) return (v.B as Uint8Array).length;
  if ("BOOL" in v || "NULL" in v) return 1;
  if ("SS" in v) return (v.SS as string[]).reduce((a, s) => a + utf8(s), 0);
  if ("NS" in v) return (v.NS as string[]).reduce((a, s) => a + numberSize(s), 0);
  if ("BS" in v) return (v.BS as Uint8Array[]).reduce((a, b) => a + b.length, 0);
  if ("L" in v) return 3 + (v.L as AttributeValue[]).reduce((a, e) => a + 1 + valueSize(e), 0);
  if ("M" in v) {
    const m = v.M as WireItem;
    return 3 + Object.entries(m).reduce((a, [k, e]) => a + 1 + utf8(k) + valueSize(e), 0);
  }
  throw new Error(`unknown attribute value type: ${Object.keys(v).join(",")}`);
}

/** Size in bytes of an item: its attribute names and values. */
export function itemSize(item: WireItem | undefined): number {
  if (!item) return 0;
  let n = 0;
  for (const [k, v] of Object.entries(item)) n += utf8(k) + valueSize(v);
  return n;
}

/** Write units of `bytes`: one per KB started, at least 1. */
export const writeUnits = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));

/** Read units of `bytes`: one per 4 KB started (at least 1), half when eventually consistent. */
export const readUnits = (bytes: number, consistent: boolean): number =>
  Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);

/** The item's entry in an index (table key + index key + projected attributes), or undefined when the item is not in it. */
export function indexEntry(
  table: TableShape,
  index: IndexShape,
  item: WireItem | undefined,
): WireItem | undefined {
  if (!item || !index.keys.every((k) => k in item)) return undefined;
  if (index.projection === "ALL") return item;
  const keep = new Set([...table.keys, ...index.keys, ...(index.include ?? [])]);
  const out: WireItem = {};
  for (const [k, v] of Object.entries(item)) if (keep.has(k)) out[k] = v;
  return out;
}

/** Deep equality of two wire values (sets compared in order, as DynamoDB returns them). */
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Index write units of one successful table write that took the item from `before` to `after`. */
export function indexWriteUnits(
  table: TableShape,
  index: IndexShape,
  before: WireItem | undefined,
  after: WireItem | undefined,
): number {
  const o = indexEntry(table, index, before);
  const n = indexEntry(table, index, after);
  if (!o && !n) return 0;
  if (!o) return writeUnits(itemSize(n));
  if (!n) return writeUnits(itemSize(o));
  const keyChanged = index.keys.some((k) => !same(o[k], n[k]));
  if (keyChanged) return writeUnits(itemSize(o)) + writeUnits(itemSize(n));
  if (same(o, n)) return 0;
  return writeUnits(Math.max(itemSize(o), itemSize(n)));
}

/** Units of one write request: the table's, and each index's (by name; only those written). */
export interface WriteCharge {
  table: number;
  indexes: Record<string, number>;
}

/**
 * What one PutItem/UpdateItem/DeleteItem (or one request of a BatchWriteItem) consumes.
 * @param before the item before the write (undefined: there was none).
 * @param after the item after it (undefined: deleted, or the write failed).
 * @param failed the write's condition failed: the table is charged the existing item, no index.
 */
export function writeCharge(
  table: TableShape,
  before: WireItem | undefined,
  after: WireItem | undefined,
  failed = false,
): WriteCharge {
  if (failed) return { table: writeUnits(itemSize(before)), indexes: {} };
  const indexes: Record<string, number> = {};
  for (const ix of table.indexes) {
    const u = indexWriteUnits(table, ix, before, after);
    if (u > 0) indexes[ix.name] = u;
  }
  return { table: writeUnits(Math.max(itemSize(before), itemSize(after))), indexes };
}

/** Read units of a Query or Scan that read `items` (sizes added up, rounded once). */
export function queryReadUnits(items: readonly WireItem[], consistent: boolean): number {
  return readUnits(
    items.reduce((a, i) => a + itemSize(i), 0),
    consistent,
  );
}

/** The parts of a DescribeTable answer the units depend on. */
export function tableShape(description: {
  KeySchema?: Array<{ AttributeName?: string }>;
  GlobalSecondaryIndexes?: Array<{
    IndexName?: string;
    KeySchema?: Array<{ AttributeName?: string }>;
    Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] };
  }>;
}): TableShape {
  const names = (ks?: Array<{ AttributeName?: string }>) =>
    (ks ?? []).map((k) => k.AttributeName ?? "");
  return {
    keys: names(description.KeySchema),
    indexes: (description.GlobalSecondaryIndexes ?? []).map((g) => ({
      name: g.IndexName ?? "?",
      keys: names(g.KeySchema),
      projection: (g.Projection?.ProjectionType ?? "ALL") as IndexShape["projection"],
      ...(g.Projection?.NonKeyAttributes ? { include: g.Projection.NonKeyAttributes } : {}),
    })),
  };
}
