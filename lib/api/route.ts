/**
 * One endpoint of the HTTP API as the route table (routes.ts) declares it: what the router
 * (router.ts) matches and calls, and what the OpenAPI document (openapi.ts) says about it. The
 * path template is the single spelling of the path: `{name}` segments are the path parameters
 * the router hands the handler, and the parameters the document declares.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { NAME_PATTERN } from "../core/schema-parts.js";
import type { ApiDeps } from "./deps.js";
import { type JsonSchema, ref } from "./schemas/common.js";

export type Method = "GET" | "PUT" | "POST" | "DELETE";

/** The `{…}` names of a path template: `"id" | "code"` for `/v1/instances/{id}/tasks/{code}`. */
type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? N | ParamNames<Rest>
  : never;

/** The path parameters of template `P`, URI-decoded, by name. */
export type PathParams<P extends string> = { readonly [K in ParamNames<P>]: string };

/** Answers one request; throws RequestError for a client mistake (the router shapes the 4xx). */
export type Handler<P extends string> = (
  deps: ApiDeps,
  params: PathParams<P>,
  event: APIGatewayProxyEventV2,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** A query parameter the endpoint reads. */
export interface QueryParam {
  name: string;
  schema: JsonSchema;
  description?: string;
}

/** One answer of the endpoint: an HTTP status's meaning and, when it has a body, its schema. */
export interface RouteResponse {
  description: string;
  schema?: JsonSchema;
}

/** A route whose handler takes the parameters of its own template, as {@link route} checks. */
export interface RouteSpec<P extends string> {
  method: Method;
  /** Path template, e.g. `/v1/instances/{id}`: literal segments and whole `{name}` segments. */
  path: P;
  /** The OpenAPI operationId, unique in the table. */
  operationId: string;
  summary?: string;
  query?: readonly QueryParam[];
  /** The request body; `yaml`: also accepted as application/yaml. */
  body?: { schema: JsonSchema; required: boolean; yaml?: boolean };
  /** By HTTP status. */
  responses: Readonly<Record<number, RouteResponse>>;
  handler: Handler<P>;
}

/** A row of the route table: the parameters by name, whatever the template. */
export interface Route extends Omit<RouteSpec<string>, "handler"> {
  handler: (
    deps: ApiDeps,
    params: Readonly<Record<string, string>>,
    event: APIGatewayProxyEventV2,
  ) => Promise<APIGatewayProxyStructuredResultV2>;
}

/**
 * A row of the route table. The handler's parameters are typed by the template; the router
 * passes exactly the template's names (router.ts builds its matcher from the same template).
 */
export function route<P extends `/v1/${string}`>(spec: RouteSpec<P>): Route {
  return spec as unknown as Route;
}

/** The `{…}` names of a path template, in order: `["id", "code"]` for `…/{id}/tasks/{code}`. */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
}

/** The schema of each path parameter name the templates use. */
export const PATH_PARAMS: Readonly<Record<string, JsonSchema>> = {
  name: { type: "string", pattern: NAME_PATTERN.source },
  id: { type: "string" },
  code: { type: "string" },
};

/** `?limit=`: 1..`max`, default `fallback` (http.ts parseLimit). */
export const limitParam = (fallback = 50, max = 200): QueryParam => ({
  name: "limit",
  schema: { type: "integer", minimum: 1, maximum: max, default: fallback },
});

/** `?nextToken=` of a list: the `nextToken` of the page before. */
export const tokenParam: QueryParam = { name: "nextToken", schema: { type: "string" } };

/** A query parameter of `schema`. */
export const queryParam = (name: string, schema: JsonSchema, description?: string): QueryParam =>
  description === undefined ? { name, schema } : { name, schema, description };

/** A 4xx answer: the error body (components.schemas.Error). */
export const failure = (description: string): RouteResponse => ({
  description,
  schema: ref("Error"),
});

/**
 * The 4xx answers of an endpoint that reads a JSON body (http.ts parseBody, onlyFields): 400 for
 * a body that is not a JSON object or not valid (`invalid` says what), 413 for one too large
 * (or a field over its size limit), 415 for another content type.
 */
export const bodyFailures = (invalid: string): Record<400 | 413 | 415, RouteResponse> => ({
  400: failure(invalid),
  413: failure("the body, or a field of it, is too large"),
  415: failure("the content type is not JSON"),
});

/** A 2xx answer with a body of `schema` (a component name is turned into a reference). */
export const answer = (description: string, schema?: JsonSchema | string): RouteResponse =>
  schema === undefined
    ? { description }
    : { description, schema: typeof schema === "string" ? ref(schema) : schema };

/** The note of list filters that apply per page (the store filters what each page read). */
export const PER_PAGE_FILTER =
  "filters each page, so a page may hold fewer than `limit` items and still carry a `nextToken`";
