/**
 * EventBridge event patterns: the check run when a trigger is defined, the matcher run for every
 * event, and the envelope PutEvents wraps an entry in.
 *
 * Semantics follow the Amazon EventBridge User Guide ("Amazon EventBridge event patterns",
 * "Content filtering in Amazon EventBridge event patterns", "Matching null values and empty
 * strings", "Arrays in Amazon EventBridge event patterns"). Where the guide is silent, they follow
 * aws/event-ruler, the matcher EventBridge runs: which arrays may be matched together, how `$or`
 * expands, which operands are refused, the CIDR mask limits, how keys with dots name fields
 * (event-pattern-match.ts), and which wildcards make a rule too complex
 * (event-pattern-complexity.ts). No maintained npm package implements these rules faithfully, so
 * they are written out here.
 */
import {
  EVENT_PATTERN_MAX_WILDCARD_COMPLEXITY,
  wildcardComplexity,
  wildcardFields,
} from "./event-pattern-complexity.js";
import {
  EventFields,
  isPlainObject,
  leaves,
  type Matcher,
  matchNode,
  type PatternNode,
} from "./event-pattern-match.js";
import {
  affixTest,
  compileAnythingBut,
  compileNumeric,
  describe,
  equalsIgnoreCase,
  globMatches,
  ignoreCaseOperand,
  inRange,
  PatternError,
  parseCidr,
  parseGlob,
  parseIp,
  sameIp,
  where,
} from "./event-pattern-operands.js";

export { EVENT_PATTERN_MAX_WILDCARD_COMPLEXITY };

/** Longest pattern accepted, in characters of its JSON text. */
export const EVENT_PATTERN_MAX_CHARS = 2048;
/**
 * Deepest field nesting accepted, in JSON objects: `{"a":{"b":[1]}}` is 2 levels (`$or` adds
 * none, nor do the dots of a key: `{"a.b":[1]}` is 1).
 */
export const EVENT_PATTERN_MAX_DEPTH = 10;
/**
 * Most alternatives a pattern may expand to through `$or`. EventBridge refuses patterns with
 * "more than 1000 rule combinations"; here it also bounds the work of expanding nested `$or`s.
 */
export const EVENT_PATTERN_MAX_COMBINATIONS = 1000;
/** Numeric matching covers -5e9..5e9 to six decimal places (User Guide, "Numeric matching"). */
/** Field names event-ruler refuses inside `$or` members (its RESERVED_FIELD_NAMES_IN_OR_RELATIONSHIP). */
const RESERVED_IN_OR = new Set([
  ...["exactly", "equals-ignore-case", "prefix", "suffix", "anything-but", "exists"],
  ...["wildcard", "numeric", "cidr", "html", "=", "<", "<=", ">", ">=", "regex"],
  ...["not-wildcard", "not-equals-ignore-case", "date-after", "date-on-or-after"],
  ...["date-before", "date-on-or-before", "in-date-range"],
  ...["ip-address-in-range", "ip-address-not-in-range"],
]);

/** The envelope EventBridge delivers to targets (User Guide, "Amazon EventBridge events"). */
export interface EventBridgeEvent {
  version: "0";
  id: string;
  "detail-type": string;
  source: string;
  account: string;
  /** ISO 8601 in UTC to the second, e.g. `2017-12-22T18:43:48Z`. */
  time: string;
  region: string;
  resources: string[];
  detail: Record<string, unknown>;
}

/**
 * Why `pattern` is not a valid event pattern, as one sentence (`detail.state: ...` names the
 * field), or undefined when it is. Refuses: a non-object; JSON text over
 * {@link EVENT_PATTERN_MAX_CHARS} characters; fields nested deeper than
 * {@link EVENT_PATTERN_MAX_DEPTH}; empty objects and arrays; a field that is neither an object
 * nor an array; array members that are not string, number, boolean, null or a one-operator
 * object; unknown operators and operands of the wrong type; `numeric` expressions that do not
 * parse or whose bounds are out of order; numbers outside -5e9..5e9 or with more than six
 * decimals where they are compared numerically (`numeric`, numeric `anything-but`); malformed
 * CIDR blocks (a mask of at least 32 bits for IPv4 or 128 for IPv6 too, as event-ruler rules:
 * match one address with its plain string); wildcards with `**` or a backslash escaping anything
 * but `*` or `\`; `$or` expanding to more than {@link EVENT_PATTERN_MAX_COMBINATIONS}
 * alternatives; a field whose wildcard and anything-but wildcard values are more complex than
 * {@link EVENT_PATTERN_MAX_WILDCARD_COMPLEXITY} (EventBridge's "Rule is too complex": the
 * sentence is `detail.key: wildcard pattern too complex: ...`). A `$or` that is not an array of
 * at least two objects free of operator names is read as a plain field name, as event-ruler does
 * for backward compatibility. A key with dots names the same field as the nested keys it spells
 * (`{"a.b": [1]}` is `{"a": {"b": [1]}}`); of two spellings of one field the later is kept.
 */
export function checkEventPattern(pattern: unknown): string | undefined {
  let alternatives: PatternNode[];
  try {
    alternatives = compile(pattern);
  } catch (e) {
    if (e instanceof PatternError) return e.message;
    throw e;
  }
  for (const [name, values] of wildcardFields(alternatives)) {
    const limit = EVENT_PATTERN_MAX_WILDCARD_COMPLEXITY;
    if (wildcardComplexity(values, limit + 1) <= limit) continue;
    const shown = wildcardComplexity(values, REPORTED_COMPLEXITY);
    return (
      `${name}: wildcard pattern too complex: complexity ` +
      `${shown >= REPORTED_COMPLEXITY ? `${REPORTED_COMPLEXITY} or more` : shown} ` +
      `(the most wildcard prefixes one value can be matching at once), over the ${limit} ` +
      "allowed; use fewer wildcard characters or fewer repeating character sequences after a " +
      "wildcard character"
    );
  }
  return undefined;
}

/** Complexity counted up to this for messages and {@link eventPatternWildcardComplexity}. */
const REPORTED_COMPLEXITY = 100;

/**
 * The wildcard complexity of `pattern`: for each field, the most wildcard and anything-but
 * wildcard prefixes one input value can be matching at once, as aws/event-ruler's
 * MachineComplexityEvaluator counts them (never less; see event-pattern-complexity.ts), taken
 * over the fields, counted up to 100. 0 when the pattern has no wildcard. Values of one field in
 * several `$or` branches are counted together, as when event-ruler adds them to one machine.
 *
 * @throws Error `invalid event pattern: ...` with the {@link checkEventPattern} sentence when
 *   the pattern is invalid for another reason.
 */
export function eventPatternWildcardComplexity(pattern: object): number {
  let max = 0;
  for (const values of wildcardFields(compileOrThrow(pattern)).values()) {
    max = Math.max(max, wildcardComplexity(values, REPORTED_COMPLEXITY));
  }
  return max;
}

/**
 * Whether `event` matches `pattern`, with EventBridge's semantics: fields AND together, the
 * values listed for a field OR together, fields absent from the pattern are ignored, and a field
 * whose event value is an array matches when any element does (nested arrays are flattened).
 * Fields matched inside array elements must come from the same element (event-ruler's "array
 * consistency"); a subtree that only says `exists: false` must hold for every element. Strings
 * never equal numbers (`"5"` is not `5`); `null` is a value (`exists: true` matches it) and is
 * not `""`. Values are compared after JSON parsing, so `300`, `300.0` and `3e2` are equal here
 * although EventBridge compares exact numbers by their JSON text. Field names are dotted paths on
 * both sides, as event-ruler flattens them: the pattern's `{"a": {"b": [1]}}` matches the event's
 * `{"a.b": 1}` and the pattern's `{"a.b": [1]}` matches `{"a": {"b": 1}}`; an event spelling one
 * field both ways gives it both values (event-pattern-match.ts).
 *
 * @throws Error with the {@link checkEventPattern} sentence when the pattern is invalid.
 */
export function matchesEventPattern(pattern: object, event: object): boolean {
  return matchesCompiledPattern(compileOrThrow(pattern), event);
}

/** {@link matchesEventPattern} for a pattern compiled once with {@link compileEventPattern}. */
export function matchesCompiledPattern(alternatives: PatternNode[], event: object): boolean {
  const fields = new EventFields(alternatives.flatMap((root) => leaves(root).map((l) => l.name)));
  return alternatives.some((root) => matchNode(root, [event], fields));
}

/**
 * The pattern's alternatives with `$or` expanded (event-ruler's compilation): each is one
 * conjunction of field constraints, and an event matches the pattern when it matches any.
 * @throws Error `invalid event pattern: ...` as {@link matchesEventPattern}.
 */
export function compileEventPattern(pattern: object): PatternNode[] {
  return compileOrThrow(pattern);
}

function compileOrThrow(pattern: object): PatternNode[] {
  try {
    return compile(pattern);
  } catch (e) {
    if (e instanceof PatternError) {
      throw new Error(`invalid event pattern: ${e.message}`, { cause: e });
    }
    throw e;
  }
}

/**
 * The event EventBridge delivers for one PutEvents entry: `version` "0", the given `id`,
 * `account` and `region`, `time` from `entry.Time` (an ISO 8601 string) or else `ids.now`
 * (milliseconds since the epoch), truncated to the second as EventBridge writes it, `resources`
 * (empty when absent) and `detail` parsed from `entry.Detail`.
 *
 * @throws Error when `Detail` is not JSON or not a JSON object (PutEvents answers
 *   `MalformedDetail`), when `Time` is not an ISO 8601 timestamp, or when `now` is not finite.
 */
export function putEventsEntryToEvent(
  entry: {
    Source: string;
    DetailType: string;
    Detail: string;
    Resources?: string[];
    Time?: string;
  },
  ids: { id: string; account: string; region: string; now: number },
): EventBridgeEvent {
  let detail: unknown;
  try {
    detail = JSON.parse(entry.Detail);
  } catch (e) {
    throw new Error(`Detail is not valid JSON: ${(e as Error).message}`);
  }
  if (!isPlainObject(detail)) {
    throw new Error(`Detail must be a JSON object, not ${describe(detail)}`);
  }
  let ms = ids.now;
  if (entry.Time !== undefined) {
    ms = /^\d{4}-\d{2}-\d{2}/.test(entry.Time) ? Date.parse(entry.Time) : Number.NaN;
    if (Number.isNaN(ms)) throw new Error(`Time is not an ISO 8601 timestamp: ${entry.Time}`);
  }
  if (!Number.isFinite(ms)) throw new Error(`now must be milliseconds since the epoch: ${ms}`);
  return {
    version: "0",
    id: ids.id,
    "detail-type": entry.DetailType,
    source: entry.Source,
    account: ids.account,
    time: new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z"),
    region: ids.region,
    resources: [...(entry.Resources ?? [])],
    detail,
  };
}

// ---- compilation -------------------------------------------------------------------------------

/** The pattern's `$or`-free alternatives, as event-ruler's JsonRuleCompiler builds them. */
function compile(pattern: unknown): PatternNode[] {
  if (!isPlainObject(pattern)) {
    throw new PatternError(`the event pattern must be a JSON object, not ${describe(pattern)}`);
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(pattern);
  } catch {
    json = undefined;
  }
  if (json === undefined) throw new PatternError("the event pattern is not serializable as JSON");
  if (json.length > EVENT_PATTERN_MAX_CHARS) {
    throw new PatternError(
      `the event pattern is ${json.length} characters of JSON, over the ${EVENT_PATTERN_MAX_CHARS} allowed`,
      true,
    );
  }
  let alternatives: PatternNode[];
  try {
    alternatives = expand(pattern, true);
  } catch (first) {
    // event-ruler retries a pattern its `$or`-aware compiler refuses with `$or` as a field name.
    if (!(first instanceof PatternError) || first.limit) throw first;
    try {
      alternatives = expand(pattern, false);
    } catch {
      throw first;
    }
  }
  for (const root of alternatives) markAbsenceOnly(root);
  return alternatives;
}

function expand(pattern: Record<string, unknown>, orAware: boolean): PatternNode[] {
  const alternatives: PatternNode[] = [{}];
  walkObject(alternatives, [], pattern, orAware, false, 0);
  return alternatives;
}

/**
 * Writes `obj`'s constraints into every alternative, in document order. A leaf written twice
 * keeps the later write, so a leaf also constrained inside a `$or` branch keeps whichever comes
 * last (event-ruler overwrites per path the same way). A key is split at its dots: event-ruler
 * names fields by the steps joined with ".", so `"a.b"` and `"a": {"b"}` are one field.
 * `depth` counts JSON objects, for {@link EVENT_PATTERN_MAX_DEPTH}.
 */
function walkObject(
  alternatives: PatternNode[],
  path: string[],
  obj: Record<string, unknown>,
  orAware: boolean,
  inOr: boolean,
  depth: number,
): void {
  const keys = Object.keys(obj);
  if (keys.length === 0) throw new PatternError(`${where(path)}empty objects are not allowed`);
  for (const key of keys) {
    const value = obj[key];
    if (key === "$or" && orAware) {
      walkOr(alternatives, path, value, depth);
      continue;
    }
    if (inOr && RESERVED_IN_OR.has(key)) {
      throw new PatternError(
        `${where(path)}"${key}" is an operator name and cannot be a field in $or`,
      );
    }
    const sub = [...path, ...key.split(".")];
    if (depth + 1 > EVENT_PATTERN_MAX_DEPTH) {
      throw new PatternError(
        `${where(sub)}fields are nested more than ${EVENT_PATTERN_MAX_DEPTH} levels deep`,
        true,
      );
    }
    if (isPlainObject(value)) walkObject(alternatives, sub, value, orAware, inOr, depth + 1);
    else if (Array.isArray(value)) writeLeaf(alternatives, sub, compileLeaf(sub, value));
    else throw new PatternError(`${where(sub)}must be an object or an array`);
  }
}

function walkOr(alternatives: PatternNode[], path: string[], members: unknown, depth: number) {
  if (!Array.isArray(members)) throw new PatternError(`${where(path)}$or must be an array`);
  if (members.length < 2) throw new PatternError(`${where(path)}$or needs at least 2 objects`);
  const before = alternatives.splice(0).map(cloneNode);
  for (const member of members) {
    if (!isPlainObject(member)) throw new PatternError(`${where(path)}$or members must be objects`);
    const forked = before.map(cloneNode);
    walkObject(forked, path, member, true, true, depth);
    alternatives.push(...forked);
    if (alternatives.length > EVENT_PATTERN_MAX_COMBINATIONS) {
      throw new PatternError(
        `$or expands to more than ${EVENT_PATTERN_MAX_COMBINATIONS} combinations`,
        true,
      );
    }
  }
}

function writeLeaf(alternatives: PatternNode[], path: string[], leaf: Matcher[]): void {
  for (const root of alternatives) {
    let node = root;
    for (const step of path) {
      node.children ??= new Map();
      let child = node.children.get(step);
      if (!child) {
        child = {};
        node.children.set(step, child);
      }
      node = child;
    }
    node.leaf = leaf;
  }
}

function cloneNode(node: PatternNode): PatternNode {
  const copy: PatternNode = { ...node };
  if (node.children) {
    copy.children = new Map([...node.children].map(([k, v]) => [k, cloneNode(v)]));
  }
  return copy;
}

function markAbsenceOnly(node: PatternNode): boolean {
  let only = node.leaf ? node.leaf.every((m) => "exists" in m && !m.exists) : true;
  for (const child of node.children?.values() ?? []) only = markAbsenceOnly(child) && only;
  node.absenceOnly = only;
  return only;
}

function compileLeaf(path: string[], values: unknown[]): Matcher[] {
  if (values.length === 0) throw new PatternError(`${where(path)}empty arrays are not allowed`);
  return values.map((v): Matcher => {
    if (isPlainObject(v)) return compileExpression(path, v);
    if (typeof v === "string") return exactString(v);
    if (v === null || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) {
      return { test: (x) => x === v, exact: v };
    }
    throw new PatternError(
      `${where(path)}match values must be string, number, true, false or null`,
    );
  });
}

/** A string equals itself; one that is an IP literal also equals other spellings of that address. */
function exactString(s: string): Matcher {
  const ip = parseIp(s);
  if (!ip) return { test: (x) => x === s, exact: s };
  return {
    test: (x) => x === s || (typeof x === "string" && sameIp(parseIp(x), ip)),
    exact: s,
  };
}

function compileExpression(path: string[], expr: Record<string, unknown>): Matcher {
  const fail = (msg: string): never => {
    throw new PatternError(`${where(path)}${msg}`);
  };
  const ops = Object.keys(expr);
  const [op] = ops;
  if (op === undefined) return fail("match expression name not found");
  if (ops.length > 1) fail(`only one key allowed in match expression, found ${ops.join(", ")}`);
  const arg = expr[op];
  const str = (what = op): string =>
    typeof arg === "string" ? arg : fail(`${what} match pattern must be a string`);
  switch (op) {
    case "prefix":
    case "suffix": {
      const affix = isPlainObject(arg)
        ? ignoreCaseOperand(path, op, arg)
        : { value: str(), ignoreCase: false };
      return { test: affixTest(op, affix.value, affix.ignoreCase) };
    }
    case "equals-ignore-case": {
      const value = str();
      return { test: (x) => typeof x === "string" && equalsIgnoreCase(x, value) };
    }
    case "wildcard": {
      const text = str();
      const glob = parseGlob(path, text);
      return {
        test: (x) => typeof x === "string" && globMatches(glob, x),
        wildcard: { key: `wildcard ${JSON.stringify(text)}`, globs: [glob] },
      };
    }
    case "anything-but":
      return compileAnythingBut(path, arg);
    case "numeric":
      return compileNumeric(path, arg);
    case "exists":
      return typeof arg === "boolean"
        ? { exists: arg }
        : fail("exists match pattern must be either true or false");
    case "cidr": {
      const range = parseCidr(path, str());
      return { test: (x) => typeof x === "string" && inRange(parseIp(x), range) };
    }
    default:
      return fail(`unrecognized match type ${op}`);
  }
}
