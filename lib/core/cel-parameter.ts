/**
 * The CEL type `parameter` of SWITCH conditions (lib/core/switch-expression.ts): a task parameter,
 * which is always a string, that compares and computes as a number when its value looks like one.
 *
 * DolphinScheduler substitutes `${name}` into the condition text before evaluating it, so
 * `${rows} > ${threshold}` becomes `5 > 100` and compares numbers. Shoal passes values as data
 * (a value can never change what a condition means), so it gives them a type of their own whose
 * operators decide by the value: numbers as numbers, text as text. Every string function works on
 * it unchanged (each is delegated to the library's own string overload).
 *
 * Rules (docs/workflows.md "SWITCH"):
 * - A value looks like a number when, once the whitespace around it is trimmed (JavaScript's
 *   `trim()`: the whitespace DolphinScheduler's JavaScript would skip around a pasted value),
 *   it is an optional `-`, decimal digits, and optionally `.` and more digits (`5`, `-12`,
 *   `007`, `0.25`, ` 150`, `42\n`). No `+`, exponent, hex, inner spaces, `,`, `.5`, `5.`,
 *   `Infinity` or `NaN`: those are text, as is the empty value.
 * - parameter vs parameter, `<` `<=` `>` `>=`: as numbers when both look like numbers (exactly,
 *   whatever their length), as text when neither does; an error when exactly one does (`rows >
 *   threshold` with rows "" and threshold "100" would otherwise compare text and silently take
 *   another branch; DolphinScheduler's pasted `> 100` is a syntax error that fails the task).
 * - parameter vs parameter, `==` `!=`: as numbers when both look like numbers (`"05" == "5.0"`,
 *   `" 150" == "150"`), else as the exact text (never an error, as CEL's equality).
 * - parameter vs a quoted string: as text (`rows == "5"`, `day >= "20260101"`).
 * - parameter vs an int or double: as numbers; `<` etc. fail when the value is not a number,
 *   `==` is false, `!=` true (CEL's equality across types).
 * - Arithmetic (`+` `-` `*` `/` `%`, unary `-`) with numbers or number-looking parameters: an
 *   int when both sides are integers (64-bit, overflow is an error), else a double. `+` of two
 *   parameters that are not both numbers, or of a parameter and a string, concatenates.
 * - `in`: `rows in [1, 2]` numeric, `region in ["eu", "us"]` text.
 */
import { Environment, EvaluationError } from "@marcbachmann/cel-js";

/** CEL name of the type (shown in type errors). */
export const PARAMETER_TYPE = "parameter";

const NUMBER = /^-?[0-9]+(\.[0-9]+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Whether `text` is a number in the sense of this module (see the module comment). */
export function looksNumeric(text: string): boolean {
  return NUMBER.test(text.trim());
}

/** A parameter's value in a SWITCH condition: its name (for error messages) and its text. */
export class ParamValue {
  constructor(
    readonly name: string,
    readonly text: string,
  ) {}

  /** Whether the value looks like a number ({@link looksNumeric}). */
  get numeric(): boolean {
    return looksNumeric(this.text);
  }

  /** The value as a number's text: without the whitespace around it. */
  get digits(): string {
    return this.text.trim();
  }

  toString(): string {
    return this.text;
  }
}

/**
 * Compares two decimal numbers given as text exactly (no rounding, any length).
 * @returns negative, 0 or positive, as `a - b`.
 */
export function compareDecimal(a: string, b: string): number {
  const [na, ia, fa] = splitDecimal(a);
  const [nb, ib, fb] = splitDecimal(b);
  const zeroA = ia === "" && fa === "";
  const zeroB = ib === "" && fb === "";
  const signA = zeroA ? 0 : na ? -1 : 1;
  const signB = zeroB ? 0 : nb ? -1 : 1;
  if (signA !== signB) return signA - signB;
  if (signA === 0) return 0;
  let magnitude = ia.length - ib.length;
  if (magnitude === 0) magnitude = ia < ib ? -1 : ia > ib ? 1 : 0;
  if (magnitude === 0) {
    const width = Math.max(fa.length, fb.length);
    const pa = fa.padEnd(width, "0");
    const pb = fb.padEnd(width, "0");
    magnitude = pa < pb ? -1 : pa > pb ? 1 : 0;
  }
  return signA * Math.sign(magnitude);
}

/** Sign, integer digits without leading zeros, fraction digits without trailing zeros. */
function splitDecimal(text: string): [boolean, string, string] {
  const negative = text.startsWith("-");
  const [int = "", frac = ""] = (negative ? text.slice(1) : text).split(".");
  return [negative, int.replace(/^0+/, ""), frac.replace(/0+$/, "")];
}

/** An int (bigint) or double (number) in CEL's representation. */
type CelNumber = bigint | number;

/** The number a parameter stands for; throws (an EvaluationError) when it is not one. */
function numberOf(p: ParamValue, ast?: unknown): CelNumber {
  if (!p.numeric) {
    throw evalError(`parameter ${p.name} is ${JSON.stringify(shorten(p.text))}, not a number`, ast);
  }
  if (p.digits.includes(".")) return Number(p.digits);
  const n = BigInt(p.digits);
  if (n < INT64_MIN || n > INT64_MAX) {
    throw evalError(
      `parameter ${p.name} (${shorten(p.digits)}) is beyond the 64-bit int range`,
      ast,
    );
  }
  return n;
}

function shorten(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function evalError(message: string, ast?: unknown): EvaluationError {
  // Without a node the library attaches the node of the call that failed (its position).
  return ast ? new EvaluationError(message, ast as never) : new EvaluationError(message);
}

type Relation = "<" | "<=" | ">" | ">=";
const RELATIONS: readonly Relation[] = ["<", "<=", ">", ">="];

function holds(relation: Relation, order: number): boolean {
  switch (relation) {
    case "<":
      return order < 0;
    case "<=":
      return order <= 0;
    case ">":
      return order > 0;
    default:
      return order >= 0;
  }
}

/** Text order as CEL's own `string < string` (code points, via the library). */
function textOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Order of a parameter and a number literal; throws when the parameter is not a number. */
function numberOrder(p: ParamValue, n: CelNumber, ast: unknown): number {
  if (!p.numeric) numberOf(p, ast); // throws the "not a number" error
  if (typeof n === "bigint") return compareDecimal(p.digits, n.toString());
  const v = Number(p.digits);
  return v < n ? -1 : v > n ? 1 : v === n ? 0 : Number.NaN;
}

/**
 * Order of two parameters for `<` `<=` `>` `>=`: numbers when both look like numbers, text when
 * neither does; throws when exactly one does (text order would be a silent wrong answer).
 */
function paramOrder(rel: Relation, a: ParamValue, b: ParamValue, ast?: unknown): number {
  if (a.numeric && b.numeric) return compareDecimal(a.digits, b.digits);
  if (a.numeric !== b.numeric) {
    const [num, text] = a.numeric ? [a, b] : [b, a];
    throw evalError(
      `parameter ${text.name} is ${JSON.stringify(shorten(text.text))}, not a number, while parameter ${num.name} is the number ${shorten(num.digits)}: ${rel} needs two numbers or two texts (to compare them as text, write string(${a.name}) ${rel} string(${b.name}))`,
      ast,
    );
  }
  return textOrder(a.text, b.text);
}

/** `==` of two parameters: as numbers when both look like numbers, else as the exact text. */
function paramEquals(a: ParamValue, b: ParamValue): boolean {
  return a.numeric && b.numeric ? compareDecimal(a.digits, b.digits) === 0 : a.text === b.text;
}

/** Equality of a parameter and a number literal: false when the parameter is not a number. */
function numberEquals(p: ParamValue, n: CelNumber): boolean {
  if (!p.numeric) return false;
  return typeof n === "bigint"
    ? compareDecimal(p.digits, n.toString()) === 0
    : Number(p.digits) === n;
}

// Delegation to the library's own overloads: plain values in `dyn` variables dispatch at run time.
const DELEGATE = new Environment()
  .registerVariable("r", "dyn")
  .registerVariable("a0", "dyn")
  .registerVariable("a1", "dyn")
  .registerVariable("a2", "dyn");
const compiled = new Map<string, ReturnType<Environment["parse"]>>();

/** Evaluates `expr` over plain values; an error is rethrown without its (inner) position. */
function delegate(expr: string, context: Record<string, unknown>): unknown {
  let fn = compiled.get(expr);
  if (!fn) {
    fn = DELEGATE.parse(expr);
    compiled.set(expr, fn);
  }
  try {
    return fn(context);
  } catch (err) {
    const e = err as Error & { summary?: string };
    throw new EvaluationError(e.summary ?? e.message);
  }
}

function plain(v: unknown): unknown {
  return v instanceof ParamValue ? v.text : v;
}

/** CEL arithmetic on two numbers: ints stay ints when both are, else both become doubles. */
function arithmetic(op: string, a: CelNumber, b: CelNumber): unknown {
  const ints = typeof a === "bigint" && typeof b === "bigint";
  return delegate(`a0 ${op} a1`, {
    a0: ints ? a : Number(a),
    a1: ints ? b : Number(b),
  });
}

/**
 * Registers the `parameter` type, its operators and a `parameter` version of every function that
 * takes a string (receiver or argument) on `env`, which must not be cloned yet.
 */
export function registerParameterType(env: Environment): Environment {
  // No fields: a parameter has nothing to select (`region.text` is an error, not its value).
  env.registerType(PARAMETER_TYPE, { ctor: ParamValue, fields: {} });
  const P = PARAMETER_TYPE;
  for (const rel of RELATIONS) {
    env.registerOperator(`${P} ${rel} ${P}`, (a: ParamValue, b: ParamValue, ast?: unknown) =>
      holds(rel, paramOrder(rel, a, b, ast)),
    );
    env.registerOperator(`${P} ${rel} string`, (a: ParamValue, b: string) =>
      holds(rel, textOrder(a.text, b)),
    );
    env.registerOperator(`string ${rel} ${P}`, (a: string, b: ParamValue) =>
      holds(rel, textOrder(a, b.text)),
    );
    for (const num of ["int", "double"]) {
      env.registerOperator(`${P} ${rel} ${num}`, (a: ParamValue, b: CelNumber, ast?: unknown) =>
        holds(rel, numberOrder(a, b, ast)),
      );
      env.registerOperator(`${num} ${rel} ${P}`, (a: CelNumber, b: ParamValue, ast?: unknown) =>
        holds(rel, -numberOrder(b, a, ast)),
      );
    }
  }
  // `==` also registers `!=` and the mirrored order.
  env.registerOperator(`${P} == ${P}`, (a: ParamValue, b: ParamValue) => paramEquals(a, b));
  env.registerOperator(`${P} == string`, (a: ParamValue, b: string) => a.text === b);
  env.registerOperator(`${P} == int`, (a: ParamValue, b: bigint) => numberEquals(a, b));
  env.registerOperator(`${P} == double`, (a: ParamValue, b: number) => numberEquals(a, b));

  const same = (a: unknown, b: unknown) =>
    a instanceof ParamValue && b instanceof ParamValue
      ? paramEquals(a, b)
      : a instanceof ParamValue
        ? typeof b === "string"
          ? a.text === b
          : numberEquals(a, b as CelNumber)
        : a === b;
  env.registerOperator(`${P} in list<${P}>`, (a: ParamValue, l: unknown[]) =>
    l.some((x) => same(a, x)),
  );
  for (const t of ["string", "int", "double"]) {
    env.registerOperator(`${P} in list<${t}>`, (a: ParamValue, l: unknown[]) =>
      l.some((x) => same(a, x)),
    );
    env.registerOperator(`${t} in list<${P}>`, (a: unknown, l: ParamValue[]) =>
      l.some((x) => same(x, a)),
    );
  }

  for (const op of ["+", "-", "*", "/", "%"]) {
    env.registerOperator(`${P} ${op} ${P}: dyn`, (a: ParamValue, b: ParamValue, ast?: unknown) =>
      op === "+" && !(a.numeric && b.numeric)
        ? a.text + b.text
        : arithmetic(op, numberOf(a, ast), numberOf(b, ast)),
    );
    for (const num of ["int", "double"]) {
      env.registerOperator(`${P} ${op} ${num}: dyn`, (a: ParamValue, b: CelNumber, ast?: unknown) =>
        arithmetic(op, numberOf(a, ast), b),
      );
      env.registerOperator(`${num} ${op} ${P}: dyn`, (a: CelNumber, b: ParamValue, ast?: unknown) =>
        arithmetic(op, a, numberOf(b, ast)),
      );
    }
  }
  env.registerOperator(`${P} + string: string`, (a: ParamValue, b: string) => a.text + b);
  env.registerOperator(`string + ${P}: string`, (a: string, b: ParamValue) => a + b.text);
  env.registerOperator(`-${P}: dyn`, (a: ParamValue) => delegate("-a0", { a0: numberOf(a) }));

  registerStringFunctions(env);
  return env;
}

/**
 * For every function overload that takes a string (as receiver or argument), the overloads with
 * `parameter` in one or more of those places, delegating to the string overload.
 */
function registerStringFunctions(env: Environment): void {
  const seen = new Set<string>();
  for (const f of new Environment().getDefinitions().functions) {
    const types = [f.receiverType, ...f.params.map((p) => p.type)];
    const slots = types.flatMap((t, i) => (t === "string" ? [i] : []));
    // `type(...)` comes with the type itself.
    if (slots.length === 0 || f.name === "type") continue;
    const args = f.params.map((_, i) => `a${i}`);
    const call = f.receiverType
      ? `r.${f.name}(${args.join(", ")})`
      : `${f.name}(${args.join(", ")})`;
    // Every non-empty subset of the string places becomes `parameter`.
    for (let mask = 1; mask < 1 << slots.length; mask++) {
      const typed = types.map((t, i) => {
        const slot = slots.indexOf(i);
        return slot >= 0 && mask & (1 << slot) ? PARAMETER_TYPE : t;
      });
      const [receiver, ...params] = typed;
      const signature = `${receiver ? `${receiver}.` : ""}${f.name}(${params.join(", ")}): ${f.returnType}`;
      if (seen.has(signature)) continue;
      seen.add(signature);
      env.registerFunction(signature, (...values: unknown[]) => {
        const context: Record<string, unknown> = {};
        const offset = f.receiverType ? 1 : 0;
        if (f.receiverType) context.r = plain(values[0]);
        args.forEach((name, i) => {
          context[name] = plain(values[i + offset]);
        });
        return delegate(call, context);
      });
    }
  }
}
