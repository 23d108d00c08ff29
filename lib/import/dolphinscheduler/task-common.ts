/**
 * What every converted task shares: the context of its workflow, and the settings every
 * DolphinScheduler task has (priority, retries, timeout, worker group, task group), converted
 * with DolphinScheduler's units (minutes) into Shoal's (seconds). Sources: `TaskDefinition`
 * and the UI fields `use-failed.ts`, `use-timeout-alarm.ts`, `use-delay-time.ts` (minutes).
 */
import { PRIORITIES, type Priority } from "../../core/model.js";
import { LIMITS } from "../../core/validate.js";
import { alertGroupOf, noteTimeoutAlert } from "./alerts.js";
import type { DsTask, DsWorkflow } from "./export-format.js";
import { shoalName, workerGroupName } from "./names.js";
import type { NoteBook } from "./notes.js";

/** A workflow of the file as converted, for references to it (SUB_PROCESS, DEPENDENT). */
export interface WorkflowRef {
  /** Its Shoal name. */
  name: string;
  ds: DsWorkflow;
  /** DolphinScheduler task code → Shoal task code. */
  taskCodes: ReadonlyMap<string, string>;
}

/** What a task converter needs to know about its workflow and the file. */
export interface TaskContext {
  wf: DsWorkflow;
  /** The workflow's Shoal name. */
  workflow: string;
  /** DolphinScheduler task code → Shoal task code, for this workflow. */
  codes: ReadonlyMap<string, string>;
  /** Workflows of the file (of every file imported together) that are converted, by code. */
  workflows: ReadonlyMap<string, WorkflowRef>;
  /**
   * What a reference to none of them is, for notes: "not in this file", or "in none of the
   * imported files" when several files are imported together.
   */
  outside: string;
  notes: NoteBook;
  /** Shoal codes of the tasks directly before `code`. */
  upstreamOf(code: string): string[];
  /** Shoal codes of the tasks directly after `code`. */
  downstream(code: string): string[];
  /** Makes `pre` an upstream task of `post` (Shoal codes), if it is not one already. */
  addEdge(pre: string, post: string): void;
  /** Drops the edge `pre → post`. */
  dropEdge(pre: string, post: string): void;
  /** Whether some task of the workflow refers to parameter `name` as `${name}`. */
  references(name: string): boolean;
  /** Whether unsupported task types become failing SHELL placeholders. */
  placeholder: boolean;
}

/** A task body (docs/api.md "WorkflowDefinition" tasks[]) without `code` and `upstream`. */
export type TaskBody = Record<string, unknown>;

/** DolphinScheduler's `Priority` by name or by its number (0 = HIGHEST … 4 = LOWEST). */
export function priorityOf(v: unknown): Priority | undefined {
  if (typeof v === "number" && Number.isInteger(v)) return PRIORITIES[v];
  if (typeof v === "string") {
    const up = v.toUpperCase();
    return (PRIORITIES as readonly string[]).includes(up) ? (up as Priority) : undefined;
  }
  return undefined;
}

/** Minutes → seconds, capped at Shoal's `max`; undefined for 0 or less. */
export function minutesToSeconds(minutes: number, max: number): number | undefined {
  if (!(minutes > 0)) return undefined;
  return Math.min(Math.round(minutes * 60), max);
}

/** The Shoal task group name for DolphinScheduler's (only its id is in a real export). */
export function taskGroupName(t: DsTask): string | undefined {
  if (t.taskGroupName) return shoalName(t.taskGroupName, "task-group");
  return t.taskGroupId > 0 ? `ds-task-group-${t.taskGroupId}` : undefined;
}

/**
 * The settings every task has, for a task of Shoal type `type`: priority, retries, worker
 * group (worker tasks only: logic tasks run on the dispatcher), task group. Notes what is left
 * out or behaves differently. The timeout is the type converters' (it means different things).
 */
export function commonFields(t: DsTask, ctx: TaskContext, code: string, worker: boolean): TaskBody {
  const out: TaskBody = {};
  const notes = ctx.notes;
  const priority = priorityOf(t.priority);
  if (priority && priority !== "MEDIUM") out.priority = priority;
  if (t.failRetryTimes > 0) {
    out.retries = Math.min(Math.trunc(t.failRetryTimes), LIMITS.retries);
    const interval = minutesToSeconds(t.failRetryInterval, LIMITS.retryIntervalSeconds);
    if (interval !== undefined) out.retryIntervalSeconds = interval;
  }
  if (worker && t.workerGroup !== "default") {
    const group = workerGroupName(t.workerGroup);
    out.workerGroup = group;
    if (group !== t.workerGroup) {
      notes.add(
        "approximated",
        `worker group '${t.workerGroup}' is named '${group}' (Shoal's worker groups name SQS queues: ASCII only)`,
        code,
      );
    }
  }
  const group = taskGroupName(t);
  if (group) {
    out.taskGroup = group;
    const p = Math.max(0, Math.min(100, Math.trunc(t.taskGroupPriority)));
    if (p > 0) out.taskGroupPriority = p;
    if (!t.taskGroupName) {
      notes.add(
        "action",
        `task group id ${t.taskGroupId} (the export has no task group names) is named '${group}': create it with \`shoal task-group put ${group} --capacity N\` (DolphinScheduler's capacity of that group), or rename it to an existing group`,
        code,
      );
    }
  }
  if (t.environmentCode !== "-1" && t.environmentCode !== "" && t.environmentCode !== "0") {
    notes.add(
      "not-converted",
      `environment ${t.environmentCode}: Shoal has no environments; set what it exported (PATH, JAVA_HOME, …) in the worker's environment or the command`,
      code,
    );
  }
  if (t.cpuQuota > 0 || t.memoryMax > 0) {
    notes.add(
      "not-converted",
      `cpuQuota/memoryMax (${t.cpuQuota}/${t.memoryMax}): Shoal does not limit a task's CPU or memory`,
      code,
    );
  }
  if (t.isCache === "YES") {
    notes.add("not-converted", "cache (isCache YES): Shoal always runs the task", code);
  }
  if (t.taskExecuteType === "STREAM") {
    notes.add(
      "approximated",
      "stream task (taskExecuteType STREAM): Shoal runs it as a batch task that ends",
      code,
    );
  }
  const resources = t.params.resourceList;
  if (Array.isArray(resources) && resources.length > 0) {
    const names = resources
      .map((r) =>
        r && typeof r === "object"
          ? String(
              (r as { resourceName?: unknown }).resourceName ?? (r as { res?: unknown }).res ?? "",
            )
          : "",
      )
      .filter(Boolean);
    notes.add(
      "not-converted",
      `resource files (${names.join(", ") || resources.length}): Shoal has no resource center; put them where the worker finds them`,
      code,
    );
  }
  return out;
}

/**
 * `timeoutSeconds`/`timeoutStrategy` from DolphinScheduler's `timeoutFlag`, `timeout` (minutes)
 * and `timeoutNotifyStrategy` (WARN, FAILED, WARNFAILED), for a task type whose timeout Shoal
 * applies. `extraSeconds` is added (a delay run inside the task). The alert of WARN and
 * WARNFAILED: lib/import/dolphinscheduler/alerts.ts.
 */
export function timeoutFields(
  t: DsTask,
  ctx: TaskContext,
  code: string,
  extraSeconds = 0,
): TaskBody {
  if (t.timeoutFlag !== "OPEN" || !(t.timeout > 0)) return {};
  const seconds = minutesToSeconds(t.timeout, LIMITS.timeoutSeconds) as number;
  const out: TaskBody = { timeoutSeconds: Math.min(seconds + extraSeconds, LIMITS.timeoutSeconds) };
  const strategy = t.timeoutNotifyStrategy ?? "WARN";
  if (strategy === "WARN") out.timeoutStrategy = "WARN";
  noteTimeoutAlert(t, ctx.notes, code, alertGroupOf(ctx.wf.schedule));
  return out;
}

/** Notes that a type ignores the timeout. */
export function noteTimeoutIgnored(t: DsTask, ctx: TaskContext, code: string): void {
  if (t.timeoutFlag === "OPEN" && t.timeout > 0) {
    ctx.notes.add(
      "not-converted",
      `timeout of ${t.timeout} min: Shoal's ${t.taskType} tasks have no timeout`,
      code,
    );
  }
}
