/**
 * The parts of API v1 answers the CLI reads (/work/shared/API-v1.md). Kept loose on purpose:
 * the CLI prints what it does not interpret, so new optional fields pass through untouched.
 */

/** A list answer: `items` and, when more exist, `nextToken`. */
export interface Page<T> {
  items: T[];
  nextToken?: string;
}

/** Answer of `PUT /v1/workflows/{name}`. */
export interface WorkflowWritten {
  name: string;
  version: number;
  releaseState: string;
  createdAt: string;
}

/** Item of `GET /v1/workflows`. */
export interface WorkflowSummary {
  name: string;
  version: number;
  releaseState: string;
  description?: string;
}

/** Answer of `GET /v1/workflows/{name}`: the definition plus its metadata. */
export interface WorkflowDetail extends WorkflowSummary {
  createdAt: string;
  tasks: WorkflowTaskRef[];
}

/** The part of a task definition the CLI reads: its code and the tasks it waits for. */
export interface WorkflowTaskRef {
  code: string;
  upstream?: string[];
}

/** Answer of `POST /v1/workflows/{name}/runs`. */
export interface RunStarted {
  instanceId: string;
  workflow: string;
  version: number;
  state: string;
}

/** Item of `GET /v1/instances`. */
export interface InstanceSummary {
  instanceId: string;
  workflow: string;
  version: number;
  state: string;
  priority?: string;
  createdAt?: string;
  startedAt?: string;
  endedAt?: string;
}

/**
 * One attempt of one task (API-v1.md "TaskInstance"): the latest attempt of each task inside
 * an {@link Instance}, every attempt in `GET /v1/instances/{id}/tasks/{code}/attempts`.
 * Times are ISO-8601; absent fields are omitted by the API.
 */
export interface TaskInstance {
  code: string;
  /** Task type, e.g. `SHELL`, `HTTP`, `CONDITIONS`, `SWITCH`, `SUB_WORKFLOW`. */
  type?: string;
  /** One of the task states of API-v1.md, e.g. `RUNNING`, `FORCED_SUCCESS`, `SKIPPED`, `PAUSED`. */
  state: string;
  /** 1-based. */
  attempt?: number;
  priority?: string;
  workerGroup?: string;
  submittedAt?: string;
  startedAt?: string;
  endedAt?: string;
  /** `host:pid:id` of the worker that ran the attempt. */
  worker?: string;
  /** SHELL tasks: the command's exit code. */
  exitCode?: number;
  error?: string;
  /** Set when a WARN timeout fired and the task went on running. */
  warning?: string;
  /** The task group whose slot the attempt needs; it waits SUBMITTED until one is free. */
  taskGroup?: string;
  /** OUT parameters the attempt set. */
  outputs?: Record<string, string>;
  /** SUB_WORKFLOW: the child instance's id. */
  subInstanceId?: string;
  /** CONDITIONS / SWITCH: the codes of the branch targets taken. */
  branch?: string[];
}

/**
 * A task group (answer of `PUT|GET /v1/task-groups/{name}`, item of `GET /v1/task-groups`): a
 * named concurrency limit shared by every task that names it (DolphinScheduler's task groups).
 */
export interface TaskGroup {
  name: string;
  /** Slots, 1..1000. */
  capacity: number;
  description?: string;
  /** Slots held now; may exceed `capacity` for a while after it was lowered. */
  used: number;
  /** Tasks queued for a slot. */
  waiting: number;
  createdAt: string;
  updatedAt: string;
}

/** `progress` of an instance: task counts over the tasks in scope (killed counts as failed). */
export interface InstanceProgress {
  done: number;
  active: number;
  failed: number;
  total: number;
}

/** Answer of `GET /v1/instances/{id}`. */
export interface Instance extends InstanceSummary {
  progress?: InstanceProgress;
  tasks?: TaskInstance[];
}

/** Answer of `POST /v1/instances/{id}/stop` and the other instance actions. */
export interface InstanceActionResult {
  instanceId: string;
  state: string;
}

/** Answer of `GET /v1/instances/{id}/tasks/{code}/log`. */
export interface LogPage {
  lines: Array<{ timestamp: string; message: string }>;
  nextToken?: string;
}

/** Instance states after which nothing changes any more. */
export const TERMINAL_INSTANCE_STATES: ReadonlySet<string> = new Set([
  "SUCCESS",
  "FAILURE",
  "STOPPED",
]);

/**
 * Task states in which an attempt is still going: without `endedAt` its duration counts up.
 * Any other state without an end (a PAUSED logic task, a SKIPPED one) is not running.
 */
export const ACTIVE_TASK_STATES: ReadonlySet<string> = new Set([
  "SUBMITTED",
  "DISPATCHED",
  "RUNNING",
]);
