/**
 * Checks the HTTP API's answers against its OpenAPI document (lib/api/routes.ts `apiDocument`):
 * the status must be one the route declares, and the body must match the schema the document
 * gives that status (JSON Schema 2020-12, checked with ajv). The integration tests' server
 * (api-client.ts) runs every answer through {@link answerChecker}, so that the document cannot
 * drift from what the handlers send.
 *
 * Stricter than the document in one way, on purpose: an object schema that says nothing about
 * other properties is checked as closed (`unevaluatedProperties: false`), so that a field a
 * handler sends and the document does not name is a violation too. A schema that wants open
 * objects says `additionalProperties: true` (or gives their schema).
 */

import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { apiDocument } from "../../lib/api/routes.js";
import { VERSION } from "../../lib/version.js";

type Schema = Record<string, unknown>;

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** The id the component schemas are registered under; `$ref`s are rewritten to point there. */
const COMPONENTS_ID = "https://shoal.invalid/components.json";
const COMPONENT_REF = "#/components/schemas/";

/** What the router answers when no route has the path and method: 404 with the error body. */
const NO_ROUTE_NAME = "(no route)";
const NO_ROUTE: Operation = {
  responses: {
    404: { content: { "application/json": { schema: { $ref: `${COMPONENT_REF}Error` } } } },
  },
};

const KEYWORDS_OF_OTHER_PROPERTIES = [
  "additionalProperties",
  "unevaluatedProperties",
  "patternProperties",
];

/**
 * A copy of `schema` for ajv: component `$ref`s pointing at {@link COMPONENTS_ID}, and every
 * object schema with `properties` that says nothing about other properties closed.
 */
function forAjv(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forAjv);
  if (node === null || typeof node !== "object") return node;
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) {
    // `properties` maps names to schemas: its keys are never keywords.
    out[k] =
      k === "properties"
        ? Object.fromEntries(Object.entries(v as Schema).map(([p, s]) => [p, forAjv(s)]))
        : forAjv(v);
  }
  if (typeof out.$ref === "string" && out.$ref.startsWith(COMPONENT_REF)) {
    out.$ref = `${COMPONENTS_ID}#/$defs/${out.$ref.slice(COMPONENT_REF.length)}`;
  }
  if ("properties" in out && !KEYWORDS_OF_OTHER_PROPERTIES.some((k) => k in out)) {
    out.unevaluatedProperties = false;
  }
  return out;
}

/** A route's template as a regular expression, as the router (lib/api/router.ts) matches it. */
function templatePattern(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) =>
      /^\{[^}]+\}$/.test(segment) ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("/");
  return new RegExp(`^${source}$`);
}

const short = (text: string, max = 2000) =>
  text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;

const errorsText = (errors: readonly ErrorObject[] | null | undefined) =>
  (errors ?? [])
    .slice(0, 20)
    .map(
      (e) =>
        `  ${e.instancePath || "(body)"} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`,
    )
    .join("\n");

/**
 * Checks one answer of the API against the document.
 * @returns a description of what does not match (route, status, ajv's errors, the body), or
 * `undefined` when the answer is one the document describes.
 */
export type AnswerCheck = (
  event: APIGatewayProxyEventV2,
  result: APIGatewayProxyStructuredResultV2,
) => string | undefined;

/**
 * The checker of the answers of the API that `doc` describes (the current route table's by
 * default). Validators are compiled once per route and status.
 * @throws Error when a schema of the document does not compile (ajv strict mode).
 */
export function answerChecker(
  doc: Document = apiDocument(VERSION) as unknown as Document,
): AnswerCheck {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: forAjv(doc.components.schemas) as Schema });
  const templates = Object.keys(doc.paths).map((path) => ({
    path,
    pattern: templatePattern(path),
  }));
  // Every answer's validator compiled now: a schema ajv refuses fails the server's start.
  const validators = new Map<string, ValidateFunction>();
  const operations: Array<[string, Operation]> = [
    ...Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]): [string, Operation] => [
        `${method.toUpperCase()} ${path}`,
        op,
      ]),
    ),
    [NO_ROUTE_NAME, NO_ROUTE],
  ];
  for (const [name, operation] of operations) {
    for (const [status, response] of Object.entries(operation.responses)) {
      const schema = response.content?.["application/json"]?.schema;
      if (!schema) continue;
      try {
        validators.set(`${name} ${status}`, ajv.compile(forAjv(schema) as Schema));
      } catch (e) {
        throw new Error(`${name} ${status}: the answer's schema does not compile: ${e}`);
      }
    }
  }

  return (event, result) => {
    const method = (event.requestContext?.http?.method ?? "GET").toUpperCase();
    const path = (event.rawPath || "/").replace(/\/+$/, "") || "/";
    const template = templates.find(
      (t) => t.pattern.test(path) && doc.paths[t.path]?.[method.toLowerCase()],
    );
    const operation = template ? doc.paths[template.path]?.[method.toLowerCase()] : NO_ROUTE;
    const name = template ? `${method} ${template.path}` : NO_ROUTE_NAME;
    const status = result.statusCode ?? 200;
    const text =
      result.body && result.isBase64Encoded
        ? Buffer.from(result.body, "base64").toString("utf8")
        : (result.body ?? "");
    const violation = (problem: string) =>
      `answer of ${name} (request ${method} ${event.rawPath}${event.rawQueryString ? `?${event.rawQueryString}` : ""}) does not match the OpenAPI document: status ${status}: ${problem}\nbody: ${short(text) || "(empty)"}`;

    const declared = operation?.responses[String(status)];
    if (!declared) {
      const statuses = Object.keys(operation?.responses ?? {}).join(", ");
      return violation(`the route declares no such status (it declares ${statuses})`);
    }
    const schema = declared.content?.["application/json"]?.schema;
    if (!schema) return text === "" ? undefined : violation("the route declares no body");
    const type = String(
      Object.entries(result.headers ?? {}).find(([k]) => k.toLowerCase() === "content-type")?.[1] ??
        "",
    );
    if (!/^application\/json\b/.test(type)) return violation(`content-type '${type}', not JSON`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (e) {
      return violation(`the body is not JSON: ${(e as Error).message}`);
    }
    const validate = validators.get(`${name} ${status}`);
    if (!validate) throw new Error(`no validator of ${name} ${status}`); // compiled above
    return validate(body) ? undefined : violation(`\n${errorsText(validate.errors)}`);
  };
}
