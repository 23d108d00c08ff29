/**
 * The OpenAPI 3.1 document of the HTTP API, built from the same zod schemas that validate the
 * request bodies (so the two cannot drift). Served at `GET /v1/openapi.json`; a copy lives in
 * docs/openapi.json (`npm run openapi` rewrites it; a test checks it is current).
 */
import { z } from "zod";
import {
  INSTANCE_STATES,
  PRIORITIES,
  RELEASE_STATES,
  TASK_STATES,
  TASK_TYPES,
} from "../core/model.js";
import { runSchema, workflowSchema } from "../core/validate.js";

type Json = Record<string, unknown>;

function schemaOf(s: z.ZodType): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, {
    io: "input",
    unrepresentable: "any",
  }) as Json;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json) => ({ content: { "application/json": { schema } } });
const iso = { type: "string", format: "date-time" };
/** A list answer: `items` of one schema and, when more exist, `nextToken`. */
const page = (item: string) => ({
  type: "object",
  properties: { items: { type: "array", items: ref(item) }, nextToken: { type: "string" } },
});
const error = (description: string) => ({ description, ...json(ref("Error")) });
const nameParam = {
  name: "name",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$" },
};
const idParam = { name: "id", in: "path", required: true, schema: { type: "string" } };
const codeParam = { name: "code", in: "path", required: true, schema: { type: "string" } };
const limitParam = {
  name: "limit",
  in: "query",
  schema: { type: "integer", minimum: 1, maximum: 200, default: 50 },
};
const tokenParam = { name: "nextToken", in: "query", schema: { type: "string" } };
const control = (verb: string, summary: string) => ({
  post: {
    operationId: `${verb}Instance`,
    summary,
    parameters: [idParam],
    responses: {
      "202": {
        description: "accepted",
        ...json({
          type: "object",
          properties: { instanceId: { type: "string" }, state: { enum: [...INSTANCE_STATES] } },
        }),
      },
      "400": error("unknown field in the body"),
      "404": error("no such instance"),
      "409": error("the instance's state does not allow it (or not supported yet)"),
    },
  },
});

/** The document. @param version the package version, for `info.version`. */
export function openApiDocument(version: string): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "Shoal HTTP API",
      version,
      description:
        "Workflow definitions and instances of the Shoal DAG scheduler (API v1). Errors: 400, 404, 409, 413, 415 with an Error body; never a 500 for anything the client sent.",
    },
    servers: [{ url: "http://localhost:8080", description: "shoal standalone" }],
    paths: {
      "/v1/health": {
        get: {
          operationId: "health",
          responses: {
            "200": {
              description: "up",
              ...json({
                type: "object",
                properties: { status: { const: "ok" }, version: { type: "string" } },
              }),
            },
          },
        },
      },
      "/v1/openapi.json": {
        get: { operationId: "openApi", responses: { "200": { description: "this document" } } },
      },
      "/v1/workflows": {
        get: {
          operationId: "listWorkflows",
          parameters: [limitParam, tokenParam],
          responses: {
            "200": {
              description: "page",
              ...json(page("WorkflowSummary")),
            },
            "400": error("bad limit or token"),
          },
        },
      },
      "/v1/workflows/{name}": {
        put: {
          operationId: "putWorkflow",
          parameters: [nameParam],
          requestBody: {
            required: true,
            content: {
              "application/json": { schema: ref("WorkflowDefinition") },
              "application/yaml": { schema: ref("WorkflowDefinition") },
            },
          },
          responses: {
            "201": { description: "new version", ...json(ref("WorkflowVersion")) },
            "200": { description: "same as the latest version", ...json(ref("WorkflowVersion")) },
            "400": error("invalid definition (details name each problem)"),
            "413": error("body or field too large"),
            "415": error("content type"),
          },
        },
        get: {
          operationId: "getWorkflow",
          parameters: [
            nameParam,
            { name: "version", in: "query", schema: { type: "integer", minimum: 1 } },
          ],
          responses: {
            "200": {
              description: "the definition with name, version, releaseState, createdAt",
              ...json(ref("WorkflowDefinition")),
            },
            "404": error("no such workflow or version"),
          },
        },
        delete: {
          operationId: "deleteWorkflow",
          parameters: [nameParam],
          responses: {
            "204": { description: "deleted" },
            "404": error("no such workflow"),
            "409": error("unfinished instances or pending runs"),
          },
        },
      },
      "/v1/workflows/{name}/release": {
        post: {
          operationId: "releaseWorkflow",
          parameters: [nameParam],
          requestBody: {
            required: true,
            ...json({
              type: "object",
              required: ["state"],
              additionalProperties: false,
              properties: { state: { enum: [...RELEASE_STATES] } },
            }),
          },
          responses: {
            "200": { description: "released", ...json(ref("WorkflowSummary")) },
            "400": error("bad state"),
            "404": error("no such workflow"),
          },
        },
      },
      "/v1/workflows/{name}/runs": {
        post: {
          operationId: "startRun",
          parameters: [nameParam],
          requestBody: { required: false, ...json(ref("RunRequest")) },
          responses: {
            "202": {
              description: "accepted",
              ...json({
                type: "object",
                properties: {
                  instanceId: { type: "string" },
                  workflow: { type: "string" },
                  version: { type: "integer" },
                  state: { enum: [...INSTANCE_STATES] },
                },
              }),
            },
            "400": error("invalid run request"),
            "404": error("no such workflow"),
            "409": error("workflow OFFLINE"),
            "413": error("too large"),
          },
        },
      },
      "/v1/instances": {
        get: {
          operationId: "listInstances",
          parameters: [
            { name: "workflow", in: "query", schema: { type: "string" } },
            { name: "state", in: "query", schema: { enum: [...INSTANCE_STATES] } },
            limitParam,
            tokenParam,
          ],
          responses: {
            "200": {
              description: "newest first",
              ...json(page("InstanceSummary")),
            },
            "400": error("bad filter, limit or token"),
          },
        },
      },
      "/v1/instances/{id}": {
        get: {
          operationId: "getInstance",
          parameters: [idParam],
          responses: {
            "200": {
              description: "the instance and the latest attempt of every task",
              ...json(ref("Instance")),
            },
            "404": error("no such instance"),
          },
        },
      },
      "/v1/instances/{id}/stop": control(
        "stop",
        "kill running tasks, start nothing more; ends STOPPED",
      ),
      "/v1/instances/{id}/pause": control("pause", "not yet supported (409)"),
      "/v1/instances/{id}/resume": control("resume", "not yet supported (409)"),
      "/v1/instances/{id}/rerun": control("rerun", "not yet supported (409)"),
      "/v1/instances/{id}/recover-failed": control("recoverFailed", "not yet supported (409)"),
      "/v1/instances/{id}/tasks/{code}/attempts": {
        get: {
          operationId: "listAttempts",
          parameters: [idParam, codeParam],
          responses: {
            "200": {
              description: "oldest first",
              ...json({
                type: "object",
                properties: { items: { type: "array", items: ref("TaskInstance") } },
              }),
            },
            "404": error("no such instance or task"),
          },
        },
      },
      "/v1/instances/{id}/tasks/{code}/log": {
        get: {
          operationId: "getLog",
          parameters: [
            idParam,
            codeParam,
            { name: "attempt", in: "query", schema: { type: "integer", minimum: 1 } },
            tokenParam,
            {
              name: "limit",
              in: "query",
              schema: { type: "integer", minimum: 1, maximum: 10000, default: 1000 },
            },
          ],
          responses: {
            "200": {
              description: "lines in order; nextToken while the attempt runs or more lines exist",
              ...json({
                type: "object",
                properties: {
                  lines: {
                    type: "array",
                    items: {
                      type: "object",
                      properties: { timestamp: iso, message: { type: "string" } },
                    },
                  },
                  nextToken: { type: "string" },
                },
              }),
            },
            "400": error("bad attempt, limit or token"),
            "404": error("no such instance, task or attempt"),
          },
        },
      },
    },
    components: {
      schemas: {
        WorkflowDefinition: schemaOf(workflowSchema),
        RunRequest: schemaOf(runSchema),
        WorkflowVersion: {
          type: "object",
          properties: {
            name: { type: "string" },
            version: { type: "integer" },
            releaseState: { enum: [...RELEASE_STATES] },
            createdAt: iso,
          },
        },
        WorkflowSummary: {
          type: "object",
          properties: {
            name: { type: "string" },
            version: { type: "integer" },
            releaseState: { enum: [...RELEASE_STATES] },
            description: { type: "string" },
          },
        },
        InstanceSummary: {
          type: "object",
          properties: {
            instanceId: { type: "string" },
            workflow: { type: "string" },
            version: { type: "integer" },
            state: { enum: [...INSTANCE_STATES] },
            priority: { enum: [...PRIORITIES] },
            createdAt: iso,
            startedAt: iso,
            endedAt: iso,
          },
        },
        Instance: {
          allOf: [
            ref("InstanceSummary"),
            {
              type: "object",
              properties: {
                commandType: { type: "string" },
                params: { type: "object", additionalProperties: { type: "string" } },
                scheduleTime: iso,
                tasks: { type: "array", items: ref("TaskInstance") },
              },
            },
          ],
        },
        TaskInstance: {
          type: "object",
          properties: {
            code: { type: "string" },
            type: { enum: [...TASK_TYPES] },
            state: { enum: [...TASK_STATES] },
            attempt: { type: "integer", minimum: 1 },
            priority: { enum: [...PRIORITIES] },
            workerGroup: { type: "string" },
            submittedAt: iso,
            startedAt: iso,
            endedAt: iso,
            worker: { type: "string" },
            exitCode: { type: "integer" },
            error: { type: "string" },
          },
        },
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message"],
              properties: {
                code: {
                  enum: [
                    "ValidationError",
                    "NotFound",
                    "Conflict",
                    "PayloadTooLarge",
                    "UnsupportedMediaType",
                  ],
                },
                message: { type: "string" },
                details: {
                  type: "array",
                  items: {
                    type: "object",
                    properties: { path: { type: "string" }, message: { type: "string" } },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
}
