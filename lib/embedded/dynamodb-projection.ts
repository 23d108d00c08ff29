/**
 * ProjectionExpression (and ReturnValues UPDATED_OLD / UPDATED_NEW): an item reduced to some of
 * its paths, as DynamoDB returns it; and the size of an attribute, for capacity units.
 */
import { type AV, type Item, valueSize } from "./dynamodb-values.js";

/** Which parts of a value a projection keeps: `true` for all of it. */
type Selection = Map<string | number, Selection | true>;

function render(v: AV, sel: Selection | true): AV | undefined {
  if (sel === true) return v;
  if (v.M) {
    const m: Record<string, AV> = {};
    for (const [k, s] of sel) {
      const child = typeof k === "string" ? v.M[k] : undefined;
      const r = child && render(child, s);
      if (r) m[k as string] = r;
    }
    return Object.keys(m).length > 0 ? { M: m } : undefined;
  }
  if (v.L) {
    // List elements keep their order; the gaps between them close up, as in DynamoDB.
    const idx = [...sel.keys()]
      .filter((k): k is number => typeof k === "number")
      .sort((a, b) => a - b);
    const l: AV[] = [];
    for (const k of idx) {
      const child = v.L[k];
      const r = child && render(child, sel.get(k) as Selection | true);
      if (r) l.push(r);
    }
    return l.length > 0 ? { L: l } : undefined;
  }
  return undefined;
}

/** `item` reduced to `paths` (ProjectionExpression; UPDATED_OLD / UPDATED_NEW). */
export function projectPaths(item: Item, paths: Array<Array<string | number>>): Item {
  const root: Selection = new Map();
  for (const els of paths) {
    let cur: Selection = root;
    for (let i = 0; i < els.length; i++) {
      const e = els[i] as string | number;
      if (i === els.length - 1) {
        cur.set(e, true);
        break;
      }
      const next = cur.get(e);
      if (next === true) break;
      const made: Selection = next ?? new Map();
      cur.set(e, made);
      cur = made;
    }
  }
  const out: Item = {};
  for (const [k, s] of root) {
    const v = typeof k === "string" ? item[k] : undefined;
    const r = v && render(v, s);
    if (r) out[k as string] = r;
  }
  return out;
}

/** The size of a value plus its name (for capacity). */
export function attributeSize(name: string, v: AV): number {
  return Buffer.byteLength(name) + valueSize(v);
}
