/**
 * Conditions of the SWITCH logic task, written in CEL (Google's Common Expression Language,
 * https://github.com/google/cel-spec) and run by `@marcbachmann/cel-js`.
 *
 * DolphinScheduler substitutes `${name}` placeholders into the condition text and evaluates the
 * result with a JavaScript engine (`SwitchTaskUtils`, a Nashorn sandbox since 3.2). Shoal passes
 * the parameters as data instead: CEL is not Turing-complete, has no eval and reaches nothing but
 * the variables given to it, so a parameter value cannot change what an expression means. So that
 * numbers still compare as numbers (`rows > threshold` with "5" and "100" is false, as
 * DolphinScheduler's `5 > 100`), parameters have the CEL type `parameter` (cel-parameter.ts).
 */
import { type ASTNode, Environment } from "@marcbachmann/cel-js";
import { PARAMETER_TYPE, ParamValue, registerParameterType } from "./cel-parameter.js";

/** Longest condition accepted, in characters (Unicode code points). */
export const SWITCH_EXPRESSION_MAX_CHARS = 1000;

/**
 * How deeply macros that loop or bind (`all`, `exists`, `exists_one`, `map`, `filter`,
 * `cel.bind`) may nest. CEL always terminates, but nested loops multiply their cost and nested
 * binds can double a list at every level; cel-go offers the same guard
 * (`ComprehensionNestingLimit`).
 */
export const SWITCH_MACRO_NESTING_LIMIT = 2;

/** One SWITCH case: a CEL condition and the code of the task it leads to. */
export interface SwitchCaseInput {
  condition: string;
  next: string;
}

/** Outcome of {@link evaluateSwitch}: the branch to follow, or why the task fails. */
export type SwitchResult = { next: string; matched: number } | { error: string };

const PARAMS_MAP = "params";
const IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
/** Literals, operators and words the CEL spec reserves; none can name a variable. */
const RESERVED = new Set([
  "true",
  "false",
  "null",
  "in",
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "package",
  "namespace",
  "return",
  "var",
  "void",
  "while",
]);
const LOOP_MACROS = new Set(["all", "exists", "exists_one", "map", "filter"]);

// Built once (environments are costly to set up); cloned per evaluation to declare variables.
const BASE = registerParameterType(new Environment()).registerVariable(
  PARAMS_MAP,
  `map<string, ${PARAMETER_TYPE}>`,
);

/**
 * Why `expr` cannot be a SWITCH condition, as one sentence for a 400 at definition time, or
 * undefined when it can. Reports: more than {@link SWITCH_EXPRESSION_MAX_CHARS} characters, a
 * syntax error, macros nested deeper than {@link SWITCH_MACRO_NESTING_LIMIT}, and type errors
 * certain to happen at run time. Every top-level identifier is checked as a parameter (the type
 * every parameter has at run time), so `count > 3` and `count == "5"` pass while `count > true`
 * ("no such overload: parameter > bool") and `count.foo()` are rejected. A condition whose type
 * can never be a boolean (`size(region)`) is rejected too. Whether the named parameters exist,
 * and whether their values are numbers, is only known at run time.
 */
export function checkSwitchExpression(expr: string): string | undefined {
  const parsed = parseChecked(expr);
  if (typeof parsed === "string") return parsed;
  const env = BASE.clone();
  for (const name of freeIdentifiers(parsed)) declareParameter(env, name);
  return typeProblem(env, expr);
}

/**
 * Picks the SWITCH branch: the `next` of the first case whose condition is true (`matched` = its
 * 0-based index), else `defaultNext` (`matched` = -1).
 *
 * Variables: every parameter whose name is a CEL identifier (`region`, not `system.biz.date`, a
 * reserved word or a built-in name such as `int`) is a top-level variable; all parameters are in
 * the map `params` (`params["system.biz.date"]`; a parameter called `params` is only reachable as
 * `params["params"]`). Each has the CEL type `parameter` (cel-parameter.ts): a string that
 * compares and computes as a number where it looks like one (`rows > threshold`, `rows > 3`,
 * `rows + 1`), and as text against a quoted string (`count == "5"`); string functions work on it.
 *
 * Errors (the task fails, no later case is tried): a condition that is too long, does not parse,
 * names an unknown variable or parameter (`params["x"]` for a missing `x`; test membership with
 * `"x" in params`), mixes types (`count > true`: "no such overload: parameter > bool", reported
 * even when `||` would skip that operand, because the whole condition is type-checked first),
 * fails while evaluating (`region > 3` when region is "eu", `int("abc")`, an int beyond 64 bits,
 * division by zero) or yields something other than a boolean; and no case true without a
 * `defaultNext`. DolphinScheduler up to 3.1 fails
 * the task on an evaluation error too; 3.2+ logs it and tries the next case, which lets a typo
 * silently take the default branch.
 */
export function evaluateSwitch(
  cases: readonly SwitchCaseInput[],
  defaultNext: string | undefined,
  params: Readonly<Record<string, string>>,
): SwitchResult {
  const evaluate = switchEvaluator(params);
  for (const [index, c] of cases.entries()) {
    const value = evaluate(c.condition, index);
    if (typeof value === "object") return value;
    if (value) return { next: c.next, matched: index };
  }
  if (defaultNext !== undefined) return { next: defaultNext, matched: -1 };
  return { error: "no case matched and there is no defaultNext" };
}

/** One condition's value, or why it has none (the message names the case). */
export type ConditionResult = boolean | { error: string };

/**
 * An evaluator of conditions over `params`, as {@link evaluateSwitch} runs them (variables,
 * checks and errors alike); `index` is the case's, for error messages.
 */
export function switchEvaluator(
  params: Readonly<Record<string, string>>,
): (condition: string, index: number) => ConditionResult {
  const env = BASE.clone();
  // A null prototype: nothing but the parameters can be found by name.
  const context: Record<string, unknown> = Object.create(null);
  const values = new Map<string, ParamValue>();
  for (const [name, value] of Object.entries(params)) {
    const param = new ParamValue(name, value);
    values.set(name, param);
    if (declareParameter(env, name)) context[name] = param;
  }
  context[PARAMS_MAP] = values;
  return (condition, index) => {
    const parsed = parseChecked(condition);
    const problem = typeof parsed === "string" ? parsed : typeProblem(env, condition);
    if (problem) return { error: caseError(index, condition, problem) };
    let value: unknown;
    try {
      value = env.evaluate(condition, context);
    } catch (err) {
      return { error: caseError(index, condition, celMessage(err, condition)) };
    }
    if (typeof value !== "boolean") {
      return { error: caseError(index, condition, `it yields ${describe(value)}, not a boolean`) };
    }
    return value;
  };
}

/**
 * The parameter names a condition reads: its variables (`rows`) and the literal keys it looks up
 * in `params` (`params["system.biz.date"]`, `params.rows`), in order of appearance. Macro
 * variables (`k` in `params.exists(k, …)`), built-in names (`int`, `string`) and `params` itself
 * are not parameters. Membership tests (`"rows" in params`) read nothing. Empty when the
 * condition does not parse.
 */
export function conditionReads(condition: string): string[] {
  const parsed = parseChecked(condition);
  if (typeof parsed === "string") return [];
  const bound = new Set<string>();
  const reads: string[] = [];
  const visit = (node: ASTNode): void => {
    if (node.op === "rcall" && isMacro(node.args[0], node.args[1])) {
      const variable = node.args[2][0];
      if (variable?.op === "id") bound.add(variable.args);
    }
    if (node.op === "id") {
      if (node.args !== PARAMS_MAP && !BASE.hasVariable(node.args)) reads.push(node.args);
    } else if ((node.op === "[]" || node.op === ".") && isParamsMap(node.args[0])) {
      const key = node.args[1];
      if (typeof key === "string") reads.push(key);
      else if (key.op === "value" && typeof key.args === "string") reads.push(key.args);
      return; // `params` itself is no read
    }
    for (const child of children(node)) visit(child);
  };
  visit(parsed);
  return [...new Set(reads.filter((name) => !bound.has(name) && name !== "cel"))];
}

/**
 * The parameter names a condition tests for: `"rows" in params` and `has(params.rows)`. A
 * condition that tests a name may read it only when it is there (`"x" in params && params.x ==
 * "1"`), so a name nothing sets is no mistake in it. Empty when the condition does not parse.
 */
export function conditionTests(condition: string): string[] {
  const parsed = parseChecked(condition);
  if (typeof parsed === "string") return [];
  const tests: string[] = [];
  const stack = [parsed];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.op === "in" && isParamsMap(node.args[1])) {
      const key = node.args[0];
      if (key.op === "value" && typeof key.args === "string") tests.push(key.args);
    } else if (node.op === "call" && node.args[0] === "has") {
      const field = node.args[1][0];
      if (field?.op === "." && isParamsMap(field.args[0]) && typeof field.args[1] === "string") {
        tests.push(field.args[1]);
      }
    }
    stack.push(...children(node));
  }
  return [...new Set(tests)];
}

function isParamsMap(node: ASTNode): boolean {
  return node.op === "id" && node.args === PARAMS_MAP;
}

/** The AST, or what is wrong with length, syntax or macro nesting (judged without variables). */
function parseChecked(expr: string): ASTNode | string {
  const chars = [...expr].length;
  if (chars > SWITCH_EXPRESSION_MAX_CHARS) {
    return `the expression is ${chars} characters long; the limit is ${SWITCH_EXPRESSION_MAX_CHARS}`;
  }
  let ast: ASTNode;
  try {
    ast = BASE.parse(expr).ast;
  } catch (err) {
    return `syntax error: ${celMessage(err, expr)}`;
  }
  const depth = macroDepth(ast);
  if (depth > SWITCH_MACRO_NESTING_LIMIT) {
    return `macros (all, exists, exists_one, map, filter, cel.bind) are nested ${depth} deep; the limit is ${SWITCH_MACRO_NESTING_LIMIT}`;
  }
  return ast;
}

/** Type-checks `expr` in `env`; undefined when it may yield a boolean. */
function typeProblem(env: Environment, expr: string): string | undefined {
  const result = env.check(expr);
  if (!result.valid) {
    const message = celMessage(result.error, expr);
    return message.includes(PARAMETER_TYPE)
      ? `${message} (a parameter is a string, compared as a number with a number or with another number-like parameter)`
      : message;
  }
  if (result.type !== "bool" && result.type !== "dyn") {
    // A parameter is a string to the user: its CEL type is a detail of how it compares.
    return `it yields ${result.type === PARAMETER_TYPE ? "string" : result.type}, not a boolean`;
  }
  return undefined;
}

/** Declares `name` as a parameter variable when it can be one; false when it cannot. */
function declareParameter(env: Environment, name: string): boolean {
  if (name === PARAMS_MAP || !IDENTIFIER.test(name) || RESERVED.has(name)) return false;
  // Built-ins (int, string, type, cel, ...) are registered already and must keep their meaning.
  if (env.hasVariable(name)) return false;
  try {
    env.registerVariable(name, PARAMETER_TYPE);
    return true;
  } catch {
    return false; // names the library keeps for itself (`__proto__`)
  }
}

/** The AST nodes directly under `node` (its operands, in any nesting of arrays). */
function children(node: ASTNode): ASTNode[] {
  const out: ASTNode[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (isNode(value)) out.push(value);
  };
  visit(node.args);
  return out;
}

function isNode(value: unknown): value is ASTNode {
  return typeof value === "object" && value !== null && "op" in value && "args" in value;
}

/** Every identifier read in `ast` (macro loop variables included; declaring those is harmless). */
function freeIdentifiers(ast: ASTNode): Set<string> {
  const names = new Set<string>();
  const stack = [ast];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.op === "id") names.add(node.args);
    stack.push(...children(node));
  }
  return names;
}

/** Deepest nesting of looping or binding macros in `node`. */
function macroDepth(node: ASTNode): number {
  const own = node.op === "rcall" && isMacro(node.args[0], node.args[1]) ? 1 : 0;
  let deepest = 0;
  for (const child of children(node)) deepest = Math.max(deepest, macroDepth(child));
  return own + deepest;
}

function isMacro(name: string, receiver: ASTNode): boolean {
  if (LOOP_MACROS.has(name)) return true;
  return name === "bind" && receiver.op === "id" && receiver.args === "cel";
}

function caseError(index: number, expr: string, problem: string): string {
  return `case ${index} (${JSON.stringify(expr)}): ${problem}`;
}

/**
 * The library's one-line summary plus where in `expr` it happened (its full message draws the
 * source over several lines). Positions count code points from 1.
 */
function celMessage(err: unknown, expr: string): string {
  if (!(err instanceof Error)) return String(err);
  const e = err as Error & { summary?: string; range?: { start: number } };
  const summary = e.summary ?? e.message.split("\n")[0] ?? e.message;
  if (!e.range) return summary;
  if (e.range.start >= expr.length) return `${summary} at the end`;
  return `${summary} at character ${[...expr.slice(0, e.range.start)].length + 1}`;
}

/** CEL's name for the type of an evaluation result, with a short rendering of the value. */
function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "bigint") return `int ${value}`;
  if (typeof value === "number") return `double ${value}`;
  if (typeof value === "string" || value instanceof ParamValue) {
    const text = String(value);
    const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
    return `string ${JSON.stringify(shown)}`;
  }
  if (Array.isArray(value)) return "a list";
  if (value instanceof Map) return "a map";
  if (value instanceof Uint8Array) return "bytes";
  if (value instanceof Date) return "a timestamp";
  return `a value of type ${typeof value === "object" ? (value.constructor?.name ?? "object") : typeof value}`;
}
