/**
 * The sweeper (DolphinScheduler's StateWheelExecuteThread and failover): every minute on AWS,
 * every second in standalone. It re-signals commands left PENDING (outbox), fails over task
 * attempts whose worker stopped renewing its lease (NEED_FAULT_TOLERANCE: the dispatcher starts
 * a new attempt, not counted against retries), fires due timers (long retries, workflow
 * timeouts, DEPENDENT re-checks) and frees task-group slots nobody holds any more.
 */
import type { TaskGroupHolder } from "../store/task-groups.js";
import type { TimerRecord } from "../store/timers.js";
import { resignalStaleCommands } from "./commands.js";
import type { EngineDeps } from "./engine-deps.js";
import { grantTaskGroupSlot, type PendingSend, sendPending } from "./task-dispatch.js";
import {
  decodeTimer,
  INSTANCE_TIMEOUT_TIMER,
  LOGIC_CHECK_TIMER,
  RELEASE_TASK_TIMER,
} from "./timers.js";

export interface SweeperDeps extends Omit<EngineDeps, "definitions"> {
  /** A command PENDING this long is signalled again, ms. */
  commandResignalMs: number;
}

export interface SweepReport {
  resignalled: number;
  failedOver: number;
  timersFired: number;
  slotsFreed: number;
}

const PAGE = 100;

export class Sweeper {
  constructor(private readonly deps: SweeperDeps) {}

  async sweep(): Promise<SweepReport> {
    const [resignalled, failedOver, timersFired, slotsFreed] = await Promise.all([
      this.resignalCommands(),
      this.failOverExpiredLeases(),
      this.fireTimers(),
      this.reconcileTaskGroups(),
    ]);
    return { resignalled, failedOver, timersFired, slotsFreed };
  }

  /** Acts on every due timer, then deletes it (a crash in between acts again: idempotent). */
  private async fireTimers(): Promise<number> {
    const due = await this.deps.timers.listDueTimers(this.deps.now(), PAGE);
    let n = 0;
    for (const t of due) {
      try {
        await this.fire(t);
        await this.deps.timers.deleteTimer(t);
        n++;
      } catch (e) {
        this.deps.log?.("sweeper: timer not fired, next sweep tries again", {
          id: t.id,
          error: String(e),
        });
      }
    }
    return n;
  }

  private async fire(stored: TimerRecord): Promise<void> {
    const { queues } = this.deps;
    const t = decodeTimer(stored);
    switch (t?.kind) {
      case RELEASE_TASK_TIMER:
        await sendPending(this.deps, JSON.parse(t.payload) as PendingSend);
        return;
      case INSTANCE_TIMEOUT_TIMER:
        await queues.sendToDispatcher([
          { kind: "timeout", instanceId: t.instanceId, deadlineAt: t.dueAt },
        ]);
        return;
      case LOGIC_CHECK_TIMER:
        await queues.sendToDispatcher([
          {
            kind: "check",
            instanceId: t.instanceId,
            code: t.code,
            attempt: t.attempt,
            at: t.dueAt,
          },
        ]);
        return;
      case undefined:
        this.deps.log?.("sweeper: unknown timer kind dropped", {
          id: stored.id,
          kind: stored.kind,
        });
    }
  }

  /** Frees slots whose holder's attempt is over, then hands free slots to waiting tasks. */
  private async reconcileTaskGroups(): Promise<number> {
    const live = async (h: TaskGroupHolder) => {
      const t = await this.deps.store.getTaskInstance(h.instanceId, h.code, h.attempt);
      return t?.state === "DISPATCHED" || t?.state === "RUNNING";
    };
    try {
      const r = await this.deps.gate.reconcile(live, (w) => grantTaskGroupSlot(this.deps, w));
      return r.freed;
    } catch (e) {
      this.deps.log?.("sweeper: task group reconcile incomplete", { error: String(e) });
      return 0;
    }
  }

  /** Signals again the commands a lost signal or a crash left PENDING (the outbox's sweep). */
  private resignalCommands(): Promise<number> {
    return resignalStaleCommands(this.deps, this.deps.commandResignalMs, PAGE);
  }

  /**
   * Fails over attempts whose lease ran out. The item stays in the leases index (state
   * NEED_FAULT_TOLERANCE) until its event was sent, so a crash or a failed send between the two
   * is finished by the next sweep instead of leaving the instance waiting for ever.
   */
  private async failOverExpiredLeases(): Promise<number> {
    const { store, queues } = this.deps;
    const now = this.deps.now();
    const expired = await store.listExpiredLeases(now, PAGE);
    let n = 0;
    for (const t of expired) {
      const key = { instanceId: t.instanceId, code: t.code, attempt: t.attempt };
      try {
        if (t.state === "RUNNING") {
          const moved = await store.updateTask(
            key,
            ["RUNNING"],
            {
              state: "NEED_FAULT_TOLERANCE",
              endedAt: now,
              error: `worker ${t.worker ?? "?"} stopped renewing its lease`,
            },
            { leaseExpiredBefore: now },
          );
          if (!moved) continue; // renewed or finished meanwhile
          this.deps.log?.("sweeper: task failed over", { ...key, worker: t.worker });
          n++;
        } else if (t.state !== "NEED_FAULT_TOLERANCE") {
          // Finished meanwhile; its lease fields only need clearing.
          await store.updateTask(key, [t.state], {}, { removeLease: true });
          continue;
        }
        await queues.sendToDispatcher([{ kind: "task", ...key, state: "NEED_FAULT_TOLERANCE" }]);
        await store.updateTask(key, ["NEED_FAULT_TOLERANCE"], {}, { removeLease: true });
      } catch (e) {
        this.deps.log?.("sweeper: failover not finished, next sweep goes on", {
          ...key,
          error: String(e),
        });
      }
    }
    return n;
  }
}
