/**
 * Worker heartbeats: which worker groups a worker polls, so that `shoal explain` can tell a task
 * that waits for a busy worker from one that waits for a worker that does not exist
 * (DolphinScheduler keeps worker heartbeats in its registry, ZooKeeper, for the same purpose).
 *
 * One record per worker group, holding each worker's last heartbeat with how busy it was (task
 * slots used and in all), so that one read answers "does a worker serve this group, and are all
 * its slots busy?". A worker writes its own entry on a timer, at most once per `minIntervalMs`
 * (a conditional write on its entry's time), so N workers of a group cost N writes a minute. A
 * worker that stops cleanly removes its entry; one that died leaves it to age, and a live worker
 * of the group removes it after {@link FORGET_WORKER_MS}. The group's last heartbeat (time and
 * worker) stays when every entry is gone: its age is the answer ("last polled 3 h ago by w").
 */

/** An entry older than this belongs to a worker that is gone: a writer removes it, ms. */
export const FORGET_WORKER_MS = 60 * 60_000;

/** How busy a worker is: what its heartbeat records. */
export interface WorkerLoad {
  /** Task slots in use (tasks running). */
  used: number;
  /** Task slots in all (`shoal worker --concurrency`). */
  slots: number;
  /** Messages received and held until a slot frees (prefetched). */
  held: number;
}

/** One worker's last heartbeat for a group. Times are epoch milliseconds. */
export interface WorkerBeat extends WorkerLoad {
  /** Id of the worker (`host:pid:id`, lib/engine/worker.ts). */
  worker: string;
  /** When it wrote the heartbeat, epoch ms. */
  at: number;
}

/** The heartbeats of one worker group. Times are epoch milliseconds. */
export interface WorkerHeartbeat {
  /** Worker group name (`workerGroup` of task definitions). */
  group: string;
  /** When a worker last recorded a heartbeat for the group, epoch ms. */
  lastPollAt: number;
  /** Id of that worker (`host:pid:id`, lib/engine/worker.ts). */
  worker: string;
  /** Each worker's own last heartbeat (live ones and those gone within FORGET_WORKER_MS). */
  workers: WorkerBeat[];
}

export interface WorkerHeartbeatStore {
  /**
   * Records that `worker` serves `group` at `now` (epoch ms), as busy as `load` says, unless its
   * own stored heartbeat is younger than `minIntervalMs` (it then says the same thing already).
   * Removes the entries of workers silent for FORGET_WORKER_MS that it finds.
   * @returns true when written, false when a fresh enough heartbeat of this worker was there.
   * @throws RangeError when minIntervalMs is negative or not finite.
   */
  recordPoll(
    group: string,
    worker: string,
    now: number,
    minIntervalMs: number,
    load?: WorkerLoad,
  ): Promise<boolean>;
  /** Removes `worker`'s entry (a worker that stops); the group's last heartbeat stays. */
  forgetWorker(group: string, worker: string): Promise<void>;
  /** The group's heartbeats (strongly consistent), undefined when no worker ever recorded one. */
  getHeartbeat(group: string): Promise<WorkerHeartbeat | undefined>;
}
