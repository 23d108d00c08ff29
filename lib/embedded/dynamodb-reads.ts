/**
 * Item reads of the embedded DynamoDB engine: GetItem, BatchGetItem, Query and Scan, with
 * DynamoDB's paging (Limit counts items read before the filter; a page stops at 1 MB read;
 * LastEvaluatedKey carries the table key, plus the index key on an index), GSI projections and
 * read capacity (a Query or Scan page is one read of the summed sizes; BatchGetItem per item).
 */
import { type Consumed, projectIndex, readUnits } from "./dynamodb-capacity.js";
import { bind, evalCond, resolvePath } from "./dynamodb-eval.js";
import {
  type Cond,
  type Operand,
  type Path,
  parseCondition,
  parseProjection,
} from "./dynamodb-parse.js";
import { projectPaths } from "./dynamodb-projection.js";
import {
  type DynamoFile,
  type IndexMeta,
  type KeyAttr,
  type TableMeta,
  tableKey,
} from "./dynamodb-store.js";
import { requireTable } from "./dynamodb-tables.js";
import { type AV, encodeKey, type Item, itemSize, validation } from "./dynamodb-values.js";
import { normalizeItem, type Report } from "./dynamodb-writes.js";

// biome-ignore lint/suspicious/noExplicitAny: request shapes are checked field by field
type Input = any;

const PAGE_BYTES = 1024 * 1024;

function projection(input: Input, extra: Array<{ text?: string; label: string }>) {
  for (const k of [
    "AttributesToGet",
    "KeyConditions",
    "QueryFilter",
    "ScanFilter",
    "ConditionalOperator",
  ])
    if (input[k] !== undefined)
      throw validation(
        `${k} (a legacy parameter) is not supported by the embedded backend: use expressions`,
      );
  const list = extra
    .filter((e) => e.text !== undefined)
    .map((e) => ({ parsed: parseCondition(e.text as string, e.label), label: e.label }));
  const proj =
    input.ProjectionExpression !== undefined
      ? parseProjection(input.ProjectionExpression)
      : undefined;
  const b = bind(
    [...list, ...(proj ? [{ parsed: proj, label: "ProjectionExpression" }] : [])],
    input.ExpressionAttributeNames,
    input.ExpressionAttributeValues && normalizeItem(input.ExpressionAttributeValues),
  );
  const paths = proj?.tree.map((p) => resolvePath(p, b));
  return { b, paths, conds: list.map((l) => l.parsed.tree) };
}

/** GetItem. */
export function getItem(file: DynamoFile, input: Input, report: Report) {
  const meta = requireTable(file, input.TableName);
  const [pk, sk] = tableKey(meta, input.Key && normalizeItem(input.Key), true);
  const { paths } = projection(input, []);
  const row = file.get(meta, pk, sk);
  report("GetItem", meta.name, {
    kind: "read",
    table: readUnits(row?.size ?? 0, input.ConsistentRead === true),
    indexes: {},
  });
  if (!row) return {};
  return { Item: paths ? projectPaths(row.item, paths) : row.item };
}

/** BatchGetItem: up to 100 keys; UnprocessedKeys is always empty. */
export function batchGetItem(file: DynamoFile, input: Input, report: Report) {
  const requests = Object.entries((input.RequestItems ?? {}) as Record<string, Input>);
  const n = requests.reduce((s, [, r]) => s + (r.Keys?.length ?? 0), 0);
  if (n > 100) throw validation("Too many items requested for the BatchGetItem call");
  const Responses: Record<string, Item[]> = {};
  for (const [name, r] of requests) {
    const meta = requireTable(file, name);
    const { paths } = projection(r, []);
    const seen = new Set<string>();
    const c: Consumed = { kind: "read", table: 0, indexes: {} };
    const items: Item[] = [];
    for (const key of (r.Keys ?? []) as Item[]) {
      const [pk, sk] = tableKey(meta, normalizeItem(key), true);
      const id = Buffer.concat([pk, Buffer.from([0]), sk]).toString("base64");
      if (seen.has(id)) throw validation("Provided list of item keys contains duplicates");
      seen.add(id);
      const row = file.get(meta, pk, sk);
      c.table += readUnits(row?.size ?? 0, r.ConsistentRead === true);
      if (row) items.push(paths ? projectPaths(row.item, paths) : row.item);
    }
    Responses[name] = items;
    report("BatchGetItem", name, c);
  }
  return { Responses, UnprocessedKeys: {} };
}

interface Row {
  pk: Uint8Array;
  sk: Uint8Array;
  ipk?: Uint8Array;
  isk?: Uint8Array;
  item: string;
  size: number;
}

/** A range condition on the sort key, as SQL on column `col`. */
interface Range {
  sql: string;
  args: Array<Uint8Array | number>;
}

function keyValue(op: Operand, b: { values: Record<string, AV> }, attr: KeyAttr): Uint8Array {
  const v = op.kind === "value" ? b.values[op.name] : undefined;
  if (!v || (v as Record<string, unknown>)[attr.type] === undefined)
    throw validation(
      `One or more parameter values were invalid: Condition parameter type does not match schema type`,
    );
  return encodeKey(v);
}

function keyConditions(
  cond: Cond,
  b: { names: Record<string, string>; values: Record<string, AV> },
  hash: KeyAttr,
  range: KeyAttr | undefined,
  col: string,
) {
  const parts: Cond[] = [];
  const flat = (c: Cond) => {
    if (c.kind === "and") {
      flat(c.a);
      flat(c.b);
    } else parts.push(c);
  };
  flat(cond);
  const invalid = (why: string) => validation(`Invalid KeyConditionExpression: ${why}`);
  const nameOf = (o: Operand) => {
    if (o.kind !== "path" || o.els.length !== 1)
      throw invalid("Key conditions must name a key attribute");
    return resolvePath(o as Path, b)[0] as string;
  };
  let pk: Uint8Array | undefined;
  let r: Range | undefined;
  for (const c of parts) {
    const attr =
      c.kind === "fn" || c.kind === "cmp" || c.kind === "between"
        ? nameOf(c.kind === "fn" ? (c.args[0] as Operand) : c.a)
        : undefined;
    if (!attr)
      throw invalid(`Invalid operator used in KeyConditionExpression: ${c.kind.toUpperCase()}`);
    if (attr === hash.name) {
      if (c.kind !== "cmp" || c.op !== "=") throw validation("Query key condition not supported");
      if (pk) throw invalid("KeyConditionExpressions must only contain one condition per key");
      pk = keyValue(c.b, b, hash);
    } else if (range && attr === range.name) {
      if (r) throw invalid("KeyConditionExpressions must only contain one condition per key");
      if (c.kind === "cmp") {
        if (c.op === "<>")
          throw invalid("Unsupported operator on KeyConditionExpression: operator: <>");
        r = { sql: `${col} ${c.op} ?`, args: [keyValue(c.b, b, range)] };
      } else if (c.kind === "between") {
        const lo = keyValue(c.lo, b, range);
        const hi = keyValue(c.hi, b, range);
        if (Buffer.compare(lo, hi) > 0)
          throw invalid(
            "The BETWEEN operator requires upper bound to be greater than or equal to lower bound",
          );
        r = { sql: `${col} >= ? AND ${col} <= ?`, args: [lo, hi] };
      } else if (c.kind === "fn" && c.name === "begins_with") {
        if (range.type === "N")
          throw invalid(
            "Incorrect operand type for operator or function; operator or function: begins_with, operand type: N",
          );
        const p = keyValue(c.args[1] as Operand, b, range);
        r = { sql: `${col} >= ? AND substr(${col}, 1, ?) = ?`, args: [p, p.length, p] };
      } else
        throw invalid(
          `Invalid operator used in KeyConditionExpression: ${c.kind === "fn" ? c.name : c.kind}`,
        );
    } else throw validation(`Query condition missed key schema element: ${hash.name}`);
  }
  if (!pk) throw validation(`Query condition missed key schema element: ${hash.name}`);
  return { pk, range: r };
}

function startKey(meta: TableMeta, ix: IndexMeta | undefined, esk: Item | undefined) {
  if (!esk) return undefined;
  const bad = () =>
    validation(
      "The provided starting key is invalid: The provided key element does not match the schema",
    );
  try {
    const [pk, sk] = tableKey(meta, esk, false);
    if (!ix) {
      if (Object.keys(esk).length !== (meta.range ? 2 : 1)) throw bad();
      return { pk, sk };
    }
    const h = esk[ix.hash.name];
    const r = ix.range && esk[ix.range.name];
    if (!h || (ix.range && !r)) throw bad();
    return { pk, sk, ipk: encodeKey(h), isk: r ? encodeKey(r) : new Uint8Array(0) };
  } catch {
    throw bad();
  }
}

function keyOf(meta: TableMeta, ix: IndexMeta | undefined, item: Item): Item {
  const out: Item = {};
  for (const a of [meta.hash, meta.range, ix?.hash, ix?.range])
    if (a && item[a.name]) out[a.name] = item[a.name] as AV;
  return out;
}

function fnv(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const x of bytes) h = Math.imul(h ^ x, 0x01000193) >>> 0;
  return h;
}

/** Query and Scan. */
export function readPage(file: DynamoFile, input: Input, report: Report, op: "Query" | "Scan") {
  const meta = requireTable(file, input.TableName);
  const ix =
    input.IndexName !== undefined
      ? meta.indexes.find((x) => x.name === input.IndexName)
      : undefined;
  if (input.IndexName !== undefined && !ix)
    throw validation(`The table does not have the specified index: ${input.IndexName}`);
  if (ix && input.ConsistentRead === true)
    throw validation("Consistent reads are not supported on global secondary indexes");
  const limit = input.Limit;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1))
    throw validation(
      "1 validation error detected: Value at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    );
  const select =
    input.Select ??
    (input.ProjectionExpression
      ? "SPECIFIC_ATTRIBUTES"
      : ix
        ? "ALL_PROJECTED_ATTRIBUTES"
        : "ALL_ATTRIBUTES");
  if (select === "ALL_ATTRIBUTES" && ix && ix.projection !== "ALL")
    throw validation(
      "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index " +
        ix.name +
        " because its projection type is not ALL",
    );
  if (select === "ALL_PROJECTED_ATTRIBUTES" && !ix)
    throw validation(
      "One or more parameter values were invalid: Select type ALL_PROJECTED_ATTRIBUTES is supported only for index queries",
    );
  if (op === "Query" && input.KeyConditionExpression === undefined)
    throw validation(
      "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
    );
  const { b, paths, conds } = projection(input, [
    { text: input.KeyConditionExpression, label: "KeyConditionExpression" },
    { text: input.FilterExpression, label: "FilterExpression" },
  ]);
  const keyCond = op === "Query" ? conds[0] : undefined;
  const filter = op === "Query" ? conds[1] : conds[0];
  const forward = op === "Scan" || input.ScanIndexForward !== false;
  const dir = forward ? "ASC" : "DESC";
  const cmp = forward ? ">" : "<";
  const start = startKey(
    meta,
    ix,
    input.ExclusiveStartKey && normalizeItem(input.ExclusiveStartKey),
  );
  let segment: ((r: Row) => boolean) | undefined;
  if (op === "Scan" && (input.Segment !== undefined || input.TotalSegments !== undefined)) {
    const total = input.TotalSegments;
    const seg = input.Segment;
    if (
      !Number.isInteger(total) ||
      total < 1 ||
      total > 1000000 ||
      !Number.isInteger(seg) ||
      seg < 0 ||
      seg >= total
    )
      throw validation(
        "The Segment parameter is required but was not present in the request when parameter TotalSegments is present",
      );
    segment = (r) => fnv(r.ipk ?? r.pk) % total === seg;
  }
  const kc =
    keyCond &&
    keyConditions(
      keyCond,
      b,
      ix ? ix.hash : meta.hash,
      ix ? ix.range : meta.range,
      ix ? "x.isk" : "sk",
    );
  if (kc && start && Buffer.compare((ix ? start.ipk : start.pk) as Uint8Array, kc.pk) !== 0)
    throw validation(
      "The provided starting key is outside query boundaries based on provided conditions",
    );
  // One SQL statement per page chunk, resuming after the last row read.
  const fetch = (after: Row | Record<string, Uint8Array> | undefined, n: number): Row[] => {
    const args: Array<Uint8Array | number> = [meta.id];
    let where: string;
    let order: string;
    let sql: string;
    if (!ix) {
      where = "t = ?";
      if (keyCond) {
        const k = kc as NonNullable<typeof kc>;
        where += " AND pk = ?";
        args.push(k.pk);
        if (k.range) {
          where += ` AND ${k.range.sql}`;
          args.push(...k.range.args);
        }
        if (after) {
          where += ` AND sk ${cmp} ?`;
          args.push(after.sk as Uint8Array);
        }
        order = `sk ${dir}`;
      } else {
        if (after) {
          where += ` AND (pk, sk) ${cmp} (?, ?)`;
          args.push(after.pk as Uint8Array, after.sk as Uint8Array);
        }
        order = `pk ${dir}, sk ${dir}`;
      }
      sql = `SELECT pk, sk, item, size FROM ddb_items WHERE ${where} ORDER BY ${order} LIMIT ?`;
    } else {
      where = "x.t = ? AND x.i = ?";
      args.push(ix.i);
      if (keyCond) {
        const k = kc as NonNullable<typeof kc>;
        where += " AND x.ipk = ?";
        args.push(k.pk);
        if (k.range) {
          where += ` AND ${k.range.sql}`;
          args.push(...k.range.args);
        }
        if (after) {
          where += ` AND (x.isk, x.pk, x.sk) ${cmp} (?, ?, ?)`;
          args.push(after.isk as Uint8Array, after.pk as Uint8Array, after.sk as Uint8Array);
        }
        order = `x.isk ${dir}, x.pk ${dir}, x.sk ${dir}`;
      } else {
        if (after) {
          where += ` AND (x.ipk, x.isk, x.pk, x.sk) ${cmp} (?, ?, ?, ?)`;
          args.push(
            after.ipk as Uint8Array,
            after.isk as Uint8Array,
            after.pk as Uint8Array,
            after.sk as Uint8Array,
          );
        }
        order = `x.ipk ${dir}, x.isk ${dir}, x.pk ${dir}, x.sk ${dir}`;
      }
      sql = `SELECT x.pk AS pk, x.sk AS sk, x.ipk AS ipk, x.isk AS isk, d.item AS item, d.size AS size FROM ddb_index x JOIN ddb_items d ON d.t = x.t AND d.pk = x.pk AND d.sk = x.sk WHERE ${where} ORDER BY ${order} LIMIT ?`;
    }
    args.push(n);
    return file.stmt(sql).all(...args) as unknown as Row[];
  };
  const items: Item[] = [];
  let scanned = 0;
  let count = 0;
  let bytes = 0;
  let last: Item | undefined;
  let after: Row | Record<string, Uint8Array> | undefined = start as
    | Record<string, Uint8Array>
    | undefined;
  let more = true;
  let stopped = false;
  while (more && !stopped) {
    const want = Math.min(limit !== undefined ? limit - scanned : 1000, 1000);
    const rows = fetch(after, want);
    more = rows.length === want;
    for (const row of rows) {
      after = row;
      if (segment && !segment(row)) continue;
      const full = JSON.parse(row.item) as Item;
      const item = ix ? projectIndex(meta, ix, full) : full;
      scanned++;
      bytes += ix && ix.projection !== "ALL" ? itemSize(item) : row.size;
      last = item;
      if (!filter || evalCond(filter, item, b)) {
        count++;
        if (select !== "COUNT") items.push(paths ? projectPaths(item, paths) : item);
      }
      if ((limit !== undefined && scanned >= limit) || bytes >= PAGE_BYTES) {
        stopped = true;
        break;
      }
    }
  }
  const c: Consumed = { kind: "read", table: 0, indexes: {} };
  const units = readUnits(bytes, input.ConsistentRead === true);
  if (ix) c.indexes[ix.name] = units;
  else c.table = units;
  report(op, meta.name, c);
  return {
    ...(select !== "COUNT" ? { Items: items } : {}),
    Count: count,
    ScannedCount: scanned,
    ...(stopped && last ? { LastEvaluatedKey: keyOf(meta, ix, last) } : {}),
  };
}
