/**
 * `GET /v1/events/recent`: the newest events on standalone's in-process bus (Shoal's own
 * state-change events and those `POST /v1/events` received), for seeing what a trigger pattern
 * would match. On AWS the events are on the EventBridge bus instead; there this answers 404.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { notFound, validationError } from "../core/errors.js";
import { RECENT_EVENTS } from "../events/local-event-bus.js";
import type { ApiDeps } from "./deps.js";
import { json, parseLimit, query } from "./http.js";

const FILTERS = ["limit", "detailType", "source"];

/**
 * 200 `{"items": [event…]}`, newest first, each in EventBridge's envelope. Query: `limit`
 * (1..1000, default 100), `detailType`, `source` (exact matches).
 * @throws RequestError 400 for an unknown query parameter or a bad limit; 404 without a local bus.
 */
export async function recentEvents(
  deps: ApiDeps,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const q = query(event);
  const unknown = Object.keys(q).filter((k) => !FILTERS.includes(k));
  if (unknown.length > 0) {
    throw validationError(
      unknown.map((k) => ({
        path: k,
        message: `unknown query parameter (use ${FILTERS.join(", ")})`,
      })),
    );
  }
  const limit = parseLimit(q.limit, 100, RECENT_EVENTS);
  if (!deps.bus) {
    throw notFound(
      "recent events are kept by `shoal standalone` only; on AWS Shoal's events are on its EventBridge bus (docs/events.md shows a rule that archives or forwards them)",
    );
  }
  return json(200, {
    items: deps.bus.recent(limit, {
      ...(q.detailType ? { detailType: q.detailType } : {}),
      ...(q.source ? { source: q.source } : {}),
    }),
  });
}
