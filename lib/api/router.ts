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

/** What a 503 for a part of standalone restarting asks the client to wait, seconds. */
const RETRY_AFTER_SECONDS = 2;

/** Network errors of a request to a service that is gone or restarting (Node's codes). */
const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EAI_AGAIN"]);

/**
 * Whether `e` is a fault that passes: a service out of reach (connection refused or reset, a
 * socket hung up: the SDK reports those as `TimeoutError`), or an AWS error the SDK marks
 * retryable or a server fault (throttling, 5xx) that outlived its retries, or a ShoalError
 * that says it is retryable.
 */
function isTransient(e: unknown): boolean {
  if (!e || typeof e !== "object") return false;
  const err = e as {
    code?: string;
    name?: string;
    message?: string;
    retryable?: boolean;
    $retryable?: unknown;
    $fault?: string;
  };
  if (err.retryable === true || err.$retryable || err.$fault === "server") return true;
  if (err.code && CONNECTION_CODES.has(err.code)) return true;
  return (
    err.name === "TimeoutError" ||
    /ThrottlingException|ProvisionedThroughputExceeded|RequestLimitExceeded/.test(err.name ?? "")
  );
}

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
    // A part of standalone restarting (an emulator), or AWS out of reach or throttling after
    // the SDK's retries: not a bug, and it passes. Said as such, with when to try again.
    const down = Object.entries(deps.parts?.() ?? {})
      .filter(([, state]) => state !== "ok")
      .map(([part]) => part);
    if (down.length > 0 || isTransient(e)) {
      deps.log?.("api: unavailable", { method, path, parts: down, error: String(e) });
      const answer = json(503, {
        error: {
          code: "ServiceUnavailable",
          message:
            down.length > 0
              ? `standalone's ${down.join(" and ")} ${down.length > 1 ? "are" : "is"} restarting (GET /v1/health): retry in a few seconds`
              : "DynamoDB or SQS could not be reached or is throttling: retry in a few seconds",
        },
      });
      return {
        ...answer,
        headers: { ...answer.headers, "retry-after": String(RETRY_AFTER_SECONDS) },
      };
    }
    deps.log?.("api: internal error", { method, path, error: String((e as Error)?.stack ?? e) });
    return json(500, {
      error: { code: "InternalError", message: "internal error; see the server log" },
    });
  }
}
