/**
 * Schemas of the instance endpoints (lib/api/instances.ts, explain.ts, render.ts): the answers
 * as instanceSummary, instanceDetail and taskInstance (present.ts), the explain routes and the
 * render endpoints build them, and the render request from its zod validator.
 */
import { ALERT_EVENTS } from "../../core/alert-rules.js";
import { EXPLAIN_REASONS } from "../../core/explain.js";
import {
  COMMAND_TYPES,
  FAILURE_STRATEGIES,
  INSTANCE_STATES,
  PRIORITIES,
  TASK_SCOPES,
  TASK_STATES,
  TASK_TYPES,
} from "../../core/model.js";
import { RUN_TYPES } from "../../core/run-type.js";
import { renderSchema } from "../render.js";
import {
  described,
  enumOf,
  int,
  iso,
  type JsonSchema,
  object,
  ref,
  schemaOf,
  str,
  stringMap,
} from "./common.js";

const attempt: JsonSchema = { type: "integer", minimum: 1 };
const strings: JsonSchema = { type: "array", items: str };

const TaskInstance = object(
  {
    code: str,
    type: enumOf(TASK_TYPES),
    state: enumOf(TASK_STATES),
    attempt,
    priority: enumOf(PRIORITIES),
    workerGroup: str,
    submittedAt: iso,
    startedAt: iso,
    endedAt: iso,
    worker: described(str, "host:pid:id of the worker that ran the attempt"),
    exitCode: described(int, "SHELL: the command's exit code"),
    error: str,
    warning: described(str, "a WARN timeout fired; the task went on"),
    taskGroup: described(str, "the task group whose slot the attempt needs"),
    outputs: described(stringMap, "OUT parameters the attempt set"),
    subInstanceId: described(str, "SUB_WORKFLOW: the child instance"),
    branch: described(strings, "CONDITIONS/SWITCH: the branch targets taken"),
    logUrl: described(str, "on AWS: the attempt's log stream in the CloudWatch console"),
  },
  ["code", "state"],
  { description: "one attempt of one task; absent fields are omitted" },
);

/** The fields of an instance that lists show, and the whole instance too. */
const summaryFields: Record<string, JsonSchema> = {
  instanceId: str,
  workflow: str,
  version: int,
  state: enumOf(INSTANCE_STATES),
  priority: enumOf(PRIORITIES),
  createdAt: iso,
  startedAt: iso,
  endedAt: iso,
  scheduleTime: described(iso, "nominal time of a scheduled, backfilled or sub-workflow run"),
  runType: enumOf(
    RUN_TYPES,
    "what started it: MANUAL (a run request), SCHEDULE, BACKFILL, TRIGGER (an event) or SUB_WORKFLOW (a parent's task); absent on instances from before it was recorded",
  ),
};

const InstanceSummary = object(
  {
    ...summaryFields,
    // As the instance's own; absent only for an instance gone (expired) since the page was read.
    progress: ref("InstanceProgress"),
    tasks: described(
      { type: "array", items: ref("InstanceTaskCell") },
      "with include=tasks: the current attempt of every task started in the current round, in the definition's task order; absent when the definition version is gone",
    ),
  },
  ["instanceId", "workflow", "version", "state"],
);

// The summary's fields spelled out rather than an allOf of InstanceSummary: the answer checker of
// the tests (test/helpers/answer-schemas.ts) holds objects closed, which an allOf's parts cannot be.
const Instance: JsonSchema = object(
  {
    ...summaryFields,
    commandType: enumOf(
      COMMAND_TYPES,
      "the command that created it (START_WORKFLOW, SCHEDULED, …)",
    ),
    params: stringMap,
    timezone: described(
      str,
      "IANA zone of its time parameters: the schedule's, backfill's or parent's, else the workflow's timezone, else UTC",
    ),
    failureStrategy: enumOf(FAILURE_STRATEGIES),
    dryRun: { type: "boolean" },
    startTasks: described(strings, "the tasks the run started from"),
    taskScope: enumOf(TASK_SCOPES, "with startTasks: which tasks around them run"),
    progress: ref("InstanceProgress"),
    runs: described(int, "1, then +1 per rerun or recover-failed"),
    workerGroup: described(str, "run-time group of 'default' tasks"),
    scheduleId: described(str, "the schedule that fired it"),
    backfillId: described(str, "the backfill that started it"),
    triggerId: described(str, "the trigger that started it"),
    error: described(str, "why it failed (workflow timeout)"),
    deadlineAt: described(iso, "when the workflow timeout fires"),
    parent: object(
      { instanceId: str, code: str, attempt: int },
      ["instanceId", "code", "attempt"],
      { description: "a sub-workflow instance: the parent task attempt" },
    ),
    tasks: described(
      { type: "array", items: ref("TaskInstance") },
      "the current attempt of every task started in the current round",
    ),
    attempts: described(
      { type: "array", items: ref("TaskInstance") },
      "with include=attempts: every attempt of every task of every round, in task order then attempt number",
    ),
    attemptsOmitted: described(
      int,
      "with include=attempts: how many older attempts were left out (beyond the cap)",
    ),
    alerts: described(
      { type: "array", items: ref("AlertDelivery") },
      "what was alerted about this instance (docs/alerts.md), oldest first; absent when nothing was",
    ),
  },
  ["instanceId", "workflow", "version", "state"],
  {
    description:
      "an instance: its summary's fields, its run settings and progress, and the current attempt of each task; while the dispatcher has not created it, a SUBMITTED stand-in without progress",
  },
);

const Explanation = object(
  {
    code: str,
    type: enumOf(TASK_TYPES),
    state: enumOf(
      [...TASK_STATES, "NOT_STARTED", "NOT_IN_SCOPE"],
      "the current attempt's state; NOT_STARTED when it has none in this round",
    ),
    attempt,
    reason: enumOf(EXPLAIN_REASONS),
    message: described(str, "one sentence, no relative times"),
    facts: {
      type: "object",
      additionalProperties: true,
      description:
        "what the reason rests on, e.g. upstream states, taskGroup {name, capacity, used, waiting, position}, workerGroup and lastPollAt, dueAt (ISO-8601 times)",
    },
  },
  ["code", "state", "reason", "message", "facts"],
  { description: "why a task is where it is: one reason, one sentence, the facts behind it" },
);

/** One form of {@link RenderedTask}: `type` and the fields of that type (lib/tasks/render-task.ts). */
const renderedAs = (
  type: string,
  fields: Record<string, JsonSchema>,
  required: readonly string[],
): JsonSchema => object({ type: { const: type }, ...fields }, ["type", ...required]);

const RenderedTask: JsonSchema = {
  description:
    "what the task would run or decide, by type (lib/tasks/render-task.ts Rendered). Secret-like headers and values show ****",
  oneOf: [
    renderedAs("SHELL", { command: str }, ["command"]),
    renderedAs("HTTP", { method: str, url: str, headers: stringMap, body: str }, [
      "method",
      "url",
      "headers",
    ]),
    renderedAs("LAMBDA", { functionName: str, qualifier: str, payload: str }, [
      "functionName",
      "payload",
    ]),
    renderedAs("STEP_FUNCTIONS", { stateMachineArn: str, executionName: str, input: str }, [
      "stateMachineArn",
    ]),
    renderedAs(
      "SWITCH",
      {
        cases: {
          type: "array",
          items: object(
            {
              condition: str,
              next: str,
              value: described(
                { anyOf: [{ type: "boolean" }, { type: "string" }] },
                "the condition's value now: true, false, or the error it fails with",
              ),
            },
            ["condition", "next", "value"],
          ),
        },
        defaultNext: str,
      },
      ["cases"],
    ),
    renderedAs("CONDITIONS", { successNext: strings, failedNext: strings }, [
      "successNext",
      "failedNext",
    ]),
    renderedAs("SUB_WORKFLOW", { workflow: str, params: stringMap }, ["workflow", "params"]),
    renderedAs(
      "DEPENDENT",
      {
        relation: str,
        items: {
          type: "array",
          items: object(
            {
              workflow: str,
              task: str,
              cycle: str,
              dateValue: str,
              periods: described(
                {
                  type: "array",
                  items: object({ from: str, to: str }, ["from", "to"]),
                },
                "half-open periods [from, to), ISO-8601 in the run's zone; each needs a successful instance",
              ),
            },
            ["workflow", "cycle", "dateValue", "periods"],
          ),
        },
      },
      ["relation", "items"],
    ),
  ],
};

const TaskRendering = object(
  {
    instanceId: described(str, "absent for a workflow's task"),
    workflow: str,
    version: int,
    task: str,
    type: enumOf(TASK_TYPES),
    attempt,
    baseTime: described(iso, "base time of the time parameters"),
    timezone: described(str, "IANA zone of the time parameters"),
    params: described(stringMap, "resolved parameters; secret-like names show ****"),
    rendered: ref("RenderedTask"),
    unresolved: described(
      strings,
      "names of references left as written because no parameter has them: shell variables, or OUT parameters of upstream tasks that have not run",
    ),
    error: described(str, "why the task cannot be rendered: what a run would fail with"),
    hidden: described(
      str,
      "why rendered is absent although a run would render the task: it does not render with its secret parameters replaced by ****",
    ),
  },
  [
    "workflow",
    "version",
    "task",
    "type",
    "attempt",
    "baseTime",
    "timezone",
    "params",
    "unresolved",
  ],
  {
    description:
      "a task's resolved parameters and what it would run: rendered, or error (it cannot render), or hidden (it renders only with its secrets)",
  },
);

/** Component schemas of the instance endpoints, by name. */
export function instanceSchemas(): Record<string, JsonSchema> {
  return {
    InstanceSummary,
    Instance,
    InstanceProgress: object(
      {
        done: int,
        active: described(int, "submitted, dispatched, running or waiting for a retry"),
        failed: described(int, "failed or killed"),
        total: described(int, "tasks in scope"),
      },
      ["done", "active", "failed", "total"],
      { description: "task counts over the tasks in scope" },
    ),
    TaskInstance,
    AlertDelivery: object(
      {
        deliveryId: described(str, "the X-Shoal-Delivery-Id receivers deduplicate on"),
        rule: described(
          str,
          "the rule that asked for it: workflow.alerts[i] or schedule.alerts[i]",
        ),
        channel: described(str, "a channel of the deployment's alerts configuration"),
        event: enumOf(ALERT_EVENTS),
        taskCode: described(str, "TASK_RETRY_EXHAUSTED: the task"),
        attempt: described(int, "TASK_RETRY_EXHAUSTED: its last attempt"),
        status: enumOf(["PENDING", "SENT", "FAILED"]),
        attempts: described(int, "sends tried so far"),
        lastError: described(str, "why the last send failed"),
        nextAttemptAt: described(iso, "PENDING after a failed send: when the next is due"),
        sentAt: iso,
        createdAt: iso,
      },
      ["deliveryId", "rule", "channel", "event", "status", "attempts", "createdAt"],
      { description: "one alert to one channel and what became of it" },
    ),
    InstanceTaskCell: object({ code: str, state: enumOf(TASK_STATES), attempt }, [
      "code",
      "state",
      "attempt",
    ]),
    InstanceAction: object({ instanceId: str, state: enumOf(INSTANCE_STATES) }, [
      "instanceId",
      "state",
    ]),
    LogPage: object(
      {
        lines: {
          type: "array",
          items: object({ timestamp: iso, message: str }, ["timestamp", "message"]),
        },
        nextToken: described(str, "present while the attempt runs or more lines exist"),
      },
      ["lines"],
    ),
    Explanation,
    InstanceExplanation: object(
      {
        instanceId: str,
        workflow: str,
        version: int,
        state: enumOf(INSTANCE_STATES),
        reason: described(
          enumOf(EXPLAIN_REASONS),
          "present when something holds the whole instance",
        ),
        message: str,
        tasks: { type: "array", items: ref("Explanation") },
      },
      ["instanceId", "workflow", "version", "state", "tasks"],
    ),
    RenderRequest: schemaOf(renderSchema),
    TaskRendering,
    RenderedTask,
  };
}
