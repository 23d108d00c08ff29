/**
 * The task-group gate: at most `capacity` task instances of a group hold a slot at once; the
 * others wait in the group's queue and are granted a slot, best first, when one is released
 * (DolphinScheduler's task groups: ProcessService.acquireTaskGroup / releaseTaskGroup and the
 * TaskGroupQueue ordered by task-group priority). Built only on the single-item conditional
 * writes of a TaskGroupStore, so any number of dispatchers may call it concurrently.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  isBeingDeleted,
  sameHolder,
  type TaskGroupHolder,
  type TaskGroupRecord,
  type TaskGroupSlot,
  type TaskGroupStore,
  type TaskGroupWaiter,
  type TaskGroupWaiterKey,
  waiterOrderKey,
} from "../store/task-groups.js";

/** What `acquire` answers: a slot is held, the task waits in the queue, or the group does not exist. */
export type AcquireResult = "acquired" | "waiting" | "unknown-group";

/**
 * Called for each waiter granted a slot (the dispatcher sends the task from `w.payload`).
 * @returns false when the task no longer wants the slot (it was stopped meanwhile): the slot is
 *   freed and goes to the next waiter. A throw frees the slot, queues the waiter again, and
 *   propagates.
 */
export type OnGranted = (w: TaskGroupWaiter) => Promise<boolean>;

export interface TaskGroupGateOptions {
  /** Clock, epoch ms. Default `Date.now`. */
  now?: () => number;
  /**
   * Used by `acquire` when, after queueing itself, it finds a slot free and another waiter at
   * the head: it grants that waiter right away instead of leaving it to the next sweep.
   * Without it, acquire only ever grants its own waiter.
   */
  onGranted?: OnGranted;
  /**
   * `reconcile` leaves slots held for less than this alone, ms (default 30,000): a granter that
   * just took a slot has not yet marked the task dispatched, so `isHolderLive` could still say no.
   */
  reconcileGraceMs?: number;
  /**
   * A waiter's claim older than this is taken over by the next grant (its granter died before
   * sending the task and deleting the waiter), ms (default 30,000).
   */
  claimStaleMs?: number;
  /**
   * How long acquire waits for a concurrent delete of the group to finish or give up, ms
   * (default 2,000); it polls the head every 20 ms.
   */
  deleteSettleMs?: number;
}

/** Waiters a grant reads to find one that no other granter is busy with. */
const CLAIM_SCAN = 10;
/** A grant gives up after this many claimed waiters for whom no slot could be taken. */
const MAX_MISSES = 3;
/** Upper bound on the rounds of one grant call (reconcile picks up the rest). */
const MAX_ROUNDS = 5_000;
const SETTLE_POLL_MS = 20;

const sameWaiter = (a: TaskGroupWaiterKey, b: TaskGroupWaiterKey) =>
  a.group === b.group && waiterOrderKey(a) === waiterOrderKey(b);

/**
 * Slot indexes a new grant may take: those below capacity that nobody holds, and none at all
 * while the held slots (old holders above a lowered capacity included) already reach capacity.
 */
function freeIndexes(capacity: number, slots: readonly TaskGroupSlot[]): number[] {
  if (slots.length >= capacity) return [];
  const held = new Set(slots.map((s) => s.index));
  const out: number[] = [];
  for (let i = 0; i < capacity; i++) if (!held.has(i)) out.push(i);
  return out;
}

/**
 * Acquire, release, grant and reconcile over a TaskGroupStore.
 *
 * Why no interleaving of two dispatchers exceeds capacity: a slot is an item taken with
 * `attribute_not_exists(holder)`, so each index has at most one holder, and new grants only go
 * to indexes below the capacity read just before. Holders above a lowered capacity keep their
 * slot until released, and no grant happens while the held slots reach capacity; only a grant
 * racing a capacity change (or those old holders) can see more than `capacity` held, never more
 * than the larger of old and new capacity.
 *
 * Why no wakeup is lost for more than one sweep: every path writes first and reads after, and
 * all reads are strongly consistent (every single-item write that finished before a read is
 * seen by it).
 * - acquire vs release: the acquirer writes its waiter item and then reads slots and the queue;
 *   the releaser frees its slot and then reads the queue. Whichever read comes later sees both
 *   writes: either the releaser sees the waiter and grants it, or the acquirer sees the free slot
 *   and claims it when it is the head. A different head either queued before the releaser read
 *   (the releaser grants it) or after the slot was freed (its own acquire's read sees the slot).
 * - acquire taking a slot directly vs a waiter queueing ahead of it: the waiter's later read
 *   sees the slot taken and it waits; at worst one grant went out of priority order, never a
 *   lost one.
 * - two grants: both may read the same head waiter; claiming it is a conditional write, so
 *   exactly one claims it, and the other takes the next unclaimed waiter or reads again.
 * - a grant that claimed a waiter but lost every free slot to a direct acquirer drops its claim
 *   and reads again: a release that happened while the waiter was claimed (and so did not see
 *   it) is seen by that read.
 * - onGranted returning false frees the slot, then the loop reads again.
 * What remains — a dispatcher that crashed between two of these writes, a grant that gave up
 * after MAX_MISSES, a callback that threw, a release that never came — is repaired by
 * `reconcile`, which the sweeper runs every sweep: it frees slots of holders that are not live
 * and grants every group. A granter that crashes after claiming a waiter leaves the waiter
 * (deleted only after onGranted), with a claim that goes stale after `claimStaleMs` and at worst
 * a slot for it: the next grant claims it again and finishes (onGranted must be idempotent), or
 * reconcile frees the slot and a later grant gives it another.
 */
export class TaskGroupGate {
  private readonly now: () => number;
  private readonly onGranted: OnGranted | undefined;
  private readonly graceMs: number;
  private readonly settleMs: number;
  private readonly claimStaleMs: number;

  constructor(
    private readonly store: TaskGroupStore,
    opts: TaskGroupGateOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.onGranted = opts.onGranted;
    this.graceMs = opts.reconcileGraceMs ?? 30_000;
    this.settleMs = opts.deleteSettleMs ?? 2_000;
    this.claimStaleMs = opts.claimStaleMs ?? 30_000;
  }

  /**
   * Asks for a slot of `waiter.group` for one task attempt. Idempotent for the same holder:
   * already holding a slot → "acquired"; already queued → "waiting" unless a slot can be had now.
   * Takes a free slot directly only when no waiter ranks ahead; otherwise queues the waiter and
   * tries once more to grant the head of the queue (see the class comment for why).
   * @returns "unknown-group" when the group does not exist (or is being deleted; nothing is left
   *   behind then).
   * @throws RangeError for a waiter the store cannot key (see TaskGroupStore.putWaiter).
   */
  async acquire(waiter: TaskGroupWaiter): Promise<AcquireResult> {
    const name = waiter.group;
    const group = await this.settledGroup(name);
    if (!group) return "unknown-group";
    const slots = await this.store.listSlots(name);
    if (slots.some((s) => sameHolder(s.holder, waiter))) return "acquired";

    if (!(await this.store.getWaiter(waiter))) {
      const [head] = await this.store.firstWaiters(name, 1);
      if (!head || waiterOrderKey(head) >= waiterOrderKey(waiter)) {
        const index = await this.takeFirst(name, freeIndexes(group.capacity, slots), waiter);
        if (index !== undefined) return this.confirmDirectTake(name, index, waiter);
      }
      await this.store.putWaiter(waiter);
    }
    // Written: read the head again, so a delete that missed our waiter is seen (and undone).
    if (!(await this.settledGroup(name))) {
      return (await this.store.deleteWaiter(waiter)) ? "unknown-group" : "waiting";
    }
    const { self } = await this.grantLoop(name, this.onGranted, waiter);
    return self ? "acquired" : "waiting";
  }

  /**
   * Frees the slot(s) `holder` has in `group` (idempotent: none held is fine), then grants
   * waiters (`grant`). Call it when the attempt ends, whatever its state.
   * @returns nothing; grant errors (a throwing onGranted) propagate after the slot was freed.
   */
  async release(group: string, holder: TaskGroupHolder, onGranted: OnGranted): Promise<void> {
    const slots = await this.store.listSlots(group);
    for (const s of slots) {
      if (sameHolder(s.holder, holder)) await this.store.freeSlot(group, s.index, holder);
    }
    await this.grant(group, onGranted);
  }

  /**
   * While a slot is free and a waiter exists: claims the head waiter by deleting it
   * conditionally (only one granter wins), takes a free slot for it (if none can be taken, puts
   * the waiter back and reads again, at most a few times), then calls onGranted; false frees the
   * slot and goes on.
   * @returns how many waiters were granted (onGranted returned true).
   */
  async grant(group: string, onGranted: OnGranted): Promise<number> {
    return (await this.grantLoop(group, onGranted)).granted;
  }

  /**
   * For every group: frees slots held longer than the grace period whose holder is not live
   * (a crashed dispatcher or a lost release), keeps only the lowest slot of a holder that holds
   * several (two concurrent acquires of one attempt), then grants. The sweeper calls it every
   * sweep, so nothing leaks for longer than grace + one sweep.
   * @param isHolderLive whether the attempt still needs its slot: it was sent (granted and
   *   notified) and has not finished. An attempt that holds a slot but still waits for its group
   *   after the grace period (its granter died before onGranted finished) must count as not
   *   live, like a finished one: its slot is freed and its owner acquires again.
   * @returns slots freed and waiters granted.
   * @throws AggregateError of the per-group failures, after every group was tried.
   */
  async reconcile(
    isHolderLive: (h: TaskGroupHolder) => Promise<boolean>,
    onGranted: OnGranted,
  ): Promise<{ freed: number; granted: number }> {
    let freed = 0;
    let granted = 0;
    const errors: unknown[] = [];
    let token: string | undefined;
    do {
      const page = await this.store.listGroups(100, token);
      for (const g of page.items) {
        try {
          freed += await this.freeDeadSlots(g.name, isHolderLive);
          granted += await this.grant(g.name, onGranted);
        } catch (e) {
          errors.push(e);
        }
      }
      token = page.nextToken;
    } while (token);
    if (errors.length > 0) throw new AggregateError(errors, "task group reconcile failed");
    return { freed, granted };
  }

  // ---- internals ----

  private async freeDeadSlots(
    group: string,
    isHolderLive: (h: TaskGroupHolder) => Promise<boolean>,
  ): Promise<number> {
    let freed = 0;
    const cutoff = this.now() - this.graceMs;
    const seen: TaskGroupHolder[] = [];
    const slots = [...(await this.store.listSlots(group))].sort((a, b) => a.index - b.index);
    for (const s of slots) {
      const duplicate = seen.some((h) => sameHolder(h, s.holder));
      seen.push(s.holder);
      const dead = duplicate || (s.heldSince <= cutoff && !(await isHolderLive(s.holder)));
      if (dead && (await this.store.freeSlot(group, s.index, s.holder))) freed++;
    }
    return freed;
  }

  /**
   * After a direct take: undo it if the group is being deleted, or if the same holder got
   * another, lower slot concurrently (a duplicate acquire; the later of the two sees both).
   */
  private async confirmDirectTake(
    group: string,
    index: number,
    holder: TaskGroupHolder,
  ): Promise<AcquireResult> {
    if (!(await this.settledGroup(group))) {
      await this.store.freeSlot(group, index, holder);
      return "unknown-group";
    }
    const mine = (await this.store.listSlots(group)).filter((s) => sameHolder(s.holder, holder));
    if (mine.some((s) => s.index < index)) await this.store.freeSlot(group, index, holder);
    return "acquired";
  }

  /** Takes the first of `indexes` that is still free. @returns its index, or undefined. */
  private async takeFirst(
    group: string,
    indexes: readonly number[],
    holder: TaskGroupHolder,
  ): Promise<number | undefined> {
    for (const i of indexes) {
      if (await this.store.takeSlot(group, i, holder, this.now())) return i;
    }
    return undefined;
  }

  /**
   * The head of a group, waiting out a concurrent delete (its mark) for up to settleMs.
   * @returns undefined when the group does not exist (or the delete went through); a group
   *   whose mark outlives settleMs is treated as present (its deleter is presumably gone).
   */
  private async settledGroup(name: string): Promise<TaskGroupRecord | undefined> {
    const deadline = this.now() + this.settleMs;
    for (;;) {
      const g = await this.store.getGroup(name);
      if (!g || !isBeingDeleted(g, this.now()) || this.now() >= deadline) return g;
      await sleep(SETTLE_POLL_MS);
    }
  }

  /**
   * The grant loop. With `self` (acquire), claiming `self` gives the caller the slot instead of
   * calling onGranted; without onGranted, only `self` is ever claimed.
   */
  private async grantLoop(
    group: string,
    onGranted: OnGranted | undefined,
    selfKey?: TaskGroupWaiterKey,
  ): Promise<{ granted: number; self: boolean }> {
    let self = selfKey;
    let granted = 0;
    let selfGranted = false;
    let misses = 0;
    for (let round = 0; round < MAX_ROUNDS && misses < MAX_MISSES; round++) {
      const g = await this.store.getGroup(group);
      if (!g) break;
      const slots = await this.store.listSlots(group);
      const me = self;
      if (me && slots.some((s) => sameHolder(s.holder, me))) {
        // Our attempt holds a slot already: a concurrent acquire of the same attempt took it
        // (then removing our waiter makes this acquire answer "acquired" too), or a granter
        // claimed our waiter and will call onGranted (then the remove fails: "waiting", so the
        // task is sent once).
        selfGranted = await this.store.deleteWaiter(me);
        self = undefined;
        if (!onGranted) break;
      }
      const free = freeIndexes(g.capacity, slots);
      const held = (w: TaskGroupWaiterKey) => slots.find((s) => sameHolder(s.holder, w));
      // Claimed by a granter that died mid-way: finished by this grant, even without a free slot
      // when the waiter holds one already.
      const now = this.now();
      const waiters = await this.store.firstWaiters(group, CLAIM_SCAN);
      const head = waiters.find(
        (w) =>
          (w.claimedAt === undefined || w.claimedAt < now - this.claimStaleMs) &&
          (free.length > 0 || held(w)),
      );
      if (!head) break;
      const isSelf = self !== undefined && sameWaiter(head, self);
      if (isSelf) {
        // acquire's own waiter: its caller sends the task, so the claim is the delete.
        if (!(await this.store.deleteWaiter(head))) continue;
        if (held(head) || (await this.takeFirst(group, free, head)) !== undefined) {
          selfGranted = true;
          self = undefined;
          if (!onGranted) break;
        } else {
          await this.store.putWaiter(head);
          misses++;
        }
        continue;
      }
      if (!onGranted) break;
      // Claim, take a slot, send, and only then delete the waiter: a crash at any point leaves
      // the waiter (its claim goes stale) and at worst a slot reconcile frees, never a task that
      // waits with no waiter left.
      const token = randomUUID();
      if (!(await this.store.claimWaiter(head, token, now, now - this.claimStaleMs))) continue;
      const had = held(head)?.index;
      const index = had ?? (await this.takeFirst(group, free, head));
      if (index === undefined) {
        await this.store.unclaimWaiter(head, token);
        misses++;
        continue;
      }
      let wanted: boolean;
      try {
        wanted = await onGranted(head);
      } catch (e) {
        if (had === undefined) await this.store.freeSlot(group, index, head);
        await this.store.unclaimWaiter(head, token);
        throw e;
      }
      if (wanted) granted++;
      else await this.store.freeSlot(group, index, head);
      await this.store.deleteWaiter(head);
    }
    return { granted, self: selfGranted };
  }
}
