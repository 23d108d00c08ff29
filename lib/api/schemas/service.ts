/**
 * Schemas every part of the API shares: the error body of every 4xx answer (errorResult in
 * http.ts, codes from lib/core/errors.ts), the health answer, the alert channels' answer, and
 * the task group endpoints' (lib/api/task-groups.ts).
 */
import type { ErrorCode } from "../../core/errors.js";
import { taskGroupSchema } from "../task-groups.js";
import { described, fieldsOf, int, iso, type JsonSchema, object, schemaOf, str } from "./common.js";

const ERROR_CODES = [
  "ValidationError",
  "NotFound",
  "Conflict",
  "PayloadTooLarge",
  "UnsupportedMediaType",
] as const satisfies readonly ErrorCode[];

/**
 * Codes of answers the client did not cause: a bug (500), a 503 when a service the API
 * depends on is out of reach, throttling, or (standalone) restarting (lib/api/router.ts), and
 * standalone's 503 for a request refused before any work (lib/standalone/admission.ts).
 */
const SERVICE_ERROR_CODES = ["InternalError", "ServiceUnavailable", "Overloaded"] as const;

/** Component schemas shared by the endpoints, and the task groups', by name. */
export function serviceSchemas(): Record<string, JsonSchema> {
  return {
    Error: object(
      {
        error: object(
          {
            code: { enum: [...ERROR_CODES, ...SERVICE_ERROR_CODES] },
            message: str,
            details: {
              type: "array",
              items: object({ path: str, message: str }, ["path", "message"]),
            },
          },
          ["code", "message"],
        ),
      },
      ["error"],
    ),
    Health: object(
      {
        status: described(
          { enum: ["ok", "degraded"] },
          "`ok` when every part is ok (200), else `degraded` (503)",
        ),
        version: str,
        parts: described(
          { type: "object", additionalProperties: { enum: ["ok", "restarting", "down"] } },
          "standalone only: each part's state by name (`dynamodb`, `sqs`, `worker`); `restarting` after its process died, `down` once given up",
        ),
      },
      ["status", "version"],
    ),
    AlertChannels: object(
      {
        items: {
          type: "array",
          items: object(
            {
              name: described(str, "what alert rules call it (`channels` of a rule)"),
              type: described(str, "`webhook`, `slack` or `email`"),
            },
            ["name", "type"],
          ),
        },
      },
      ["items"],
    ),
    TaskGroupBody: schemaOf(taskGroupSchema),
    TaskGroup: object(
      {
        name: str,
        ...fieldsOf(taskGroupSchema),
        used: described(
          int,
          "slots held now (may exceed capacity for a while after it was lowered)",
        ),
        waiting: described(int, "tasks waiting for a slot"),
        createdAt: iso,
        updatedAt: iso,
      },
      ["name", "capacity", "used", "waiting", "createdAt", "updatedAt"],
    ),
  };
}
