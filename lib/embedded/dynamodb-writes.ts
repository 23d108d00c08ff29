/**
 * Item writes of the embedded DynamoDB engine: PutItem, UpdateItem, DeleteItem and
 * BatchWriteItem. Each runs its condition check and its write in one `BEGIN IMMEDIATE`
 * transaction, so concurrent writers (other connections, other processes) see DynamoDB's
 * per-item atomicity. Capacity follows dynamodb-capacity.ts; a failed condition consumes the
 * write units of the existing item (at least 1) and returns none, as on AWS.
 */
import { EmbeddedServiceError } from "./client-stack.js";
import { type Consumed, indexWrites, writeUnits } from "./dynamodb-capacity.js";
import { applyUpdate, bind, evalCond } from "./dynamodb-eval.js";
import { parseCondition, parseUpdate } from "./dynamodb-parse.js";
import { projectPaths } from "./dynamodb-projection.js";
import { type DynamoFile, type TableMeta, tableKey } from "./dynamodb-store.js";
import { requireTable } from "./dynamodb-tables.js";
import {
  type AV,
  canonicalNumber,
  type Item,
  itemSize,
  typeOf,
  validation,
} from "./dynamodb-values.js";

// biome-ignore lint/suspicious/noExplicitAny: request shapes are checked field by field
type Input = any;

/** Reports one operation's units (to the client's observer and, when asked, the answer). */
export type Report = (op: string, table: string, c: Consumed | (() => Consumed)) => void;

const MAX_ITEM = 400 * 1024;

/** A value with canonical numbers; @throws ValidationException for empty sets or bad numbers. */
export function normalizeValue(v: AV): AV {
  if (!v || typeof v !== "object")
    throw validation(
      "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
    );
  const t = typeOf(v);
  switch (t) {
    case "N": {
      const n = canonicalNumber(v.N as string);
      return n === v.N ? v : { N: n };
    }
    case "NS":
    case "SS":
    case "BS": {
      const l = v[t] as string[];
      if (l.length === 0)
        throw validation(
          `One or more parameter values were invalid: An ${t === "NS" ? "number" : t === "SS" ? "string" : "binary"} set  may not be empty`,
        );
      if (new Set(l).size !== l.length)
        throw validation(
          `One or more parameter values were invalid: Input collection [${l.join(", ")}] contains duplicates.`,
        );
      return t === "NS" ? { NS: l.map(canonicalNumber) } : v;
    }
    case "L": {
      const l = v.L as AV[];
      const m = l.map(normalizeValue);
      return m.every((x, i) => x === l[i]) ? v : { L: m };
    }
    case "M": {
      const m = normalizeItem(v.M as Item);
      return m === v.M ? v : { M: m };
    }
    default:
      return v;
  }
}

/** An item (or values map) with canonical numbers; the same object when nothing changed. */
export function normalizeItem(item: Item): Item {
  let out: Item | undefined;
  for (const k in item) {
    const x = item[k] as AV;
    const y = normalizeValue(x);
    if (y !== x) {
      out ??= { ...item };
      out[k] = y;
    }
  }
  return out ?? item;
}

/** Checks a whole item: table key, GSI key types, size. @returns its size in bytes. */
export function checkItem(meta: TableMeta, item: Item): number {
  for (const a of [meta.hash, meta.range]) {
    if (!a) continue;
    const v = item[a.name];
    if (!v)
      throw validation(
        `One or more parameter values were invalid: Missing the key ${a.name} in the item`,
      );
    if ((v as Record<string, unknown>)[a.type] === undefined)
      throw validation(
        `One or more parameter values were invalid: Type mismatch for key ${a.name} expected: ${a.type} actual: ${typeOf(v)}`,
      );
  }
  for (const ix of meta.indexes)
    for (const a of [ix.hash, ix.range]) {
      const v = a && item[a.name];
      if (!a || !v) continue;
      if ((v as Record<string, unknown>)[a.type] === undefined)
        throw validation(
          `One or more parameter values were invalid: Type mismatch for Index Key ${a.name} Expected: ${a.type} Actual: ${typeOf(v)} IndexName: ${ix.name}`,
        );
      if ((v as Record<string, unknown>)[a.type] === "")
        throw validation(
          `One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: ${ix.name}, IndexKey: ${a.name}`,
        );
    }
  const size = itemSize(item);
  if (size > MAX_ITEM) throw validation("Item size has exceeded the maximum allowed size");
  return size;
}

function returnValues(input: Input, allowed: string[]): string {
  const rv = input.ReturnValues ?? "NONE";
  if (!allowed.includes(rv))
    throw validation(`ReturnValues can only be ${allowed.join(", ")} (got ${rv})`);
  const f = input.ReturnValuesOnConditionCheckFailure ?? "NONE";
  if (f !== "NONE" && f !== "ALL_OLD")
    throw validation("ReturnValuesOnConditionCheckFailure can only be ALL_OLD or NONE");
  return rv;
}

/**
 * A write whose condition failed: it still consumes write units for the item it read (AWS
 * Developer Guide, "Condition expressions": a failed conditional write is billed), reported here,
 * and answers ConditionalCheckFailedException (with the item when asked for ALL_OLD).
 */
function conditionFailed(
  report: Report,
  op: string,
  tableName: string,
  input: Input,
  old: { item: Item; size: number } | undefined,
): EmbeddedServiceError {
  report(op, tableName, { kind: "write", table: writeUnits(old?.size ?? 0), indexes: {} });
  return new EmbeddedServiceError(
    "ConditionalCheckFailedException",
    "The conditional request failed",
    {},
    input.ReturnValuesOnConditionCheckFailure === "ALL_OLD" && old ? { Item: old.item } : {},
  );
}

function legacy(input: Input): void {
  for (const k of ["Expected", "AttributeUpdates", "ConditionalOperator"])
    if (input[k] !== undefined)
      throw validation(
        `${k} (a legacy parameter) is not supported by the embedded backend: use expressions`,
      );
}

function prepare(input: Input, extra: Array<{ text?: string; label: string; update?: boolean }>) {
  legacy(input);
  const values = input.ExpressionAttributeValues && normalizeItem(input.ExpressionAttributeValues);
  const parsed = extra
    .filter((e) => e.text !== undefined)
    .map((e) => ({
      parsed: e.update ? parseUpdate(e.text as string) : parseCondition(e.text as string, e.label),
      label: e.label,
    }));
  const b = bind(parsed, input.ExpressionAttributeNames, values);
  return { b, parsed };
}

/** PutItem. */
export function putItem(file: DynamoFile, input: Input, report: Report) {
  const meta = requireTable(file, input.TableName);
  const rv = returnValues(input, ["NONE", "ALL_OLD"]);
  if (!input.Item || typeof input.Item !== "object")
    throw validation(
      "1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null",
    );
  const item = normalizeItem(input.Item);
  const size = checkItem(meta, item);
  const [pk, sk] = tableKey(meta, item, false);
  const { b, parsed } = prepare(input, [
    { text: input.ConditionExpression, label: "ConditionExpression" },
  ]);
  const cond = parsed[0]?.parsed.tree as Parameters<typeof evalCond>[0] | undefined;
  const r = file.write(() => {
    const old = file.get(meta, pk, sk);
    if (cond && !evalCond(cond, old?.item ?? {}, b)) return { failed: true, old };
    file.put(meta, pk, sk, item, size, old?.item);
    return { failed: false, old };
  });
  if (r.failed) throw conditionFailed(report, "PutItem", meta.name, input, r.old);
  // Computed only when someone reads it (ReturnConsumedCapacity or an observer).
  report("PutItem", meta.name, () => ({
    kind: "write",
    table: writeUnits(Math.max(size, r.old?.size ?? 0)),
    indexes: indexWrites(meta, r.old?.item, item),
  }));
  return rv === "ALL_OLD" && r.old ? { Attributes: r.old.item } : {};
}

/** UpdateItem (a missing item is created from its key, as DynamoDB does). */
export function updateItem(file: DynamoFile, input: Input, report: Report) {
  const meta = requireTable(file, input.TableName);
  const rv = returnValues(input, ["NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"]);
  const key = input.Key && normalizeItem(input.Key);
  const [pk, sk] = tableKey(meta, key, true);
  const { b, parsed } = prepare(input, [
    { text: input.UpdateExpression, label: "UpdateExpression", update: true },
    { text: input.ConditionExpression, label: "ConditionExpression" },
  ]);
  const update =
    input.UpdateExpression !== undefined
      ? (parsed[0]?.parsed.tree as Parameters<typeof applyUpdate>[1])
      : undefined;
  const condEntry = parsed.find((p) => p.label === "ConditionExpression");
  const cond = condEntry?.parsed.tree as Parameters<typeof evalCond>[0] | undefined;
  const keyNames = [meta.hash.name, ...(meta.range ? [meta.range.name] : [])];
  const r = file.write(() => {
    const old = file.get(meta, pk, sk);
    if (cond && !evalCond(cond, old?.item ?? {}, b)) return { failed: true as const, old };
    const base = old?.item ?? { ...key };
    const { item, paths } = update
      ? applyUpdate(base, update, b, keyNames)
      : { item: base, paths: [] };
    const now = normalizeItem(item);
    const size = checkItem(meta, now);
    file.put(meta, pk, sk, now, size, old?.item);
    return { failed: false as const, old, now, size, paths };
  });
  if (r.failed) throw conditionFailed(report, "UpdateItem", meta.name, input, r.old);
  report("UpdateItem", meta.name, () => ({
    kind: "write",
    table: writeUnits(Math.max(r.size, r.old?.size ?? 0)),
    indexes: indexWrites(meta, r.old?.item, r.now),
  }));
  let attrs: Item | undefined;
  if (rv === "ALL_OLD") attrs = r.old?.item;
  else if (rv === "ALL_NEW") attrs = r.now;
  else if (rv === "UPDATED_OLD") attrs = r.old && projectPaths(r.old.item, r.paths);
  else if (rv === "UPDATED_NEW") attrs = projectPaths(r.now, r.paths);
  return attrs && Object.keys(attrs).length > 0 ? { Attributes: attrs } : {};
}

/** DeleteItem. */
export function deleteItem(file: DynamoFile, input: Input, report: Report) {
  const meta = requireTable(file, input.TableName);
  const rv = returnValues(input, ["NONE", "ALL_OLD"]);
  const key = input.Key && normalizeItem(input.Key);
  const [pk, sk] = tableKey(meta, key, true);
  const { b, parsed } = prepare(input, [
    { text: input.ConditionExpression, label: "ConditionExpression" },
  ]);
  const cond = parsed[0]?.parsed.tree as Parameters<typeof evalCond>[0] | undefined;
  const r = file.write(() => {
    const old = file.get(meta, pk, sk);
    if (cond && !evalCond(cond, old?.item ?? {}, b)) return { failed: true, old };
    if (old) file.delete(meta, pk, sk, old.item);
    return { failed: false, old };
  });
  if (r.failed) throw conditionFailed(report, "DeleteItem", meta.name, input, r.old);
  report("DeleteItem", meta.name, () => ({
    kind: "write",
    table: writeUnits(r.old?.size ?? 0),
    indexes: indexWrites(meta, r.old?.item, undefined),
  }));
  return rv === "ALL_OLD" && r.old ? { Attributes: r.old.item } : {};
}

/** BatchWriteItem: up to 25 puts and deletes, all applied (UnprocessedItems is always empty). */
export function batchWriteItem(file: DynamoFile, input: Input, report: Report) {
  const requests = Object.entries((input.RequestItems ?? {}) as Record<string, Input[]>);
  const n = requests.reduce((s, [, l]) => s + l.length, 0);
  if (n === 0)
    throw validation(
      "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Member must have length greater than or equal to 1",
    );
  if (n > 25)
    throw validation(
      "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]",
    );
  const plan = requests.map(([name, list]) => {
    const meta = requireTable(file, name);
    const seen = new Set<string>();
    const ops = list.map((w) => {
      const put = w.PutRequest?.Item ? normalizeItem(w.PutRequest.Item) : undefined;
      const key = put ?? (w.DeleteRequest?.Key && normalizeItem(w.DeleteRequest.Key));
      if (!key)
        throw validation(
          "A WriteRequest needs a PutRequest with an Item or a DeleteRequest with a Key",
        );
      const [pk, sk] = tableKey(meta, key, !put);
      const id = Buffer.concat([pk, Buffer.from([0]), sk]).toString("base64");
      if (seen.has(id)) throw validation("Provided list of item keys contains duplicates");
      seen.add(id);
      return { pk, sk, put, size: put ? checkItem(meta, put) : 0 };
    });
    return { meta, ops };
  });
  const consumed = file.write(() =>
    plan.map(({ meta, ops }) => {
      const c: Consumed = { kind: "write", table: 0, indexes: {} };
      for (const op of ops) {
        const old = file.get(meta, op.pk, op.sk);
        if (op.put) file.put(meta, op.pk, op.sk, op.put, op.size, old?.item);
        else if (old) file.delete(meta, op.pk, op.sk, old.item);
        c.table += writeUnits(Math.max(op.size, old?.size ?? 0));
        for (const [ix, u] of Object.entries(indexWrites(meta, old?.item, op.put)))
          c.indexes[ix] = (c.indexes[ix] ?? 0) + u;
      }
      return { name: meta.name, c };
    }),
  );
  for (const { name, c } of consumed) report("BatchWriteItem", name, c);
  return { UnprocessedItems: {} };
}
