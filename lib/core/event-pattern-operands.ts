/**
 * The operands of EventBridge event patterns (event-pattern.ts): numeric matching (numbers compared
 * in millionths over -5e9..5e9, as EventBridge does), wildcards, IP addresses and CIDR ranges,
 * prefix/suffix with ignore-case, anything-but,
 * and the error and message helpers every part of the compiler shares. Semantics from the Amazon
 * EventBridge User Guide ("Content filtering in Amazon EventBridge event patterns") and
 * aws/event-ruler.
 */
import { ShoalError } from "./errors.js";
import { isPlainObject, type Matcher, type Scalar } from "./event-pattern-match.js";

const NUMERIC_LIMIT = 5e9;
const NUMERIC_DECIMALS = 6;

/**
 * An invalid pattern; `limit` marks size limits, which the `$or` fallback must not retry. Never
 * leaves the event-pattern modules: `checkEventPattern` returns its message, the matchers wrap it.
 */
export class PatternError extends ShoalError {
  constructor(
    message: string,
    readonly limit = false,
  ) {
    super(message);
  }
}

/** `["=", n]`, `[">" | ">=", n]`, `["<" | "<=", n]`, or `[">" | ">=", lo, "<" | "<=", hi]`. */
export function compileNumeric(path: string[], arg: unknown): Matcher {
  const fail = (msg: string): never => {
    throw new PatternError(`${where(path)}numeric: ${msg}`);
  };
  if (!Array.isArray(arg)) return fail("the value must be an array");
  const [op, a, op2, b, ...rest] = arg as unknown[];
  if (typeof op !== "string")
    return fail(`invalid member in numeric match: ${JSON.stringify(op) ?? "]"}`);
  if (!["=", "<", "<=", ">", ">="].includes(op)) fail(`unrecognized numeric range operator: ${op}`);
  const lo = micro(numericOperand(path, a, op === "=" ? "equals" : op));
  if (op2 === undefined && arg.length === 2) {
    if (op === "=") return { test: (x) => numericOf(x) === lo };
    if (op === ">") return { test: (x) => gt(numericOf(x), lo) };
    if (op === ">=") return { test: (x) => gt(numericOf(x), lo - 1) };
    if (op === "<") return { test: (x) => gt(lo, numericOf(x)) };
    return { test: (x) => gt(lo + 1, numericOf(x)) };
  }
  if (op !== ">" && op !== ">=") fail("too many elements in numeric expression");
  if (op2 !== "<" && op2 !== "<=") fail(`bad numeric range operator: ${JSON.stringify(op2)}`);
  if (rest.length > 0 || arg.length !== 4) fail('a range is [">" or ">=", low, "<" or "<=", high]');
  const hi = micro(numericOperand(path, b, String(op2)));
  if (lo >= hi) fail("bottom must be less than top");
  const bottom = op === ">" ? lo : lo - 1;
  const top = op2 === "<" ? hi : hi + 1;
  return { test: (x) => gt(numericOf(x), bottom) && gt(top, numericOf(x)) };
}

/** `a > b` for micro-units, false when either side is not a comparable number. */
export function gt(a: number | undefined, b: number | undefined): boolean {
  return a !== undefined && b !== undefined && a > b;
}

export function numericOperand(path: string[], n: unknown, op: string): number {
  if (typeof n !== "number" || !Number.isFinite(n)) {
    throw new PatternError(`${where(path)}value of ${op} must be numeric`);
  }
  if (!inNumericRange(n)) {
    throw new PatternError(
      `${where(path)}${n} is outside -5e9..5e9, the range numeric matching covers`,
    );
  }
  if (decimalPlaces(n) > NUMERIC_DECIMALS) {
    throw new PatternError(`${where(path)}${n} has more than ${NUMERIC_DECIMALS} decimal places`);
  }
  return n;
}

export function inNumericRange(n: number): boolean {
  return Number.isFinite(n) && Math.abs(n) <= NUMERIC_LIMIT;
}

/** Millionths, the precision EventBridge compares numbers at; integers up to 5e15 stay exact. */
export function micro(n: number): number {
  return Math.round(n * 10 ** NUMERIC_DECIMALS);
}

/** An event value as micro-units when it is a JSON number numeric matching covers. */
export function numericOf(x: Scalar): number | undefined {
  return typeof x === "number" && inNumericRange(x) ? micro(x) : undefined;
}

export function decimalPlaces(n: number): number {
  const [mantissa = "", exponent = "0"] = String(Math.abs(n)).split("e");
  const dot = mantissa.indexOf(".");
  return Math.max(0, (dot < 0 ? 0 : mantissa.length - dot - 1) - Number(exponent));
}

export function equalsIgnoreCase(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase() || a.toUpperCase() === b.toUpperCase();
}

// ---- wildcard ----------------------------------------------------------------------------------

/** The literal runs between unescaped `*`s: `a*b` is `["a", "b"]`, `*` is `["", ""]`. */
export type Glob = string[];

/** `*` matches any run of characters, `\*` a star, `\\` a backslash; `**` and other escapes are refused. */
export function parseGlob(path: string[], pattern: string): Glob {
  const parts: Glob = [];
  let run = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next !== "*" && next !== "\\") {
        throw new PatternError(
          `${where(path)}invalid escape character at position ${i + 1} of the wildcard`,
        );
      }
      run += next;
      i++;
    } else if (c === "*") {
      if (pattern[i + 1] === "*") {
        throw new PatternError(
          `${where(path)}consecutive wildcard characters at position ${i + 1}`,
        );
      }
      parts.push(run);
      run = "";
    } else run += c;
  }
  parts.push(run);
  return parts;
}

/** Anchored first and last runs, middle runs found leftmost in order: linear, no backtracking. */
export function globMatches(glob: Glob, s: string): boolean {
  const first = glob[0] ?? "";
  if (glob.length === 1) return s === first;
  const last = glob[glob.length - 1] ?? "";
  if (first.length + last.length > s.length || !s.startsWith(first) || !s.endsWith(last)) {
    return false;
  }
  let pos = first.length;
  const end = s.length - last.length;
  for (let i = 1; i < glob.length - 1; i++) {
    const run = glob[i] ?? "";
    const at = s.indexOf(run, pos);
    if (at < 0 || at + run.length > end) return false;
    pos = at + run.length;
  }
  return true;
}

// ---- IP addresses ------------------------------------------------------------------------------

export interface Ip {
  v6: boolean;
  n: bigint;
}
export interface IpRange {
  v6: boolean;
  low: bigint;
  high: bigint;
}

/**
 * An IPv4 dotted quad (decimal octets) or an IPv6 address of hex groups and colons (`::`
 * allowed, no embedded IPv4, no zone): the shapes event-ruler recognises.
 */
export function parseIp(s: string): Ip | undefined {
  const quad = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (quad) {
    let n = 0n;
    for (const octet of quad.slice(1)) {
      const v = Number(octet);
      if (v > 255) return undefined;
      n = (n << 8n) | BigInt(v);
    }
    return { v6: false, n };
  }
  if (!/^[0-9a-fA-F:]*:[0-9a-fA-F:]*$/.test(s)) return undefined;
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const groups = halves.map((h) => (h === "" ? [] : h.split(":")));
  const count = groups.reduce((sum, g) => sum + g.length, 0);
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  const all = [
    ...(groups[0] ?? []),
    ...new Array<string>(8 - count).fill("0"),
    ...(groups[1] ?? []),
  ];
  let n = 0n;
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    n = (n << 16n) | BigInt(Number.parseInt(g, 16));
  }
  return { v6: true, n };
}

export function sameIp(a: Ip | undefined, b: Ip): boolean {
  return a !== undefined && a.v6 === b.v6 && a.n === b.n;
}

export function inRange(ip: Ip | undefined, range: IpRange): boolean {
  return ip !== undefined && ip.v6 === range.v6 && ip.n >= range.low && ip.n <= range.high;
}

/** `address/bits`; event-ruler refuses masks of 32+ bits for IPv4 and 128+ for IPv6. */
export function parseCidr(path: string[], cidr: string): IpRange {
  const fail = (msg: string): never => {
    throw new PatternError(`${where(path)}cidr ${JSON.stringify(cidr)}: ${msg}`);
  };
  const parts = cidr.split("/");
  const [address = "", mask = ""] = parts;
  if (parts.length !== 2 || mask === "") fail("malformed CIDR, one '/' required");
  if (!/^[+-]?\d+$/.test(mask)) fail("malformed CIDR, mask bits must be an integer");
  const bits = Number(mask);
  if (bits < 0) fail("malformed CIDR, mask bits must not be negative");
  const ip = parseIp(address) ?? fail(`invalid IP address: ${address}`);
  const width = ip.v6 ? 128 : 32;
  if (bits >= width) fail(`${ip.v6 ? "IPv6" : "IPv4"} mask bits must be < ${width}`);
  const host = (1n << BigInt(width - bits)) - 1n;
  return { v6: ip.v6, low: ip.n & ~host, high: ip.n | host };
}

// ---- helpers -----------------------------------------------------------------------------------

export function describe(v: unknown): string {
  if (v === null) return "null";
  return Array.isArray(v) ? "an array" : `a ${typeof v}`;
}

/** `detail.state: ` before a message about that field; nothing at the top level. */
export function where(path: string[]): string {
  return path.length > 0 ? `${path.join(".")}: ` : "";
}

// ---- string operands and anything-but ---------------------------------------------------------

export function ignoreCaseOperand(path: string[], op: string, arg: Record<string, unknown>) {
  const keys = Object.keys(arg);
  const value = arg["equals-ignore-case"];
  if (keys.length !== 1 || keys[0] !== "equals-ignore-case") {
    throw new PatternError(`${where(path)}unsupported ${op} pattern: ${keys.join(", ") || "{}"}`);
  }
  if (typeof value !== "string") {
    throw new PatternError(`${where(path)}equals-ignore-case match pattern must be a string`);
  }
  return { value, ignoreCase: true };
}

export function affixTest(op: "prefix" | "suffix", value: string, ignoreCase: boolean) {
  const has = (s: string, a: string) => (op === "prefix" ? s.startsWith(a) : s.endsWith(a));
  return (x: Scalar) =>
    typeof x === "string" &&
    (ignoreCase
      ? has(x.toLowerCase(), value.toLowerCase()) || has(x.toUpperCase(), value.toUpperCase())
      : has(x, value));
}

/**
 * `anything-but` matches any present value (of any type) the negated operand does not match: a
 * value or a list of all strings or all numbers, or one of `prefix`, `suffix`, `equals-ignore-case`
 * and `wildcard` with a string or a list of strings. A missing field never matches it.
 */
export function compileAnythingBut(path: string[], arg: unknown): Matcher {
  const fail = (msg: string): never => {
    throw new PatternError(`${where(path)}anything-but: ${msg}`);
  };
  if (isPlainObject(arg)) {
    const keys = Object.keys(arg);
    const [op] = keys;
    if (op === undefined || keys.length > 1)
      return fail("give exactly one of prefix, suffix, equals-ignore-case, wildcard");
    const operand = arg[op];
    const list = Array.isArray(operand) ? operand : [operand];
    if (list.length === 0) fail("empty arrays are not allowed");
    const strings = list.map((s) =>
      typeof s === "string" ? s : fail(`${op} match pattern must be a string`),
    );
    let tests: ((x: Scalar) => boolean)[];
    if (op === "prefix" || op === "suffix") {
      if (strings.includes("")) fail("empty prefix/suffix not allowed");
      tests = strings.map((s) => affixTest(op, s, false));
    } else if (op === "equals-ignore-case") {
      tests = strings.map((s) => (x) => typeof x === "string" && equalsIgnoreCase(x, s));
    } else if (op === "wildcard") {
      const globs = strings.map((s) => parseGlob(path, s));
      // event-ruler's Patterns for an anything-but wildcard list: one pattern, a set of strings.
      const key = `anything-but wildcard ${JSON.stringify([...new Set(strings)].sort())}`;
      return {
        test: (x) => !(typeof x === "string" && globs.some((g) => globMatches(g, x))),
        wildcard: { key, globs },
      };
    } else return fail(`unsupported anything-but pattern: ${op}`);
    return { test: (x) => !tests.some((t) => t(x)) };
  }
  const list = Array.isArray(arg) ? arg : [arg];
  if (list.length === 0) fail("empty arrays are not allowed");
  const strings = list.every((v) => typeof v === "string");
  if (!strings && !list.every((v) => typeof v === "number")) {
    fail("values must be a string, a number, or a list of only strings or only numbers");
  }
  if (strings) {
    const excluded = new Set<unknown>(list);
    return { test: (x) => !excluded.has(x) };
  }
  const micros = list.map((n) => micro(numericOperand(path, n, "anything-but")));
  return {
    test: (x) => !(typeof x === "number" && inNumericRange(x) && micros.includes(micro(x))),
  };
}
