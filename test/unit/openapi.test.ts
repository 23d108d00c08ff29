import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../lib/api/openapi.js";
import pkg from "../../package.json" with { type: "json" };

describe("OpenAPI document", () => {
  const doc = openApiDocument(pkg.version) as {
    paths: Record<string, unknown>;
    components: { schemas: Record<string, unknown> };
  };

  it("docs/openapi.json is current (run `npm run openapi` after changing the API)", () => {
    const committed = JSON.parse(
      readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"),
    );
    expect(committed).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  it("describes every endpoint of API v1", () => {
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        "/v1/health",
        "/v1/openapi.json",
        "/v1/workflows",
        "/v1/workflows/{name}",
        "/v1/workflows/{name}/release",
        "/v1/workflows/{name}/runs",
        "/v1/instances",
        "/v1/instances/{id}",
        "/v1/instances/{id}/stop",
        "/v1/instances/{id}/pause",
        "/v1/instances/{id}/resume",
        "/v1/instances/{id}/rerun",
        "/v1/instances/{id}/recover-failed",
        "/v1/instances/{id}/tasks/{code}/attempts",
        "/v1/instances/{id}/tasks/{code}/log",
        "/v1/instances/{id}/explain",
        "/v1/instances/{id}/tasks/{code}/explain",
        "/v1/instances/{id}/tasks/{code}/force-success",
        "/v1/instances/{id}/tasks/{code}/render",
        "/v1/workflows/{name}/tasks/{code}/render",
        "/v1/task-groups",
        "/v1/task-groups/{name}",
        "/v1/schedules",
        "/v1/schedules/{id}",
        "/v1/schedules/{id}/online",
        "/v1/schedules/{id}/offline",
        "/v1/schedules/{id}/preview",
        "/v1/schedules/{id}/fires",
        "/v1/workflows/{name}/backfill",
        "/v1/backfills",
        "/v1/backfills/{id}",
        "/v1/backfills/{id}/pause",
        "/v1/backfills/{id}/resume",
        "/v1/backfills/{id}/cancel",
        "/v1/triggers",
        "/v1/triggers/{id}",
        "/v1/events",
        "/v1/events/recent",
      ].sort(),
    );
  });

  it("takes its request schemas from the validators (unknown fields refused, defaults shown)", () => {
    const def = doc.components.schemas.WorkflowDefinition as {
      additionalProperties: unknown;
      properties: Record<string, { default?: unknown }>;
    };
    expect(def.additionalProperties).toBe(false);
    expect(def.properties.failureStrategy?.default).toBe("END");
  });
});
