/**
 * Message bodies on Shoal's queues. Task messages carry everything a worker needs, so that a
 * worker reads no definition; event messages are small and idempotent to apply.
 */
import { createHash } from "node:crypto";
import type { Priority, TaskState, WorkerTaskDefinition } from "../core/model.js";

/** A task attempt for a worker (task queues, one per worker group and priority tier). */
export interface TaskMessage {
  instanceId: string;
  workflow: string;
  version: number;
  code: string;
  attempt: number;
  instancePriority: Priority;
  dryRun: boolean;
  /** When the dispatcher created the attempt, epoch ms. */
  submittedAt: number;
  task: WorkerTaskDefinition;
  /**
   * Parameters resolved by the dispatcher: startup > local > upstream OUT > global > built-in,
   * references inside values expanded (lib/core/params.ts).
   */
  params: Record<string, string>;
  /** Base time of `$[...]` time expressions: schedule time, else creation time, epoch ms. */
  baseTime?: number;
  /** IANA zone of `$[...]` time expressions (the instance's); absent: UTC. */
  timezone?: string;
}

/** A signal to the dispatcher (events FIFO queue, message group = workflow instance id). */
export type DispatcherMessage =
  | { kind: "command"; commandId: string; instanceId: string; resignal?: number }
  | TaskEvent
  | {
      /** Several task events of one instance in one message (see packTaskEvents). */
      kind: "tasks";
      instanceId: string;
      events: PackedTaskEvent[];
    }
  /** The workflow timeout fired (sweeper timer). */
  | { kind: "timeout"; instanceId: string; deadlineAt: number }
  /** Time to check a waiting DEPENDENT task again (sweeper timer). */
  | { kind: "check"; instanceId: string; code: string; attempt: number; at: number };

type PackedTaskEvent = Omit<TaskEvent, "kind" | "instanceId">;

/** One task attempt's state change. */
export interface TaskEvent {
  kind: "task";
  instanceId: string;
  code: string;
  attempt: number;
  state: TaskState;
  /** OUT parameters the attempt set. */
  outputs?: Record<string, string>;
  /** Tells apart repeated reports of one state (a sub-workflow paused twice). */
  seq?: number;
  /** Why it failed, when the dispatcher should record it (sub-workflow). */
  error?: string;
}

/**
 * Puts the task events of one instance that leave together into one message. A FIFO message
 * group hands out its messages one batch at a time (and fauxqs one message at a time), so one
 * message per instance lets the dispatcher apply them all in one step.
 */
export function packTaskEvents(events: readonly DispatcherMessage[]): DispatcherMessage[] {
  const out: DispatcherMessage[] = [];
  const packs = new Map<string, Extract<DispatcherMessage, { kind: "tasks" }>>();
  for (const e of events) {
    if (e.kind !== "task") {
      out.push(e);
      continue;
    }
    let pack = packs.get(e.instanceId);
    if (!pack) {
      pack = { kind: "tasks", instanceId: e.instanceId, events: [] };
      packs.set(e.instanceId, pack);
      out.push(pack);
    }
    const { kind: _k, instanceId: _i, ...rest } = e;
    pack.events.push(rest);
  }
  // A pack of one is sent as the plain event it is.
  return out.map((m) => {
    if (m.kind !== "tasks" || m.events.length > 1) return m;
    const [only] = m.events as [PackedTaskEvent];
    return { kind: "task", instanceId: m.instanceId, ...only };
  });
}

/** The task events a message carries (none for a command). */
export function taskEventsOf(m: DispatcherMessage): TaskEvent[] {
  if (m.kind === "task") return [m];
  if (m.kind === "tasks")
    return m.events.map((e) => ({ kind: "task", instanceId: m.instanceId, ...e }));
  return [];
}

/** Deduplication id: the same fact sent twice within SQS's 5-minute window is delivered once. */
export function dispatcherMessageDedupId(e: DispatcherMessage): string {
  const raw =
    e.kind === "command"
      ? `c:${e.commandId}:${e.resignal ?? 0}`
      : e.kind === "task"
        ? `t:${e.instanceId}:${e.code}:${e.attempt}:${e.state}:${e.seq ?? ""}`
        : e.kind === "tasks"
          ? `p:${e.instanceId}:${e.events.map((x) => `${x.code}:${x.attempt}:${x.state}:${x.seq ?? ""}`).join(",")}`
          : e.kind === "timeout"
            ? `o:${e.instanceId}:${e.deadlineAt}`
            : `k:${e.instanceId}:${e.code}:${e.attempt}:${e.at}`;
  // SQS allows 128 characters of [A-Za-z0-9!-/:-@[-`{-~]; codes are safe, long ids are hashed.
  return raw.length <= 128 ? raw : createHash("sha256").update(raw).digest("hex");
}
