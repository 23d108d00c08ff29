/**
 * Gathers what an alert says from the store, at delivery time: the instance (state, times, run),
 * its failed tasks and their last log lines, read through the task-log port
 * (lib/logs/task-log.ts). Reading at delivery rather than at the event keeps the engine's path
 * free of it: a slow log store delays an alert, never a run.
 */
import type { DefinitionCache } from "../engine/definitions.js";
import type { TaskLogKey, TaskLogs } from "../logs/task-log.js";
import type { InstanceRecord, TaskInstanceRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { DeliveryRecord } from "./deliveries.js";
import {
  type AlertContent,
  type FailedTask,
  LOG_TAIL_LINES,
  limitTails,
  MAX_FAILED_TASKS,
} from "./format.js";

export interface ContentDeps {
  store: Store;
  definitions?: DefinitionCache;
  logs?: TaskLogs;
  /** Base of console links; absent: alerts carry no link. */
  consoleUrl?: string;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/**
 * The last {@link LOG_TAIL_LINES} lines of an attempt's log, read from its end (the port's
 * `tail`: one or a few reads however long the log); [] when it has none or cannot be read (an
 * alert goes out without them rather than not at all).
 */
export async function logTail(logs: TaskLogs, key: TaskLogKey): Promise<string[]> {
  try {
    return (await logs.tail(key, LOG_TAIL_LINES)).map((l) => l.message);
  } catch {
    return [];
  }
}

/** The latest attempt of every task that ended FAILURE or KILLED. */
function failedAttempts(tasks: readonly TaskInstanceRecord[]): TaskInstanceRecord[] {
  const latest = new Map<string, TaskInstanceRecord>();
  for (const t of tasks) {
    const cur = latest.get(t.code);
    if (!cur || cur.attempt < t.attempt) latest.set(t.code, t);
  }
  return [...latest.values()]
    .filter((t) => t.state === "FAILURE" || t.state === "KILLED")
    .sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
}

/** What the alert of delivery `rec` says. */
export async function alertContent(deps: ContentDeps, rec: DeliveryRecord): Promise<AlertContent> {
  const base: AlertContent = {
    deliveryId: rec.deliveryId,
    event: rec.event,
    rule: rec.rule,
    channel: rec.channel,
    workflow: rec.workflow,
    failedTasks: [],
  };
  if (rec.event === "SCHEDULE_MISFIRE") {
    return {
      ...base,
      schedule: {
        scheduleId: rec.scheduleId ?? "",
        nominalTime: iso(rec.nominalTime) ?? "",
        outcome: rec.misfireOutcome ?? "SKIPPED_MISFIRE",
      },
    };
  }
  const id = rec.instanceId as string;
  const [inst, tasks] = await Promise.all([
    deps.store.getInstance(id),
    deps.store.listTaskInstances(id),
  ]);
  const content: AlertContent = { ...base, instanceId: id };
  if (deps.consoleUrl) {
    content.link = `${deps.consoleUrl.replace(/\/+$/, "")}/instances/${encodeURIComponent(id)}`;
  }
  if (inst) Object.assign(content, await instanceFields(deps, inst));
  let failed = failedAttempts(tasks);
  if (rec.event === "TASK_RETRY_EXHAUSTED") {
    content.task = { code: rec.taskCode ?? "", attempt: rec.attempt ?? 1 };
    const own = tasks.find((t) => t.code === rec.taskCode && t.attempt === rec.attempt);
    failed = own ? [own] : [];
  }
  if (failed.length > MAX_FAILED_TASKS) content.moreFailedTasks = failed.length - MAX_FAILED_TASKS;
  const listed = failed.slice(0, MAX_FAILED_TASKS);
  const withLogs: FailedTask[] = await Promise.all(
    listed.map(async (t) => ({
      code: t.code,
      attempt: t.attempt,
      state: t.state,
      ...(t.error ? { error: t.error } : {}),
      logTail: deps.logs
        ? await logTail(deps.logs, {
            workflow: t.workflow,
            instanceId: t.instanceId,
            code: t.code,
            attempt: t.attempt,
          })
        : [],
    })),
  );
  content.failedTasks = limitTails(withLogs);
  return content;
}

async function instanceFields(
  deps: ContentDeps,
  inst: InstanceRecord,
): Promise<Partial<AlertContent>> {
  const def = await deps.definitions?.get(inst.workflow, inst.version).catch(() => undefined);
  const out: Partial<AlertContent> = {
    state: inst.state,
    run: inst.runs ?? 1,
  };
  const displayName = def?.definition.displayName;
  if (displayName) out.displayName = displayName;
  if (inst.startedAt !== undefined) out.startTime = iso(inst.startedAt);
  if (inst.endedAt !== undefined) out.endTime = iso(inst.endedAt);
  if (inst.startedAt !== undefined && inst.endedAt !== undefined) {
    out.durationMs = Math.max(0, inst.endedAt - inst.startedAt);
  }
  if (inst.error) out.error = inst.error;
  return out;
}
