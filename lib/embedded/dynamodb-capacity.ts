/**
 * Consumed capacity as DynamoDB on-demand bills it (AWS Developer Guide, "DynamoDB read and
 * write operations", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html,
 * and "Provisioned throughput considerations for Global Secondary Indexes",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations):
 * a write is 1 unit per started KB, a read 1 unit per started 4 KB (half when eventually
 * consistent); each GSI entry put costs 1 unit per started KB of its projected size, a delete 1.
 */
import type { IndexMeta, TableMeta } from "./dynamodb-store.js";
import { type AV, equalValues, type Item, itemSize, valueSize } from "./dynamodb-values.js";

/** Units of one operation on one table: the table's and each GSI's. */
export interface Consumed {
  kind: "read" | "write";
  table: number;
  indexes: Record<string, number>;
}

/** Write units of an item of `size` bytes (at least 1). */
export function writeUnits(size: number): number {
  return Math.max(1, Math.ceil(size / 1024));
}

/** Read units of `size` bytes read in one request (at least one 4 KB block). */
export function readUnits(size: number, consistent: boolean): number {
  return Math.max(1, Math.ceil(size / 4096)) * (consistent ? 1 : 0.5);
}

/** The attributes index `ix` holds of `item`: both keys, plus its projection. */
export function projectIndex(meta: TableMeta, ix: IndexMeta, item: Item): Item {
  if (ix.projection === "ALL") return item;
  const out: Item = {};
  const names = [
    meta.hash.name,
    meta.range?.name,
    ix.hash.name,
    ix.range?.name,
    ...(ix.projection === "INCLUDE" ? ix.include : []),
  ];
  for (const n of names) if (n && item[n]) out[n] = item[n] as AV;
  return out;
}

function inIndex(ix: IndexMeta, item: Item | undefined): boolean {
  return (
    !!item && item[ix.hash.name] !== undefined && (!ix.range || item[ix.range.name] !== undefined)
  );
}

function sameProjection(a: Item, b: Item): boolean {
  const ka = Object.keys(a);
  return (
    ka.length === Object.keys(b).length &&
    ka.every((k) => b[k] !== undefined && equalValues(a[k] as AV, b[k] as AV))
  );
}

/**
 * GSI write units of changing an item from `old` to `now` (either may be absent): put of a new
 * entry ceil(projected KB), delete 1, key change delete + put, a projected attribute changed
 * a put, nothing projected changed 0.
 */
export function indexWrites(
  meta: TableMeta,
  old: Item | undefined,
  now: Item | undefined,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const ix of meta.indexes) {
    const before = inIndex(ix, old);
    const after = inIndex(ix, now);
    let units = 0;
    if (before && !after) units = 1;
    else if (!before && after) units = writeUnits(itemSize(projectIndex(meta, ix, now as Item)));
    else if (before && after) {
      const o = old as Item;
      const n = now as Item;
      const keyChanged =
        !equalValues(o[ix.hash.name] as AV, n[ix.hash.name] as AV) ||
        (!!ix.range && !equalValues(o[ix.range.name] as AV, n[ix.range.name] as AV));
      const pn = projectIndex(meta, ix, n);
      if (keyChanged) units = 1 + writeUnits(itemSize(pn));
      else if (!sameProjection(projectIndex(meta, ix, o), pn)) units = writeUnits(itemSize(pn));
    }
    if (units > 0) out[ix.name] = units;
  }
  return out;
}

/** Sum of a {@link Consumed}. */
export function totalUnits(c: Consumed): number {
  return c.table + Object.values(c.indexes).reduce((s, n) => s + n, 0);
}

/**
 * DynamoDB's ConsumedCapacity shape for `mode` (TOTAL: name and totals; INDEXES: also `Table`
 * and `GlobalSecondaryIndexes`).
 */
export function capacityShape(
  tableName: string,
  c: Consumed,
  mode: "TOTAL" | "INDEXES",
): Record<string, unknown> {
  const field = c.kind === "read" ? "ReadCapacityUnits" : "WriteCapacityUnits";
  const units = (n: number) => ({ CapacityUnits: n, [field]: n });
  const total = totalUnits(c);
  const out: Record<string, unknown> = { TableName: tableName, ...units(total) };
  if (mode === "INDEXES") {
    out.Table = units(c.table);
    const names = Object.keys(c.indexes);
    if (names.length > 0)
      out.GlobalSecondaryIndexes = Object.fromEntries(
        names.map((n) => [n, units(c.indexes[n] as number)]),
      );
  }
  return out;
}

/** The size of the named attributes alone (a KEYS_ONLY / INCLUDE entry's read size). */
export function sizeOf(item: Item): number {
  let n = 0;
  for (const k in item) n += Buffer.byteLength(k) + valueSize(item[k] as AV);
  return n;
}
