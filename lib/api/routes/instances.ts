/**
 * Routes of the instances: list and read, the control verbs, a task's attempts, log, rendering
 * and explanation (lib/api/instances.ts, render.ts, explain.ts).
 */
import { INSTANCE_STATES } from "../../core/model.js";
import { RUN_TYPES } from "../../core/run-type.js";
import * as ex from "../explain.js";
import { listInstances, MAX_LIMIT_WITH_TASKS, MAX_TASK_READS } from "../instance-list.js";
import * as inst from "../instances.js";
import { MAX_DETAIL_ATTEMPTS } from "../present.js";
import * as rd from "../render.js";
import {
  answer,
  bodyFailures,
  failure,
  limitParam,
  PER_PAGE_FILTER,
  queryParam,
  type Route,
  route,
  tokenParam,
} from "../route.js";
import { enumOf, iso, object, page, ref, str } from "../schemas/common.js";

const attemptParam = queryParam("attempt", { type: "integer", minimum: 1 });

/** `POST /v1/instances/{id}/<verb>`: one row per verb, each its own operation. */
const control = (verb: inst.ControlVerb, operationId: string, summary: string): Route =>
  route({
    method: "POST",
    path: `/v1/instances/{id}/${verb}`,
    operationId,
    summary,
    responses: {
      202: answer("accepted: the state the instance is heading to", "InstanceAction"),
      ...bodyFailures("unknown field in the body"),
      404: failure("no such instance"),
      409: failure("the instance's state does not allow it (or not supported yet)"),
    },
    handler: (d, p, e) => inst.controlInstance(d, p.id, verb, e),
  });

export const INSTANCE_ROUTES: readonly Route[] = [
  route({
    method: "GET",
    path: "/v1/instances",
    operationId: "listInstances",
    query: [
      queryParam("workflow", str),
      queryParam("state", enumOf(INSTANCE_STATES)),
      queryParam("runType", enumOf(RUN_TYPES), `what started the instances; ${PER_PAGE_FILTER}`),
      queryParam(
        "scheduledAfter",
        iso,
        `instances whose scheduleTime is at or after this instant (inclusive; instances without a scheduleTime, such as manual runs, are left out); ${PER_PAGE_FILTER}`,
      ),
      queryParam(
        "scheduledBefore",
        iso,
        `instances whose scheduleTime is before this instant (exclusive; later than scheduledAfter); ${PER_PAGE_FILTER}`,
      ),
      queryParam(
        "q",
        { type: "string", pattern: "^[A-Za-z0-9-]{0,64}$" },
        `instances whose id contains this, case-insensitively (empty: no search); ${PER_PAGE_FILTER}`,
      ),
      queryParam(
        "include",
        enumOf(["tasks"]),
        `tasks: each item also carries \`tasks\`, the state of the current attempt of each task (one BatchGetItem per 100 attempts); limit is then at most ${MAX_LIMIT_WITH_TASKS} and a page reads at most ${MAX_TASK_READS} attempts (400 naming limit beyond)`,
      ),
      limitParam(),
      tokenParam,
    ],
    responses: {
      200: answer("newest first", page("InstanceSummary")),
      400: failure("bad filter, include, limit or token"),
    },
    handler: (d, _p, e) => listInstances(d, e),
  }),
  route({
    method: "GET",
    path: "/v1/instances/{id}",
    operationId: "getInstance",
    query: [
      queryParam(
        "include",
        enumOf(["attempts"]),
        `attempts: the answer also carries \`attempts\`, every attempt of every task of every round, in task order then attempt number (at most ${MAX_DETAIL_ATTEMPTS}, the newest; \`attemptsOmitted\` counts the others)`,
      ),
    ],
    responses: {
      200: answer("the instance and the current attempt of every task", "Instance"),
      400: failure("bad include"),
      404: failure("no such instance"),
    },
    handler: (d, p, e) => inst.getInstance(d, p.id, e),
  }),
  control("stop", "stopInstance", "kill running tasks, start nothing more; ends STOPPED"),
  control(
    "pause",
    "pauseInstance",
    "pause a RUNNING instance: running tasks finish, nothing new starts (PAUSING → PAUSED)",
  ),
  control("resume", "resumeInstance", "resume a PAUSING or PAUSED instance where it paused"),
  control(
    "rerun",
    "rerunInstance",
    "run a finished instance again from the start, keeping its id (new attempts)",
  ),
  control(
    "recover-failed",
    "recoverFailedInstance",
    "re-run the FAILURE/KILLED tasks of a FAILURE or STOPPED instance and what follows them",
  ),
  route({
    method: "POST",
    path: "/v1/instances/{id}/tasks/{code}/force-success",
    operationId: "forceSuccess",
    summary: "mark the failed latest attempt of a task of a finished instance FORCED_SUCCESS",
    responses: {
      200: answer("the attempt, now FORCED_SUCCESS", "TaskInstance"),
      ...bodyFailures("bad task code, or a field in the body"),
      404: failure("no such instance or task"),
      409: failure("the instance is not FAILURE/STOPPED or the task is not FAILURE/KILLED"),
    },
    handler: (d, p, e) => inst.forceSuccess(d, p.id, p.code, e),
  }),
  route({
    method: "GET",
    path: "/v1/instances/{id}/tasks/{code}/attempts",
    operationId: "listAttempts",
    responses: {
      200: answer(
        "oldest first",
        object({ items: { type: "array", items: ref("TaskInstance") } }, ["items"]),
      ),
      400: failure("bad task code"),
      404: failure("no such instance or task"),
    },
    handler: (d, p) => inst.listAttempts(d, p.id, p.code),
  }),
  route({
    method: "GET",
    path: "/v1/instances/{id}/tasks/{code}/log",
    operationId: "getLog",
    query: [attemptParam, tokenParam, limitParam(1000, 10_000)],
    responses: {
      200: answer(
        "lines in order; nextToken while the attempt runs or more lines exist",
        "LogPage",
      ),
      400: failure("bad task code, attempt, limit or token"),
      404: failure("no such instance, task or attempt"),
    },
    handler: (d, p, e) => inst.getLog(d, p.id, p.code, e),
  }),
  route({
    method: "GET",
    path: "/v1/instances/{id}/tasks/{code}/render",
    operationId: "renderInstanceTask",
    summary:
      "the task's resolved parameters and what it would run, as its current attempt (or ?attempt=N) ran or would run",
    query: [attemptParam],
    responses: {
      200: answer("the rendering", "TaskRendering"),
      400: failure("bad attempt"),
      404: failure("no such instance, or no such task in its workflow version"),
      409: failure("the instance is still waiting for the dispatcher"),
    },
    handler: (d, p, e) => rd.renderInstanceTask(d, p.id, p.code, e),
  }),
  route({
    method: "GET",
    path: "/v1/workflows/{name}/tasks/{code}/render",
    operationId: "renderWorkflowTask",
    summary: "the task's resolved parameters and what it would run in a new run",
    query: [
      queryParam("scheduleTime", iso),
      queryParam("timezone", str),
      queryParam("version", { type: "integer", minimum: 1 }),
    ],
    responses: {
      200: answer("the rendering", "TaskRendering"),
      400: failure("bad scheduleTime, timezone or version, or an unknown query parameter"),
      404: failure("no such workflow, version or task"),
    },
    handler: (d, p, e) => rd.renderWorkflowTask(d, p.name, p.code, e, "GET"),
  }),
  route({
    method: "POST",
    path: "/v1/workflows/{name}/tasks/{code}/render",
    operationId: "renderWorkflowTaskWith",
    summary: "the same, with run parameters",
    body: { schema: ref("RenderRequest"), required: false },
    responses: {
      200: answer("the rendering", "TaskRendering"),
      ...bodyFailures("bad name or invalid body"),
      404: failure("no such workflow, version or task"),
    },
    handler: (d, p, e) => rd.renderWorkflowTask(d, p.name, p.code, e, "POST"),
  }),
  route({
    method: "GET",
    path: "/v1/instances/{id}/explain",
    operationId: "explainInstance",
    summary: "why the instance's tasks are not running (docs/workflows.md)",
    responses: {
      200: answer(
        "what holds the whole instance (reason, message), and every task that waits, was skipped or did not run",
        "InstanceExplanation",
      ),
      404: failure("no such instance"),
    },
    handler: (d, p) => ex.explainInstanceRoute(d, p.id),
  }),
  route({
    method: "GET",
    path: "/v1/instances/{id}/tasks/{code}/explain",
    operationId: "explainTask",
    summary: "why one task is not running, with the facts behind it",
    responses: {
      200: answer("the explanation", "Explanation"),
      400: failure("bad task code"),
      404: failure("no such instance or task"),
    },
    handler: (d, p) => ex.explainTaskRoute(d, p.id, p.code),
  }),
];
