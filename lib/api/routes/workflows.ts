/** Routes of the workflow definitions and their runs (lib/api/workflows.ts, instances.ts). */
import * as inst from "../instances.js";
import {
  answer,
  bodyFailures,
  failure,
  limitParam,
  queryParam,
  type Route,
  route,
  tokenParam,
} from "../route.js";
import { enumOf, page, ref } from "../schemas/common.js";
import { MAX_LIMIT_WITH_SUMMARY } from "../workflow-summary.js";
import * as wf from "../workflows.js";

export const WORKFLOW_ROUTES: readonly Route[] = [
  route({
    method: "GET",
    path: "/v1/workflows",
    operationId: "listWorkflows",
    query: [
      queryParam(
        "include",
        enumOf(["summary"]),
        `summary: each item also carries nextFireAt, nextFireTimezone and lastRuns (two indexed queries per workflow); limit is then at most ${MAX_LIMIT_WITH_SUMMARY} (400 naming limit beyond)`,
      ),
      limitParam(),
      tokenParam,
    ],
    responses: {
      200: answer("page", page("WorkflowListItem")),
      400: failure("bad include, limit or token"),
    },
    handler: (d, _p, e) => wf.listWorkflows(d, e),
  }),
  route({
    method: "PUT",
    path: "/v1/workflows/{name}",
    operationId: "putWorkflow",
    body: { schema: ref("WorkflowDefinition"), required: true, yaml: true },
    responses: {
      200: answer("same as the latest version", "WorkflowVersion"),
      201: answer("new version", "WorkflowVersion"),
      ...bodyFailures("invalid name or definition (details name each problem)"),
      404: failure("a name that does not URI-decode"),
      409: failure("changed concurrently; try again"),
      413: failure("body or field too large, or the definition too large to store"),
      415: failure("content type neither JSON nor YAML"),
    },
    handler: (d, p, e) => wf.putWorkflow(d, p.name, e),
  }),
  route({
    method: "GET",
    path: "/v1/workflows/{name}",
    operationId: "getWorkflow",
    query: [queryParam("version", { type: "integer", minimum: 1 })],
    responses: {
      200: answer("the definition with name, version, releaseState, createdAt", "WorkflowDetail"),
      400: failure("bad name or version"),
      404: failure("no such workflow or version"),
    },
    handler: (d, p, e) => wf.getWorkflow(d, p.name, e),
  }),
  route({
    method: "DELETE",
    path: "/v1/workflows/{name}",
    operationId: "deleteWorkflow",
    responses: {
      204: answer("deleted"),
      400: failure("bad name"),
      404: failure("no such workflow"),
      409: failure("unfinished instances or pending runs"),
    },
    handler: (d, p) => wf.deleteWorkflow(d, p.name),
  }),
  route({
    method: "POST",
    path: "/v1/workflows/{name}/release",
    operationId: "releaseWorkflow",
    body: { schema: ref("ReleaseBody"), required: true },
    responses: {
      200: answer("released", "WorkflowSummary"),
      ...bodyFailures("bad name or state, or an unknown field"),
      404: failure("no such workflow"),
    },
    handler: (d, p, e) => wf.releaseWorkflow(d, p.name, e),
  }),
  route({
    method: "POST",
    path: "/v1/workflows/{name}/runs",
    operationId: "startRun",
    body: { schema: ref("RunRequest"), required: false },
    responses: {
      202: answer("accepted", "RunStarted"),
      ...bodyFailures("bad name or invalid run request"),
      404: failure("no such workflow"),
      409: failure("workflow OFFLINE"),
    },
    handler: (d, p, e) => inst.startRun(d, p.name, e),
  }),
];
