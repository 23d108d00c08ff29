/**
 * Message bodies on Shoal's queues. Task messages carry everything a worker needs, so that a
 * worker reads no definition; event messages are small and idempotent to apply.
 */
import { createHash } from "node:crypto";
import type { Priority, TaskDefinition, TaskState } from "../core/model.js";

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
  task: TaskDefinition;
  /** Global, startup and local parameters merged (startup > local > global). */
  params: Record<string, string>;
}

/** A signal to the dispatcher (events FIFO queue, message group = workflow instance id). */
export type EventMessage =
  | { kind: "command"; commandId: string; instanceId: string; resignal?: number }
  | { kind: "task"; instanceId: string; code: string; attempt: number; state: TaskState };

/** Deduplication id: the same fact sent twice within SQS's 5-minute window is delivered once. */
export function eventDedupId(e: EventMessage): string {
  const raw =
    e.kind === "command"
      ? `c:${e.commandId}:${e.resignal ?? 0}`
      : `t:${e.instanceId}:${e.code}:${e.attempt}:${e.state}`;
  // SQS allows 128 characters of [A-Za-z0-9!-/:-@[-`{-~]; codes are safe, long ids are hashed.
  return raw.length <= 128 ? raw : createHash("sha256").update(raw).digest("hex");
}
