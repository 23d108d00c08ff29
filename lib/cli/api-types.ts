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

/** Latest attempt of one task inside an instance. */
export interface TaskInstance {
  code: string;
  state: string;
  attempt?: number;
  startedAt?: string;
  endedAt?: string;
  error?: string;
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
