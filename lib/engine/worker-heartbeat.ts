/**
 * A worker process's heartbeat for one worker group: while the worker runs it records, on a
 * timer, that it serves the group and how busy it is (task slots used and in all, messages held
 * for a slot; lib/store/worker-heartbeats.ts), once per `intervalMs`, busy or idle. It never
 * waits for the write and never throws, so it costs one conditional write a minute per worker
 * and group. `shoal explain` reads it to tell "no worker has polled worker group 'gpu' in the
 * last 120 s" from "all 4 slots of worker w are busy" (lib/core/explain-queued.ts,
 * WORKER_SILENCE_MS). The timer, not the poller, drives it: a worker whose slots are all busy
 * stops receiving, and must not look dead for it.
 *
 * Workers that Lambda runs are not covered: their queues are polled by the event source mapping,
 * which calls our code only when a message arrives, so an idle Lambda group would look dead. The
 * stack names those groups instead (SHOAL_LAMBDA_WORKER_GROUPS, lib/aws/config.ts) and explain
 * treats them as served.
 */
import type { WorkerHeartbeatStore, WorkerLoad } from "../store/worker-heartbeats.js";

/**
 * How often a worker records its heartbeat, ms. Explain's silence threshold
 * (WORKER_SILENCE_MS, 120 s) leaves room for one failed or late write.
 */
export const HEARTBEAT_INTERVAL_MS = 60_000;

export interface WorkerHeartbeatOptions {
  store: WorkerHeartbeatStore;
  /** The worker group served. */
  group: string;
  /** The worker's id (Worker.id). */
  worker: string;
  /** Clock, epoch ms. */
  now: () => number;
  /** Default HEARTBEAT_INTERVAL_MS. */
  intervalMs?: number;
  /** How busy the worker is now (lib/standalone/poller.ts QueuePoller.load). */
  load?: () => WorkerLoad;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/**
 * Records a worker's heartbeat for one group: {@link WorkerHeartbeat.start} writes one at once
 * and then every interval until {@link WorkerHeartbeat.stop}, which removes the worker's entry
 * (explain then no longer counts a worker that stopped cleanly). Writes are never awaited by the
 * worker; a failed one is logged (the first, then every tenth) and the next comes on time.
 */
export class WorkerHeartbeat {
  private writing: Promise<void> | undefined;
  private failures = 0;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly opts: WorkerHeartbeatOptions) {}

  private get interval(): number {
    return this.opts.intervalMs ?? HEARTBEAT_INTERVAL_MS;
  }

  /** Writes the heartbeat now and then every interval (the timer keeps no process alive). */
  start(): void {
    if (this.timer) return;
    this.beat();
    this.timer = setInterval(() => this.beat(), this.interval);
    this.timer.unref?.();
  }

  /**
   * Writes the heartbeat unless a write is under way. Returns at once. The store refuses a
   * write within half an interval of this worker's last (a timer firing early stays within).
   */
  beat(): void {
    if (this.writing) return;
    const now = this.opts.now();
    const { store, group, worker } = this.opts;
    const load = this.opts.load?.() ?? { used: 0, slots: 0, held: 0 };
    this.writing = store
      .recordPoll(group, worker, now, this.interval / 2, load)
      .then(
        () => {
          this.failures = 0;
        },
        (e: unknown) => {
          if (this.failures++ % 10 === 0) {
            this.opts.log?.("worker: recording the heartbeat failed", {
              group,
              error: String(e),
            });
          }
        },
      )
      .finally(() => {
        this.writing = undefined;
      });
  }

  /** Stops the timer and removes this worker's entry (best effort: a failure is logged). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.writing;
    const { store, group, worker } = this.opts;
    await store.forgetWorker(group, worker).catch((e: unknown) => {
      this.opts.log?.("worker: removing the heartbeat failed", { group, error: String(e) });
    });
  }

  /** Waits for a write under way (tests, shutdown). */
  async flush(): Promise<void> {
    await this.writing;
  }
}
