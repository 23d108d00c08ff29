/**
 * GET /v1/instances (docs/api.md "GET /v1/instances: list instances"): a page of instance
 * summaries, newest first, each with its progress counts and, with `include=tasks`, the state of
 * the current attempt of each of its tasks (what the console's list and Grid show).
 *
 * What a page costs: one Query of a list index, then one BatchGetItem per 100 items for the
 * progress (the indexes do not carry it), and with `include=tasks` one BatchGetItem per 100
 * current attempts (their keys come from the progress, so no Query per instance) plus a read of
 * each distinct definition version not yet in the process's cache.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { z } from "zod";
import { currentAttemptCandidates } from "../core/current-attempts.js";
import { validationError } from "../core/errors.js";
import { INSTANCE_STATES, type TaskState } from "../core/model.js";
import type { Progress } from "../core/progress.js";
import { RUN_TYPES } from "../core/run-type.js";
import { checkName } from "../core/validate.js";
import type { InstanceSummaryRecord } from "../store/records.js";
import type { TaskAttemptKey } from "../store/store.js";
import type { ApiDeps } from "./deps.js";
import { json, parseLimit, query } from "./http.js";
import { instanceDefinition } from "./instance-definition.js";
import { instanceSummary, type TaskCell } from "./present.js";

/** Largest `limit` with `include=tasks`. */
export const MAX_LIMIT_WITH_TASKS = 100;
/** Most task attempts one `include=tasks` page reads (50 BatchGetItem requests). */
export const MAX_TASK_READS = 5000;
/** Longest `q`: an instance id is at most 64 characters. */
const MAX_Q = 64;

const isoInstant = z.iso.datetime({ offset: true });

/**
 * An ISO-8601 instant with an offset (`Z` or `±hh:mm`) from the query, as epoch ms.
 * @throws RequestError ValidationError naming `field`.
 */
function parseInstant(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!isoInstant.safeParse(value).success || Number.isNaN(ms)) {
    throw validationError([
      { path: field, message: "must be an ISO-8601 instant, e.g. 2024-05-01T00:00:00Z" },
    ]);
  }
  return ms;
}

/**
 * `q`: a case-insensitive substring of the instance id, lowercased (ids are lowercase UUIDs).
 * Empty means no search (an empty search box).
 * @throws RequestError ValidationError naming `q` for characters no id has, or over 64 of them.
 */
function parseIdSearch(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (value.length > MAX_Q || !/^[A-Za-z0-9-]+$/.test(value)) {
    throw validationError([
      { path: "q", message: `must be 1 to ${MAX_Q} letters, digits or '-' (part of an id)` },
    ]);
  }
  return value.toLowerCase();
}

/** `include`: only `tasks` is known. @throws RequestError ValidationError naming `include`. */
function parseInclude(value: string | undefined): boolean {
  if (value === undefined) return false;
  if (value !== "tasks") {
    throw validationError([{ path: "include", message: "must be 'tasks'" }]);
  }
  return true;
}

/**
 * The current attempt of every task of each item that started in its current round, in its
 * definition's task order; no entry for an item whose progress or definition is gone.
 * @throws RequestError ValidationError naming `limit` when the page would read more than
 *   {@link MAX_TASK_READS} attempts.
 */
async function currentTaskCells(
  deps: ApiDeps,
  items: readonly InstanceSummaryRecord[],
  progress: ReadonlyMap<string, Progress>,
): Promise<Map<string, TaskCell[]>> {
  const versions = new Map<string, Promise<readonly string[] | undefined>>();
  const codesOf = (i: InstanceSummaryRecord) => {
    const key = `${i.workflow}\u0000${i.version}`;
    let codes = versions.get(key);
    if (!codes) {
      codes = instanceDefinition(deps, i.workflow, i.version).then((d) =>
        d?.definition.tasks.map((t) => t.code),
      );
      versions.set(key, codes);
    }
    return codes;
  };
  // Per item: by task index, the attempts that may hold its current state (best first).
  const plans: { id: string; codes: readonly string[]; candidates: number[][] }[] = [];
  const keys: TaskAttemptKey[] = [];
  // The definitions read at once (each distinct version once), not one after another.
  const allCodes = await Promise.all(items.map(codesOf));
  for (const [n, i] of items.entries()) {
    const p = progress.get(i.instanceId);
    const codes = allCodes[n];
    if (!p || !codes) continue;
    const candidates = codes.map((_, index) => currentAttemptCandidates(p, index));
    plans.push({ id: i.instanceId, codes, candidates });
    for (const [index, code] of codes.entries()) {
      for (const attempt of candidates[index] ?? []) {
        keys.push({ instanceId: i.instanceId, code, attempt });
      }
    }
  }
  if (keys.length > MAX_TASK_READS) {
    throw validationError([
      {
        path: "limit",
        message: `with include=tasks this page would read ${keys.length} task attempts, more than ${MAX_TASK_READS}: ask a smaller limit`,
      },
    ]);
  }
  const found = new Map<string, TaskState>();
  for (const t of await deps.store.getTaskStates(keys)) {
    found.set(`${t.instanceId}\u0000${t.code}\u0000${t.attempt}`, t.state);
  }
  const out = new Map<string, TaskCell[]>();
  for (const { id, codes, candidates } of plans) {
    const cells: TaskCell[] = [];
    for (const [index, code] of codes.entries()) {
      for (const attempt of candidates[index] ?? []) {
        const state = found.get(`${id}\u0000${code}\u0000${attempt}`);
        if (state) {
          cells.push({ code, state, attempt });
          break;
        }
      }
    }
    out.set(id, cells);
  }
  return out;
}

/**
 * GET /v1/instances → 200 `{items, nextToken?}`.
 * @throws RequestError ValidationError naming the bad query parameter (workflow, state,
 *   runType, scheduledAfter, scheduledBefore, q, include, limit, nextToken).
 */
export async function listInstances(
  deps: ApiDeps,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const q = query(event);
  if (q.workflow !== undefined) checkName(q.workflow, "workflow");
  if (q.state !== undefined && !(INSTANCE_STATES as readonly string[]).includes(q.state)) {
    throw validationError([
      { path: "state", message: `must be one of ${INSTANCE_STATES.join(", ")}` },
    ]);
  }
  if (q.runType !== undefined && !(RUN_TYPES as readonly string[]).includes(q.runType)) {
    throw validationError([{ path: "runType", message: `must be one of ${RUN_TYPES.join(", ")}` }]);
  }
  const after = parseInstant(q.scheduledAfter, "scheduledAfter");
  const before = parseInstant(q.scheduledBefore, "scheduledBefore");
  if (after !== undefined && before !== undefined && before <= after) {
    throw validationError([
      { path: "scheduledBefore", message: "must be later than scheduledAfter" },
    ]);
  }
  const idContains = parseIdSearch(q.q);
  const withTasks = parseInclude(q.include);
  const limit = parseLimit(q.limit, 50, withTasks ? MAX_LIMIT_WITH_TASKS : 200);
  const page = await deps.store.listInstances({
    ...(q.workflow !== undefined ? { workflow: q.workflow } : {}),
    ...(q.state !== undefined ? { state: q.state } : {}),
    ...(q.runType !== undefined ? { runType: q.runType } : {}),
    ...(after !== undefined ? { scheduledAfter: after } : {}),
    ...(before !== undefined ? { scheduledBefore: before } : {}),
    ...(idContains !== undefined ? { idContains } : {}),
    limit,
    ...(q.nextToken ? { nextToken: q.nextToken } : {}),
  });
  const progress =
    page.items.length > 0
      ? await deps.store.getInstancesProgress(page.items.map((i) => i.instanceId))
      : new Map<string, Progress>();
  const tasks = withTasks ? await currentTaskCells(deps, page.items, progress) : undefined;
  return json(200, {
    items: page.items.map((i) =>
      instanceSummary(i, { progress: progress.get(i.instanceId), tasks: tasks?.get(i.instanceId) }),
    ),
    ...(page.nextToken ? { nextToken: page.nextToken } : {}),
  });
}
