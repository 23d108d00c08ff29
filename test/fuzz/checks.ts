/**
 * The properties one answer must have, whatever was sent: never a 5xx, never a stack trace, a
 * 4xx carries the error body of docs/api.md "Errors" with the code of its status, a 400 lists
 * its problems with paths and names the field a one-field-broken body broke, and a body the
 * request schema refuses is never accepted. (That a refused request wrote nothing, and that
 * the answer matches the OpenAPI document, the test checks around the request.)
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { Components, Schema } from "./arbitraries.js";
import type { FuzzCase } from "./cases.js";
import type { FuzzAnswer } from "./harness.js";

/** The code each 4xx status carries (lib/api/http.ts `statusOf`). */
const CODE_OF: Record<number, string> = {
  400: "ValidationError",
  404: "NotFound",
  409: "Conflict",
  413: "PayloadTooLarge",
  415: "UnsupportedMediaType",
  // Headers over Node's limit (lib/standalone/http-server.ts answerClientError).
  431: "PayloadTooLarge",
};

/** A V8 stack frame (`    at fn (file.ts:12:5)`). */
const STACK_FRAME = /\bat (?:[\w$.<>]+ )?\(?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+\)?/;

/** Validates request bodies against their schemas (compiled once per schema). */
export function bodyValidator(components: Components): (schema: Schema, value: unknown) => boolean {
  const ajv = new Ajv2020({ allErrors: false, strict: false, validateFormats: true });
  addFormats.default(ajv);
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== "object") return node;
    const out: Schema = {};
    for (const [k, v] of Object.entries(node)) out[k] = rewrite(v);
    if (typeof out.$ref === "string")
      out.$ref = out.$ref.replace("#/components/schemas/", "components.json#/$defs/");
    return out;
  };
  ajv.addSchema({ $id: "components.json", $defs: rewrite(components) as Schema });
  const cache = new Map<Schema, ValidateFunction>();
  return (schema, value) => {
    let v = cache.get(schema);
    if (!v) {
      v = ajv.compile(rewrite(schema) as Schema);
      cache.set(schema, v);
    }
    return v(value) as boolean;
  };
}

/** Whether detail path `path` names `field` (itself, inside it, or the object holding it). */
function names(path: string, field: string): boolean {
  if (path === field) return true;
  if (path.startsWith(`${field}.`) || path.startsWith(`${field}[`)) return true;
  return path !== "" && (field.startsWith(`${path}.`) || field.startsWith(`${path}[`));
}

/**
 * What is wrong with answer `a` to case `c`; empty when nothing is.
 * @param valid whether a value passes a schema ({@link bodyValidator}).
 */
export function problemsOf(
  c: FuzzCase,
  a: FuzzAnswer,
  valid: (schema: Schema, value: unknown) => boolean,
): string[] {
  const problems: string[] = [];
  if (a.status >= 500) problems.push(`a ${a.status}`);
  if (STACK_FRAME.test(a.text)) problems.push("a stack trace in the body");
  if (c.request.method === "HEAD") return problems;
  if (a.status >= 400 && a.status < 500) {
    const type = String(a.headers["content-type"] ?? "");
    if (!/^application\/json\b/.test(type))
      problems.push(`a ${a.status} with content-type '${type}', not JSON`);
    let body: { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined;
    try {
      body = JSON.parse(a.text);
    } catch {
      problems.push(`a ${a.status} whose body is not JSON`);
    }
    const err = body?.error;
    if (body && (typeof err !== "object" || err === null)) problems.push("no `error` object");
    if (err) {
      if (err.code !== CODE_OF[a.status])
        problems.push(`code ${JSON.stringify(err.code)} for a ${a.status}`);
      if (typeof err.message !== "string" || err.message === "") problems.push("no message");
      const details = err.details;
      if (details !== undefined) {
        const ok =
          Array.isArray(details) &&
          details.every(
            (d) =>
              typeof d?.path === "string" && typeof d?.message === "string" && d.message !== "",
          );
        if (!ok) problems.push("details that are not [{path, message}]");
      }
      if (a.status === 400 && (!Array.isArray(details) || details.length === 0)) {
        problems.push("a 400 without details");
      }
      if (a.status === 400 && c.brokenField !== undefined && Array.isArray(details)) {
        const field = c.brokenField;
        const named = details.some(
          (d: { path: string; message: string }) =>
            names(d.path, field) || d.message.includes(`'${field}'`),
        );
        if (!named) problems.push(`a 400 whose details do not name the broken field '${field}'`);
      }
    }
  }
  if (a.status >= 200 && a.status < 300 && c.body && !valid(c.body.schema, c.body.value)) {
    problems.push(`accepted (${a.status}) a body the request schema refuses`);
  }
  return problems;
}
