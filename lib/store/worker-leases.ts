/**
 * Worker leases: one lease for all the long-running attempts of one worker, so that a running
 * task costs no write per minute (docs/cost.md). An attempt starts with a lease of its own (the
 * claim writes it, lib/engine/worker.ts); one that runs past its first renewal is handed to its
 * worker's lease, and from then on the worker renews one item for all of them. The sweeper fails
 * over the attempts of a worker lease that lapsed (lib/engine/sweeper.ts), as it does those of a
 * lapsed attempt lease; a stop reaches such an attempt through its worker lease's kill requests.
 *
 * DolphinScheduler's workers keep one ZooKeeper session each for the same purpose: the master
 * fails over a worker's tasks when its session ends, not task by task.
 */
import type { TaskInstanceRecord } from "./records.js";

/** A worker lease as the sweeper lists it. Times are epoch milliseconds. */
export interface WorkerLeaseRecord {
  /** Random id of one lease of one worker (a worker that lost its lease starts another). */
  leaseId: string;
  /** Id of the worker that holds it (`host:pid:id`, lib/engine/worker.ts). */
  worker: string;
  /** When it lapses unless renewed. */
  leaseExpiresAt: number;
  /** Set by the sweeper once it lapsed: it is never renewed again, and its attempts fail over. */
  dead?: boolean;
  /** When the sweeper marked it dead (epoch ms). */
  deadAt?: number;
}

/** What a renewal answers: the kill requests waiting for the worker. */
export interface WorkerLeaseRenewal {
  /** {@link attemptRef} → why it is to be killed (becomes the killed attempt's `error`). */
  kills: Record<string, string>;
}

/** How an attempt is named in a worker lease's kill requests: `instanceId/code#attempt`. */
export function attemptRef(key: { instanceId: string; code: string; attempt: number }): string {
  return `${key.instanceId}/${key.code}#${key.attempt}`;
}

export interface WorkerLeaseStore {
  /**
   * Creates (`create`) or renews worker lease `leaseId` held by `worker` until `expiresAt`
   * (epoch ms), taking the kill requests of `handledKills` ({@link attemptRef}) off it. A
   * renewal needs the lease to exist and not be dead; a creation needs it not to exist.
   * @returns the kill requests left, or undefined when the condition failed (the lease lapsed
   *   and the sweeper took it over, or the id is taken).
   */
  renewWorkerLease(
    leaseId: string,
    worker: string,
    expiresAt: number,
    opts: { create: boolean; handledKills?: readonly string[] },
  ): Promise<WorkerLeaseRenewal | undefined>;
  /**
   * Asks the holder of a live worker lease to kill one attempt at its next renewal.
   * @returns false when the lease is gone or dead (its attempts are being failed over).
   */
  requestWorkerKill(leaseId: string, ref: string, reason: string): Promise<boolean>;
  /** Worker leases that lapsed before `now` (epoch ms), dead ones included, oldest first. */
  listExpiredWorkerLeases(now: number, limit: number): Promise<WorkerLeaseRecord[]>;
  /**
   * Marks a lapsed worker lease dead at `now` (epoch ms), so its holder can never renew it again.
   * @returns false when it was renewed meanwhile (not lapsed before `now`) or is gone.
   */
  markWorkerLeaseDead(leaseId: string, now: number): Promise<boolean>;
  /** Attempts handed to worker lease `leaseId` and still in it, at most `limit`. */
  listWorkerLeaseTasks(leaseId: string, limit: number): Promise<TaskInstanceRecord[]>;
  /** Deletes a dead worker lease (its attempts are failed over); a live one is left alone. */
  deleteWorkerLease(leaseId: string): Promise<void>;
}
