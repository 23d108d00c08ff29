/**
 * What a worker does for one running attempt every lease renewal period (`leaseRenewMs`): keep
 * its lease and notice a stop or a failover, and keep its task message invisible. Its own lease
 * from the claim covers it until the first period; then a long-running worker hands it to its
 * worker lease (worker-lease.ts), which renews for all its attempts, while a Lambda worker sets
 * it once past the invocation's end, which nothing of the invocation outlives, and only reads it
 * after that. A task that ends within the first period writes nothing for its lease, and one that
 * crashes then is failed over one lease after its claim, as before. A lost lease kills the task (its
 * result is dropped); a kill request kills it with the request's reason.
 */
import type { SQSRecord } from "aws-lambda";
import type { Queues } from "../queue/queues.js";
import type { Store } from "../store/store.js";
import { KILLED_ON_REQUEST } from "../tasks/plugin.js";
import type { WorkerLease } from "./worker-lease.js";

/** Why a worker kills a task it no longer holds (the result is dropped; shown in the log). */
export const LEASE_LOST = "killed: lease lost (the attempt was failed over or ended elsewhere)";

export interface AttemptKeeperDeps {
  store: Store;
  queues: Queues;
  /** How long a lease runs, ms (the grace past a Lambda invocation's end). */
  leaseMs: number;
  leaseRenewMs: number;
  /** Seconds a received task message stays invisible before it must be extended. */
  visibilityTimeoutSeconds: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export interface KeptAttempt {
  /** The lease was lost: the attempt was killed, and its result must not be written. */
  readonly lost: boolean;
  /** Stops looking after it (the attempt ended); gives it back to the worker lease. */
  stop(): void;
}

/**
 * Starts looking after a running attempt.
 * @param deadline the Lambda invocation's end (epoch ms), when a Lambda worker runs it.
 * @param write a line to the attempt's log.
 */
export function keepAttempt(
  deps: AttemptKeeperDeps,
  opts: {
    key: { instanceId: string; code: string; attempt: number };
    workerId: string;
    record: SQSRecord;
    lease: WorkerLease;
    kill: AbortController;
    deadline: number | undefined;
    write: (line: string) => void;
  },
): KeptAttempt {
  const { key, kill, lease } = opts;
  let lost = false;
  const held = {
    kill: (reason: string) => {
      if (!kill.signal.aborted) kill.abort(reason);
    },
    lost: () => {
      if (lost) return;
      lost = true;
      opts.write("shoal: lease lost (the task was failed over or stopped); killing it");
      kill.abort(LEASE_LOST);
    },
  };
  // 0: the first period extends the message's visibility at once (a poller may receive with a
  // short visibility timeout, see lib/standalone/poller.ts).
  let lastVisibility = 0;
  let busy = false;
  let adopted = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      if (opts.deadline !== undefined) {
        // One lease past the invocation's end (clock skew, and the time Lambda takes to end
        // it), set once; then only a stop or a failover is looked for.
        const item = adopted
          ? await deps.store.getTaskInstance(key.instanceId, key.code, key.attempt)
          : await deps.store.updateTask(
              key,
              ["RUNNING"],
              { leaseExpiresAt: opts.deadline + deps.leaseMs },
              { worker: opts.workerId },
            );
        adopted = true;
        if (item?.state !== "RUNNING" || item.worker !== opts.workerId) held.lost();
        else if (item.killRequested) held.kill(item.killReason ?? KILLED_ON_REQUEST);
      } else if (!adopted) {
        // The first period hands the attempt to the worker's lease, which renews for all its
        // attempts from then on: a long task costs no write per minute of its own.
        const moved = await lease.adopt(key, held);
        adopted = true;
        // The reason halts.ts recorded becomes the attempt's error (items written before it
        // carried one say "killed on request").
        if (!moved) held.lost();
        else if (moved.killRequested) held.kill(moved.killReason ?? KILLED_ON_REQUEST);
      }
      if (Date.now() - lastVisibility > (deps.visibilityTimeoutSeconds * 1000) / 2) {
        lastVisibility = Date.now();
        const url = await deps.queues.queueUrlFromArn(opts.record.eventSourceARN);
        await deps.queues.extendVisibility(
          url,
          opts.record.receiptHandle,
          deps.visibilityTimeoutSeconds,
        );
      }
    } catch (e) {
      deps.log?.("worker: lease renewal failed", { error: String(e) });
    } finally {
      busy = false;
    }
  }, deps.leaseRenewMs);
  timer.unref();
  return {
    get lost() {
      return lost;
    },
    stop() {
      clearInterval(timer);
      lease.release(key);
    },
  };
}
