/**
 * What the store keeps. Times are epoch milliseconds. Items are described in
 * docs/architecture.md together with the condition every write carries.
 */

import type {
  CommandType,
  FailureStrategy,
  InstanceState,
  ParentLink,
  Priority,
  ReleaseState,
  RunRequest,
  TaskScope,
  TaskState,
  TaskType,
  WorkflowDefinition,
} from "../core/model.js";
import type { Progress } from "../core/progress.js";
import type { RunType } from "../core/run-type.js";
import type { TriggerCause } from "../core/trigger-cause.js";

/** The head item of a workflow: its latest version and release state. */
export interface WorkflowHead {
  name: string;
  latestVersion: number;
  releaseState: ReleaseState;
  /** The definition's `displayName` (the name people read), listed with the head. */
  displayName?: string;
  description?: string;
  createdAt: number;
  updatedAt: number;
  /**
   * A deleted workflow keeps its head as a tombstone, so that version numbers are never reused
   * (definitions are cached by name and version).
   */
  deleted?: boolean;
}

/** One immutable version of a definition. */
export interface StoredDefinition {
  name: string;
  version: number;
  definition: WorkflowDefinition;
  createdAt: number;
}

export type CommandState = "PENDING" | "DONE";

/** A request to the dispatcher, written before it is signalled (outbox). */
export interface CommandRecord {
  commandId: string;
  type: CommandType;
  instanceId: string;
  workflow: string;
  version: number;
  state: CommandState;
  /** START_WORKFLOW: the run request; control commands: empty. */
  run?: RunRequest;
  /** A sub-workflow's start: the parent task attempt it reports to. */
  parent?: ParentLink;
  /** Sub-workflow nesting depth (0 = top level). */
  depth?: number;
  /** Nominal time of a scheduled, backfilled or sub-workflow run, epoch ms. */
  scheduleTime?: number;
  /**
   * IANA zone of the run's time parameters, from the schedule, backfill or parent instance that
   * started it; absent: the workflow's own `timezone`, else UTC.
   */
  timezone?: string;
  /** The schedule, backfill or trigger that started the run. */
  scheduleId?: string;
  backfillId?: string;
  triggerId?: string;
  /**
   * A run a trigger started, or a sub-workflow of one: the chain it belongs to
   * (lib/core/trigger-cause.ts), published as its instance events' `detail.trigger`.
   */
  triggerCause?: TriggerCause;
  /** Not to be started before this, epoch ms (a fire signalled ahead of its nominal time). */
  notBefore?: number;
  createdAt: number;
  /** Set while the command is being worked on; a stale claim can be taken over. */
  claimedAt?: number;
  doneAt?: number;
  /** How often the sweeper signalled it again. */
  resignals?: number;
  /** When the sweeper last signalled it, epoch ms. */
  lastSignalAt?: number;
}

/** A workflow instance and its DAG progress. `rev` guards every write (optimistic lock). */
export interface InstanceRecord {
  instanceId: string;
  workflow: string;
  /** Definition version. */
  version: number;
  state: InstanceState;
  priority: Priority;
  failureStrategy: FailureStrategy;
  commandType: CommandType;
  params: Record<string, string>;
  dryRun: boolean;
  /** Worker group for tasks that use "default" (a run's or schedule's choice). */
  workerGroup?: string;
  startTasks?: string[];
  taskScope: TaskScope;
  createdAt: number;
  startedAt?: number;
  endedAt?: number;
  scheduleTime?: number;
  /**
   * IANA zone of its built-in time parameters and DEPENDENT date periods, fixed when it is
   * created (the command's zone, else the definition's `timezone`); absent: UTC.
   */
  timezone?: string;
  progress: Progress;
  /** The schedule, backfill or trigger that started the run. */
  scheduleId?: string;
  backfillId?: string;
  triggerId?: string;
  /**
   * A run a trigger started, or a sub-workflow of one: the chain it belongs to
   * (lib/core/trigger-cause.ts), published as its instance events' `detail.trigger`.
   */
  triggerCause?: TriggerCause;
  /**
   * What started it (lib/core/run-type.ts), written with the first write and never changed;
   * absent on items written before it existed. Stored (not derived) so the list indexes can
   * project it.
   */
  runType?: RunType;
  /** A sub-workflow instance: the parent task attempt it reports its result to. */
  parent?: ParentLink;
  /** Sub-workflow nesting depth (0 = top level). */
  depth?: number;
  /** How many times it ran (1, then +1 per rerun or recover-failed). */
  runs?: number;
  /**
   * OUT parameters of finished tasks: task code → name → value, in memory. The values are stored
   * on the task items of the attempts that set them ({@link outputSlots}), and a step reads those
   * it needs (lib/engine/upstream-outputs.ts). Only an item written by 0.1.0, which has no
   * `outputSlots`, keeps them inline.
   */
  outputs?: Record<string, Record<string, string>>;
  /**
   * One character per task index: "1" where the task's current attempt succeeded and set OUT
   * parameters (an index past the end: none). Stored instead of the values, so that the
   * instance item, rewritten on every dispatcher step, does not grow with them (docs/cost.md).
   */
  outputSlots?: string;
  /** Bytes of the OUT values of {@link outputSlots} (JSON), held under MAX_INSTANCE_OUTPUT_BYTES. */
  outputBytes?: number;
  /** When the workflow's `timeoutSeconds` runs out, epoch ms. */
  deadlineAt?: number;
  /** Set when the workflow timeout fired: nothing new starts, it ends FAILURE. */
  timedOutAt?: number;
  /** Why it failed, when the reason is not a task's (workflow timeout). */
  error?: string;
  /** Item revision: incremented by every write, which is conditioned on the previous value. */
  rev: number;
}

/** What instance lists hold (the list indexes project these fields only). */
export type InstanceSummaryRecord = Pick<
  InstanceRecord,
  | "instanceId"
  | "workflow"
  | "version"
  | "state"
  | "priority"
  | "createdAt"
  | "startedAt"
  | "endedAt"
  | "scheduleTime"
  | "runType"
>;

/** One attempt of one task. Keyed by (instanceId, code, attempt). */
export interface TaskInstanceRecord {
  instanceId: string;
  workflow: string;
  code: string;
  /** 1-based. */
  attempt: number;
  type: TaskType;
  state: TaskState;
  priority: Priority;
  workerGroup: string;
  submittedAt: number;
  startedAt?: number;
  endedAt?: number;
  /** Id of the worker that claimed it. */
  worker?: string;
  exitCode?: number;
  error?: string;
  /**
   * While RUNNING: when the worker's claim lapses unless renewed. Once the attempt is over and
   * until its task event was sent: when that event counts as lost (the sweeper then sends it
   * again, lib/engine/sweeper.ts). Epoch ms; the item sits in the leases index while set.
   */
  leaseExpiresAt?: number;
  /**
   * The worker lease the attempt was handed to once it ran past its first renewal
   * (lib/store/worker-leases.ts): its worker renews that lease for it, and a stop asks through it.
   */
  workerLease?: string;
  /** Set by a stop: the worker kills the task at its next lease renewal. */
  killRequested?: boolean;
  /** Why the kill was requested (one sentence); becomes the killed attempt's `error`. */
  killReason?: string;
  /** OUT parameters the attempt set. */
  outputs?: Record<string, string>;
  /** A WARN timeout fired: the task went on running. */
  warning?: string;
  /** SUB_WORKFLOW: the child instance. */
  subInstanceId?: string;
  /** CONDITIONS / SWITCH: the branch targets taken. */
  branch?: string[];
  /** SWITCH: 0-based index of the case that matched; -1 when none did (`defaultNext`). */
  switchCase?: number;
  /**
   * A delayed retry (it waits SUBMITTED): when its retry interval ends and a worker may take it,
   * epoch ms (`shoal explain`: "retry due at T").
   */
  dueAt?: number;
  /** Task group whose slot the attempt needs (it waits SUBMITTED until one is free). */
  taskGroup?: string;
}

/** A page of a list. */
export interface Page<T> {
  items: T[];
  nextToken?: string;
}

export type { Progress };
