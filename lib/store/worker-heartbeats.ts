/**
 * Worker heartbeats: which worker groups a worker polls, so that `shoal explain` can tell a task
 * that waits for a busy worker from one that waits for a worker that does not exist
 * (DolphinScheduler keeps worker heartbeats in its registry, ZooKeeper, for the same purpose).
 *
 * One record per worker group (not per worker): what explain needs is "did any worker poll this
 * group lately", and a per-group record keeps the writes bounded however many workers come and
 * go. Each worker writes at most once per `minIntervalMs` per group, and only when the stored
 * heartbeat is older than that (a conditional write), so N workers of one group cost at most N
 * write requests a minute and a single write succeeds. A dead group's record is not deleted: it
 * ages, and its age is the answer ("last polled 3 h ago by worker w").
 */

/** The last poll recorded for one worker group. Times are epoch milliseconds. */
export interface WorkerHeartbeat {
  /** Worker group name (`workerGroup` of task definitions). */
  group: string;
  /** When a worker last recorded a poll of the group's task queues, epoch ms. */
  lastPollAt: number;
  /** Id of that worker (`host:pid:id`, lib/engine/worker.ts). */
  worker: string;
}

export interface WorkerHeartbeatStore {
  /**
   * Records that `worker` polled `group` at `now` (epoch ms), unless the stored heartbeat is
   * younger than `minIntervalMs` (it then says the same thing already).
   * @returns true when written, false when a fresh enough heartbeat was there.
   * @throws RangeError when minIntervalMs is negative or not finite.
   */
  recordPoll(group: string, worker: string, now: number, minIntervalMs: number): Promise<boolean>;
  /** The group's heartbeat (strongly consistent), undefined when no worker ever recorded one. */
  getHeartbeat(group: string): Promise<WorkerHeartbeat | undefined>;
}
