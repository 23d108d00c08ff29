/**
 * Task group endpoints: create/change, read, list and delete DolphinScheduler-style task groups
 * (a named concurrency limit shared by every task that names it). Shapes follow the conventions
 * of docs/api.md "Conventions": ISO-8601 times, `items` + `nextToken` lists, errors with field paths.
 *
 * - `PUT /v1/task-groups/{name}` body `{"capacity": 1..1000, "description"?}` → 201 created,
 *   200 changed or equal (a PUT replaces: an omitted description is removed).
 * - `GET /v1/task-groups?limit=&nextToken=` → `{items, nextToken?}`, by name.
 * - `GET /v1/task-groups/{name}` → the group, 404 unknown.
 * - `DELETE /v1/task-groups/{name}` → 204; 409 while a slot is held or a task waits; 404 unknown.
 */

import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { z } from "zod";
import { conflict, notFound, RequestError, validationError } from "../core/errors.js";
import { TASK_GROUP_CAPACITY } from "../core/task-group-limits.js";
import { checkName, formatPath, LIMITS } from "../core/validate.js";
import type { TaskGroupRecord, TaskGroupStore } from "../store/task-groups.js";
import { asObject, json, parseBody, parseLimit, query } from "./http.js";
import { iso } from "./present.js";

const CAPACITY_RULE = `must be a whole number from ${TASK_GROUP_CAPACITY.min} to ${TASK_GROUP_CAPACITY.max}`;

/** Schema of the body of `PUT /v1/task-groups/{name}` (also feeds the OpenAPI document). */
export const taskGroupSchema = z.strictObject({
  capacity: z
    .number({ error: CAPACITY_RULE })
    .int({ error: CAPACITY_RULE })
    .min(TASK_GROUP_CAPACITY.min, { error: CAPACITY_RULE })
    .max(TASK_GROUP_CAPACITY.max, { error: CAPACITY_RULE }),
  description: z
    .string({ error: "must be a string" })
    .max(LIMITS.descriptionChars, {
      error: `must be at most ${LIMITS.descriptionChars} characters`,
    })
    .optional(),
});

/** The body of `PUT /v1/task-groups/{name}`. */
export type TaskGroupBody = z.infer<typeof taskGroupSchema>;

/** What every task group endpoint answers with (times ISO-8601). */
export interface TaskGroupView {
  name: string;
  capacity: number;
  description?: string;
  /** Slots held now (may exceed capacity for a while after it was lowered). */
  used: number;
  /** Tasks queued for a slot. */
  waiting: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * Parses a PUT body. @throws RequestError 400 naming each field (`capacity` and its rule, unknown
 * fields one by one), 413 when the only problem is a description that is too long.
 */
export function parseTaskGroupBody(body: unknown): TaskGroupBody {
  const parsed = taskGroupSchema.safeParse(asObject(body));
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((k) => ({
          path: formatPath([...issue.path, k]),
          message: `unknown field '${k}'`,
        }))
      : [{ path: formatPath(issue.path), message: issue.message }],
  );
  const tooLarge = parsed.error.issues.every((i) => i.code === "too_big" && i.origin === "string");
  if (tooLarge && details[0]) {
    throw new RequestError("PayloadTooLarge", `${details[0].path}: ${details[0].message}`, details);
  }
  throw validationError(details);
}

async function view(store: TaskGroupStore, g: TaskGroupRecord): Promise<TaskGroupView> {
  const { used, waiting } = await store.counts(g.name);
  return {
    name: g.name,
    capacity: g.capacity,
    ...(g.description !== undefined ? { description: g.description } : {}),
    used,
    waiting,
    createdAt: iso(g.createdAt) as string,
    updatedAt: iso(g.updatedAt) as string,
  };
}

/**
 * `PUT /v1/task-groups/{name}`: 201 with the new group, 200 with the changed or unchanged one
 * (an equal body writes nothing). Lowering capacity takes no slot away: holders above it keep
 * theirs until they finish, and no new slot is granted until fewer than `capacity` are held.
 * Raising it lets waiters in at the next grant (a release, or the sweeper's reconcile).
 * @param now clock, epoch ms.
 * @throws RequestError 400 (name, body), 413 (description too long), 415 (content type).
 */
export async function putTaskGroup(
  store: TaskGroupStore,
  now: () => number,
  name: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  checkName(name, "name");
  const body = parseTaskGroupBody(parseBody(event));
  const existing = await store.getGroup(name);
  if (
    existing &&
    existing.capacity === body.capacity &&
    existing.description === body.description
  ) {
    return json(200, await view(store, existing));
  }
  const t = now();
  const { created, group } = await store.putGroup({
    name,
    capacity: body.capacity,
    ...(body.description !== undefined ? { description: body.description } : {}),
    createdAt: existing?.createdAt ?? t,
    updatedAt: t,
  });
  return json(created ? 201 : 200, await view(store, group));
}

/** `GET /v1/task-groups/{name}`. @throws RequestError 400 (bad name), 404 (unknown). */
export async function getTaskGroup(
  store: TaskGroupStore,
  _now: () => number,
  name: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  checkName(name, "name");
  const g = await store.getGroup(name);
  if (!g) throw notFound(`task group '${name}' does not exist`);
  return json(200, await view(store, g));
}

/**
 * `GET /v1/task-groups?limit=&nextToken=`: groups by name, each with its counts.
 * @throws RequestError 400 for a bad limit (1..200) or token.
 */
export async function listTaskGroups(
  store: TaskGroupStore,
  _now: () => number,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const q = query(event);
  const page = await store.listGroups(parseLimit(q.limit), q.nextToken || undefined);
  const items = await Promise.all(page.items.map((g) => view(store, g)));
  return json(200, { items, ...(page.nextToken ? { nextToken: page.nextToken } : {}) });
}

/**
 * `DELETE /v1/task-groups/{name}`: 204 once deleted.
 * @throws RequestError 404 (unknown), 409 while a slot is held or a task waits (or a concurrent
 *   PUT changed it meanwhile).
 */
export async function deleteTaskGroup(
  store: TaskGroupStore,
  now: () => number,
  name: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  checkName(name, "name");
  const result = await store.deleteGroup(name, now());
  switch (result) {
    case "deleted":
      return { statusCode: 204 };
    case "not-found":
      throw notFound(`task group '${name}' does not exist`);
    case "slot-held":
      throw conflict(`task group '${name}' has tasks holding a slot; wait until they finish`);
    case "waiting":
      throw conflict(`task group '${name}' has tasks waiting for a slot; stop them first`);
    case "changed":
      throw conflict(`task group '${name}' is being changed concurrently; try again`);
  }
}
