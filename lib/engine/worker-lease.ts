/**
 * A worker's lease for its long-running attempts (lib/store/worker-leases.ts). An attempt is
 * claimed with a lease of its own; at its first renewal the worker hands it to this lease
 * ({@link WorkerLease.adopt}: one write), and from then on one renewal every `leaseRenewMs`
 * covers every attempt it holds, however many and however long: a running task costs no write
 * per minute of its own. The renewal brings back the kill requests a stop left on the lease; a
 * renewal refused (the lease lapsed and the sweeper took it over) means every attempt it covered
 * is being failed over, and the worker kills them, as it does an attempt whose own lease it lost.
 *
 * While the worker holds no attempt the lease is not renewed: it lapses, and the sweeper deletes
 * it. An idle worker writes nothing.
 */
import { randomUUID } from "node:crypto";
import type { TaskInstanceRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { attemptRef } from "../store/worker-leases.js";

/** What the lease needs of the worker's dependencies (lib/engine/worker.ts WorkerDeps). */
export interface WorkerLeaseDeps {
  store: Store;
  now: () => number;
  /** How long a renewal keeps the lease, ms. */
  leaseMs: number;
  /** How often it is renewed while it covers an attempt, ms. */
  leaseRenewMs: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** One attempt the lease covers: how the worker is told what became of it. */
export interface HeldAttempt {
  /** A stop asked to kill it: `reason` becomes its error. */
  kill(reason: string): void;
  /** The lease was lost: the attempt is failed over elsewhere, its result must be dropped. */
  lost(): void;
}

type AttemptKey = { instanceId: string; code: string; attempt: number };

export class WorkerLease {
  private leaseId: string | undefined;
  /** Until when the lease is known to hold, by this process's clock (epoch ms). */
  private liveUntil = 0;
  private readonly held = new Map<string, HeldAttempt>();
  /** Kill requests acted on, taken off the lease by the next renewal. */
  private handled = new Set<string>();
  private renewal: Promise<void> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly deps: WorkerLeaseDeps,
    private readonly workerId: string,
  ) {}

  /** How many attempts the lease covers now. */
  get size(): number {
    return this.held.size;
  }

  /**
   * Hands a RUNNING attempt this worker holds to the lease: its own lease is dropped and the
   * worker lease covers it from now on.
   * @returns the attempt's item after the move (its `killRequested` tells whether a stop came
   *   first), or undefined when the worker no longer holds it (failed over, or over).
   * @throws what the store throws (the worker tries again at the next renewal; the attempt's
   *   own lease still runs).
   */
  async adopt(key: AttemptKey, attempt: HeldAttempt): Promise<TaskInstanceRecord | undefined> {
    const leaseId = await this.live();
    const moved = await this.deps.store.updateTask(
      key,
      ["RUNNING"],
      // The index orders a worker lease's attempts by when they were handed over.
      { leaseExpiresAt: this.deps.now(), workerLease: leaseId },
      { worker: this.workerId },
    );
    if (moved) {
      this.held.set(attemptRef(key), attempt);
      this.timer ??= setInterval(() => void this.renew().catch(() => {}), this.deps.leaseRenewMs);
      this.timer.unref?.();
    }
    return moved;
  }

  /** The attempt ended on this worker (its result is written next): no longer covered. */
  release(key: AttemptKey): void {
    this.held.delete(attemptRef(key));
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Stops renewing (process shutdown): the lease lapses, and the sweeper takes it over. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The id of a lease that holds for at least half its duration, renewed or created now if need be. */
  private async live(): Promise<string> {
    // Twice at most: a renewal that finds the lease taken over (it lapsed while the worker held
    // nothing) is followed by the creation of a new one.
    for (let i = 0; i < 2; i++) {
      if (this.leaseId !== undefined && this.liveUntil - this.deps.now() >= this.deps.leaseMs / 2)
        break;
      await this.renew();
    }
    if (this.leaseId === undefined) throw new Error("worker lease not created");
    return this.leaseId;
  }

  /** One renewal at a time; callers during one wait for it. Logs and rethrows a store error. */
  private renew(): Promise<void> {
    this.renewal ??= this.renewOnce().finally(() => {
      this.renewal = undefined;
    });
    return this.renewal;
  }

  private async renewOnce(): Promise<void> {
    const { store, now, leaseMs } = this.deps;
    const create = this.leaseId === undefined;
    const leaseId = this.leaseId ?? randomUUID();
    const handled = [...this.handled];
    const at = now();
    let answer: Awaited<ReturnType<Store["renewWorkerLease"]>>;
    try {
      answer = await store.renewWorkerLease(leaseId, this.workerId, at + leaseMs, {
        create,
        handledKills: handled,
      });
    } catch (e) {
      this.deps.log?.("worker: worker lease renewal failed", { error: String(e) });
      throw e;
    }
    if (!answer) {
      // Lapsed and taken over (or, for a new id, taken): every attempt it covered is failed over.
      this.leaseId = undefined;
      this.liveUntil = 0;
      this.handled.clear();
      const lost = [...this.held.values()];
      this.held.clear();
      this.stop();
      for (const a of lost) a.lost();
      return;
    }
    this.leaseId = leaseId;
    this.liveUntil = at + leaseMs;
    for (const ref of handled) this.handled.delete(ref);
    for (const [ref, reason] of Object.entries(answer.kills)) {
      this.held.get(ref)?.kill(reason);
      this.handled.add(ref);
    }
  }
}
