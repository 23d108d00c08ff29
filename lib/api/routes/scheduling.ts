/** Routes of the schedules, their fire ledger and the backfills (lib/api/schedules.ts, backfills.ts). */
import * as bf from "../backfills.js";
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
import * as sc from "../schedules.js";
import { enumOf, iso, page, ref, str } from "../schemas/common.js";

/** `POST /v1/schedules/{id}/online|offline`. */
const scheduleState = (state: "online" | "offline", operationId: string): Route =>
  route({
    method: "POST",
    path: `/v1/schedules/{id}/${state}`,
    operationId,
    summary: `set the schedule ${state.toUpperCase()}`,
    responses: {
      200: answer("the schedule", "Schedule"),
      ...bodyFailures("a field in the body"),
      404: failure("no such schedule"),
    },
    handler: (d, p, e) =>
      sc.setScheduleState(d, p.id, state === "online" ? "ONLINE" : "OFFLINE", e),
  });

/** `POST /v1/backfills/{id}/pause|resume|cancel`. */
const backfillControl = (verb: "pause" | "resume" | "cancel"): Route =>
  route({
    method: "POST",
    path: `/v1/backfills/{id}/${verb}`,
    operationId: `${verb}Backfill`,
    responses: {
      202: answer("accepted", "Backfill"),
      ...bodyFailures("a field in the body"),
      404: failure("no such backfill"),
      409: failure("its state does not allow it"),
    },
    handler: (d, p, e) => bf.controlBackfill(d, p.id, verb, e),
  });

export const SCHEDULING_ROUTES: readonly Route[] = [
  route({
    method: "POST",
    path: "/v1/schedules",
    operationId: "createSchedule",
    summary: "create a cron, rate or one-time schedule of a workflow",
    body: { schema: ref("ScheduleBody"), required: true },
    responses: {
      201: answer("created, with its id and nextFireTime", "ScheduleWritten"),
      ...bodyFailures("invalid body, expression or time zone, or no such workflow"),
    },
    handler: (d, _p, e) => sc.createSchedule(d, e),
  }),
  route({
    method: "GET",
    path: "/v1/schedules",
    operationId: "listSchedules",
    query: [queryParam("workflow", str), limitParam(), tokenParam],
    responses: {
      200: answer("newest first", page("Schedule")),
      400: failure("bad limit or token"),
    },
    handler: (d, _p, e) => sc.listSchedules(d, e),
  }),
  route({
    method: "GET",
    path: "/v1/schedules/{id}",
    operationId: "getSchedule",
    responses: { 200: answer("the schedule", "Schedule"), 404: failure("no such schedule") },
    handler: (d, p) => sc.getSchedule(d, p.id),
  }),
  route({
    method: "PUT",
    path: "/v1/schedules/{id}",
    operationId: "putSchedule",
    body: { schema: ref("ScheduleBody"), required: true },
    responses: {
      200: answer("replaced; the next fire is computed from now", "ScheduleWritten"),
      ...bodyFailures("invalid body, expression or time zone, or no such workflow"),
      404: failure("no such schedule"),
      409: failure("changed concurrently"),
    },
    handler: (d, p, e) => sc.putSchedule(d, p.id, e),
  }),
  route({
    method: "DELETE",
    path: "/v1/schedules/{id}",
    operationId: "deleteSchedule",
    responses: { 204: answer("deleted"), 404: failure("no such schedule") },
    handler: (d, p) => sc.deleteSchedule(d, p.id),
  }),
  scheduleState("online", "scheduleOnline"),
  scheduleState("offline", "scheduleOffline"),
  route({
    method: "GET",
    path: "/v1/schedules/{id}/preview",
    operationId: "previewSchedule",
    query: [queryParam("count", { type: "integer", minimum: 1, maximum: 1000, default: 10 })],
    responses: {
      200: answer("the next nominal fire times", "SchedulePreview"),
      400: failure("bad count"),
      404: failure("no such schedule"),
    },
    handler: (d, p, e) => sc.previewSchedule(d, p.id, e),
  }),
  route({
    method: "GET",
    path: "/v1/schedules/{id}/fires",
    operationId: "listFires",
    summary: "the fire ledger: every nominal time and what was decided",
    query: [queryParam("from", iso), queryParam("to", iso), limitParam(), tokenParam],
    responses: {
      200: answer(
        "oldest first; also after the schedule was deleted",
        page("Fire", {
          scheduleDeleted: {
            type: "boolean",
            description: "present (true) when the schedule itself was deleted",
          },
        }),
      ),
      400: failure("bad from, to, limit or token"),
      404: failure("no such schedule, and no fire of that id recorded"),
    },
    handler: (d, p, e) => sc.listFires(d, p.id, e),
  }),
  route({
    method: "POST",
    path: "/v1/workflows/{name}/backfill",
    operationId: "createBackfill",
    summary: "run a workflow for past nominal times (complement data)",
    body: { schema: ref("BackfillBody"), required: true },
    responses: {
      200: answer("dryRun: the nominal times it would run", "BackfillDryRun"),
      202: answer("started", "Backfill"),
      ...bodyFailures("bad name, invalid body, or no nominal time in the range"),
      404: failure("no such workflow"),
      409: failure("the workflow is OFFLINE"),
      413: failure("the body is too large, or the range holds too many nominal times"),
    },
    handler: (d, p, e) => bf.createBackfill(d, p.name, e),
  }),
  route({
    method: "GET",
    path: "/v1/backfills",
    operationId: "listBackfills",
    query: [
      queryParam("workflow", str),
      queryParam("state", enumOf(bf.BACKFILL_STATES), PER_PAGE_FILTER),
      limitParam(),
      tokenParam,
    ],
    responses: {
      200: answer("newest first", page("Backfill")),
      400: failure("bad filter, limit or token"),
    },
    handler: (d, _p, e) => bf.listBackfills(d, e),
  }),
  route({
    method: "GET",
    path: "/v1/backfills/{id}",
    operationId: "getBackfill",
    responses: {
      200: answer("the backfill's progress", "Backfill"),
      404: failure("no such backfill"),
    },
    handler: (d, p) => bf.getBackfill(d, p.id),
  }),
  backfillControl("pause"),
  backfillControl("resume"),
  backfillControl("cancel"),
];
