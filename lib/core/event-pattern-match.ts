/**
 * Matching a compiled event pattern (event-pattern.ts) against an event, with field paths as
 * aws/event-ruler reads them: the event's values are looked up by the pattern's field names, both
 * read as paths of steps joined with ".".
 *
 * event-ruler compiles a pattern into dotted field names (JsonRuleCompiler joins the nesting
 * with "."), and reads an event the same way (Event's traversal pushes each object key as one
 * step onto a Path it joins with "."). A key that contains a dot is one step of the event but
 * several of the name, so `{"detail": {"state.status": "running"}}` and
 * `{"detail": {"state": {"status": "running"}}}` both give the field `detail.state.status`, and
 * an event with both spellings gives it both values. GenericMachine.isFieldStepUsed says so:
 * `{"a.b": [123]}` and `{"a": {"b": [123]}}` must both match. Values under an array of objects
 * keep their element (array consistency); values reached through different keys are not in the
 * same array, so a rule may take one from each.
 *
 * event-ruler also skips an event key that no rule names as a step (isFieldStepUsed; a rule's
 * steps are its field names split at "." the way Java's String.split does, dropping trailing
 * empty strings). Only an empty step is affected in practice: `{"a": {"": 1}}` is not read for a
 * pattern naming `a.` unless some rule has an empty step inside a name (`a..b`). The steps used
 * here are the pattern's own; on AWS every rule in the machine adds its steps.
 */

export type Scalar = string | number | boolean | null;

/** One wildcard match value: `key` tells equal patterns apart, `globs` are its strings' literal runs. */
export interface WildcardValue {
  /** Equal for equal patterns (type and strings): event-ruler counts each pattern once per state. */
  key: string;
  /** Each string as the literal runs between its unescaped `*`s: `a*b` is `["a", "b"]`. */
  globs: string[][];
}

/**
 * One member of a field's value array: `exists`, or a test of one scalar event value (with, for
 * wildcard and anything-but wildcard, what the complexity check needs).
 */
export type Matcher =
  | { exists: boolean }
  | {
      test: (v: Scalar) => boolean;
      wildcard?: WildcardValue;
      /** Set on an exact-match value (a plain string, number, boolean or null member). */
      exact?: Scalar;
    };
/** One alternative's constraints at a path: leaf matchers, child fields, or (rarely) both. */
export interface PatternNode {
  leaf?: Matcher[];
  children?: Map<string, PatternNode>;
  /** Every leaf below says only `exists: false`: it must hold in every array element. */
  absenceOnly?: boolean;
}

/** Every leaf of one alternative with its dotted field name, in document order. */
export function leaves(root: PatternNode): { name: string; leaf: Matcher[] }[] {
  const out: { name: string; leaf: Matcher[] }[] = [];
  const visit = (node: PatternNode, path: string[]) => {
    if (node.leaf) out.push({ name: path.join("."), leaf: node.leaf });
    for (const [step, child] of node.children ?? []) visit(child, [...path, step]);
  };
  visit(root, []);
  return out;
}

/** The rest of a dotted event key below the step looked up: `{"a.b.c": v}` seen from `a`. */
export class DottedValue {
  constructor(
    /** Steps still to take, at least one: `["b", "c"]`. */
    readonly rest: string[],
    readonly value: unknown,
  ) {}
}

/** A field name split as Java's `name.split("\\.")`: trailing empty steps dropped, `""` kept. */
export function javaSplitSteps(name: string): string[] {
  if (name === "") return [""];
  const steps = name.split(".");
  while (steps.length > 0 && steps[steps.length - 1] === "") steps.pop();
  return steps;
}

/**
 * The event's values under the pattern's path steps. `child` takes one step from an object or
 * a {@link DottedValue}; the values it returns are raw JSON values or DottedValues.
 */
export class EventFields {
  private readonly steps: Set<string>;
  /** Per event object, its dotted keys by first step. */
  private readonly dotted = new WeakMap<object, Map<string, DottedValue[]>>();
  private static readonly NONE = new Map<string, DottedValue[]>();

  /** @param names the pattern's field names, dotted (`detail.state.status`). */
  constructor(names: Iterable<string>) {
    this.steps = new Set<string>();
    for (const name of names) for (const step of javaSplitSteps(name)) this.steps.add(step);
  }

  /** Every value `step` leads to from `holder`: its own key and the dotted keys starting with it. */
  child(holder: Record<string, unknown> | DottedValue, step: string): unknown[] {
    if (holder instanceof DottedValue) {
      if (holder.rest[0] !== step) return [];
      const rest = holder.rest.slice(1);
      return [rest.length === 0 ? holder.value : new DottedValue(rest, holder.value)];
    }
    const out: unknown[] = [];
    if (Object.hasOwn(holder, step) && this.used(step)) out.push(holder[step]);
    for (const v of this.dottedKeys(holder).get(step) ?? []) out.push(v);
    return out;
  }

  /** isFieldStepUsed: the key is a step of the pattern, or each of its Java-split parts is. */
  private used(key: string): boolean {
    if (this.steps.has(key)) return true;
    return key.includes(".") && javaSplitSteps(key).every((s) => this.steps.has(s));
  }

  private dottedKeys(obj: Record<string, unknown>): Map<string, DottedValue[]> {
    let index = this.dotted.get(obj);
    if (index) return index;
    index = EventFields.NONE;
    for (const key of Object.keys(obj)) {
      if (!key.includes(".") || !this.used(key)) continue;
      if (index === EventFields.NONE) index = new Map();
      const [first = "", ...rest] = key.split(".");
      const list = index.get(first) ?? [];
      list.push(new DottedValue(rest, obj[key]));
      index.set(first, list);
    }
    this.dotted.set(obj, index);
    return index;
  }
}

// ---- matching ----------------------------------------------------------------------------------

/** An object the next step of a field name is looked up in. */
type Holder = Record<string, unknown> | DottedValue;

/**
 * Combinations of array elements tried for one set of fields when two or more arrays reach one
 * path through differently spelled keys (`{"a": {"b": [...]}, "a.b": [...]}`); past this the
 * rest are not tried and the field does not match.
 */
const MAX_ELEMENT_COMBINATIONS = 10_000;

/**
 * Whether the values found for `node`'s field (none when it is absent; several when the event
 * spells the field more than one way) satisfy its constraints. Fields below it are matched in
 * the objects found, taking one element of each array of objects (array consistency); objects
 * reached through differently spelled keys are one object, as their fields share no array.
 */
export function matchNode(node: PatternNode, found: unknown[], fields: EventFields): boolean {
  const { scalars, holders, arrays } = sortFound(found);
  if (node.leaf && !matchLeaf(node.leaf, scalars)) return false;
  const children = node.children;
  if (!children) return true;
  const match = (group: Holder[]) => matchFields(children, group, fields);
  if (node.absenceOnly) {
    // Absent from the field is absent from every object its values are spread over.
    const pieces = [...holders, ...arrays.flat()];
    return pieces.length === 0 ? match([]) : pieces.every((p) => match([p]));
  }
  return someElementOfEach(arrays, (chosen) => match([...holders, ...chosen]));
}

function matchFields(children: Map<string, PatternNode>, group: Holder[], fields: EventFields) {
  for (const [step, child] of children) {
    const found = group.flatMap((holder) => fields.child(holder, step));
    if (!matchNode(child, found, fields)) return false;
  }
  return true;
}

/** Whether `f` holds for some choice of one element from each list (all lists non-empty). */
function someElementOfEach(lists: Holder[][], f: (chosen: Holder[]) => boolean): boolean {
  const [first] = lists;
  if (first === undefined) return f([]);
  if (lists.length === 1) return first.some((o) => f([o]));
  const at = lists.map(() => 0);
  for (let tried = 0; tried < MAX_ELEMENT_COMBINATIONS; tried++) {
    if (f(lists.map((list, i) => list[at[i] ?? 0] as Holder))) return true;
    let i = 0;
    for (; i < lists.length; i++) {
      const next = (at[i] ?? 0) + 1;
      if (next < (lists[i]?.length ?? 0)) {
        at[i] = next;
        break;
      }
      at[i] = 0;
    }
    if (i === lists.length) return false;
  }
  return false;
}

/** A leaf holds when any matcher does; `exists` asks whether the field has any scalar value. */
function matchLeaf(matchers: Matcher[], scalars: Scalar[]): boolean {
  return matchers.some((m) =>
    "exists" in m ? m.exists === scalars.length > 0 : scalars.some(m.test),
  );
}

/**
 * The values found for a field sorted out: its scalars (also those inside arrays), the objects
 * that hold fields below it, and per array the objects among its elements.
 */
function sortFound(found: unknown[]) {
  const scalars: Scalar[] = [];
  const holders: Holder[] = [];
  const arrays: Holder[][] = [];
  for (const v of found) {
    if (v instanceof DottedValue || isPlainObject(v)) holders.push(v);
    else if (Array.isArray(v)) {
      const inner = valuesIn(v);
      for (const x of inner.scalars) scalars.push(x);
      if (inner.objects.length > 0) arrays.push(inner.objects);
    } else if (isScalar(v)) scalars.push(v);
  }
  return { scalars, holders, arrays };
}

/**
 * The scalar values (`scalars`) and objects among an array's members, nested arrays flattened.
 * Iterative, so a deeply nested event array cannot exhaust the stack.
 */
function valuesIn(value: unknown[]): { scalars: Scalar[]; objects: Record<string, unknown>[] } {
  const scalars: Scalar[] = [];
  const objects: Record<string, unknown>[] = [];
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (Array.isArray(v)) for (const member of v) pending.push(member);
    else if (isPlainObject(v)) objects.push(v);
    else if (isScalar(v)) scalars.push(v);
  }
  return { scalars, objects };
}

function isScalar(v: unknown): v is Scalar {
  return v === null || ["string", "number", "boolean"].includes(typeof v);
}

/** A JSON object (not an array, not null). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
