/**
 * A worker process's heartbeat for one worker group: called each time its poller asks the
 * group's task queues for work, it records the poll (lib/store/worker-heartbeats.ts) at most once
 * per `intervalMs`, never waits for the write and never throws, so polling costs nothing more
 * than one conditional write a minute. `shoal explain` reads the heartbeat to say "no worker has
 * polled worker group 'gpu' in the last 120 s" (lib/core/explain.ts, WORKER_SILENCE_MS).
 *
 * Workers that Lambda runs are not covered: their queues are polled by the event source mapping,
 * which calls our code only when a message arrives, so an idle Lambda group would look dead. The
 * stack names those groups instead (SHOAL_LAMBDA_WORKER_GROUPS, lib/aws/config.ts) and explain
 * treats them as served.
 */
import type { WorkerHeartbeatStore } from "../store/worker-heartbeats.js";

/**
 * How often a worker records that it polls a group, ms. Explain's silence threshold
 * (WORKER_SILENCE_MS, 120 s) leaves room for one missed write and a 20 s long poll.
 */
export const HEARTBEAT_INTERVAL_MS = 60_000;

export interface WorkerHeartbeatOptions {
  store: WorkerHeartbeatStore;
  /** The worker group polled. */
  group: string;
  /** The worker's id (Worker.id). */
  worker: string;
  /** Clock, epoch ms. */
  now: () => number;
  /** Default HEARTBEAT_INTERVAL_MS. */
  intervalMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export class WorkerHeartbeat {
  /** When the last write was attempted, epoch ms (-Infinity: never). */
  private lastAttempt = Number.NEGATIVE_INFINITY;
  private writing: Promise<void> | undefined;
  private failures = 0;

  constructor(private readonly opts: WorkerHeartbeatOptions) {}

  private get interval(): number {
    return this.opts.intervalMs ?? HEARTBEAT_INTERVAL_MS;
  }

  /**
   * The worker polled the group's queues: records it unless done within the interval. Returns at
   * once; a failed write is logged (the first, then every tenth) and tried again next interval.
   */
  polled(): void {
    const now = this.opts.now();
    if (this.writing || now - this.lastAttempt < this.interval) return;
    this.lastAttempt = now;
    const { store, group, worker } = this.opts;
    this.writing = store
      .recordPoll(group, worker, now, this.interval)
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

  /** Waits for a write under way (tests, shutdown). */
  async flush(): Promise<void> {
    await this.writing;
  }
}
