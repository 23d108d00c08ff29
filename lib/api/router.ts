/**
 * Routes API Gateway HTTP API (payload 2.0) events to the endpoint functions of the route table
 * (routes.ts) and turns every client mistake into the contract's 4xx error body. Only a bug
 * gives a 500, with no details.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { notFound, RequestError } from "../core/errors.js";
import type { ApiDeps } from "./deps.js";
import { errorResult, json } from "./http.js";
import { pathParamNames, type Route } from "./route.js";
import { ROUTES } from "./routes.js";

/** A route with its template turned into a regular expression: one group per `{name}`. */
interface Matcher {
  route: Route;
  pattern: RegExp;
  names: string[];
}

const escapeRegExp = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `/v1/instances/{id}` → `^/v1/instances/([^/]+)$` (a parameter is one whole segment). */
function matcher(route: Route): Matcher {
  const source = route.path
    .split("/")
    .map((segment) => (/^\{[^}]+\}$/.test(segment) ? "([^/]+)" : escapeRegExp(segment)))
    .join("/");
  return { route, pattern: new RegExp(`^${source}$`), names: pathParamNames(route.path) };
}

/**
 * The request handler of a route table: the first route whose template matches the path and
 * whose method is the request's answers. A path some route matches with another method is a
 * 404 that says so; a parameter that does not URI-decode is a 404 too. Never throws.
 */
export function apiRouter(
  routes: readonly Route[],
): (deps: ApiDeps, event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2> {
  const matchers = routes.map(matcher);
  return (deps, event) => handle(matchers, deps, event);
}

/** Handles one API request with the route table (routes.ts). Never throws. */
export const handleApiRequest = apiRouter(ROUTES);

async function handle(
  matchers: readonly Matcher[],
  deps: ApiDeps,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const method = event.requestContext?.http?.method?.toUpperCase() ?? "GET";
  const path = (event.rawPath || "/").replace(/\/+$/, "") || "/";
  try {
    let pathMatched = false;
    for (const { route, pattern, names } of matchers) {
      const match = pattern.exec(path);
      if (!match) continue;
      pathMatched = true;
      if (route.method !== method) continue;
      let params: Record<string, string>;
      try {
        params = Object.fromEntries(
          names.map((name, i) => [name, decodeURIComponent(match[i + 1] as string)]),
        );
      } catch {
        throw notFound(`no resource at ${path}`);
      }
      return await route.handler(deps, params, event);
    }
    if (pathMatched) throw new RequestError("NotFound", `${method} is not supported on ${path}`);
    throw notFound(`no endpoint ${method} ${path}`);
  } catch (e) {
    if (e instanceof RequestError) return errorResult(e);
    deps.log?.("api: internal error", { method, path, error: String((e as Error)?.stack ?? e) });
    return json(500, {
      error: { code: "InternalError", message: "internal error; see the server log" },
    });
  }
}
