/**
 * Parameter substitution into a worker task's fields, just before it runs: `${name}` and
 * `$[...]` in a SHELL command are shell-quoted for their quoting context (a value can never
 * inject a command); in an HTTP task's URL, headers and body they are replaced as they are
 * (DolphinScheduler replaces them there too), and the URL must still be an http(s) URL.
 * A LAMBDA payload and a STEP_FUNCTIONS input are JSON templates (`substituteJson`), and a
 * STEP_FUNCTIONS execution name must still be a valid execution name.
 */
import type {
  HttpTaskDefinition,
  StepFunctionsTaskDefinition,
  WorkerTaskDefinition,
} from "../core/model.js";
import { ParamError, substitute } from "../core/params.js";
import { executionNameProblem, jsonTextProblem } from "../core/validate-tasks.js";

/**
 * @param baseMs base time of `$[...]` expressions, epoch ms.
 * @param zone IANA zone of `$[...]` expressions (the instance's); default UTC.
 * @throws ParamError for a bad time expression, a URL that substitution broke, a LAMBDA payload
 *   or STEP_FUNCTIONS input that is not JSON once substituted, or an execution name that is no
 *   longer valid.
 */
export function substituteTask(
  task: WorkerTaskDefinition,
  params: Record<string, string>,
  baseMs: number,
  zone?: string,
): WorkerTaskDefinition {
  const time: TimeBase = { baseMs, ...(zone !== undefined ? { zone } : {}) };
  switch (task.type) {
    case "SHELL":
      return { ...task, command: substitute(task.command, params, { mode: "shell", ...time }) };
    case "HTTP":
      return substituteHttp(task, params, time);
    case "LAMBDA":
      return { ...task, payload: substituteJsonField("payload", task.payload, params, time) };
    case "STEP_FUNCTIONS":
      return substituteStepFunctions(task, params, time);
  }
}

/** Base time (epoch ms) and IANA zone (default UTC) of `$[...]` expressions. */
interface TimeBase {
  baseMs: number;
  zone?: string;
}

function substituteHttp(
  task: HttpTaskDefinition,
  params: Record<string, string>,
  time: TimeBase,
): HttpTaskDefinition {
  const raw = (text: string) => substitute(text, params, { mode: "raw", ...time });
  const url = raw(task.url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ParamError(`the URL after parameter substitution is not valid: ${url.slice(0, 200)}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ParamError(
      `the URL after parameter substitution is not http(s): ${url.slice(0, 200)}`,
    );
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(task.headers)) {
    const value = raw(v);
    if (/[\r\n\0]/.test(value)) {
      throw new ParamError(`header '${k}' contains CR, LF or NUL after parameter substitution`);
    }
    headers[k] = value;
  }
  return {
    ...task,
    url,
    headers,
    ...(task.body !== undefined ? { body: raw(task.body) } : {}),
  };
}

function substituteStepFunctions(
  task: StepFunctionsTaskDefinition,
  params: Record<string, string>,
  time: TimeBase,
): StepFunctionsTaskDefinition {
  const out = { ...task };
  if (task.input !== undefined) {
    out.input = substituteJsonField("input", task.input, params, time);
  }
  if (task.executionName !== undefined) {
    const name = substitute(task.executionName, params, { mode: "raw", ...time });
    const problem = executionNameProblem(name);
    if (problem) {
      throw new ParamError(
        `executionName after parameter substitution ${problem}: ${JSON.stringify(name.slice(0, 100))}`,
      );
    }
    out.executionName = name;
  }
  return out;
}

function substituteJsonField(
  field: string,
  template: string,
  params: Record<string, string>,
  time: TimeBase,
): string {
  const text = substituteJson(template, params, time.baseMs, time.zone);
  const problem = jsonTextProblem(text);
  if (problem) {
    throw new ParamError(`the ${field} after parameter substitution is not JSON: ${problem}`);
  }
  return text;
}

/** A `${name}` or `$[…]` reference at the sticky position (the same syntax as params.ts). */
const REFERENCE_AT = /\$\{[A-Za-z_][A-Za-z0-9_.]*\}|\$\[[^\]\n]*\]/y;

/**
 * Substitutes `${name}` and `$[…]` in a JSON template. Where the template puts a reference
 * inside a JSON string (`{"user": "${user}"}`), the value is inserted JSON-string-escaped, so
 * quotes, backslashes and control characters in it stay part of that string and cannot end it
 * or add keys. Elsewhere (`{"n": ${count}}`) the value is inserted as it is, so it may be any
 * JSON (a number, `true`, an object) — and may also change the document's structure: put
 * values that are not trusted inside quotes. Whether a reference lies inside a string is decided
 * from the template alone, never from inserted values. Names that are not parameters stay as
 * written, as `substitute` leaves them. The result is not checked here.
 *
 * @param baseMs base time of `$[...]` expressions, epoch ms.
 * @param zone IANA zone of `$[...]` expressions; default UTC.
 * @throws ParamError for a bad time expression.
 */
export function substituteJson(
  template: string,
  params: Record<string, string>,
  baseMs: number,
  zone?: string,
): string {
  let out = "";
  let inString = false;
  let i = 0;
  while (i < template.length) {
    const c = template[i] as string;
    if (c === "$") {
      REFERENCE_AT.lastIndex = i;
      const ref = REFERENCE_AT.exec(template)?.[0];
      if (ref !== undefined) {
        // One reference on its own: `substitute` gives it exactly its usual value.
        const value = substitute(ref, params, {
          mode: "raw",
          baseMs,
          ...(zone !== undefined ? { zone } : {}),
        });
        out += inString ? JSON.stringify(value).slice(1, -1) : value;
        i += ref.length;
        continue;
      }
    }
    if (inString && c === "\\") {
      // An escape: the next character (a quote too) belongs to it.
      out += template.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (c === '"') inString = !inString;
    out += c;
    i++;
  }
  return out;
}
