/**
 * Shoal's domain model: workflow definitions, instances, task instances and commands.
 * Names follow DolphinScheduler's vocabulary (../../docs/architecture.md, DESIGN.md glossary).
 * Times are epoch milliseconds inside the engine and ISO-8601 UTC strings on the API.
 */

/** Priority of a workflow or task, highest first (DolphinScheduler's `Priority` enum). */
export const PRIORITIES = ["HIGHEST", "HIGH", "MEDIUM", "LOW", "LOWEST"] as const;
export type Priority = (typeof PRIORITIES)[number];

/** What happens to the rest of the DAG after a task fails for good (DolphinScheduler `FailureStrategy`). */
export const FAILURE_STRATEGIES = ["END", "CONTINUE"] as const;
export type FailureStrategy = (typeof FAILURE_STRATEGIES)[number];

/** Which tasks a run covers when `startTasks` is given (DolphinScheduler `TaskDependType`). */
export const TASK_SCOPES = ["DOWNSTREAM", "ONLY", "UPSTREAM"] as const;
export type TaskScope = (typeof TASK_SCOPES)[number];

export const TIMEOUT_STRATEGIES = ["WARN", "FAIL"] as const;
export type TimeoutStrategy = (typeof TIMEOUT_STRATEGIES)[number];

export const TASK_TYPES = ["SHELL", "HTTP"] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const RELEASE_STATES = ["ONLINE", "OFFLINE"] as const;
export type ReleaseState = (typeof RELEASE_STATES)[number];

/** Workflow instance states (API-v1.md). Terminal: STOPPED, SUCCESS, FAILURE. */
export const INSTANCE_STATES = [
  "SUBMITTED",
  "RUNNING",
  "PAUSING",
  "PAUSED",
  "STOPPING",
  "STOPPED",
  "SUCCESS",
  "FAILURE",
] as const;
export type InstanceState = (typeof INSTANCE_STATES)[number];

/** Task instance states (API-v1.md). One task instance exists per attempt. */
export const TASK_STATES = [
  "SUBMITTED",
  "DISPATCHED",
  "RUNNING",
  "SUCCESS",
  "FAILURE",
  "KILLED",
  "PAUSED",
  "NEED_FAULT_TOLERANCE",
  "FORCED_SUCCESS",
  "SKIPPED",
] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** Command types (DESIGN.md). Only START_WORKFLOW and STOP are handled so far. */
export const COMMAND_TYPES = [
  "START_WORKFLOW",
  "START_FROM_TASK",
  "RECOVER_FAILED",
  "RERUN",
  "PAUSE",
  "RESUME",
  "STOP",
  "BACKFILL",
  "SCHEDULED",
  "RECOVER_FAULT_TOLERANCE",
] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

interface TaskDefinitionBase {
  /** Unique within the workflow; same pattern as workflow names. */
  code: string;
  /** Codes of tasks that must finish successfully first. */
  upstream: string[];
  priority: Priority;
  /** Further attempts after a failure (0..100). */
  retries: number;
  /** Delay before a retry, seconds. */
  retryIntervalSeconds: number;
  /** FIXED (default) or EXPONENTIAL: the interval doubles with each retry. */
  retryBackoff: "FIXED" | "EXPONENTIAL";
  /** Cap of an EXPONENTIAL interval, seconds. */
  maxRetryIntervalSeconds?: number;
  /** Wall-clock limit of one attempt, seconds. */
  timeoutSeconds?: number;
  timeoutStrategy: TimeoutStrategy;
  workerGroup: string;
  /** Local parameters, string values. */
  params: Record<string, string>;
  description?: string;
}

/** A SHELL task: `command` runs under `/bin/sh -c` in a fresh working directory. */
export interface ShellTaskDefinition extends TaskDefinitionBase {
  type: "SHELL";
  command: string;
}

/** An HTTP task: success when the status lies in the inclusive `expectStatus` range. */
export interface HttpTaskDefinition extends TaskDefinitionBase {
  type: "HTTP";
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  expectStatus: [number, number];
}

export type TaskDefinition = ShellTaskDefinition | HttpTaskDefinition;

/** A workflow definition as stored (defaults applied). The API body shape is in API-v1.md. */
export interface WorkflowDefinition {
  description?: string;
  releaseState?: ReleaseState;
  priority: Priority;
  failureStrategy: FailureStrategy;
  /** Limit for the whole instance, seconds. */
  timeoutSeconds?: number;
  params: Record<string, string>;
  tasks: TaskDefinition[];
}

/** Body of `POST /v1/workflows/{name}/runs` after defaults. */
export interface RunRequest {
  params: Record<string, string>;
  priority?: Priority;
  startTasks?: string[];
  taskScope: TaskScope;
  failureStrategy?: FailureStrategy;
  dryRun: boolean;
  idempotencyKey?: string;
}

/** True for instance states that never change again. */
export function isFinalInstanceState(state: InstanceState): boolean {
  return state === "STOPPED" || state === "SUCCESS" || state === "FAILURE";
}

/** True for task states in which an attempt is over. */
export function isFinalTaskState(state: TaskState): boolean {
  return (
    state === "SUCCESS" ||
    state === "FAILURE" ||
    state === "KILLED" ||
    state === "FORCED_SUCCESS" ||
    state === "SKIPPED" ||
    state === "NEED_FAULT_TOLERANCE"
  );
}
