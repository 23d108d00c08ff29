/**
 * HTTP plumbing of the API handler: API Gateway v2 events in, results out, errors shaped as
 * docs/api.md "Errors" says (`{"error": {"code", "message", "details"}}`), never a stack trace.
 * The one place where an error code becomes an HTTP status (`statusOf`).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { parse as parseYaml } from "yaml";
import { type ErrorCode, RequestError, validationError } from "../core/errors.js";

/** Largest request body accepted, bytes (API Gateway allows 10 MB, Lambda 6 MB). */
export const MAX_BODY_BYTES = 5 * 1024 * 1024;

export function json(status: number, body: unknown): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    headers: { "content-type": "application/json" },
    body: body === undefined ? "" : JSON.stringify(body),
  };
}

/** HTTP status of each error code (docs/api.md "Errors"). */
const STATUS: Record<ErrorCode, number> = {
  ValidationError: 400,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
};

/** The HTTP status the API answers a {@link RequestError} of `code` with. */
export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}

/** The contract's error answer for a client-caused error: its code's status, code, message, details. */
export function errorResult(e: RequestError): APIGatewayProxyStructuredResultV2 {
  return json(statusOf(e.code), {
    error: {
      code: e.code,
      message: e.message,
      ...(e.details.length ? { details: e.details } : {}),
    },
  });
}

function header(event: APIGatewayProxyEventV2, name: string): string | undefined {
  const h = event.headers ?? {};
  return h[name] ?? Object.entries(h).find(([k]) => k.toLowerCase() === name)?.[1];
}

function rawBody(event: APIGatewayProxyEventV2): string {
  if (!event.body) return "";
  const text = event.isBase64Encoded
    ? Buffer.from(event.body, "base64").toString("utf8")
    : event.body;
  if (Buffer.byteLength(text) > MAX_BODY_BYTES) {
    throw new RequestError("PayloadTooLarge", `the body is larger than ${MAX_BODY_BYTES} bytes`);
  }
  return text;
}

/**
 * The parsed body: JSON, or YAML when `allowYaml` and the content type says so. An empty body is
 * `undefined`. @throws RequestError 415 for other content types, 400 for a body that does not parse.
 */
export function parseBody(
  event: APIGatewayProxyEventV2,
  opts: { allowYaml?: boolean } = {},
): unknown {
  const text = rawBody(event);
  if (text.trim() === "") return undefined;
  const type = (header(event, "content-type") ?? "application/json")
    .split(";")[0]
    ?.trim()
    .toLowerCase();
  const yamlTypes = ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"];
  if (opts.allowYaml && type && yamlTypes.includes(type)) {
    try {
      return parseYaml(text, { maxAliasCount: 100, prettyErrors: false });
    } catch (e) {
      throw validationError(
        [{ path: "", message: `body is not valid YAML: ${(e as Error).message.split("\n")[0]}` }],
        undefined,
        { cause: e },
      );
    }
  }
  if (type !== "application/json" && !type?.endsWith("+json")) {
    const accepted = opts.allowYaml ? "application/json or application/yaml" : "application/json";
    throw new RequestError(
      "UnsupportedMediaType",
      `content-type '${type}' is not supported; send ${accepted}`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw validationError(
      [{ path: "", message: `body is not valid JSON: ${(e as Error).message}` }],
      undefined,
      { cause: e },
    );
  }
}

/** Query parameters of the event (API Gateway v2 joins repeated ones with commas). */
export function query(event: APIGatewayProxyEventV2): Record<string, string> {
  // API Gateway never sends a parameter without a value (an empty one is "").
  if (event.queryStringParameters) return event.queryStringParameters as Record<string, string>;
  return Object.fromEntries(new URLSearchParams(event.rawQueryString ?? ""));
}

/** `?limit=` as docs/api.md "Lists and pagination" defines it: 1..max, default `fallback`. */
export function parseLimit(value: string | undefined, fallback = 50, max = 200): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw validationError([{ path: "limit", message: `must be a whole number from 1 to ${max}` }]);
  }
  return n;
}

/** A positive whole number from the query string, or undefined. */
export function parsePositiveInt(value: string | undefined, field: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw validationError([{ path: field, message: "must be a whole number >= 1" }]);
  }
  return n;
}

/** Rejects a JSON body that is not an object (or absent). */
export function asObject(body: unknown, optional = false): Record<string, unknown> {
  if (body === undefined && optional) return {};
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw validationError([{ path: "", message: "the body must be a JSON object" }]);
  }
  return body as Record<string, unknown>;
}

/** Ids Shoal generates (UUIDs) for instances, schedules, backfills and triggers. */
export const RESOURCE_ID = /^[A-Za-z0-9-]{1,64}$/;

/**
 * A verb endpoint's body: no fields beyond `allowed` (an empty object or no body).
 * @returns the body. @throws RequestError 400 with one detail per unknown field.
 */
export function onlyFields(event: APIGatewayProxyEventV2, allowed: readonly string[] = []) {
  const body = asObject(parseBody(event), true);
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw validationError(unknown.map((k) => ({ path: k, message: `unknown field '${k}'` })));
  }
  return body;
}
