/**
 * Routes API Gateway HTTP API (payload 2.0) events to the endpoint functions and turns every
 * client mistake into the contract's 4xx error body. Only a bug gives a 500, with no details.
 */
import { notFound, ShoalError } from "../core/errors.js";
import type { HttpApiEvent, HttpApiResult } from "../engine/lambda-events.js";
import * as bf from "./backfills.js";
import type { ApiDeps } from "./deps.js";
import { recentEvents } from "./events.js";
import * as ex from "./explain.js";
import { errorResult, json } from "./http.js";
import * as inst from "./instances.js";
import { openApiDocument } from "./openapi.js";
import * as rd from "./render.js";
import * as sc from "./schedules.js";
import * as tg from "./task-groups.js";
import * as tr from "./triggers.js";
import * as wf from "./workflows.js";

type Handler = (deps: ApiDeps, params: string[], event: HttpApiEvent) => Promise<HttpApiResult>;

const ROUTES: Array<[string, RegExp, Handler]> = [
  ["GET", /^\/v1\/health$/, async (d) => json(200, { status: "ok", version: d.version })],
  ["GET", /^\/v1\/openapi\.json$/, async (d) => json(200, openApiDocument(d.version))],
  ["GET", /^\/v1\/workflows$/, (d, _p, e) => wf.listWorkflows(d, e)],
  ["PUT", /^\/v1\/workflows\/([^/]+)$/, (d, [n], e) => wf.putWorkflow(d, n as string, e)],
  ["GET", /^\/v1\/workflows\/([^/]+)$/, (d, [n], e) => wf.getWorkflow(d, n as string, e)],
  ["DELETE", /^\/v1\/workflows\/([^/]+)$/, (d, [n]) => wf.deleteWorkflow(d, n as string)],
  [
    "POST",
    /^\/v1\/workflows\/([^/]+)\/release$/,
    (d, [n], e) => wf.releaseWorkflow(d, n as string, e),
  ],
  ["POST", /^\/v1\/workflows\/([^/]+)\/runs$/, (d, [n], e) => inst.startRun(d, n as string, e)],
  ["GET", /^\/v1\/instances$/, (d, _p, e) => inst.listInstances(d, e)],
  ["GET", /^\/v1\/instances\/([^/]+)$/, (d, [i]) => inst.getInstance(d, i as string)],
  [
    "POST",
    /^\/v1\/instances\/([^/]+)\/(stop|pause|resume|rerun|recover-failed)$/,
    (d, [i, verb], e) => inst.controlInstance(d, i as string, verb as inst.ControlVerb, e),
  ],
  [
    "POST",
    /^\/v1\/instances\/([^/]+)\/tasks\/([^/]+)\/force-success$/,
    (d, [i, c], e) => inst.forceSuccess(d, i as string, c as string, e),
  ],
  ["POST", /^\/v1\/schedules$/, (d, _p, e) => sc.createSchedule(d, e)],
  ["GET", /^\/v1\/schedules$/, (d, _p, e) => sc.listSchedules(d, e)],
  ["GET", /^\/v1\/schedules\/([^/]+)$/, (d, [i]) => sc.getSchedule(d, i as string)],
  ["PUT", /^\/v1\/schedules\/([^/]+)$/, (d, [i], e) => sc.putSchedule(d, i as string, e)],
  ["DELETE", /^\/v1\/schedules\/([^/]+)$/, (d, [i]) => sc.deleteSchedule(d, i as string)],
  [
    "POST",
    /^\/v1\/schedules\/([^/]+)\/(online|offline)$/,
    (d, [i, s], e) =>
      sc.setScheduleState(d, i as string, (s as string).toUpperCase() as "ONLINE" | "OFFLINE", e),
  ],
  [
    "GET",
    /^\/v1\/schedules\/([^/]+)\/preview$/,
    (d, [i], e) => sc.previewSchedule(d, i as string, e),
  ],
  ["GET", /^\/v1\/schedules\/([^/]+)\/fires$/, (d, [i], e) => sc.listFires(d, i as string, e)],
  [
    "POST",
    /^\/v1\/workflows\/([^/]+)\/backfill$/,
    (d, [n], e) => bf.createBackfill(d, n as string, e),
  ],
  ["GET", /^\/v1\/backfills$/, (d, _p, e) => bf.listBackfills(d, e)],
  ["GET", /^\/v1\/backfills\/([^/]+)$/, (d, [i]) => bf.getBackfill(d, i as string)],
  [
    "POST",
    /^\/v1\/backfills\/([^/]+)\/(pause|resume|cancel)$/,
    (d, [i, v], e) => bf.controlBackfill(d, i as string, v as "pause" | "resume" | "cancel", e),
  ],
  ["POST", /^\/v1\/triggers$/, (d, _p, e) => tr.createTrigger(d, e)],
  ["GET", /^\/v1\/triggers$/, (d, _p, e) => tr.listTriggers(d, e)],
  ["GET", /^\/v1\/triggers\/([^/]+)$/, (d, [i]) => tr.getTrigger(d, i as string)],
  ["DELETE", /^\/v1\/triggers\/([^/]+)$/, (d, [i]) => tr.deleteTrigger(d, i as string)],
  ["POST", /^\/v1\/events$/, (d, _p, e) => tr.putEvents(d, e)],
  ["GET", /^\/v1\/events\/recent$/, (d, _p, e) => recentEvents(d, e)],
  ["GET", /^\/v1\/task-groups$/, (d, _p, e) => tg.listTaskGroups(d.taskGroups, d.now, e)],
  [
    "PUT",
    /^\/v1\/task-groups\/([^/]+)$/,
    (d, [n], e) => tg.putTaskGroup(d.taskGroups, d.now, n as string, e),
  ],
  [
    "GET",
    /^\/v1\/task-groups\/([^/]+)$/,
    (d, [n]) => tg.getTaskGroup(d.taskGroups, d.now, n as string),
  ],
  [
    "DELETE",
    /^\/v1\/task-groups\/([^/]+)$/,
    (d, [n]) => tg.deleteTaskGroup(d.taskGroups, d.now, n as string),
  ],
  [
    "GET",
    /^\/v1\/instances\/([^/]+)\/tasks\/([^/]+)\/attempts$/,
    (d, [i, c]) => inst.listAttempts(d, i as string, c as string),
  ],
  [
    "GET",
    /^\/v1\/instances\/([^/]+)\/tasks\/([^/]+)\/log$/,
    (d, [i, c], e) => inst.getLog(d, i as string, c as string, e),
  ],
  [
    "GET",
    /^\/v1\/instances\/([^/]+)\/tasks\/([^/]+)\/render$/,
    (d, [i, c], e) => rd.renderInstanceTask(d, i as string, c as string, e),
  ],
  [
    "GET",
    /^\/v1\/workflows\/([^/]+)\/tasks\/([^/]+)\/render$/,
    (d, [n, c], e) => rd.renderWorkflowTask(d, n as string, c as string, e, "GET"),
  ],
  [
    "POST",
    /^\/v1\/workflows\/([^/]+)\/tasks\/([^/]+)\/render$/,
    (d, [n, c], e) => rd.renderWorkflowTask(d, n as string, c as string, e, "POST"),
  ],
  [
    "GET",
    /^\/v1\/instances\/([^/]+)\/explain$/,
    (d, [i]) => ex.explainInstanceRoute(d, i as string),
  ],
  [
    "GET",
    /^\/v1\/instances\/([^/]+)\/tasks\/([^/]+)\/explain$/,
    (d, [i, c]) => ex.explainTaskRoute(d, i as string, c as string),
  ],
];

/** Handles one API request. Never throws. */
export async function handleApiEvent(deps: ApiDeps, event: HttpApiEvent): Promise<HttpApiResult> {
  const method = event.requestContext?.http?.method?.toUpperCase() ?? "GET";
  const path = (event.rawPath || "/").replace(/\/+$/, "") || "/";
  try {
    let pathMatched = false;
    for (const [m, pattern, handler] of ROUTES) {
      const match = pattern.exec(path);
      if (!match) continue;
      pathMatched = true;
      if (m !== method) continue;
      let params: string[];
      try {
        params = match.slice(1).map((p) => decodeURIComponent(p));
      } catch {
        throw notFound(`no resource at ${path}`);
      }
      return await handler(deps, params, event);
    }
    if (pathMatched) throw new ShoalError("NotFound", `${method} is not supported on ${path}`);
    throw notFound(`no endpoint ${method} ${path}`);
  } catch (e) {
    if (e instanceof ShoalError) return errorResult(e);
    deps.log?.("api: internal error", { method, path, error: String((e as Error)?.stack ?? e) });
    return json(500, {
      error: { code: "InternalError", message: "internal error; see the server log" },
    });
  }
}
