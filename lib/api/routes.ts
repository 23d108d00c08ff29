/**
 * The route table of the HTTP API: every endpoint once, with its handler and its request and
 * answer schemas. The router (router.ts) matches requests against it; the OpenAPI document
 * (openapi.ts, served at `GET /v1/openapi.json`, copied to docs/openapi.json) is built from it;
 * the CLI's types (lib/cli/api-types.generated.ts) are generated from that document.
 */
import { notFound } from "../core/errors.js";
import { json } from "./http.js";
import { openApiDocument } from "./openapi.js";
import { answer, failure, type Route, route } from "./route.js";
import { EVENT_ROUTES } from "./routes/events.js";
import { INSTANCE_ROUTES } from "./routes/instances.js";
import { SCHEDULING_ROUTES } from "./routes/scheduling.js";
import { SCHEMA_ROUTES } from "./routes/schemas.js";
import { TASK_GROUP_ROUTES } from "./routes/task-groups.js";
import { WORKFLOW_ROUTES } from "./routes/workflows.js";

/** Every endpoint. No two templates match the same path (openapi.test.ts), so order is free. */
export const ROUTES: readonly Route[] = [
  route({
    method: "GET",
    path: "/v1/health",
    operationId: "health",
    responses: {
      200: answer("up: every part ok (on AWS, always; `parts` absent)", "Health"),
      503: answer("a part of standalone is restarting or down (`parts` says which)", "Health"),
    },
    handler: async (d) => {
      const parts = d.parts?.();
      if (!parts) return json(200, { status: "ok", version: d.version });
      const ok = Object.values(parts).every((p) => p === "ok");
      return json(ok ? 200 : 503, { status: ok ? "ok" : "degraded", version: d.version, parts });
    },
  }),
  route({
    method: "GET",
    path: "/v1/alert-channels",
    operationId: "listAlertChannels",
    summary: "the alert channels this deployment configures: names and types, never a URL",
    responses: {
      200: answer("by name", "AlertChannels"),
      404: failure("this API was deployed without its channel list (SHOAL_ALERT_CHANNELS)"),
    },
    handler: async (d) => {
      if (!d.alertChannels) {
        throw notFound(
          "this Shoal does not say which alert channels it has: its API function was deployed without SHOAL_ALERT_CHANNELS (deploy the Shoal construct of this version)",
        );
      }
      const items = Object.entries(d.alertChannels)
        .map(([name, type]) => ({ name, type }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return json(200, { items });
    },
  }),
  route({
    method: "GET",
    path: "/v1/openapi.json",
    operationId: "openApi",
    responses: {
      200: answer("this document", {
        type: "object",
        properties: {
          openapi: { const: "3.1.0" },
          info: { type: "object" },
          paths: { type: "object" },
        },
        required: ["openapi", "info", "paths"],
        additionalProperties: true,
        description: "an OpenAPI 3.1 document",
      }),
    },
    handler: async (d) => json(200, apiDocument(d.version)),
  }),
  ...WORKFLOW_ROUTES,
  ...INSTANCE_ROUTES,
  ...SCHEDULING_ROUTES,
  ...EVENT_ROUTES,
  ...TASK_GROUP_ROUTES,
  ...SCHEMA_ROUTES,
];

/** The OpenAPI document of {@link ROUTES}. @param version the package version (`info.version`). */
export function apiDocument(version: string): Record<string, unknown> {
  return openApiDocument(version, ROUTES);
}
