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
  /** `CREATED`, `UPDATED` or `UNCHANGED`; absent from servers older than the field. */
  change?: string;
  /** The release state before the PUT, present when the body's `releaseState` changed it. */
  previousReleaseState?: string;
  /** References nothing in the definition can set (`{path, message}`); absent when none. */
  warnings?: Array<{ path: string; message: string }>;
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
  /** Nominal time of a scheduled, backfilled or sub-workflow run. */
  scheduleTime?: string;
  /**
   * What started it: `MANUAL`, `SCHEDULE`, `BACKFILL`, `TRIGGER` or `SUB_WORKFLOW`
   * (lib/core/run-type.ts); absent on instances from before the API recorded it.
   */
  runType?: string;
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
  /** 1, then +1 per rerun or recover-failed. */
  runs?: number;
  /** Why the instance itself failed, when not because of a task (a workflow timeout). */
  error?: string;
  tasks?: TaskInstance[];
}

/** Answer of `POST /v1/instances/{id}/stop` and the other instance actions. */
export interface InstanceActionResult {
  instanceId: string;
  state: string;
}

/**
 * Why a task is not running (answer of `GET /v1/instances/{id}/tasks/{code}/explain`, item of
 * the instance's explain; lib/core/explain.ts): one reason, one sentence, the facts behind it.
 */
export interface TaskExplanation {
  code: string;
  type?: string;
  /** The current attempt's state; `NOT_STARTED` without one; `NOT_IN_SCOPE` outside the run. */
  state: string;
  attempt?: number;
  /** E.g. `WAITING_FOR_UPSTREAM`, `TASK_GROUP_FULL`, `NO_WORKER`, `RETRY_DUE`. */
  reason: string;
  message: string;
  facts?: Record<string, unknown>;
}

/** Answer of `GET /v1/instances/{id}/explain`: what holds the instance, and each waiting task. */
export interface InstanceExplanation {
  instanceId: string;
  workflow: string;
  version?: number;
  state: string;
  /** Set when something holds the whole instance (not started, paused, ended…). */
  reason?: string;
  message?: string;
  tasks: TaskExplanation[];
}

/** Answer of `GET /v1/instances/{id}/tasks/{code}/log`. */
export interface LogPage {
  lines: Array<{ timestamp: string; message: string }>;
  nextToken?: string;
}

/**
 * A schedule (answer of `POST /v1/schedules`, `GET|PUT /v1/schedules/{id}` and the online /
 * offline actions; item of `GET /v1/schedules`; lib/api/schedules.ts). Exactly one of `cron`,
 * `rate` and `at` is set. Times are ISO-8601 instants.
 */
export interface Schedule {
  id: string;
  workflow: string;
  /** 5 fields, or 6 with seconds first, on `timezone`'s wall clock. */
  cron?: string;
  /** `"N seconds|minutes|hours|days"`. */
  rate?: string;
  /** One-time fire. */
  at?: string;
  /** IANA zone name, e.g. `Europe/Paris`. */
  timezone: string;
  startTime?: string;
  endTime?: string;
  params?: Record<string, string>;
  priority?: string;
  failureStrategy?: string;
  workerGroup?: string;
  /** `SKIP`, `FIRE_ONCE` or `FIRE_ALL` (Quartz misfire instructions). */
  misfirePolicy: string;
  /** A fire later than this many seconds is a misfire. */
  misfireThresholdSeconds: number;
  /** FIRE_ALL: most missed times fired in one catch-up. */
  maxCatchup: number;
  /** `PARALLEL`, `SERIAL_WAIT`, `SERIAL_DISCARD` or `SERIAL_PRIORITY`. */
  overlapPolicy: string;
  /** `ONLINE` or `OFFLINE`. */
  state: string;
  /** Absent while OFFLINE or once the timing has no further fire. */
  nextFireTime?: string;
  /** SERIAL_*: nominal times waiting for the running instance. */
  queued?: string[];
  createdAt: string;
  updatedAt: string;
}

/** Answer of `GET /v1/schedules/{id}/preview`: the next nominal fire times, ISO-8601. */
export interface SchedulePreview {
  items: string[];
}

/** Item of `GET /v1/schedules/{id}/fires`: what the sweeper decided for one nominal time. */
export interface ScheduleFire {
  nominalTime: string;
  actualTime: string;
  /** actualTime - nominalTime, ms. */
  latenessMs: number;
  /** `FIRED`, `SKIPPED_MISFIRE`, `DISCARDED_OVERLAP` or `QUEUED_SERIAL`. */
  decision: string;
  /** FIRED: the instance started. */
  instanceId?: string;
}

/**
 * A backfill, DolphinScheduler's "complement data" (answer of `POST /v1/workflows/{name}/backfill`
 * (202), `GET /v1/backfills/{id}` and its pause / resume / cancel; lib/api/backfills.ts).
 * Counts are of nominal times.
 */
export interface Backfill {
  id: string;
  workflow: string;
  /** `RUNNING`, `PAUSED`, `CANCELLED`, `SUCCESS` or `FAILURE`. */
  state: string;
  /** `SERIAL` or `PARALLEL`. */
  mode: string;
  /** Runs at once (1 for SERIAL). */
  parallelism: number;
  priority: string;
  total: number;
  done: number;
  running: number;
  failed: number;
  /** Not started yet. */
  pending: number;
  /** The first and last nominal time, in run order (DESC backfills run the newest first). */
  firstTime?: string;
  lastTime?: string;
  createdAt: string;
  updatedAt: string;
}

/** Answer (200) of a backfill `dryRun`: the nominal times it would run, in run order. */
export interface BackfillDryRun {
  nominalTimes: string[];
}

/** Backfill states after which nothing changes any more (PAUSED may still be resumed). */
export const TERMINAL_BACKFILL_STATES: ReadonlySet<string> = new Set([
  "SUCCESS",
  "FAILURE",
  "CANCELLED",
]);

/**
 * An event trigger (answer of `POST /v1/triggers` (201) and `GET /v1/triggers/{id}`, item of
 * `GET /v1/triggers`; lib/api/triggers.ts): events matching the EventBridge `eventPattern` start
 * a run of `workflow`.
 */
export interface Trigger {
  id: string;
  workflow: string;
  /** An EventBridge event pattern object. */
  eventPattern: unknown;
  /** Workflow parameter name → JSONPath into the event (e.g. `$.detail.id`). */
  params: Record<string, string>;
  /** A match within this many seconds of the last run starts nothing (0 = off). */
  debounceSeconds: number;
  createdAt: string;
  lastFiredAt?: string;
}

/** What one event did to one matching trigger: a run started, or why not. */
export interface TriggerOutcome {
  triggerId: string;
  instanceId?: string;
  skipped?: string;
}

/**
 * Answer of `POST /v1/events` (EventBridge PutEvents' shape plus, per entry, the triggers it
 * matched). A failed entry has `ErrorCode` / `ErrorMessage` instead of `EventId`, as in PutEvents.
 */
export interface PutEventsResult {
  FailedEntryCount: number;
  Entries: Array<{
    EventId?: string;
    Triggers?: TriggerOutcome[];
    ErrorCode?: string;
    ErrorMessage?: string;
  }>;
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
