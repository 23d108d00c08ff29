/**
 * Routes of the JSON Schemas the API publishes: the workflow file's (schemas/workflow-file.ts),
 * for editors and tools that would rather ask the server they deploy to than the package's
 * published copy (docs/workflow-schema.md).
 */
import { createHash } from "node:crypto";
import { answer, type Route, route } from "../route.js";
import { workflowFileSchemaText } from "../schemas/workflow-file.js";

/** How long a client may reuse the schema without asking again, seconds: it changes with a deploy. */
const MAX_AGE_SECONDS = 3600;

let etag: string | undefined;

export const SCHEMA_ROUTES: readonly Route[] = [
  route({
    method: "GET",
    path: "/v1/schemas/workflow.json",
    operationId: "getWorkflowSchema",
    summary:
      "the JSON Schema (draft 2020-12) of a workflow file document: `name` plus a WorkflowDefinition",
    responses: {
      200: answer("the schema (cacheable; ETag)", {
        type: "object",
        properties: {
          $schema: { const: "https://json-schema.org/draft/2020-12/schema" },
          $id: { type: "string", description: "the published address of the same schema" },
          properties: { type: "object" },
          $defs: { type: "object" },
        },
        required: ["$schema", "$id", "properties"],
        additionalProperties: true,
        description: "a JSON Schema, draft 2020-12",
      }),
      304: answer("not modified: `If-None-Match` holds the current ETag"),
    },
    handler: async (_d, _p, event) => {
      const body = workflowFileSchemaText();
      etag ??= `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
      const headers = { etag, "cache-control": `public, max-age=${MAX_AGE_SECONDS}` };
      const asked = Object.entries(event.headers ?? {}).find(
        ([k]) => k.toLowerCase() === "if-none-match",
      )?.[1];
      // Weak comparison (RFC 9110 §13.1.2): `W/"…"` matches too.
      const tags = asked?.split(",").map((t) => t.trim().replace(/^W\//, ""));
      if (tags?.some((t) => t === etag || t === "*")) {
        return { statusCode: 304, headers };
      }
      return { statusCode: 200, headers: { ...headers, "content-type": "application/json" }, body };
    },
  }),
];
