/**
 * The facts `shoal explain` decides from and the shape of its answer (lib/core/explain.ts), with
 * the helpers its parts share. Pure. Times are epoch ms in facts, ISO-8601 in answers.
 */

import { currentAttemptCandidates } from "./current-attempts.js";
import type { DependResult } from "./dependent.js";
import type {
  CommandType,
  FailureStrategy,
  InstanceState,
  Priority,
  TaskDefinition,
  TaskScope,
  TaskState,
} from "./model.js";
import type { Progress } from "./progress.js";

/** Every reason explain gives, roughly in the order it checks them. */
export const EXPLAIN_REASONS = [
  "INSTANCE_STARTING",
  "NOT_BEFORE",
  "COMMAND_PENDING",
  "INSTANCE_PAUSED",
  "INSTANCE_PAUSING",
  "INSTANCE_STOPPING",
  "INSTANCE_TIMED_OUT",
  "INSTANCE_ENDED",
  "NOT_IN_SCOPE",
  "SKIPPED_BY_BRANCH",
  "UPSTREAM_FAILED",
  "WAITING_FOR_UPSTREAM",
  "FAILURE_STRATEGY_END",
  "NOT_STARTED",
  "TASK_GROUP_FULL",
  "RETRY_DUE",
  "NO_WORKER",
  "WORKERS_BUSY",
  "QUEUED_BEHIND_HIGHER_PRIORITY",
  "QUEUED",
  "FAILING_OVER",
  "WAITING_FOR_SUB_WORKFLOW",
  "WAITING_FOR_DEPENDENCY",
  "DECIDING",
  "RUNNING",
  "FINISHED",
] as const;
export type ExplainReason = (typeof EXPLAIN_REASONS)[number];

/** The part of a task instance record (one attempt) explain reads. Times are epoch ms. */
export interface ExplainAttempt {
  code: string;
  attempt: number;
  state: TaskState;
  workerGroup: string;
  submittedAt: number;
  startedAt?: number;
  endedAt?: number;
  worker?: string;
  error?: string;
  taskGroup?: string;
  /** A delayed retry: when it may start. */
  dueAt?: number;
  subInstanceId?: string;
  /** CONDITIONS / SWITCH: the branch targets taken. */
  branch?: string[];
}

/** The workflow instance, or the stand-in of one whose start command waits (no `progress`). */
export interface ExplainInstance {
  instanceId: string;
  /** Absent while the start command waits for the dispatcher. */
  state?: InstanceState;
  priority: Priority;
  failureStrategy: FailureStrategy;
  /** One slot per task (lib/core/progress.ts SLOT). */
  progress: Progress;
  startTasks?: readonly string[];
  taskScope?: TaskScope;
  /** The workflow timeout fired, epoch ms. */
  timedOutAt?: number;
}

/** A command written for the instance that the dispatcher has not carried out. */
export interface PendingCommand {
  type: CommandType;
  createdAt: number;
  /** Not to start before this, epoch ms (a scheduled fire signalled early). */
  notBefore?: number;
}

/** One worker's last heartbeat: when, and how busy it was then. Times are epoch ms. */
export interface WorkerBeatFacts {
  worker: string;
  at: number;
  /** Task slots in use (tasks running). */
  used: number;
  /** Task slots in all (`--concurrency`). */
  slots: number;
  /** Messages received and held for a free slot (prefetched). */
  held?: number;
}

/** What is known of one worker group. */
export interface WorkerGroupFacts {
  /** A Lambda worker serves it (an event source mapping polls; no heartbeat). */
  lambda?: boolean;
  /** The stack's ECS service serves it (scaled on queue depth, down to 0 tasks when idle). */
  ecs?: boolean;
  /** No heartbeat store is configured: whether a worker polls is not known. */
  heartbeatsUnknown?: boolean;
  /**
   * The last heartbeat a worker recorded (absent when none ever did), with each worker's own
   * (`workers`, live and recently gone; absent from workers older than the per-worker entries).
   */
  heartbeat?: { lastPollAt: number; worker: string; workers?: readonly WorkerBeatFacts[] };
  /** Approximate visible messages per tier; "missing": the group has no task queues. */
  queued?: Partial<Record<Priority, number>> | "missing";
  /** Approximate in-flight messages per tier: received by a worker, not deleted yet. */
  inFlight?: Partial<Record<Priority, number>>;
}

/** What is known of one task group. */
export interface TaskGroupFacts {
  /** Absent when the group does not exist. */
  capacity?: number;
  used: number;
  waiting: number;
  /** 1-based queue positions of waiting attempts, by `code#attempt` of this instance. */
  positions: Record<string, number>;
}

/** One item of a DEPENDENT task with its current result. */
export interface DependentItemFacts {
  workflow: string;
  task?: string;
  cycle: string;
  dateValue: string;
  result: DependResult;
}

/** Everything explain decides from. */
export interface ExplainFacts {
  /** Epoch ms. */
  now: number;
  instance: ExplainInstance;
  pendingCommand?: PendingCommand;
  /** The definition's tasks, by index (the progress follows this order). */
  tasks: readonly TaskDefinition[];
  /** Upstream task indices per task (Dag.upstream). */
  upstream: readonly (readonly number[])[];
  /** Attempts of the instance's tasks (any round, any order). */
  attempts: readonly ExplainAttempt[];
  workerGroups?: Readonly<Record<string, WorkerGroupFacts>>;
  taskGroups?: Readonly<Record<string, TaskGroupFacts>>;
  /** SUB_WORKFLOW tasks: the child instance's state (absent: not created yet), by task code. */
  children?: Readonly<Record<string, { state?: InstanceState }>>;
  /** DEPENDENT tasks: their items' results, by task code. */
  dependents?: Readonly<Record<string, readonly DependentItemFacts[]>>;
}

/** The answer for one task. */
export interface Explanation {
  code: string;
  type: TaskDefinition["type"];
  /** The current attempt's state; NOT_STARTED without one; NOT_IN_SCOPE outside the run. */
  state: TaskState | "NOT_STARTED" | "NOT_IN_SCOPE";
  /** The current attempt's number, when it has one. */
  attempt?: number;
  reason: ExplainReason;
  /** One sentence. */
  message: string;
  facts: Record<string, unknown>;
}

/** ISO-8601 of epoch ms. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The attempt that holds task `index`'s current state: the first of
 * lib/core/current-attempts.ts `currentAttemptCandidates` that has a record; undefined when the
 * task has not started in the current round.
 */
export function currentAttempt(
  f: Pick<ExplainFacts, "instance" | "tasks" | "attempts">,
  index: number,
  byKey = attemptIndex(f.attempts),
): ExplainAttempt | undefined {
  const code = f.tasks[index]?.code;
  if (!code) return undefined;
  for (const a of currentAttemptCandidates(f.instance.progress, index)) {
    const found = byKey.get(`${code}#${a}`);
    if (found) return found;
  }
  return undefined;
}

/** Attempts by `code#attempt`. */
export function attemptIndex(attempts: readonly ExplainAttempt[]): Map<string, ExplainAttempt> {
  return new Map(attempts.map((a) => [`${a.code}#${a.attempt}`, a]));
}

/** What a reason check returns: the reason, its sentence and its facts. */
export type Decision = Pick<Explanation, "reason" | "message" | "facts">;

/** "a, b and c", or "a, b, c and 3 more" past `max`. */
export function listed(items: readonly string[], max = 3): string {
  if (items.length <= 1) return items[0] ?? "";
  if (items.length > max) {
    return `${items.slice(0, max).join(", ")} and ${items.length - max} more`;
  }
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}
