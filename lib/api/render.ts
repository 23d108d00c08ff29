/**
 * `shoal render` over HTTP (Airflow's `tasks render`): a task's resolved parameters and rendered
 * form (lib/tasks/render-task.ts), resolved as the dispatcher resolves them (`taskParams`) and
 * rendered as the worker renders them (`substituteTask`).
 * - `GET /v1/instances/{id}/tasks/{code}/render?attempt=N`: as the task's current attempt (or
 *   attempt N, at most the current one + 1, else 404) of that instance ran or would run: its
 *   startup parameters, the OUT parameters its upstream tasks set so far, its base time and
 *   zone.
 * - `GET|POST /v1/workflows/{name}/tasks/{code}/render`: as a new run would: the definition's
 *   defaults, plus (POST body or GET query) `params`, `scheduleTime` (the base time, years 1970
 *   to 9999; default now), `timezone` (default the workflow's), `version` (default the latest).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { z } from "zod";
import { Dag } from "../core/dag.js";
import { conflict, notFound, validationError } from "../core/errors.js";
import type { TaskDefinition, WorkflowDefinition } from "../core/model.js";
import { ParamError } from "../core/params.js";
import { attemptOf } from "../core/progress.js";
import { params as paramsSchema } from "../core/schema-parts.js";
import { isTimeZone, timeZoneProblem } from "../core/time-zones.js";
import { checkName, parseWithSchema } from "../core/validate.js";
import { getStartCommand } from "../engine/commands.js";
import { baseTimeOf, taskParams, zoneOf } from "../engine/engine-deps.js";
import { withUpstreamOutputs } from "../engine/upstream-outputs.js";
import type { InstanceRecord } from "../store/records.js";
import { renderTask, type TaskRendering } from "../tasks/render-task.js";
import type { ApiDeps } from "./deps.js";
import { asObject, json, parseBody, parsePositiveInt, query, RESOURCE_ID } from "./http.js";
import { iso } from "./present.js";

/** `system.workflow.instance.id` when a workflow task is rendered without an instance. */
export const NO_INSTANCE_ID = "(new instance)";

/** Earliest and latest schedule time rendered: years 1970 to 9999 (UTC), epoch ms. */
const SCHEDULE_TIME_RANGE = [0, Date.UTC(10_000, 0, 1) - 1] as const;

/** Body of `POST /v1/workflows/{name}/tasks/{code}/render` (all optional). */
export const renderSchema = z.strictObject({
  params: paramsSchema.optional(),
  scheduleTime: z.iso
    .datetime({ offset: true, error: "must be an ISO-8601 instant" })
    // Outside it, `$[yyyy]` and `system.biz.date` have no 4-digit year ("00-11231" for year 0).
    .refine(
      (v) => {
        const t = Date.parse(v); // NaN: the format check above reports it
        return Number.isNaN(t) || (t >= SCHEDULE_TIME_RANGE[0] && t <= SCHEDULE_TIME_RANGE[1]);
      },
      { error: "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z" },
    )
    .optional()
    .describe("base time of the time parameters (a schedule's nominal time); default now"),
  timezone: z
    .string()
    .max(64)
    .refine(isTimeZone, { error: (iss) => timeZoneProblem(String(iss.input)) })
    .optional()
    .describe("zone of the time parameters (a schedule's or backfill's); default the workflow's"),
  version: z
    .number()
    .int({ error: "must be a whole number" })
    .min(1, { error: "must be >= 1" })
    .optional(),
});

/** What both endpoints answer: where the rendering stands, and the rendering. */
function answer(
  head: { workflow: string; version: number; instanceId?: string },
  task: TaskDefinition,
  attempt: number,
  baseMs: number,
  zone: string,
  rendering: TaskRendering,
) {
  return {
    ...head,
    task: task.code,
    attempt,
    baseTime: iso(baseMs),
    timezone: zone,
    ...rendering,
  };
}

/** Renders task `index` of `def` for `inst` (a real instance or a would-be one). */
function renderFor(
  inst: InstanceRecord,
  def: WorkflowDefinition,
  dag: Dag,
  index: number,
  attempt: number,
): TaskRendering {
  const task = def.tasks[index] as TaskDefinition;
  const time = { baseMs: baseTimeOf(inst), zone: zoneOf(inst) };
  let resolved: Record<string, string>;
  try {
    resolved = taskParams(inst, { definition: def, dag }, index, attempt);
  } catch (e) {
    if (!(e instanceof ParamError)) throw e;
    // The dispatcher fails the attempt with this before it reaches a worker.
    return { type: task.type, params: {}, unresolved: [], error: e.message };
  }
  return renderTask(task, resolved, time);
}

function taskIndex(def: WorkflowDefinition, code: string, where: string): number {
  const index = def.tasks.findIndex((t) => t.code === code);
  if (index < 0) throw notFound(`task '${code.slice(0, 128)}' is not in ${where}`);
  return index;
}

/** GET /v1/instances/{id}/tasks/{code}/render?attempt=N → 200 rendering. */
export async function renderInstanceTask(
  deps: ApiDeps,
  id: string,
  code: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  if (!RESOURCE_ID.test(id)) throw notFound(`instance '${id.slice(0, 64)}' does not exist`);
  const attemptAsked = parsePositiveInt(query(event).attempt, "attempt");
  const inst = await deps.store.getInstance(id);
  if (!inst) {
    const cmd = await getStartCommand(deps.store, id);
    if (cmd?.state === "PENDING") {
      throw conflict(
        `instance '${id}' is still SUBMITTED (the dispatcher has not created it yet); try again, or render the workflow's task: shoal render ${cmd.workflow} ${code}`,
      );
    }
    throw notFound(`instance '${id}' does not exist`);
  }
  const stored = await deps.store.getDefinition(inst.workflow, inst.version);
  if (!stored) {
    throw notFound(`version ${inst.version} of workflow '${inst.workflow}' no longer exists`);
  }
  const def = stored.definition;
  const index = taskIndex(def, code, `workflow '${inst.workflow}' version ${inst.version}`);
  const current = attemptOf(inst.progress, index);
  // An attempt that ran or runs now, or the next one (what a retry or recover-failed would run).
  if (attemptAsked !== undefined && attemptAsked > current + 1) {
    throw notFound(
      `task '${code}' of instance '${id}' has no attempt ${attemptAsked}: its current attempt is ${current} (attempts 1 to ${current + 1} can be rendered, ${current + 1} being the next one)`,
    );
  }
  const attempt = attemptAsked ?? current;
  const dag = new Dag(def.tasks);
  const withOutputs = await withUpstreamOutputs(deps.store, inst, { dag }, [index]);
  const rendering = renderFor(withOutputs, def, dag, index, attempt);
  return json(
    200,
    answer(
      { instanceId: inst.instanceId, workflow: inst.workflow, version: inst.version },
      def.tasks[index] as TaskDefinition,
      attempt,
      baseTimeOf(inst),
      zoneOf(inst),
      rendering,
    ),
  );
}

/** The request of a workflow render: the POST body, or the GET query (no `params` there). */
function renderRequest(event: APIGatewayProxyEventV2, method: "GET" | "POST") {
  if (method === "POST") return parseWithSchema(renderSchema, asObject(parseBody(event), true));
  const q = query(event);
  const unknown = Object.keys(q).filter(
    (k) => !["scheduleTime", "timezone", "version"].includes(k),
  );
  if (unknown.length > 0) {
    throw validationError(
      unknown.map((k) => ({
        path: k,
        message: `unknown query parameter '${k}' (parameters go in a POST body: {"params": {...}})`,
      })),
    );
  }
  const version = parsePositiveInt(q.version, "version");
  return parseWithSchema(renderSchema, {
    ...(q.scheduleTime !== undefined ? { scheduleTime: q.scheduleTime } : {}),
    ...(q.timezone !== undefined ? { timezone: q.timezone } : {}),
    ...(version !== undefined ? { version } : {}),
  });
}

/** GET|POST /v1/workflows/{name}/tasks/{code}/render → 200 rendering of a would-be run. */
export async function renderWorkflowTask(
  deps: ApiDeps,
  name: string,
  code: string,
  event: APIGatewayProxyEventV2,
  method: "GET" | "POST",
): Promise<APIGatewayProxyStructuredResultV2> {
  checkName(name, "name");
  const req = renderRequest(event, method);
  const head = await deps.store.getWorkflowHead(name);
  if (!head || head.deleted) throw notFound(`workflow '${name}' does not exist`);
  const version = req.version ?? head.latestVersion;
  const stored =
    version <= head.latestVersion ? await deps.store.getDefinition(name, version) : undefined;
  if (!stored) {
    throw notFound(
      `workflow '${name}' has no version ${version} (latest is ${head.latestVersion})`,
    );
  }
  const def = stored.definition;
  const index = taskIndex(def, code, `workflow '${name}' version ${version}`);
  const now = deps.now();
  const scheduleTime = req.scheduleTime !== undefined ? Date.parse(req.scheduleTime) : undefined;
  const timezone = req.timezone ?? def.timezone;
  // The instance a run started now (or by a schedule at scheduleTime) would have.
  const inst: InstanceRecord = {
    instanceId: NO_INSTANCE_ID,
    workflow: name,
    version,
    state: "SUBMITTED",
    priority: def.priority,
    failureStrategy: def.failureStrategy,
    commandType: scheduleTime !== undefined ? "SCHEDULED" : "START_WORKFLOW",
    params: req.params ?? {},
    dryRun: false,
    taskScope: "DOWNSTREAM",
    createdAt: now,
    ...(scheduleTime !== undefined ? { scheduleTime } : {}),
    ...(timezone ? { timezone } : {}),
    progress: { slots: "", attempts: {} },
    rev: 0,
  };
  const rendering = renderFor(inst, def, new Dag(def.tasks), index, 1);
  return json(
    200,
    answer(
      { workflow: name, version },
      def.tasks[index] as TaskDefinition,
      1,
      baseTimeOf(inst),
      zoneOf(inst),
      rendering,
    ),
  );
}
