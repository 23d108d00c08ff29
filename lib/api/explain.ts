/**
 * `GET /v1/instances/{id}/explain` and `GET /v1/instances/{id}/tasks/{code}/explain`: why tasks
 * are not running. This module gathers the facts (instance, definition, task instances, pending
 * command, task-group queues, worker heartbeats, queue depths, child instances, dependent items);
 * lib/core/explain.ts decides. Reads only: an explain changes nothing.
 */
import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import type { Dag } from "../core/dag.js";
import { notFound } from "../core/errors.js";
import {
  type DependentItemFacts,
  type ExplainAttempt,
  type ExplainFacts,
  explainContext,
  explainInstance,
  explainReads,
  explainTask,
  instanceHold,
  type NeededFacts,
  neededFacts,
  type PendingCommand,
  type TaskGroupFacts,
  type WorkerGroupFacts,
} from "../core/explain.js";
import { isFinalInstanceState } from "../core/model.js";
import type { Progress } from "../core/progress.js";
import { SLOT } from "../core/progress.js";
import { checkName } from "../core/validate.js";
import { getStartCommand } from "../engine/commands.js";
import { checkItem } from "../engine/dependent-checks.js";
import { baseTimeOf, zoneOf } from "../engine/engine-deps.js";
import type { CommandRecord, InstanceRecord } from "../store/records.js";
import type { ApiDeps } from "./deps.js";
import { json, RESOURCE_ID } from "./http.js";
import { definitionGone, instanceDefinition } from "./instance-definition.js";

/** Waiters read to find a task's place in its task group's queue. */
const MAX_QUEUE_SCAN = 1_000;

/**
 * Up to this many tasks, a task's explanation reads their attempts task by task (one query
 * each); beyond, one query of every attempt of the instance costs less.
 */
const MAX_TASK_QUERIES = 25;

/** Control verbs whose command may wait for the dispatcher, by the states that accept them. */
function pendingVerbs(inst: InstanceRecord): string[] {
  if (isFinalInstanceState(inst.state)) return ["rerun", "recover-failed"];
  if (inst.state === "PAUSED" || inst.state === "PAUSING") return ["resume", "stop"];
  if (inst.state === "STOPPING") return [];
  return ["stop", "pause"];
}

interface Loaded {
  facts: ExplainFacts;
  dag: Dag;
  workflow: string;
  version: number;
  inst?: InstanceRecord;
}

/**
 * The instance (or its waiting start command), its definition and the attempts explaining
 * `index` reads (every attempt when absent: explaining the whole instance).
 */
async function load(deps: ApiDeps, id: string, code?: string): Promise<Loaded> {
  if (!RESOURCE_ID.test(id)) throw notFound(`instance '${id.slice(0, 64)}' does not exist`);
  const inst = await deps.store.getInstance(id);
  let start: CommandRecord | undefined;
  if (!inst) {
    start = await getStartCommand(deps.store, id);
    if (start?.state !== "PENDING") throw notFound(`instance '${id}' does not exist`);
  }
  const head = (inst ?? start) as InstanceRecord | CommandRecord;
  const stored = await instanceDefinition(deps, head.workflow, head.version);
  if (!stored) throw definitionGone(head.workflow, head.version);
  const tasks = stored.definition.tasks;
  const dag = stored.dag;
  const now = deps.now();
  let progress: Progress;
  let pendingCommand: PendingCommand | undefined;
  if (inst) {
    progress = inst.progress;
    pendingCommand = await pendingControl(deps, inst);
  } else {
    const run = start?.run;
    const scope = dag.scope(run?.startTasks, run?.taskScope ?? "DOWNSTREAM");
    progress = { slots: scope.map((s) => (s ? SLOT.WAITING : SLOT.OUT)).join(""), attempts: {} };
    const cmd = start as CommandRecord;
    pendingCommand = {
      type: cmd.type,
      createdAt: cmd.createdAt,
      ...(cmd.notBefore !== undefined ? { notBefore: cmd.notBefore } : {}),
    };
  }
  const run = start?.run;
  const facts: ExplainFacts = {
    now,
    instance: {
      instanceId: id,
      ...(inst ? { state: inst.state } : {}),
      priority: inst?.priority ?? run?.priority ?? stored.definition.priority,
      failureStrategy:
        inst?.failureStrategy ?? run?.failureStrategy ?? stored.definition.failureStrategy,
      progress,
      ...((inst?.startTasks ?? run?.startTasks)
        ? { startTasks: inst?.startTasks ?? run?.startTasks }
        : {}),
      taskScope: inst?.taskScope ?? run?.taskScope ?? "DOWNSTREAM",
      ...(inst?.timedOutAt !== undefined ? { timedOutAt: inst.timedOutAt } : {}),
    },
    ...(pendingCommand ? { pendingCommand } : {}),
    tasks,
    upstream: dag.upstream,
    attempts: [],
  };
  if (code !== undefined) {
    checkName(code, "code");
    if (dag.indexOf(code) === undefined) {
      throw notFound(`workflow '${head.workflow}' v${head.version} has no task '${code}'`);
    }
  }
  if (inst)
    facts.attempts = await readAttempts(
      deps,
      id,
      facts,
      code === undefined ? undefined : dag.indexOf(code),
    );
  return { facts, dag, workflow: head.workflow, version: head.version, ...(inst ? { inst } : {}) };
}

/** The attempts explaining task `index` reads (lib/core/explain.ts explainReads), or all. */
async function readAttempts(
  deps: ApiDeps,
  id: string,
  facts: ExplainFacts,
  index: number | undefined,
): Promise<ExplainAttempt[]> {
  const reads = index === undefined ? undefined : explainReads(facts, index);
  if (!reads || reads.size > MAX_TASK_QUERIES) return deps.store.listTaskInstances(id);
  const codes = [...reads].map((i) => facts.tasks[i]?.code).filter((c) => c !== undefined);
  return (await Promise.all(codes.map((c) => deps.store.listAttempts(id, c)))).flat();
}

/** A control command sent at the instance's current revision that the dispatcher has not run. */
async function pendingControl(
  deps: ApiDeps,
  inst: InstanceRecord,
): Promise<PendingCommand | undefined> {
  const found = await Promise.all(
    pendingVerbs(inst).map((v) => deps.store.getCommand(`${v}:${inst.instanceId}:${inst.rev}`)),
  );
  const cmd = found.find((c) => c?.state === "PENDING");
  return cmd ? { type: cmd.type, createdAt: cmd.createdAt } : undefined;
}

/** Looks up what `needed` names and adds it to the facts. */
async function enrich(deps: ApiDeps, l: Loaded, needed: NeededFacts): Promise<void> {
  const workerGroups: Record<string, WorkerGroupFacts> = {};
  const taskGroups: Record<string, TaskGroupFacts> = {};
  const children: Record<string, { state?: InstanceRecord["state"] }> = {};
  const dependents: Record<string, DependentItemFacts[]> = {};
  await Promise.all([
    ...[...needed.workerGroups].map(async (group) => {
      workerGroups[group] = await workerGroupFacts(deps, group);
    }),
    ...[...needed.taskGroups].map(async ([group, keys]) => {
      taskGroups[group] = await taskGroupFacts(deps, l.facts.instance.instanceId, group, keys);
    }),
    ...[...needed.children].map(async ([code, childId]) => {
      const child = await deps.store.getInstance(childId);
      children[code] = child ? { state: child.state } : {};
    }),
    ...[...needed.dependents].map(async (code) => {
      const task = l.facts.tasks.find((t) => t.code === code);
      if (task?.type !== "DEPENDENT" || !l.inst) return;
      const base = baseTimeOf(l.inst);
      const zone = zoneOf(l.inst); // the dispatcher's check uses the instance's zone too
      const items = task.dependence.groups.flatMap((g) => g.items);
      dependents[code] = await Promise.all(
        items.map(async (item) => ({
          workflow: item.workflow,
          ...(item.task ? { task: item.task } : {}),
          cycle: item.cycle,
          dateValue: item.dateValue,
          result: await checkItem({ store: deps.store }, item, base, zone),
        })),
      );
    }),
  ]);
  Object.assign(l.facts, { workerGroups, taskGroups, children, dependents });
}

async function workerGroupFacts(deps: ApiDeps, group: string): Promise<WorkerGroupFacts> {
  const lambda = deps.lambdaWorkerGroups?.includes(group) ?? false;
  const [heartbeat, depths] = await Promise.all([
    lambda || !deps.heartbeats ? undefined : deps.heartbeats.getHeartbeat(group),
    deps.queueDepths?.depths(group).catch((e: unknown) => {
      deps.log?.("api: explain could not read queue depths", { group, error: String(e) });
      return undefined;
    }),
  ]);
  return {
    ...(lambda ? { lambda } : {}),
    ...(!lambda && deps.ecsWorkerGroup === group ? { ecs: true } : {}),
    ...(!deps.heartbeats ? { heartbeatsUnknown: true } : {}),
    ...(heartbeat
      ? {
          heartbeat: {
            lastPollAt: heartbeat.lastPollAt,
            worker: heartbeat.worker,
            workers: heartbeat.workers,
          },
        }
      : {}),
    ...(depths === "missing" ? { queued: "missing" as const } : {}),
    ...(depths && depths !== "missing"
      ? { queued: depths.visible, inFlight: depths.inFlight }
      : {}),
  };
}

async function taskGroupFacts(
  deps: ApiDeps,
  instanceId: string,
  group: string,
  keys: Set<string>,
): Promise<TaskGroupFacts> {
  const [g, counts, waiters] = await Promise.all([
    deps.taskGroups.getGroup(group),
    deps.taskGroups.counts(group),
    deps.taskGroups.firstWaiters(group, MAX_QUEUE_SCAN),
  ]);
  const positions: Record<string, number> = {};
  waiters.forEach((w, i) => {
    const key = `${w.code}#${w.attempt}`;
    if (w.instanceId === instanceId && keys.has(key)) positions[key] = i + 1;
  });
  return {
    ...(g ? { capacity: g.capacity } : {}),
    used: counts.used,
    waiting: counts.waiting,
    positions,
  };
}

/** GET /v1/instances/{id}/explain → `{instanceId, workflow, version, state, reason?, message?, tasks}`. */
export async function explainInstanceRoute(
  deps: ApiDeps,
  id: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  const l = await load(deps, id);
  await enrich(deps, l, neededFacts(l.facts));
  const hold = instanceHold(l.facts);
  return json(200, {
    instanceId: id,
    workflow: l.workflow,
    version: l.version,
    state: l.facts.instance.state ?? "SUBMITTED",
    ...(hold ? { reason: hold.reason, message: hold.message } : {}),
    tasks: explainInstance(l.facts),
  });
}

/** GET /v1/instances/{id}/tasks/{code}/explain → one Explanation. */
export async function explainTaskRoute(
  deps: ApiDeps,
  id: string,
  code: string,
): Promise<APIGatewayProxyStructuredResultV2> {
  const l = await load(deps, id, code);
  const index = l.dag.indexOf(code) as number;
  await enrich(deps, l, neededFacts(l.facts, [index]));
  return json(200, explainTask(l.facts, index, explainContext(l.facts)));
}
