/**
 * The sweeper (DolphinScheduler's StateWheelExecuteThread and failover): every minute on AWS,
 * every second in standalone. Now it re-signals commands left PENDING (outbox) and fails over
 * task attempts whose worker stopped renewing its lease (NEED_FAULT_TOLERANCE: the dispatcher
 * starts a new attempt, not counted against retries).
 */
import type { Queues } from "../queue/sqs-queues.js";
import type { Store } from "../store/store.js";

export interface SweeperDeps {
  store: Store;
  queues: Queues;
  now: () => number;
  /** A command PENDING this long is signalled again, ms. */
  commandResignalMs: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export interface SweepReport {
  resignalled: number;
  failedOver: number;
}

const PAGE = 100;

export class Sweeper {
  constructor(private readonly deps: SweeperDeps) {}

  async sweep(): Promise<SweepReport> {
    const [resignalled, failedOver] = await Promise.all([
      this.resignalCommands(),
      this.failOverExpiredLeases(),
    ]);
    return { resignalled, failedOver };
  }

  private async resignalCommands(): Promise<number> {
    const { store, queues } = this.deps;
    const stale = await store.listPendingCommands(
      this.deps.now() - this.deps.commandResignalMs,
      PAGE,
    );
    const now = this.deps.now();
    let sent = 0;
    for (const cmd of stale) {
      // Back off: the n-th signal waits 2^n resignal periods (capped at 32) after the last one.
      const n = cmd.resignals ?? 0;
      const since = now - (cmd.lastSignalAt ?? cmd.createdAt);
      if (since < this.deps.commandResignalMs * Math.min(32, 2 ** n)) continue;
      sent++;
      const resignal = n + 1;
      await store.markResignalled(cmd.commandId, resignal, now);
      // A new deduplication id (resignal count), or SQS would drop it as a repeat for 5 minutes.
      await queues.sendEvents([
        { kind: "command", commandId: cmd.commandId, instanceId: cmd.instanceId, resignal },
      ]);
      this.deps.log?.("sweeper: command signalled again", { commandId: cmd.commandId, resignal });
    }
    return sent;
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
        await queues.sendEvents([{ kind: "task", ...key, state: "NEED_FAULT_TOLERANCE" }]);
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
