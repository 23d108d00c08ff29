/**
 * Schemas of the workflow endpoints (lib/api/workflows.ts, and the run request of
 * lib/api/instances.ts): request bodies from their zod validators, answers as
 * workflowSummary (present.ts), putResult and getWorkflow (workflows.ts) build them.
 */
import { INSTANCE_STATES, RELEASE_STATES } from "../../core/model.js";
import { runSchema, workflowSchema } from "../../core/validate.js";
import {
  described,
  enumOf,
  fieldsOf,
  int,
  iso,
  type JsonSchema,
  object,
  ref,
  schemaOf,
  str,
} from "./common.js";

const releaseState = enumOf(RELEASE_STATES);

/** Component schemas of the workflow endpoints, by name (built on first use, components.ts). */
export function workflowSchemas(): Record<string, JsonSchema> {
  // The definition's task schema (a union by `type`) is a component of its own, referenced
  // where the definition and a stored version list their tasks.
  const definition = schemaOf(workflowSchema) as JsonSchema & {
    properties: { tasks: JsonSchema & { items: JsonSchema } };
  };
  const tasks = { ...definition.properties.tasks, items: ref("TaskDefinition") };
  return {
    WorkflowDefinition: { ...definition, properties: { ...definition.properties, tasks } },
    TaskDefinition: definition.properties.tasks.items,
    RunRequest: schemaOf(runSchema),
    ReleaseBody: object({ state: releaseState }, ["state"], { additionalProperties: false }),
    WorkflowSummary: object(
      { name: str, version: int, releaseState, displayName: str, description: str },
      ["name", "version", "releaseState"],
    ),
    WorkflowListItem: object(
      {
        name: str,
        version: int,
        releaseState,
        displayName: str,
        description: str,
        nextFireAt: described(
          iso,
          "include=summary: the earliest next fire of the workflow's ONLINE schedules; absent when none will fire",
        ),
        nextFireTimezone: described(str, "include=summary: the zone of that schedule"),
        lastRuns: described(
          {
            type: "array",
            items: object({ instanceId: str, state: enumOf(INSTANCE_STATES), createdAt: iso }, [
              "instanceId",
              "state",
              "createdAt",
            ]),
          },
          "include=summary: the workflow's newest 5 instances, newest first",
        ),
      },
      ["name", "version", "releaseState"],
      {
        description:
          "a WorkflowSummary; with include=summary also nextFireAt, nextFireTimezone and lastRuns",
      },
    ),
    WorkflowVersion: object(
      {
        name: str,
        version: int,
        releaseState,
        createdAt: iso,
        change: enumOf(
          ["CREATED", "UPDATED", "UNCHANGED"],
          "a new workflow, a new version of an existing one, or the same body",
        ),
        previousReleaseState: enumOf(
          RELEASE_STATES,
          "present when the body's releaseState changed the workflow's: the state before",
        ),
        warnings: described(
          {
            type: "array",
            items: object({ path: str, message: str }, ["path", "message"]),
          },
          "parameter references nothing can set, alert rules' channels the deployment does not configure (at most 100, then one 'N more' entry)",
        ),
      },
      ["name", "version", "releaseState", "createdAt", "change"],
    ),
    WorkflowDetail: object(
      {
        ...fieldsOf(workflowSchema),
        tasks,
        name: str,
        version: int,
        releaseState,
        createdAt: iso,
      },
      ["name", "version", "releaseState", "createdAt", "tasks"],
      {
        description:
          "a stored version: its definition (defaults applied) with its name, version and createdAt, and the workflow's releaseState",
      },
    ),
    RunStarted: object(
      { instanceId: str, workflow: str, version: int, state: enumOf(INSTANCE_STATES) },
      ["instanceId", "workflow", "version", "state"],
    ),
  };
}
