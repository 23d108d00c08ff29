/** Routes of the task groups (lib/api/task-groups.ts). */
import {
  answer,
  bodyFailures,
  failure,
  limitParam,
  type Route,
  route,
  tokenParam,
} from "../route.js";
import { page, ref } from "../schemas/common.js";
import * as tg from "../task-groups.js";

export const TASK_GROUP_ROUTES: readonly Route[] = [
  route({
    method: "GET",
    path: "/v1/task-groups",
    operationId: "listTaskGroups",
    query: [limitParam(), tokenParam],
    responses: {
      200: answer("task groups by name", page("TaskGroup")),
      400: failure("bad limit or token"),
    },
    handler: (d, _p, e) => tg.listTaskGroups(d.taskGroups, d.now, e),
  }),
  route({
    method: "PUT",
    path: "/v1/task-groups/{name}",
    operationId: "putTaskGroup",
    summary: "create or change a task group (a concurrency limit shared across workflows)",
    body: { schema: ref("TaskGroupBody"), required: true },
    responses: {
      200: answer("changed or unchanged", "TaskGroup"),
      201: answer("created", "TaskGroup"),
      ...bodyFailures("bad name or invalid body"),
      404: failure("a name that does not URI-decode"),
    },
    handler: (d, p, e) => tg.putTaskGroup(d.taskGroups, d.now, p.name, e),
  }),
  route({
    method: "GET",
    path: "/v1/task-groups/{name}",
    operationId: "getTaskGroup",
    responses: {
      200: answer("the group and its counts", "TaskGroup"),
      400: failure("bad name"),
      404: failure("no such task group"),
    },
    handler: (d, p) => tg.getTaskGroup(d.taskGroups, d.now, p.name),
  }),
  route({
    method: "DELETE",
    path: "/v1/task-groups/{name}",
    operationId: "deleteTaskGroup",
    responses: {
      204: answer("deleted"),
      400: failure("bad name"),
      404: failure("no such task group"),
      409: failure("a slot is held or a task waits"),
    },
    handler: (d, p) => tg.deleteTaskGroup(d.taskGroups, d.now, p.name),
  }),
];
