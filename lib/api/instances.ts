/** Run and instance endpoints (docs/api.md "Workflow definitions: runs" and "Instances"). */
import { randomUUID } from "node:crypto";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { currentAttemptCandidates } from "../core/current-attempts.js";
import { conflict, notFound, validationError } from "../core/errors.js";
import { deterministicId } from "../core/ids.js";
import {
  type CommandType,
  type InstanceState,
  isFinalInstanceState,
  isFinalTaskState,
  isWorkerTaskType,
} from "../core/model.js";
import { forceSuccessProgress } from "../core/progress.js";
import { checkName, parseRunRequest } from "../core/validate.js";
import {
  controlCommand,
  getStartCommand,
  startCommand,
  submitCommand,
} from "../engine/commands.js";
import { isHaltCommand, submitHalt } from "../engine/halt-gate.js";
import type { CommandRecord, InstanceRecord, TaskInstanceRecord } from "../store/records.js";
import { decisionLog } from "./decision-log.js";
import type { ApiDeps } from "./deps.js";
import {
  asObject,
  json,
  onlyFields,
  parseBody,
  parseLimit,
  parsePositiveInt,
  query,
  RESOURCE_ID,
} from "./http.js";
import { definitionGone, instanceDefinition, taskIndexOf } from "./instance-definition.js";
import { instanceDetail, type LogLink, taskInstance } from "./present.js";

function checkInstanceId(id: string): string {
  if (!RESOURCE_ID.test(id)) throw notFound(`instance '${id.slice(0, 64)}' does not exist`);
  return id;
}

/** Links to the logs of worker tasks (logic tasks write none), when the log store has links. */
function logLink(deps: ApiDeps): LogLink | undefined {
  const url = deps.logs.url?.bind(deps.logs);
  if (!url) return undefined;
  return (t) =>
    isWorkerTaskType(t.type)
      ? url({ workflow: t.workflow, instanceId: t.instanceId, code: t.code, attempt: t.attempt })
      : undefined;
}

/** POST /v1/workflows/{name}/runs → 202 `{instanceId, workflow, version, state}`. */
export async function startRun(
  deps: ApiDeps,
  name: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  checkName(name, "name");
  const body = asObject(parseBody(event), true);
  const head = await deps.store.getWorkflowHead(name);
  if (!head || head.deleted) throw notFound(`workflow '${name}' does not exist`);
  const stored = await deps.store.getDefinition(name, head.latestVersion);
  if (!stored) throw notFound(`workflow '${name}' has no definition`);
  const run = parseRunRequest(body, stored.definition);
  // Resolved now, so the run's settings show before the dispatcher takes it.
  run.priority ??= stored.definition.priority;
  run.failureStrategy ??= stored.definition.failureStrategy;
  if (head.releaseState !== "ONLINE") {
    throw conflict(`workflow '${name}' is OFFLINE; release it ONLINE to run it`);
  }
  const instanceId = run.idempotencyKey
    ? deterministicId(`${name}\u0000${run.idempotencyKey}`)
    : randomUUID();
  const origin = { commandType: "START_WORKFLOW" } as const;
  const cmd = startCommand(instanceId, name, head.latestVersion, run, origin, deps.now());
  // A failed signal is sent again by the sweeper; a repeated request signals nothing.
  if (!(await submitCommand(deps, cmd, "api"))) {
    // Same idempotency key: answer with the instance it started.
    const existing = await deps.store.getCommand(cmd.commandId);
    const inst = await deps.store.getInstance(instanceId);
    return json(202, {
      instanceId,
      workflow: name,
      version: existing?.version ?? head.latestVersion,
      state: inst?.state ?? "SUBMITTED",
    });
  }
  return json(202, { instanceId, workflow: name, version: head.latestVersion, state: "SUBMITTED" });
}

/** The instance, or — while its start command waits for the dispatcher — a SUBMITTED stand-in. */
async function loadInstance(deps: ApiDeps, id: string): Promise<InstanceRecord | CommandRecord> {
  checkInstanceId(id);
  const inst = await deps.store.getInstance(id);
  if (inst) return inst;
  const cmd = await getStartCommand(deps.store, id);
  if (cmd?.state === "PENDING") return cmd;
  throw notFound(`instance '${id}' does not exist`);
}

function isInstance(x: InstanceRecord | CommandRecord): x is InstanceRecord {
  return "progress" in x;
}

function submittedView(cmd: CommandRecord) {
  return {
    instanceId: cmd.instanceId,
    workflow: cmd.workflow,
    version: cmd.version,
    state: "SUBMITTED",
    priority: cmd.run?.priority ?? "MEDIUM",
    createdAt: new Date(cmd.createdAt).toISOString(),
    commandType: cmd.type,
    params: cmd.run?.params ?? {},
    tasks: [],
  };
}

/**
 * GET /v1/instances/{id} → 200 Instance. With `include=attempts` the answer also carries
 * `attempts`: every attempt of every task, of every round (reruns, retries, failovers), in the
 * definition's task order then by attempt number, as the console's Gantt draws them. They come from
 * the same read as `tasks` (one Query of the instance's attempts), so the include costs no more
 * reads. At most MAX_DETAIL_ATTEMPTS (present.ts), the most recently submitted ones.
 * @throws RequestError ValidationError naming `include` for anything but `attempts`; NotFound.
 */
export async function getInstance(
  deps: ApiDeps,
  id: string,
  event?: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const include = event ? query(event).include : undefined;
  if (include !== undefined && include !== "attempts") {
    throw validationError([{ path: "include", message: "must be 'attempts'" }]);
  }
  const found = await loadInstance(deps, id);
  if (!isInstance(found)) {
    return json(200, { ...submittedView(found), ...(include ? { attempts: [] } : {}) });
  }
  // The definition from the process's cache: `--wait` polls this every 500 ms.
  const [tasks, stored, alerts] = await Promise.all([
    deps.store.listTaskInstances(id),
    instanceDefinition(deps, found.workflow, found.version),
    deps.alerts?.list(id) ?? [],
  ]);
  const codes = stored?.definition.tasks.map((t) => t.code);
  return json(
    200,
    instanceDetail(found, tasks, logLink(deps), codes, include === "attempts", alerts),
  );
}

/**
 * @returns the task's index in its definition (the position its progress slot has).
 * @throws RequestError NotFound when the instance's definition version has no such task, or when
 *   that version can no longer be read ("the definition of … is gone").
 */
async function knownTask(
  deps: ApiDeps,
  inst: InstanceRecord | CommandRecord,
  code: string,
): Promise<number> {
  checkName(code, "code");
  return (await taskIndexOf(deps, inst, code)).index;
}

/**
 * GET /v1/instances/{id}/tasks/{code}/attempts → `{items}`, oldest first. The attempts are
 * records of their own: they are listed even when the definition version is gone.
 */
export async function listAttempts(
  deps: ApiDeps,
  id: string,
  code: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  const inst = await loadInstance(deps, id);
  checkName(code, "code");
  const [def, attempts] = await Promise.all([
    instanceDefinition(deps, inst.workflow, inst.version),
    deps.store.listAttempts(id, code),
  ]);
  if (!def && attempts.length === 0) throw definitionGone(inst.workflow, inst.version);
  if (def && def.dag.indexOf(code) === undefined) {
    throw notFound(`workflow '${inst.workflow}' v${inst.version} has no task '${code}'`);
  }
  return json(200, { items: attempts.map((t) => taskInstance(t, logLink(deps))) });
}

/** Control verbs of docs/api.md and the states each one is accepted in (DolphinScheduler's). */
const CONTROL = {
  stop: {
    type: "STOP",
    from: ["SUBMITTED", "RUNNING", "PAUSING", "PAUSED", "STOPPING"],
    rule: "only an unfinished instance can be stopped",
    heading: "STOPPING",
  },
  pause: {
    type: "PAUSE",
    from: ["RUNNING"],
    rule: "only a RUNNING instance can be paused",
    heading: "PAUSING",
  },
  resume: {
    type: "RESUME",
    from: ["PAUSING", "PAUSED"],
    rule: "only a PAUSING or PAUSED instance can be resumed",
    heading: "RUNNING",
  },
  rerun: {
    type: "RERUN",
    from: ["SUCCESS", "FAILURE", "STOPPED"],
    rule: "only a finished instance (SUCCESS, FAILURE, STOPPED) can be rerun",
    heading: "SUBMITTED",
  },
  "recover-failed": {
    type: "RECOVER_FAILED",
    from: ["FAILURE", "STOPPED"],
    rule: "only a FAILURE or STOPPED instance can recover its failed tasks",
    heading: "SUBMITTED",
  },
} as const satisfies Record<
  string,
  { type: CommandType; from: readonly InstanceState[]; rule: string; heading: InstanceState }
>;

export type ControlVerb = keyof typeof CONTROL;

/**
 * POST /v1/instances/{id}/stop | pause | resume | rerun | recover-failed → 202
 * `{instanceId, state}` (the state the instance is heading to); 409 when its state does not
 * allow the verb. The command id carries the instance's revision, so the same request sent
 * again before the dispatcher acted is the same command (a no-op).
 */
export async function controlInstance(
  deps: ApiDeps,
  id: string,
  verb: ControlVerb,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  onlyFields(event);
  const spec = CONTROL[verb];
  const found = await loadInstance(deps, id);
  const state: InstanceState = isInstance(found) ? found.state : "SUBMITTED";
  if (!(spec.from as readonly InstanceState[]).includes(state)) {
    throw conflict(`instance '${id}' is ${state}; ${spec.rule}`);
  }
  const rev = isInstance(found) ? found.rev : 0;
  const target = { instanceId: id, workflow: found.workflow, version: found.version, rev };
  const cmd = controlCommand(spec.type, target, deps.now());
  // A stop or pause is named in the instance's halt marker before the 202: from then on no
  // attempt that had not started starts (lib/engine/halt-gate.ts).
  if (isHaltCommand(cmd)) await submitHalt(deps, cmd, "api");
  else await submitCommand(deps, cmd, "api");
  return json(202, { instanceId: id, state: spec.heading });
}

/**
 * POST /v1/instances/{id}/tasks/{code}/force-success → 200 TaskInstance: the latest attempt of
 * a FAILURE or KILLED task of a finished instance becomes FORCED_SUCCESS, so recover-failed runs
 * its downstream (DolphinScheduler's "forced success"). Sent again: the same answer.
 */
export async function forceSuccess(
  deps: ApiDeps,
  id: string,
  code: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  onlyFields(event);
  const found = await loadInstance(deps, id);
  const index = await knownTask(deps, found, code);
  if (!isInstance(found) || (found.state !== "FAILURE" && found.state !== "STOPPED")) {
    const state = isInstance(found) ? found.state : "SUBMITTED";
    throw conflict(
      `instance '${id}' is ${state}; force-success needs a FAILURE or STOPPED instance`,
    );
  }
  // The attempt of the current round: forcing an earlier round's attempt would change nothing.
  const attempts = await deps.store.listAttempts(id, code);
  const latest = currentAttemptCandidates(found.progress, index)
    .map((a) => attempts.find((t) => t.attempt === a))
    .find((t) => t !== undefined);
  if (!latest) {
    throw conflict(`task '${code}' has not run in the current round of instance '${id}'`);
  }
  // The dispatcher applies it only to a failed slot of that attempt: refuse what it would ignore
  // (a paused task whose last attempt failed waits to run again) rather than write a record
  // the progress contradicts.
  if (
    latest.state !== "FORCED_SUCCESS" &&
    !forceSuccessProgress(found.progress, index, latest.attempt)
  ) {
    throw conflict(
      `task '${code}' is not failed in the current round of instance '${id}' (it waits to run again: recover-failed runs it)`,
    );
  }
  const key = { instanceId: id, code, attempt: latest.attempt };
  let task = await deps.store.updateTask(key, ["FAILURE", "KILLED"], {
    state: "FORCED_SUCCESS",
  });
  if (!task) {
    if (latest.state !== "FORCED_SUCCESS") {
      throw conflict(
        `task '${code}' is ${latest.state}; only a FAILURE or KILLED task can be forced to success`,
      );
    }
    task = latest;
  }
  await deps.queues.sendToDispatcher([
    { kind: "task", instanceId: id, code, attempt: latest.attempt, state: "FORCED_SUCCESS" },
  ]);
  return json(200, taskInstance(task, logLink(deps)));
}

/**
 * The `nextToken` of a log page for a task that has not started in the current round: read
 * from the beginning of whichever attempt is current when it comes back (log stores' tokens
 * belong to one attempt's log, and this one has none yet).
 */
export const NOT_STARTED_TOKEN = "start";

/**
 * GET /v1/instances/{id}/tasks/{code}/log → `{lines, nextToken}`. Without `attempt`, the
 * current round's attempt (lib/core/current-attempts.ts); a task that has not started in this
 * round reads as empty, with a `nextToken` while the instance can still run it. Earlier
 * rounds' attempts stay readable with `attempt`.
 */
export async function getLog(
  deps: ApiDeps,
  id: string,
  code: string,
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2> {
  const q = query(event);
  const limit = parseLimit(q.limit, 1000, 10_000);
  const asked = parsePositiveInt(q.attempt, "attempt");
  const nextToken = q.nextToken === NOT_STARTED_TOKEN ? undefined : q.nextToken;
  const inst = await loadInstance(deps, id);
  const index = await knownTask(deps, inst, code);
  const attempts = await deps.store.listAttempts(id, code);
  const instanceOver = isInstance(inst) && isFinalInstanceState(inst.state);
  let attempt: number;
  let record: TaskInstanceRecord | undefined;
  if (asked === undefined) {
    record = isInstance(inst)
      ? currentAttemptCandidates(inst.progress, index)
          .map((a) => attempts.find((t) => t.attempt === a))
          .find((t) => t !== undefined)
      : undefined;
    if (!record) {
      // Not started in this round (never an earlier round's log): nothing yet, and a token
      // while it may still start, so that a follower waits for it. A token is still checked:
      // one neither this API nor the log store made is a 400.
      if (nextToken !== undefined && !/^d\d{1,7}$/.test(nextToken)) {
        const latest = attempts[attempts.length - 1]?.attempt ?? 1;
        await deps.logs.read(
          { workflow: inst.workflow, instanceId: id, code, attempt: latest },
          { nextToken, limit: 1 },
        );
      }
      return json(200, { lines: [], ...(instanceOver ? {} : { nextToken: NOT_STARTED_TOKEN }) });
    }
    attempt = record.attempt;
  } else {
    attempt = asked;
    record = attempts.find((a) => a.attempt === attempt);
    const latest = attempts[attempts.length - 1];
    if (!record && latest && attempt <= latest.attempt) {
      throw notFound(`task '${code}' has no attempt ${attempt}`);
    }
  }
  // Logic tasks write no log and skipped tasks never ran: theirs says what was decided.
  if (
    record &&
    isInstance(inst) &&
    (record.state === "SKIPPED" || !isWorkerTaskType(record.type))
  ) {
    return json(
      200,
      await decisionLog(deps, inst, record, {
        limit,
        ...(nextToken !== undefined ? { nextToken } : {}),
      }),
    );
  }
  const page = await deps.logs.read(
    { workflow: inst.workflow, instanceId: id, code, attempt },
    { limit, ...(nextToken ? { nextToken } : {}) },
  );
  // While the attempt can still write, a client following the log always gets a token.
  const finished = record ? isFinalTaskState(record.state) : instanceOver;
  const more = !finished || page.lines.length === limit;
  return json(200, {
    lines: page.lines,
    ...(more && page.nextToken !== undefined ? { nextToken: page.nextToken } : {}),
  });
}
