/** Routes of the event triggers and of standalone's events (lib/api/triggers.ts, events.ts). */
import { recentEvents } from "../events.js";
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
import { page, ref, str } from "../schemas/common.js";
import * as tr from "../triggers.js";

/** `POST /v1/triggers/{id}/online|offline`. */
const triggerState = (state: "online" | "offline", operationId: string): Route =>
  route({
    method: "POST",
    path: `/v1/triggers/{id}/${state}`,
    operationId,
    summary: `set the trigger ${state.toUpperCase()} (${state === "online" ? "matching events start runs" : "it starts nothing"})`,
    responses: { 200: answer("the trigger", "Trigger"), 404: failure("no such trigger") },
    handler: (d, p) => tr.setTriggerState(d, p.id, state === "online" ? "ONLINE" : "OFFLINE"),
  });

export const EVENT_ROUTES: readonly Route[] = [
  route({
    method: "POST",
    path: "/v1/triggers",
    operationId: "createTrigger",
    summary: "start a workflow when an event matches an EventBridge pattern",
    body: { schema: ref("TriggerBody"), required: true },
    responses: {
      201: answer(
        "created, with warnings when the pattern can match its own runs",
        "TriggerCreated",
      ),
      ...bodyFailures("invalid pattern, path or body, or no such workflow"),
    },
    handler: (d, _p, e) => tr.createTrigger(d, e),
  }),
  route({
    method: "GET",
    path: "/v1/triggers",
    operationId: "listTriggers",
    query: [limitParam(), tokenParam],
    responses: { 200: answer("triggers", page("Trigger")), 400: failure("bad limit or token") },
    handler: (d, _p, e) => tr.listTriggers(d, e),
  }),
  route({
    method: "GET",
    path: "/v1/triggers/{id}",
    operationId: "getTrigger",
    responses: { 200: answer("the trigger", "Trigger"), 404: failure("no such trigger") },
    handler: (d, p) => tr.getTrigger(d, p.id),
  }),
  triggerState("online", "triggerOnline"),
  triggerState("offline", "triggerOffline"),
  route({
    method: "DELETE",
    path: "/v1/triggers/{id}",
    operationId: "deleteTrigger",
    responses: { 204: answer("deleted"), 404: failure("no such trigger") },
    handler: (d, p) => tr.deleteTrigger(d, p.id),
  }),
  route({
    method: "POST",
    path: "/v1/events",
    operationId: "putEvents",
    summary:
      "deliver PutEvents-shaped entries to the triggers (Source 'shoal' is refused: only Shoal publishes its own events)",
    body: { schema: ref("PutEventsBody"), required: true },
    responses: {
      200: answer("the event ids and the runs each started", "PutEventsResult"),
      ...bodyFailures("invalid entries"),
    },
    handler: (d, _p, e) => tr.putEvents(d, e),
  }),
  route({
    method: "GET",
    path: "/v1/events/recent",
    operationId: "recentEvents",
    summary:
      "standalone: the newest events on the in-process bus (Shoal's state-change events and POST /v1/events entries), EventBridge envelopes, newest first",
    query: [limitParam(100, 1000), queryParam("detailType", str), queryParam("source", str)],
    responses: {
      200: answer("`{items: [event]}` (docs/events.md has the detail schemas)", "RecentEvents"),
      400: failure("bad limit or unknown query parameter"),
      404: failure("not standalone: on AWS the events are on the EventBridge bus"),
    },
    handler: (d, _p, e) => recentEvents(d, e),
  }),
];
