/**
 * The OpenAPI 3.1 document of the HTTP API, built from the same zod schemas that validate the
 * request bodies (so the two cannot drift). Served at `GET /v1/openapi.json`; a copy lives in
 * docs/openapi.json (`npm run openapi` rewrites it; a test checks it is current).
 */
import { z } from "zod";
import { EXPLAIN_REASONS } from "../core/explain.js";
import {
  INSTANCE_STATES,
  PRIORITIES,
  RELEASE_STATES,
  TASK_STATES,
  TASK_TYPES,
} from "../core/model.js";
import { RUN_TYPES } from "../core/run-type.js";
import { runSchema, workflowSchema } from "../core/validate.js";
import { BACKFILL_STATES, backfillSchema } from "./backfills.js";
import { renderSchema } from "./render.js";
import { scheduleSchema } from "./schedules.js";
import { taskGroupSchema } from "./task-groups.js";
import { eventsSchema, triggerSchema } from "./triggers.js";

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
const scheduleState = (state: string) => ({
  post: {
    operationId: `schedule${state[0]?.toUpperCase()}${state.slice(1)}`,
    summary: `set the schedule ${state.toUpperCase()}`,
    parameters: [idParam],
    responses: {
      "200": { description: "the schedule", ...json(ref("Schedule")) },
      "404": error("no such schedule"),
    },
  },
});
const backfillControl = (verb: string) => ({
  post: {
    operationId: `${verb}Backfill`,
    parameters: [idParam],
    responses: {
      "202": { description: "accepted", ...json(ref("Backfill")) },
      "404": error("no such backfill"),
      "409": error("its state does not allow it"),
    },
  },
});
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
            {
              name: "runType",
              in: "query",
              description:
                "what started the instances; filters each page, so a page may hold fewer than `limit` items and still carry a `nextToken`",
              schema: { enum: [...RUN_TYPES] },
            },
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
      "/v1/instances/{id}/pause": control(
        "pause",
        "pause a RUNNING instance: running tasks finish, nothing new starts (PAUSING → PAUSED)",
      ),
      "/v1/instances/{id}/resume": control(
        "resume",
        "resume a PAUSING or PAUSED instance where it paused",
      ),
      "/v1/instances/{id}/rerun": control(
        "rerun",
        "run a finished instance again from the start, keeping its id (new attempts)",
      ),
      "/v1/instances/{id}/recover-failed": control(
        "recoverFailed",
        "re-run the FAILURE/KILLED tasks of a FAILURE or STOPPED instance and what follows them",
      ),
      "/v1/instances/{id}/tasks/{code}/force-success": {
        post: {
          operationId: "forceSuccess",
          summary: "mark the failed latest attempt of a task of a finished instance FORCED_SUCCESS",
          parameters: [idParam, codeParam],
          responses: {
            "200": { description: "the attempt, now FORCED_SUCCESS", ...json(ref("TaskInstance")) },
            "404": error("no such instance or task"),
            "409": error("the instance is not FAILURE/STOPPED or the task is not FAILURE/KILLED"),
          },
        },
      },
      "/v1/schedules": {
        post: {
          operationId: "createSchedule",
          summary: "create a cron, rate or one-time schedule of a workflow",
          requestBody: { required: true, ...json(ref("ScheduleBody")) },
          responses: {
            "201": {
              description: "created, with its id and nextFireTime",
              ...json(ref("Schedule")),
            },
            "400": error("invalid body, expression or time zone"),
          },
        },
        get: {
          operationId: "listSchedules",
          parameters: [
            { name: "workflow", in: "query", schema: { type: "string" } },
            limitParam,
            tokenParam,
          ],
          responses: { "200": { description: "newest first", ...json(page("Schedule")) } },
        },
      },
      "/v1/schedules/{id}": {
        get: {
          operationId: "getSchedule",
          parameters: [idParam],
          responses: {
            "200": { description: "the schedule", ...json(ref("Schedule")) },
            "404": error("no such schedule"),
          },
        },
        put: {
          operationId: "putSchedule",
          parameters: [idParam],
          requestBody: { required: true, ...json(ref("ScheduleBody")) },
          responses: {
            "200": {
              description: "replaced; the next fire is computed from now",
              ...json(ref("Schedule")),
            },
            "400": error("invalid body"),
            "404": error("no such schedule"),
            "409": error("changed concurrently"),
          },
        },
        delete: {
          operationId: "deleteSchedule",
          parameters: [idParam],
          responses: { "204": { description: "deleted" }, "404": error("no such schedule") },
        },
      },
      "/v1/schedules/{id}/online": scheduleState("online"),
      "/v1/schedules/{id}/offline": scheduleState("offline"),
      "/v1/schedules/{id}/preview": {
        get: {
          operationId: "previewSchedule",
          parameters: [
            idParam,
            {
              name: "count",
              in: "query",
              schema: { type: "integer", minimum: 1, maximum: 1000, default: 10 },
            },
          ],
          responses: {
            "200": {
              description: "the next nominal fire times",
              ...json({ type: "object", properties: { items: { type: "array", items: iso } } }),
            },
            "404": error("no such schedule"),
          },
        },
      },
      "/v1/schedules/{id}/fires": {
        get: {
          operationId: "listFires",
          summary: "the fire ledger: every nominal time and what was decided",
          parameters: [
            idParam,
            { name: "from", in: "query", schema: iso },
            { name: "to", in: "query", schema: iso },
            limitParam,
            tokenParam,
          ],
          responses: {
            "200": {
              description: "oldest first; also after the schedule was deleted",
              ...json({
                type: "object",
                properties: {
                  ...page("Fire").properties,
                  scheduleDeleted: {
                    type: "boolean",
                    description: "present (true) when the schedule itself was deleted",
                  },
                },
              }),
            },
            "404": error("no such schedule, and no fire of that id recorded"),
          },
        },
      },
      "/v1/workflows/{name}/backfill": {
        post: {
          operationId: "createBackfill",
          summary: "run a workflow for past nominal times (complement data)",
          parameters: [nameParam],
          requestBody: { required: true, ...json(ref("BackfillBody")) },
          responses: {
            "200": {
              description: "dryRun: the nominal times it would run",
              ...json({
                type: "object",
                properties: { nominalTimes: { type: "array", items: iso } },
              }),
            },
            "202": { description: "started", ...json(ref("Backfill")) },
            "400": error("invalid body"),
            "404": error("no such workflow"),
            "409": error("the workflow is OFFLINE"),
          },
        },
      },
      "/v1/backfills": {
        get: {
          operationId: "listBackfills",
          parameters: [
            { name: "workflow", in: "query", schema: { type: "string" } },
            {
              name: "state",
              in: "query",
              description:
                "filters each page, so a page may hold fewer than `limit` items and still carry a `nextToken`",
              schema: { enum: [...BACKFILL_STATES] },
            },
            limitParam,
            tokenParam,
          ],
          responses: {
            "200": { description: "newest first", ...json(page("Backfill")) },
            "400": error("bad filter, limit or token"),
          },
        },
      },
      "/v1/backfills/{id}": {
        get: {
          operationId: "getBackfill",
          parameters: [idParam],
          responses: {
            "200": { description: "the backfill's progress", ...json(ref("Backfill")) },
            "404": error("no such backfill"),
          },
        },
      },
      "/v1/backfills/{id}/pause": backfillControl("pause"),
      "/v1/backfills/{id}/resume": backfillControl("resume"),
      "/v1/backfills/{id}/cancel": backfillControl("cancel"),
      "/v1/triggers": {
        post: {
          operationId: "createTrigger",
          summary: "start a workflow when an event matches an EventBridge pattern",
          requestBody: { required: true, ...json(ref("TriggerBody")) },
          responses: {
            "201": { description: "created", ...json(ref("Trigger")) },
            "400": error("invalid pattern, path or body"),
          },
        },
        get: {
          operationId: "listTriggers",
          parameters: [limitParam, tokenParam],
          responses: { "200": { description: "triggers", ...json(page("Trigger")) } },
        },
      },
      "/v1/triggers/{id}": {
        get: {
          operationId: "getTrigger",
          parameters: [idParam],
          responses: {
            "200": { description: "the trigger", ...json(ref("Trigger")) },
            "404": error("no such trigger"),
          },
        },
        delete: {
          operationId: "deleteTrigger",
          parameters: [idParam],
          responses: { "204": { description: "deleted" }, "404": error("no such trigger") },
        },
      },
      "/v1/events": {
        post: {
          operationId: "putEvents",
          summary: "standalone: deliver PutEvents-shaped entries to the triggers",
          requestBody: { required: true, ...json(schemaOf(eventsSchema)) },
          responses: {
            "200": { description: "the event ids and the runs each started" },
            "400": error("invalid entries"),
          },
        },
      },
      "/v1/events/recent": {
        get: {
          operationId: "recentEvents",
          summary:
            "standalone: the newest events on the in-process bus (Shoal's state-change events and POST /v1/events entries), EventBridge envelopes, newest first",
          parameters: [
            {
              name: "limit",
              in: "query",
              schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
            },
            { name: "detailType", in: "query", schema: { type: "string" } },
            { name: "source", in: "query", schema: { type: "string" } },
          ],
          responses: {
            "200": { description: "`{items: [event]}` (docs/events.md has the detail schemas)" },
            "400": error("bad limit or unknown query parameter"),
            "404": error("not standalone: on AWS the events are on the EventBridge bus"),
          },
        },
      },
      "/v1/task-groups": {
        get: {
          operationId: "listTaskGroups",
          parameters: [limitParam, tokenParam],
          responses: {
            "200": { description: "task groups by name", ...json(page("TaskGroup")) },
            "400": error("bad limit or token"),
          },
        },
      },
      "/v1/task-groups/{name}": {
        put: {
          operationId: "putTaskGroup",
          summary: "create or change a task group (a concurrency limit shared across workflows)",
          parameters: [nameParam],
          requestBody: { required: true, ...json(ref("TaskGroupBody")) },
          responses: {
            "200": { description: "changed or unchanged", ...json(ref("TaskGroup")) },
            "201": { description: "created", ...json(ref("TaskGroup")) },
            "400": error("invalid body"),
          },
        },
        get: {
          operationId: "getTaskGroup",
          parameters: [nameParam],
          responses: {
            "200": { description: "the group and its counts", ...json(ref("TaskGroup")) },
            "404": error("no such task group"),
          },
        },
        delete: {
          operationId: "deleteTaskGroup",
          parameters: [nameParam],
          responses: {
            "204": { description: "deleted" },
            "404": error("no such task group"),
            "409": error("a slot is held or a task waits"),
          },
        },
      },
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
      "/v1/instances/{id}/tasks/{code}/render": {
        get: {
          operationId: "renderInstanceTask",
          summary:
            "the task's resolved parameters and what it would run, as its current attempt (or ?attempt=N) ran or would run",
          parameters: [
            idParam,
            codeParam,
            { name: "attempt", in: "query", schema: { type: "integer", minimum: 1 } },
          ],
          responses: {
            "200": { description: "the rendering", ...json(ref("TaskRendering")) },
            "400": error("bad attempt"),
            "404": error("no such instance, or no such task in its workflow version"),
            "409": error("the instance is still waiting for the dispatcher"),
          },
        },
      },
      "/v1/workflows/{name}/tasks/{code}/render": {
        get: {
          operationId: "renderWorkflowTask",
          summary: "the task's resolved parameters and what it would run in a new run",
          parameters: [
            nameParam,
            codeParam,
            { name: "scheduleTime", in: "query", schema: iso },
            { name: "timezone", in: "query", schema: { type: "string" } },
            { name: "version", in: "query", schema: { type: "integer", minimum: 1 } },
          ],
          responses: {
            "200": { description: "the rendering", ...json(ref("TaskRendering")) },
            "400": error("bad scheduleTime, timezone or version, or an unknown query parameter"),
            "404": error("no such workflow, version or task"),
          },
        },
        post: {
          operationId: "renderWorkflowTaskWith",
          summary: "the same, with run parameters",
          parameters: [nameParam, codeParam],
          requestBody: { required: false, ...json(ref("RenderRequest")) },
          responses: {
            "200": { description: "the rendering", ...json(ref("TaskRendering")) },
            "400": error("invalid body"),
            "404": error("no such workflow, version or task"),
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
      "/v1/instances/{id}/explain": {
        get: {
          operationId: "explainInstance",
          summary: "why the instance's tasks are not running (docs/workflows.md)",
          parameters: [idParam],
          responses: {
            "200": {
              description:
                "what holds the whole instance (reason, message), and every task that waits, was skipped or did not run",
              ...json({
                type: "object",
                properties: {
                  instanceId: { type: "string" },
                  workflow: { type: "string" },
                  version: { type: "integer" },
                  state: { enum: [...INSTANCE_STATES] },
                  reason: { enum: [...EXPLAIN_REASONS] },
                  message: { type: "string" },
                  tasks: { type: "array", items: ref("Explanation") },
                },
              }),
            },
            "404": error("no such instance"),
          },
        },
      },
      "/v1/instances/{id}/tasks/{code}/explain": {
        get: {
          operationId: "explainTask",
          summary: "why one task is not running, with the facts behind it",
          parameters: [idParam, codeParam],
          responses: {
            "200": { description: "the explanation", ...json(ref("Explanation")) },
            "400": error("bad task code"),
            "404": error("no such instance or task"),
          },
        },
      },
    },
    components: {
      schemas: {
        WorkflowDefinition: schemaOf(workflowSchema),
        RunRequest: schemaOf(runSchema),
        RenderRequest: schemaOf(renderSchema),
        TaskRendering: {
          type: "object",
          properties: {
            instanceId: { type: "string", description: "absent for a workflow's task" },
            workflow: { type: "string" },
            version: { type: "integer" },
            task: { type: "string" },
            type: { enum: [...TASK_TYPES] },
            attempt: { type: "integer", minimum: 1 },
            baseTime: { ...iso, description: "base time of the time parameters" },
            timezone: { type: "string", description: "IANA zone of the time parameters" },
            params: {
              type: "object",
              additionalProperties: { type: "string" },
              description: "resolved parameters; secret-like names show ****",
            },
            rendered: {
              type: "object",
              description:
                "by type: SHELL {command}; HTTP {method, url, headers, body}; LAMBDA {functionName, qualifier, payload}; STEP_FUNCTIONS {stateMachineArn, executionName, input}; SWITCH {cases: [{condition, next, value}], defaultNext}; CONDITIONS {successNext, failedNext}; SUB_WORKFLOW {workflow, params}; DEPENDENT {relation, items: [{workflow, task, cycle, dateValue, periods}]}. Secret-like headers and values show ****",
              properties: { type: { enum: [...TASK_TYPES] } },
            },
            unresolved: {
              type: "array",
              items: { type: "string" },
              description:
                "names of references left as written because no parameter has them: shell variables, or OUT parameters of upstream tasks that have not run",
            },
            error: {
              type: "string",
              description: "why the task cannot be rendered: what a run would fail with",
            },
            hidden: {
              type: "string",
              description:
                "why rendered is absent although a run would render the task: it does not render with its secret parameters replaced by ****",
            },
          },
        },
        TaskGroupBody: schemaOf(taskGroupSchema),
        ScheduleBody: schemaOf(scheduleSchema),
        Schedule: {
          type: "object",
          description:
            "the body's fields plus id, state, nextFireTime, queued, createdAt, updatedAt",
          properties: {
            id: { type: "string" },
            workflow: { type: "string" },
            state: { enum: ["ONLINE", "OFFLINE"] },
            nextFireTime: iso,
            createdAt: iso,
            updatedAt: iso,
          },
          additionalProperties: true,
        },
        Fire: {
          type: "object",
          properties: {
            nominalTime: iso,
            actualTime: iso,
            latenessMs: { type: "integer" },
            decision: { enum: ["FIRED", "SKIPPED_MISFIRE", "DISCARDED_OVERLAP", "QUEUED_SERIAL"] },
            instanceId: { type: "string" },
          },
        },
        BackfillBody: schemaOf(backfillSchema),
        Backfill: {
          type: "object",
          properties: {
            id: { type: "string" },
            workflow: { type: "string" },
            state: { enum: [...BACKFILL_STATES] },
            mode: { enum: ["SERIAL", "PARALLEL"] },
            parallelism: { type: "integer", description: "runs at once (1 for SERIAL)" },
            priority: { enum: [...PRIORITIES] },
            total: { type: "integer", description: "nominal times" },
            done: { type: "integer" },
            running: { type: "integer" },
            failed: { type: "integer" },
            pending: { type: "integer", description: "not started yet" },
            timezone: {
              type: "string",
              description:
                "zone of its runs' time parameters (its cron's, or the timezone given with dates); absent: the workflow's",
            },
            firstTime: { ...iso, description: "the first nominal time, in run order" },
            lastTime: { ...iso, description: "the last nominal time, in run order" },
            createdAt: iso,
            updatedAt: iso,
          },
        },
        TriggerBody: schemaOf(triggerSchema),
        Trigger: {
          type: "object",
          properties: {
            id: { type: "string" },
            workflow: { type: "string" },
            eventPattern: { type: "object" },
            params: { type: "object", additionalProperties: { type: "string" } },
            debounceSeconds: { type: "integer" },
            createdAt: iso,
          },
        },
        TaskGroup: {
          type: "object",
          properties: {
            name: { type: "string" },
            capacity: { type: "integer", minimum: 1, maximum: 1000 },
            description: { type: "string" },
            used: { type: "integer", description: "slots held now" },
            waiting: { type: "integer", description: "tasks waiting for a slot" },
            createdAt: iso,
            updatedAt: iso,
          },
        },
        WorkflowVersion: {
          type: "object",
          properties: {
            name: { type: "string" },
            version: { type: "integer" },
            releaseState: { enum: [...RELEASE_STATES] },
            createdAt: iso,
            change: {
              enum: ["CREATED", "UPDATED", "UNCHANGED"],
              description: "a new workflow, a new version of an existing one, or the same body",
            },
            previousReleaseState: {
              enum: [...RELEASE_STATES],
              description:
                "present when the body's releaseState changed the workflow's: the state before",
            },
            warnings: {
              type: "array",
              description:
                "parameter references nothing can set (at most 100, then one 'N more' entry)",
              items: {
                type: "object",
                properties: { path: { type: "string" }, message: { type: "string" } },
              },
            },
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
            scheduleTime: {
              ...iso,
              description: "nominal time of a scheduled, backfilled or sub-workflow run",
            },
            runType: {
              enum: [...RUN_TYPES],
              description:
                "what started it: MANUAL (a run request), SCHEDULE, BACKFILL, TRIGGER (an event) or SUB_WORKFLOW (a parent's task); absent on instances from before it was recorded",
            },
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
                timezone: {
                  type: "string",
                  description:
                    "IANA zone of its time parameters: the schedule's, backfill's or parent's, else the workflow's timezone, else UTC",
                },
                runs: { type: "integer", description: "1, then +1 per rerun or recover-failed" },
                workerGroup: { type: "string", description: "run-time group of 'default' tasks" },
                scheduleId: { type: "string", description: "the schedule that fired it" },
                backfillId: { type: "string", description: "the backfill that started it" },
                triggerId: { type: "string", description: "the trigger that started it" },
                error: { type: "string", description: "why it failed (workflow timeout)" },
                deadlineAt: { ...iso, description: "when the workflow timeout fires" },
                parent: {
                  type: "object",
                  description: "a sub-workflow instance: the parent task attempt",
                  properties: {
                    instanceId: { type: "string" },
                    code: { type: "string" },
                    attempt: { type: "integer" },
                  },
                },
                tasks: { type: "array", items: ref("TaskInstance") },
              },
            },
          ],
        },
        Explanation: {
          type: "object",
          description: "why a task is where it is: one reason, one sentence, the facts behind it",
          required: ["code", "state", "reason", "message", "facts"],
          properties: {
            code: { type: "string" },
            type: { enum: [...TASK_TYPES] },
            state: {
              enum: [...TASK_STATES, "NOT_STARTED", "NOT_IN_SCOPE"],
              description:
                "the current attempt's state; NOT_STARTED when it has none in this round",
            },
            attempt: { type: "integer", minimum: 1 },
            reason: { enum: [...EXPLAIN_REASONS] },
            message: { type: "string", description: "one sentence, no relative times" },
            facts: {
              type: "object",
              additionalProperties: true,
              description:
                "what the reason rests on, e.g. upstream states, taskGroup {name, capacity, used, waiting, position}, workerGroup and lastPollAt, dueAt (ISO-8601 times)",
            },
          },
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
            warning: { type: "string", description: "a WARN timeout fired; the task went on" },
            taskGroup: { type: "string" },
            outputs: {
              type: "object",
              additionalProperties: { type: "string" },
              description: "OUT parameters the attempt set",
            },
            subInstanceId: { type: "string", description: "SUB_WORKFLOW: the child instance" },
            branch: {
              type: "array",
              items: { type: "string" },
              description: "CONDITIONS/SWITCH: the branch targets taken",
            },
            logUrl: {
              type: "string",
              description: "on AWS: the attempt's log stream in the CloudWatch console",
            },
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
