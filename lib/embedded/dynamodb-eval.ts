/**
 * Evaluation of parsed DynamoDB expressions on engine items: conditions and filters, updates
 * (SET / REMOVE / ADD / DELETE on nested paths), with DynamoDB's rules (AWS
 * Developer Guide, "Condition and filter expressions", "Update expressions") and its
 * ValidationException messages; and the per-request check of `#name` / `:value` placeholders.
 */
import type { Cond, Operand, Parsed, Path, Update } from "./dynamodb-parse.js";
import {
  type AV,
  addNumbers,
  compareNumbers,
  compareValues,
  equalValues,
  type Item,
  typeOf,
  validation,
} from "./dynamodb-values.js";

/** A request's placeholders. */
export interface Bindings {
  names: Record<string, string>;
  values: Record<string, AV>;
}

/**
 * Checks the placeholders of a request's expressions: each used one defined, each defined one
 * used, neither map empty. @throws ValidationException with DynamoDB's message.
 */
export function bind(
  exprs: Array<{ parsed: Parsed<unknown>; label: string }>,
  names: Record<string, string> | undefined,
  values: Record<string, AV> | undefined,
): Bindings {
  if (names && Object.keys(names).length === 0)
    throw validation("ExpressionAttributeNames must not be empty");
  if (values && Object.keys(values).length === 0)
    throw validation("ExpressionAttributeValues must not be empty");
  if (exprs.length === 0) {
    if (names)
      throw validation("ExpressionAttributeNames can only be specified when using expressions");
    if (values)
      throw validation("ExpressionAttributeValues can only be specified when using expressions");
  }
  const usedNames = new Set<string>();
  const usedValues = new Set<string>();
  for (const { parsed, label } of exprs) {
    for (const n of parsed.names) {
      if (!names || names[n] === undefined)
        throw validation(
          `Invalid ${label}: An expression attribute name used in the document path is not defined; attribute name: ${n}`,
        );
      usedNames.add(n);
    }
    for (const v of parsed.values) {
      if (!values || values[v] === undefined)
        throw validation(
          `Invalid ${label}: An expression attribute value used in expression is not defined; attribute value: ${v}`,
        );
      usedValues.add(v);
    }
  }
  const unusedNames = Object.keys(names ?? {}).filter((n) => !usedNames.has(n));
  if (unusedNames.length > 0)
    throw validation(
      `Value provided in ExpressionAttributeNames unused in expressions: keys: {${unusedNames.join(", ")}}`,
    );
  const unusedValues = Object.keys(values ?? {}).filter((v) => !usedValues.has(v));
  if (unusedValues.length > 0)
    throw validation(
      `Value provided in ExpressionAttributeValues unused in expressions: keys: {${unusedValues.join(", ")}}`,
    );
  return { names: names ?? {}, values: values ?? {} };
}

/** A path with its placeholders replaced by names. */
export function resolvePath(p: Path, b: Bindings): Array<string | number> {
  return p.els.map((e) =>
    typeof e === "string" && e.startsWith("#") ? (b.names[e] as string) : e,
  );
}

/** The value at `els` in `item`, if any. */
export function getPath(item: Item, els: Array<string | number>): AV | undefined {
  let cur: AV | undefined = item[els[0] as string];
  for (let i = 1; i < els.length && cur; i++) {
    const e = els[i] as string | number;
    cur = typeof e === "number" ? cur.L?.[e] : cur.M?.[e];
  }
  return cur;
}

function operand(op: Operand, item: Item, b: Bindings): AV | undefined {
  switch (op.kind) {
    case "path":
      return getPath(item, resolvePath(op, b));
    case "value":
      return b.values[op.name];
    case "size": {
      const v = getPath(item, resolvePath(op.path, b));
      if (!v) return undefined;
      if (v.S !== undefined) return { N: String(v.S.length) };
      if (v.B !== undefined) return { N: String(Buffer.byteLength(v.B, "base64")) };
      const n = v.SS ?? v.NS ?? v.BS ?? v.L ?? (v.M && Object.keys(v.M));
      return n ? { N: String(n.length) } : undefined;
    }
    case "if_not_exists":
      return getPath(item, resolvePath(op.path, b)) ?? need(operand(op.value, item, b));
    case "list_append": {
      const x = need(operand(op.a, item, b));
      const y = need(operand(op.b, item, b));
      if (!x.L || !y.L)
        throw validation(
          "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: list_append, operand type: " +
            typeOf(x.L ? y : x),
        );
      return { L: [...x.L, ...y.L] };
    }
    case "arith": {
      const x = need(operand(op.a, item, b));
      const y = need(operand(op.b, item, b));
      if (x.N === undefined || y.N === undefined)
        throw validation(`An operand in the update expression has an incorrect data type`);
      return { N: addNumbers(x.N, y.N, op.op === "-") };
    }
  }
}

function need(v: AV | undefined): AV {
  if (!v)
    throw validation(
      "The provided expression refers to an attribute that does not exist in the item",
    );
  return v;
}

function contains(hay: AV, needle: AV): boolean {
  if (hay.S !== undefined) return needle.S !== undefined && hay.S.includes(needle.S);
  if (hay.SS) return needle.S !== undefined && hay.SS.includes(needle.S);
  if (hay.NS)
    return (
      needle.N !== undefined && hay.NS.some((n) => compareNumbers(n, needle.N as string) === 0)
    );
  if (hay.BS) return needle.B !== undefined && hay.BS.includes(needle.B);
  if (hay.L) return hay.L.some((x) => equalValues(x, needle));
  if (hay.B !== undefined && needle.B !== undefined)
    return Buffer.from(hay.B, "base64").includes(Buffer.from(needle.B, "base64"));
  return false;
}

/** Whether `cond` holds for `item` (an absent item is `{}`). */
export function evalCond(cond: Cond, item: Item, b: Bindings): boolean {
  switch (cond.kind) {
    case "and":
      return evalCond(cond.a, item, b) && evalCond(cond.b, item, b);
    case "or":
      return evalCond(cond.a, item, b) || evalCond(cond.b, item, b);
    case "not":
      return !evalCond(cond.a, item, b);
    case "cmp": {
      const x = operand(cond.a, item, b);
      const y = operand(cond.b, item, b);
      if (!x || !y) return cond.op === "<>";
      if (cond.op === "=") return equalValues(x, y);
      if (cond.op === "<>") return !equalValues(x, y);
      const c = compareValues(x, y);
      if (c === undefined) return false;
      return cond.op === "<" ? c < 0 : cond.op === "<=" ? c <= 0 : cond.op === ">" ? c > 0 : c >= 0;
    }
    case "between": {
      const x = operand(cond.a, item, b);
      const lo = operand(cond.lo, item, b);
      const hi = operand(cond.hi, item, b);
      if (!x || !lo || !hi) return false;
      const c1 = compareValues(x, lo);
      const c2 = compareValues(x, hi);
      return c1 !== undefined && c2 !== undefined && c1 >= 0 && c2 <= 0;
    }
    case "in": {
      const x = operand(cond.a, item, b);
      return (
        !!x &&
        cond.list.some((o) => {
          const y = operand(o, item, b);
          return !!y && equalValues(x, y);
        })
      );
    }
    case "fn": {
      const x = operand(cond.args[0] as Operand, item, b);
      const y = cond.args[1] && operand(cond.args[1], item, b);
      switch (cond.name) {
        case "attribute_exists":
          return x !== undefined;
        case "attribute_not_exists":
          return x === undefined;
        case "attribute_type": {
          const want = y?.S;
          if (!want || !["S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M"].includes(want))
            throw validation(
              `Invalid ConditionExpression: Invalid attribute type name found; type: ${want}, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}`,
            );
          return !!x && typeOf(x) === want;
        }
        case "begins_with":
          if (!x || !y) return false;
          if (x.S !== undefined && y.S !== undefined) return x.S.startsWith(y.S);
          if (x.B !== undefined && y.B !== undefined)
            return Buffer.from(x.B, "base64")
              .subarray(0, Buffer.byteLength(y.B, "base64"))
              .equals(Buffer.from(y.B, "base64"));
          return false;
        default:
          return !!x && !!y && contains(x, y);
      }
    }
  }
}

function clone(v: AV): AV {
  return v.M ? { M: { ...v.M } } : v.L ? { L: [...v.L] } : v;
}

/** Sets `els` in `item` (copying containers on the way). @throws when the parent is missing. */
function setPath(item: Item, els: Array<string | number>, value: AV): void {
  if (els.length === 1) {
    item[els[0] as string] = value;
    return;
  }
  const invalid = () =>
    validation("The document path provided in the update expression is invalid for update");
  const top = item[els[0] as string];
  if (!top) throw invalid();
  let cur = clone(top);
  item[els[0] as string] = cur;
  for (let i = 1; i < els.length; i++) {
    const e = els[i] as string | number;
    const last = i === els.length - 1;
    if (typeof e === "number") {
      if (!cur.L) throw invalid();
      if (last) {
        if (e >= cur.L.length) cur.L.push(value);
        else cur.L[e] = value;
        return;
      }
      const child = cur.L[e];
      if (!child) throw invalid();
      const c = clone(child);
      cur.L[e] = c;
      cur = c;
    } else {
      if (!cur.M) throw invalid();
      if (last) {
        cur.M[e] = value;
        return;
      }
      const child = cur.M[e];
      if (!child) throw invalid();
      const c = clone(child);
      cur.M[e] = c;
      cur = c;
    }
  }
}

function removePath(item: Item, els: Array<string | number>): void {
  if (els.length === 1) {
    delete item[els[0] as string];
    return;
  }
  const parentEls = els.slice(0, -1);
  const parent = getPath(item, parentEls);
  const e = els[els.length - 1] as string | number;
  if (!parent) return;
  if (typeof e === "number" ? !parent.L || e >= parent.L.length : !parent.M || !(e in parent.M))
    return;
  const copy = clone(parent);
  if (typeof e === "number") copy.L?.splice(e, 1);
  else delete copy.M?.[e];
  setPath(item, parentEls, copy);
}

/** Orders paths that differ first at a list index by that index, highest first (others: 0). */
function byListIndexDescending(a: Array<string | number>, b: Array<string | number>): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    return typeof x === "number" && typeof y === "number" ? y - x : 0;
  }
  return 0;
}

function pathKey(els: Array<string | number>): string {
  return els.map((e) => (typeof e === "number" ? `[${e}]` : `.${e}`)).join("");
}

function overlap(paths: Array<Array<string | number>>): void {
  const keys = paths.map(pathKey);
  for (let i = 0; i < keys.length; i++)
    for (let j = 0; j < keys.length; j++) {
      const a = keys[i] as string;
      const c = keys[j] as string;
      if (i !== j && (a === c || c.startsWith(`${a}.`) || c.startsWith(`${a}[`))) {
        const show = (k: number) => `[${(paths[k] as unknown[]).join(", ")}]`;
        throw validation(
          `Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: ${show(i)}, path two: ${show(j)}`,
        );
      }
    }
}

function setOp(cur: AV | undefined, v: AV, add: boolean): AV | undefined {
  const t = typeOf(v);
  if (add && t === "N") {
    if (cur && cur.N === undefined)
      throw validation("An operand in the update expression has an incorrect data type");
    return { N: cur ? addNumbers(cur.N as string, v.N as string) : (v.N as string) };
  }
  if (t !== "SS" && t !== "NS" && t !== "BS")
    throw validation(
      `Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ${add ? "ADD" : "DELETE"}, operand type: ${t === "L" ? "LIST" : t === "M" ? "MAP" : t}`,
    );
  if (cur && typeOf(cur) !== t)
    throw validation("An operand in the update expression has an incorrect data type");
  const have = (cur?.[t as "SS"] ?? []) as string[];
  const given = v[t as "SS"] as string[];
  const same = (x: string, y: string) => (t === "NS" ? compareNumbers(x, y) === 0 : x === y);
  if (add) {
    const out = [...have];
    for (const x of given) if (!out.some((y) => same(x, y))) out.push(x);
    return { [t]: out } as AV;
  }
  if (!cur) return undefined;
  const out = have.filter((x) => !given.some((y) => same(x, y)));
  return out.length > 0 ? ({ [t]: out } as AV) : undefined;
}

/**
 * Applies an update to a copy of `old` (`{}` for a new item), right-hand sides evaluated on
 * `old`. @returns the new item and the paths written. @throws ValidationException (key
 * attributes, overlapping paths, wrong operand types, missing attributes).
 */
export function applyUpdate(
  old: Item,
  u: Update,
  b: Bindings,
  keyNames: readonly string[],
): { item: Item; paths: Array<Array<string | number>> } {
  const item: Item = { ...old };
  const paths: Array<Array<string | number>> = [];
  const all = [
    ...u.set.map((a) => ({
      els: resolvePath(a.path, b),
      // A path on the right that the item lacks fails the update (DynamoDB's message).
      run: (els: Array<string | number>) => setPath(item, els, need(operand(a.value, old, b))),
    })),
    // Every path names the item as it was: removing list elements from the highest index down
    // keeps the lower indexes valid (`REMOVE l[0], l[1]` removes the first two elements).
    ...u.remove
      .map((p) => resolvePath(p, b))
      .sort(byListIndexDescending)
      .map((els) => ({
        els,
        run: (path: Array<string | number>) => removePath(item, path),
      })),
    ...[...u.add.map((a) => ({ a, add: true })), ...u.delete.map((a) => ({ a, add: false }))].map(
      ({ a, add }) => ({
        els: resolvePath(a.path, b),
        run: (els: Array<string | number>) => {
          const r = setOp(
            getPath(old, els),
            b.values[(a.value as { name: string }).name] as AV,
            add,
          );
          if (r) setPath(item, els, r);
          else removePath(item, els);
        },
      }),
    ),
  ];
  for (const { els } of all) {
    if (keyNames.includes(els[0] as string))
      throw validation(
        `One or more parameter values were invalid: Cannot update attribute ${els[0]}. This attribute is part of the key`,
      );
    paths.push(els);
  }
  overlap(paths);
  for (const { els, run } of all) run(els);
  return { item, paths };
}
