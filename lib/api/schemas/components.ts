/** Every component schema of the OpenAPI document (`components.schemas`), by name. */
import type { JsonSchema } from "./common.js";
import { eventSchemas } from "./events.js";
import { instanceSchemas } from "./instances.js";
import { schedulingSchemas } from "./scheduling.js";
import { serviceSchemas } from "./service.js";
import { workflowSchemas } from "./workflows.js";

let built: Readonly<Record<string, JsonSchema>> | undefined;

/**
 * The component schemas, built on first use: converting the zod validators takes milliseconds
 * that an API Lambda's cold start need not spend unless `GET /v1/openapi.json` is asked for.
 */
export function componentSchemas(): Readonly<Record<string, JsonSchema>> {
  built ??= {
    ...workflowSchemas(),
    ...instanceSchemas(),
    ...schedulingSchemas(),
    ...eventSchemas(),
    ...serviceSchemas(),
  };
  return built;
}
