/**
 * The OpenAPI 3.1 document of the HTTP API, built from the route table (routes.ts) and the
 * component schemas (schemas/*.ts, request bodies from the zod schemas that validate them), so
 * that the document, the router and the validators cannot drift apart. Served at
 * `GET /v1/openapi.json`; a copy lives in docs/openapi.json (`npm run openapi` rewrites it and
 * the CLI's generated types; openapi.test.ts checks both are current).
 */
import { PATH_PARAMS, pathParamNames, type Route } from "./route.js";
import type { JsonSchema } from "./schemas/common.js";
import { componentSchemas } from "./schemas/components.js";

const jsonContent = (schema: JsonSchema) => ({ content: { "application/json": { schema } } });

/**
 * The parameters of one route: its path's, then its query's.
 * @throws Error for a path parameter name PATH_PARAMS has no schema for.
 */
function parameters(r: Route): JsonSchema[] {
  const path = pathParamNames(r.path).map((name) => {
    const schema = PATH_PARAMS[name];
    if (!schema) throw new Error(`${r.path}: no schema for path parameter '${name}' (route.ts)`);
    return { name, in: "path", required: true, schema };
  });
  const query = (r.query ?? []).map((q) => ({
    name: q.name,
    in: "query",
    ...(q.description !== undefined ? { description: q.description } : {}),
    schema: q.schema,
  }));
  return [...path, ...query];
}

/** The OpenAPI operation object of one route. */
function operation(r: Route): JsonSchema {
  const params = parameters(r);
  const body = r.body;
  return {
    operationId: r.operationId,
    ...(r.summary !== undefined ? { summary: r.summary } : {}),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(body
      ? {
          requestBody: {
            required: body.required,
            content: {
              "application/json": { schema: body.schema },
              ...(body.yaml ? { "application/yaml": { schema: body.schema } } : {}),
            },
          },
        }
      : {}),
    responses: {
      ...Object.fromEntries(
        Object.entries(r.responses).map(([status, res]) => [
          status,
          { description: res.description, ...(res.schema ? jsonContent(res.schema) : {}) },
        ]),
      ),
      // Any route, when what it depends on passes out of reach (lib/api/router.ts).
      ...(r.responses[503] ? {} : { 503: UNAVAILABLE }),
    },
  };
}

/** The 503 every route may answer. */
const UNAVAILABLE = {
  description:
    "`ServiceUnavailable`: DynamoDB or SQS out of reach or throttling after retries, or (standalone) a part restarting; `Overloaded` (standalone): too many requests in flight, refused before any work. Retry after `Retry-After` seconds",
  headers: { "Retry-After": { description: "seconds", schema: { type: "integer", minimum: 1 } } },
  ...jsonContent({ $ref: "#/components/schemas/Error" }),
};

/**
 * The document of `routes`.
 * @param version the package version, for `info.version`.
 * @throws Error when two routes share a method and path, or a path parameter has no schema.
 */
export function openApiDocument(version: string, routes: readonly Route[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const r of routes) {
    const ops = paths[r.path] ?? {};
    paths[r.path] = ops;
    const method = r.method.toLowerCase();
    if (ops[method]) throw new Error(`${r.method} ${r.path} is in the route table twice`);
    ops[method] = operation(r);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Shoal HTTP API",
      version,
      description:
        "Workflow definitions and instances of the Shoal DAG scheduler (API v1). Errors: 400, 404, 409, 413, 415 with an Error body; never a 500 for anything the client sent; 503 with a Retry-After when a service it depends on is out of reach.",
    },
    servers: [{ url: "http://localhost:8080", description: "shoal standalone" }],
    paths,
    components: { schemas: componentSchemas() },
  };
}
