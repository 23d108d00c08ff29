/**
 * The sweeper (DolphinScheduler's StateWheelExecuteThread and failover): every minute on AWS,
 * every second in standalone. It re-signals commands left PENDING (outbox), re-sends task events
 * a dead worker did not send (outbox of task events), fails over task
 * attempts whose worker stopped renewing its lease (NEED_FAULT_TOLERANCE: the dispatcher starts
 * a new attempt, not counted against retries), fires due timers (long retries, workflow
 * timeouts, DEPENDENT re-checks) and frees task-group slots nobody holds any more.
 */
import { isFinalTaskState } from "../core/model.js";
import type { DispatcherMessage } from "../queue/messages.js";
import type { TaskInstanceRecord } from "../store/records.js";
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

/** The task event of an attempt that is over (its OUT values with it, when it has any). */
function taskEventOf(t: TaskInstanceRecord): DispatcherMessage {
  const outputs = t.state === "NEED_FAULT_TOLERANCE" ? undefined : t.outputs;
  return {
    kind: "task",
    instanceId: t.instanceId,
    code: t.code,
    attempt: t.attempt,
    state: t.state,
    ...(outputs && Object.keys(outputs).length > 0 ? { outputs } : {}),
  };
}

export interface SweeperDeps extends Omit<EngineDeps, "definitions"> {
  /** A command PENDING this long is signalled again, ms. */
  commandResignalMs: number;
  /**
   * After sweeps that failed (the store out of reach), how long lapsed leases are left alone
   * once a sweep gets through again, ms: the workers could not renew either, and a live one
   * renews within its lease (the lease duration; absent: no wait). Kubernetes' node controller
   * holds evictions the same way while it cannot tell a dead node from its own partition.
   */
  failoverGraceMs?: number;
}

export interface SweepReport {
  resignalled: number;
  failedOver: number;
  /**
   * Overdue task events sent again (their worker died or SQS failed before it sent them): of
   * finished attempts, and of NEED_FAULT_TOLERANCE ones (a shutting-down worker's hand-back, or
   * an earlier sweep's failover whose send failed). Counted once the send succeeded.
   */
  eventsResent: number;
  timersFired: number;
  slotsFreed: number;
}

const PAGE = 100;
/** How long a dead worker lease is kept (and its shard swept) before it is deleted, ms. */
export const DEAD_WORKER_LEASE_KEPT_MS = 10 * 60_000;

export class Sweeper {
  /** The last sweep failed: the store may have been out of reach for the workers as well. */
  private lastSweepFailed = false;
  /** Until when lapsed leases are not failed over (epoch ms), after sweeps that failed. */
  private failoverGraceUntil = 0;

  constructor(private readonly deps: SweeperDeps) {}

  /**
   * One sweep. Throws when a listing fails (the store out of reach); the next sweep after such
   * failures leaves lapsed leases alone for {@link SweeperDeps.failoverGraceMs}.
   */
  async sweep(): Promise<SweepReport> {
    if (this.lastSweepFailed && this.deps.failoverGraceMs) {
      const now = this.deps.now();
      const already = now < this.failoverGraceUntil;
      this.failoverGraceUntil = now + this.deps.failoverGraceMs;
      if (!already)
        this.deps.log?.(
          "sweeper: sweeping again after failed sweeps; lapsed leases wait for their workers to renew",
          {
            seconds: this.deps.failoverGraceMs / 1000,
          },
        );
    }
    let swept: [number, { failedOver: number; eventsResent: number }, number, number, number];
    try {
      swept = await Promise.all([
        this.resignalCommands(),
        this.failOverExpiredLeases(),
        this.resendOverdueTaskEvents(),
        this.fireTimers(),
        this.reconcileTaskGroups(),
      ]);
    } catch (e) {
      this.lastSweepFailed = true;
      throw e;
    }
    this.lastSweepFailed = false;
    const [resignalled, leases, overdue, timersFired, slotsFreed] = swept;
    return {
      resignalled,
      failedOver: leases.failedOver,
      eventsResent: leases.eventsResent + overdue,
      timersFired,
      slotsFreed,
    };
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
   * Sends again, in one batch, the task events of attempts that are over but whose event is
   * overdue (the outbox of task events: the worker writes its result with an event deadline a
   * few seconds ahead, lib/engine/worker.ts, and clears it once the event was sent), then takes
   * each out of the outbox, conditioned on the state sent. A failed send leaves them all for the
   * next sweep; the dispatcher ignores an event it had applied after all.
   * @returns how many were sent (and cleared or changed meanwhile).
   */
  private async resendOverdueTaskEvents(): Promise<number> {
    const { store, queues } = this.deps;
    const overdue = await store.listOverdueTaskEvents(this.deps.now(), PAGE);
    if (overdue.length === 0) return 0;
    try {
      await queues.sendToDispatcher(overdue.map(taskEventOf));
    } catch (e) {
      this.deps.log?.("sweeper: overdue task event not finished, next sweep sends it again", {
        events: overdue.length,
        error: String(e),
      });
      return 0;
    }
    await Promise.all(
      overdue.map(async (t) => {
        const key = { instanceId: t.instanceId, code: t.code, attempt: t.attempt };
        this.deps.log?.("sweeper: task event re-sent", { ...key, state: t.state });
        try {
          await store.updateTask(key, [t.state], {}, { removeLease: true });
        } catch (e) {
          // Sent again by the next sweep: a duplicate the dispatcher ignores.
          this.deps.log?.("sweeper: re-sent task event not cleared, next sweep sends it again", {
            ...key,
            error: String(e),
          });
        }
      }),
    );
    return overdue.length;
  }

  /**
   * Fails over attempts whose lease ran out: NEED_FAULT_TOLERANCE, then its event, then out of
   * the index. The item stays in the index until its event was sent, so a crash or a failed
   * send in between is finished by the next sweep instead of leaving the instance waiting for
   * ever (an attempt over found here, such as one written before the outbox of task events had
   * its own shard, has its event sent again the same way).
   * @returns how many attempts were failed over, and how many events of attempts already over
   *   were sent again ({@link SweepReport}).
   */
  private async failOverExpiredLeases(): Promise<{ failedOver: number; eventsResent: number }> {
    const now = this.deps.now();
    const expired = await this.deps.store.listExpiredLeases(now, PAGE);
    const counts = { failedOver: 0, eventsResent: 0 };
    for (const t of expired) {
      // Just after an outage: its worker may be alive and about to renew, or to write its result.
      if (t.state === "RUNNING" && now < this.failoverGraceUntil) continue;
      await this.failOver(t, now, { leaseExpiredBefore: now }, counts);
    }
    const workers = await this.failOverDeadWorkers(now);
    return {
      failedOver: counts.failedOver + workers.failedOver,
      eventsResent: counts.eventsResent + workers.eventsResent,
    };
  }

  /**
   * Worker leases that lapsed (lib/engine/worker-lease.ts): each is marked dead, so that its
   * worker can never renew it again, then every attempt handed to it is failed over as one whose
   * own lease lapsed; the lease is deleted {@link DEAD_WORKER_LEASE_KEPT_MS} later. A sweep that
   * stops half-way leaves the dead lease listed for the next sweep to finish.
   */
  private async failOverDeadWorkers(
    now: number,
  ): Promise<{ failedOver: number; eventsResent: number }> {
    const { store } = this.deps;
    const counts = { failedOver: 0, eventsResent: 0 };
    for (const w of await store.listExpiredWorkerLeases(now, PAGE)) {
      if (!w.dead && now < this.failoverGraceUntil) continue;
      try {
        if (!w.dead && !(await store.markWorkerLeaseDead(w.leaseId, now))) continue; // renewed
        const held = await store.listWorkerLeaseTasks(w.leaseId, PAGE);
        let left = false;
        for (const t of held) {
          // Fenced by the worker that held it: a newer claim of the attempt is not touched.
          const done = await this.failOver(t, now, t.worker ? { worker: t.worker } : {}, counts);
          if (!done) left = true;
        }
        // Kept a while after its death, its shard listed again by each sweep: a hand-over that
        // reached it late (a slow write) is failed over too, not left behind.
        const deadAt = w.deadAt ?? now;
        if (!left && held.length === 0 && now - deadAt > DEAD_WORKER_LEASE_KEPT_MS) {
          await store.deleteWorkerLease(w.leaseId);
        }
      } catch (e) {
        this.deps.log?.("sweeper: worker lease failover not finished, next sweep goes on", {
          leaseId: w.leaseId,
          worker: w.worker,
          error: String(e),
        });
      }
    }
    return counts;
  }

  /**
   * Fails over one attempt whose lease lapsed (RUNNING → NEED_FAULT_TOLERANCE, conditioned on
   * `fence`), or sends the overdue event of one already over, then takes it out of the index.
   * @returns false when it is left in the index for the next sweep (a send or write failed).
   */
  private async failOver(
    t: TaskInstanceRecord,
    now: number,
    fence: { leaseExpiredBefore?: number; worker?: string },
    counts: { failedOver: number; eventsResent: number },
  ): Promise<boolean> {
    const { store, queues } = this.deps;
    const key = { instanceId: t.instanceId, code: t.code, attempt: t.attempt };
    // Over, and its event not sent: a failover whose send failed last sweep (or an attempt
    // written before the outbox had its own shard), or an attempt its worker ended PAUSED
    // before it started (halt-gate.ts). Sent again; the dispatcher ignores it if it had arrived
    // after all.
    const overdueEvent = isFinalTaskState(t.state) || t.state === "PAUSED";
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
          fence,
        );
        if (!moved) return true; // renewed or finished meanwhile
        this.deps.log?.("sweeper: task failed over", { ...key, worker: t.worker });
        counts.failedOver++;
      } else if (!overdueEvent) {
        // Not started (no lease of its own to keep): its lease fields only need clearing.
        await store.updateTask(key, [t.state], {}, { removeLease: true });
        return true;
      }
      const state = t.state === "RUNNING" ? "NEED_FAULT_TOLERANCE" : t.state;
      await queues.sendToDispatcher([taskEventOf({ ...t, state })]);
      if (overdueEvent) {
        // Counted once sent: a failed send is tried again by the next sweep, and counted then.
        this.deps.log?.("sweeper: task event re-sent", { ...key, state });
        counts.eventsResent++;
      }
      // Conditioned on the state sent: a later change keeps it listed for the next sweep.
      await store.updateTask(key, [state], {}, { removeLease: true });
      return true;
    } catch (e) {
      this.deps.log?.(
        overdueEvent
          ? "sweeper: overdue task event not finished, next sweep sends it again"
          : "sweeper: failover not finished, next sweep goes on",
        { ...key, state: t.state, error: String(e) },
      );
      return false;
    }
  }
}
