/**
 * Parameter resolution and substitution (DolphinScheduler "Parameter" guide: global, local,
 * startup and built-in parameters, parameter priority, and `${name}` / `$[…]` references).
 * All values are strings. Pure: the base time is an argument.
 */

import { type ShellReplacement, substituteShell } from "./shell-quote.js";
import { evaluateTimeExpression, ParamError } from "./time-params.js";

export { ParamError } from "./time-params.js";

/** Valid parameter names (validation elsewhere uses it too). */
export const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;

/** Passes of nested `${name}` expansion: deeper references stay as written. */
export const MAX_PARAM_DEPTH = 16;

/** Largest expanded value, UTF-8 bytes: stops `a=${b}${b}`, `b=${c}${c}`… from exploding. */
export const MAX_RESOLVED_BYTES = 64 * 1024;

/** `${name}` or `$[time expression]` (no newline or `]` inside the brackets). */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_.]*)\}|\$\[([^\]\n]*)\]/g;
const NAME_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_.]*)\}/g;
const TIME_REFERENCE = /\$\[([^\]\n]*)\]/g;

const encoder = new TextEncoder();

/** What `resolveParams` merges; maps are name → value. */
export interface ParamSources {
  /** Workflow definition parameters. */
  global?: Record<string, string>;
  /** OUT parameters of upstream tasks. */
  upstreamOut?: Record<string, string>;
  /** Task definition parameters. */
  local?: Record<string, string>;
  /** Parameters of the run request (or schedule). */
  startup?: Record<string, string>;
  /** `builtinParams(...)`. */
  builtins: Record<string, string>;
  /** Base time for `$[…]`, epoch ms. */
  baseMs: number;
  /** IANA zone for `$[…]`, default "UTC". */
  zone?: string;
}

/** Strongly connected components (Tarjan): names that reach each other through `${…}`. */
function components(graph: Map<string, string[]>): Map<string, number> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const comp = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  let counter = 0;
  let comps = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      for (;;) {
        const w = stack.pop() as string;
        onStack.delete(w);
        comp.set(w, comps);
        if (w === v) break;
      }
      comps++;
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return comp;
}

/** `$[…]` in `text` evaluated; errors name the parameter. */
function evaluateTimes(name: string, text: string, baseMs: number, zone?: string): string {
  return text.replace(TIME_REFERENCE, (_m, expr: string) => {
    try {
      return evaluateTimeExpression(expr, baseMs, zone);
    } catch (err) {
      if (err instanceof ParamError) {
        throw new ParamError(`parameter ${name}: ${err.message}`, { cause: err });
      }
      throw err;
    }
  });
}

/**
 * The parameters a task sees. Precedence, highest first (DolphinScheduler "Parameter
 * Priority"): startup > local > upstream OUT > global > builtins. Then every value's `${name}`
 * references are expanded with the other values, nested up to MAX_PARAM_DEPTH levels, and its
 * `$[…]` time expressions are evaluated (global `dt = $[yyyyMMdd-1]` and local
 * `path = /d/${dt}` give `path = /d/20261120`). References to unknown names, and references
 * between names that refer to each other (a cycle, including a name referring to itself), stay
 * as written.
 *
 * @throws ParamError for a bad `$[…]`, an invalid zone, or a value expanding past
 *   MAX_RESOLVED_BYTES.
 */
export function resolveParams(input: ParamSources): Record<string, string> {
  const raw = new Map<string, string>();
  for (const layer of [
    input.builtins,
    input.global,
    input.upstreamOut,
    input.local,
    input.startup,
  ]) {
    for (const [k, v] of Object.entries(layer ?? {})) raw.set(k, v);
  }
  const graph = new Map<string, string[]>();
  for (const [name, value] of raw) {
    const refs = [...value.matchAll(NAME_REFERENCE)].map((m) => m[1] as string);
    graph.set(
      name,
      refs.filter((r) => raw.has(r)),
    );
  }
  const comp = components(graph);
  // Pass k holds every value expanded k levels deep; a DAG settles once k passes its height.
  let current = new Map(raw);
  for (let pass = 0; pass < MAX_PARAM_DEPTH; pass++) {
    let changed = false;
    const next = new Map<string, string>();
    for (const [name, value] of raw) {
      const expanded = value.replace(NAME_REFERENCE, (m, ref: string) =>
        raw.has(ref) && comp.get(ref) !== comp.get(name) ? (current.get(ref) as string) : m,
      );
      if (encoder.encode(expanded).length > MAX_RESOLVED_BYTES) {
        throw new ParamError(
          `parameter ${name} expands to more than ${MAX_RESOLVED_BYTES} bytes of nested references`,
        );
      }
      if (expanded !== current.get(name)) changed = true;
      next.set(name, expanded);
    }
    current = next;
    if (!changed) break;
  }
  const out: Record<string, string> = {};
  for (const [name, value] of current) {
    Object.defineProperty(out, name, {
      value: evaluateTimes(name, value, input.baseMs, input.zone),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** How `substitute` writes values: as they are, or quoted for `/bin/sh -c`. */
export interface SubstituteOptions {
  mode: "raw" | "shell";
  /** Base time for `$[…]`, epoch ms. */
  baseMs: number;
  /** IANA zone for `$[…]`, default "UTC". */
  zone?: string;
}

/**
 * Replaces, in one pass, `${name}` for names present in `params` (unknown names are left as
 * they are, so `${HOME}` still reaches the shell) and every `$[…]` (whose own `${name}`s are
 * replaced first, as DolphinScheduler replaces `${}` before `$[]`). Inserted values are not
 * scanned again. `shell` mode quotes every inserted value, time expressions included, for its
 * place in the command (shell-quote.ts).
 *
 * @throws ParamError for a bad `$[…]`, or (shell mode) a reference that cannot be quoted safely
 *   where it stands (backquotes, here-document delimiter, non-integer in arithmetic, …).
 */
export function substitute(
  text: string,
  params: Record<string, string>,
  opts: SubstituteOptions,
): string {
  const has = (name: string) => Object.hasOwn(params, name);
  const replacements: ShellReplacement[] = [];
  for (const m of text.matchAll(REFERENCE)) {
    const [whole, name, expr] = m;
    let value: string;
    if (name !== undefined) {
      if (!has(name)) continue;
      value = params[name] as string;
    } else {
      const inner = (expr as string).replace(NAME_REFERENCE, (r, n: string) =>
        has(n) ? (params[n] as string) : r,
      );
      value = evaluateTimeExpression(inner, opts.baseMs, opts.zone);
    }
    replacements.push({ start: m.index, end: m.index + whole.length, value, label: whole });
  }
  if (opts.mode === "shell") return substituteShell(text, replacements);
  let out = "";
  let from = 0;
  for (const r of replacements) {
    out += text.slice(from, r.start) + r.value;
    from = r.end;
  }
  return out + text.slice(from);
}

/**
 * Parameters as environment variables. Names that are valid environment names
 * (`[A-Za-z_][A-Za-z0-9_]*`) are kept; dotted names have `.` replaced by `_`
 * (`system.datetime` → `system_datetime`), since POSIX shells cannot read a variable with a dot
 * in its name. When two names map to one variable the undotted name wins, then the first
 * dotted one in code-point order. Names matching neither rule are left out.
 */
export function paramsToEnv(params: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  const set = (key: string, value: string) =>
    Object.defineProperty(env, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  const dotted: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) set(name, value);
    else if (PARAM_NAME.test(name)) dotted.push(name);
  }
  for (const name of dotted.sort()) {
    const key = name.replaceAll(".", "_");
    if (!Object.hasOwn(env, key)) set(key, params[name] as string);
  }
  return env;
}

/** Names used as `${name}` in `text`, each once, in order of first use (for validation messages). */
export function referencedParams(text: string): string[] {
  return [...new Set([...text.matchAll(NAME_REFERENCE)].map((m) => m[1] as string))];
}
