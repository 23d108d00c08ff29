/**
 * The end of an attempt on a worker: its result written (conditioned on the worker still holding
 * the attempt, and tried again while the store is out of reach), then its task event sent to the
 * dispatcher, then the attempt taken out of the leases index. Until that last step the attempt
 * stays in the index with a short deadline (the outbox of task events), so a worker that dies in
 * between has its event sent by the sweeper (lib/engine/sweeper.ts).
 */
import type { TaskState } from "../core/model.js";
import type { TaskMessage } from "../queue/messages.js";
import type { Queues } from "../queue/queues.js";
import type { Store } from "../store/store.js";
import type { TaskResult } from "../tasks/plugin.js";
import { retryWhileUnreachable, type STORE_RETRY_MS } from "./store-retry.js";

/**
 * Default of {@link ReportDeps.taskEventDueMs}: a send takes milliseconds, and SDK retries a few
 * seconds; past this the worker is taken for dead (or SQS for out) and the sweeper re-sends.
 */
export const TASK_EVENT_DUE_MS = 5_000;

/** What reporting an attempt needs of the worker's dependencies (lib/engine/worker.ts). */
export interface ReportDeps {
  store: Store;
  queues: Queues;
  now: () => number;
  /** See WorkerDeps.taskEventDueMs (default {@link TASK_EVENT_DUE_MS}). */
  taskEventDueMs?: number;
  /** See WorkerDeps.resultWriteRetryMs (default {@link STORE_RETRY_MS}). */
  resultWriteRetryMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/**
 * How an attempt ended on its worker: its task's result, or PAUSED by a pause that was promised
 * before it started (lib/engine/halt-gate.ts).
 */
export type AttemptResult = Omit<TaskResult, "state"> & { state: TaskResult["state"] | "PAUSED" };

/** Reports the attempts one worker ran. */
export class AttemptReporter {
  constructor(
    private readonly deps: ReportDeps,
    private readonly workerId: string,
  ) {}

  /** Writes the attempt's result (conditioned on still holding it) and emits its event. */
  async report(msg: TaskMessage, result: AttemptResult | "lost" | "shutdown"): Promise<void> {
    const { store } = this.deps;
    const key = { instanceId: msg.instanceId, code: msg.code, attempt: msg.attempt };
    if (result === "shutdown" || result === "lost") {
      // Report the attempt for failover now rather than after its lease runs out: the
      // dispatcher starts a new attempt (not counted against retries) as soon as it hears. A
      // lost attempt is normally failed over already, and this write then finds it changed;
      // it lands only for one that reached a worker lease after the sweeper took that lease
      // over (a hand-over written late), which nobody would fail over otherwise.
      const endedAt = this.deps.now();
      const handedBack = await this.durably(key, () =>
        store.updateTask(
          key,
          ["RUNNING"],
          {
            state: "NEED_FAULT_TOLERANCE",
            endedAt,
            error:
              result === "lost"
                ? `worker ${this.workerId} lost its lease`
                : `worker ${this.workerId} shut down`,
            leaseExpiresAt: this.eventDueAt(endedAt),
          },
          { worker: this.workerId },
        ),
      );
      if (handedBack) {
        await this.emit(msg, "NEED_FAULT_TOLERANCE");
        await this.eventSent(msg, "NEED_FAULT_TOLERANCE");
      }
      return;
    }
    // The attempt stays in the leases index until its event is sent (the outbox): should this
    // worker die or SQS fail before that, the sweeper sends it once the deadline passes.
    const endedAt = this.deps.now();
    const done = await this.durably(key, () =>
      store.updateTask(
        key,
        ["RUNNING"],
        {
          state: result.state,
          endedAt,
          leaseExpiresAt: this.eventDueAt(endedAt),
          ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
          ...(result.error ? { error: result.error } : {}),
          ...(result.outputs && Object.keys(result.outputs).length > 0
            ? { outputs: result.outputs }
            : {}),
        },
        { worker: this.workerId },
      ),
    );
    // A result nobody accepted (lease lost meanwhile) is dropped: a newer attempt owns the task.
    if (!done) return;
    await this.emit(msg, result.state, result.outputs);
    await this.eventSent(msg, result.state);
  }

  /**
   * A result write, tried again while the store is out of reach (lib/engine/store-retry.ts): a
   * task that ran to its end is not run again because its result could not be written at once.
   */
  private durably<T>(
    key: { instanceId: string; code: string; attempt: number },
    write: () => Promise<T>,
  ): Promise<T> {
    const { log } = this.deps;
    return retryWhileUnreachable(write, {
      now: this.deps.now,
      ...(this.deps.resultWriteRetryMs !== undefined
        ? { retryMs: this.deps.resultWriteRetryMs }
        : {}),
      onRetry: (e) =>
        log?.("worker: result not recorded yet, trying again", { ...key, error: String(e) }),
      onLanded: (tries) =>
        log?.("worker: result recorded after the store came back", { ...key, tries }),
    });
  }

  /** When the task event of an attempt that ended at `endedAt` (epoch ms) counts as lost. */
  private eventDueAt(endedAt: number): number {
    return endedAt + (this.deps.taskEventDueMs ?? TASK_EVENT_DUE_MS);
  }

  /**
   * Takes an attempt whose event was sent out of the leases index (the outbox entry is done).
   * Conditioned on its final state, so it never touches a newer write. A failure only costs a
   * duplicate event from the sweeper, which the dispatcher ignores: logged, not thrown.
   */
  async eventSent(msg: TaskMessage, state: TaskState): Promise<void> {
    const key = { instanceId: msg.instanceId, code: msg.code, attempt: msg.attempt };
    try {
      await this.deps.store.updateTask(key, [state], {}, { removeLease: true });
    } catch (e) {
      this.deps.log?.("worker: sent task event not cleared, the sweeper will send it again", {
        ...key,
        error: String(e),
      });
    }
  }

  /** Sends the attempt's task event to the dispatcher (its OUT values with it). */
  emit(msg: TaskMessage, state: TaskState, outputs?: Record<string, string>): Promise<void> {
    return this.deps.queues.sendToDispatcher([
      {
        kind: "task",
        instanceId: msg.instanceId,
        code: msg.code,
        attempt: msg.attempt,
        state,
        ...(outputs && Object.keys(outputs).length > 0 ? { outputs } : {}),
      },
    ]);
  }
}
