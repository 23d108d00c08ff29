/**
 * Task groups (DolphinScheduler "Task Group"): a named limit on how many task instances that
 * name the group run at once, across workflows. In DolphinScheduler a task that cannot get one
 * of the group's `capacity` slots waits in the group's queue (`t_ds_task_group_queue`), ordered by
 * the task's task-group priority, and is woken when a slot is released
 * (ProcessService.acquireTaskGroup / releaseTaskGroup, TaskGroupQueue).
 *
 * Shoal keeps each slot and each waiter as its own item, so that every change is one conditional
 * single-item write: a slot is taken only if free, freed only by its holder, a waiter is removed
 * by exactly one caller. The gate (lib/engine/task-group-gate.ts) builds acquire/release on these.
 * Times are epoch milliseconds.
 */

import type { Priority } from "../core/model.js";
import { priorityRank } from "../core/priority.js";
import { TASK_GROUP_PRIORITY } from "../core/task-group-limits.js";
import type { Page } from "./records.js";

/** Largest waiter payload, bytes: a waiter item must stay under DynamoDB's 400 KB item size. */
export const MAX_WAITER_PAYLOAD_BYTES = 300 * 1024;
/**
 * How long a delete's mark (`deletingSince`) keeps acquirers out, ms. A delete finishes within
 * one API request (API Gateway gives an integration at most 30 s), so an older mark was left by a
 * deleter that died and is ignored.
 */
export const DELETE_MARK_MS = 60_000;

/** A group's head item. */
export interface TaskGroupRecord {
  /** Like a workflow name (NAME_PATTERN). */
  name: string;
  /** How many slots may be held at once, 1..1000. */
  capacity: number;
  description?: string;
  createdAt: number;
  updatedAt: number;
  /**
   * Set while a delete checks that nothing holds or waits (see `deleteGroup`): acquirers treat a
   * group marked within DELETE_MARK_MS as gone. Cleared by `putGroup`.
   */
  deletingSince?: number;
}

/** Who holds (or wants) a slot: one attempt of one task of one instance. */
export interface TaskGroupHolder {
  instanceId: string;
  code: string;
  /** 1-based attempt number. */
  attempt: number;
}

/** A task waiting for a slot of `group`. */
export interface TaskGroupWaiter extends TaskGroupHolder {
  group: string;
  /** 0..100, higher first (DolphinScheduler's task definition `taskGroupPriority`). */
  taskGroupPriority: number;
  instancePriority: Priority;
  taskPriority: Priority;
  /**
   * When the task first asked, epoch ms. Part of the waiter's key, so it must be the same on
   * every acquire of the same attempt (use the attempt's submittedAt): that makes a repeated put
   * the same item.
   */
  queuedAt: number;
  /** Opaque JSON the dispatcher needs to send the task later; < 300 KB. */
  payload: string;
  /**
   * Set while a granter is giving this waiter a slot (`claimWaiter`), epoch ms; the waiter is
   * deleted only after its task was sent, so a granter that dies mid-way leaves it here and a
   * later grant takes over once the claim is stale.
   */
  claimedAt?: number;
}

/** What identifies a waiter item (all its ordering fields). */
export type TaskGroupWaiterKey = Omit<TaskGroupWaiter, "payload" | "claimedAt">;

/** A taken slot. `index` is 0-based; slots at or above a lowered capacity may still be held. */
export interface TaskGroupSlot {
  index: number;
  holder: TaskGroupHolder;
  /** When it was taken, epoch ms. */
  heldSince: number;
}

/** Held slots and queued waiters of one group. */
export interface TaskGroupCounts {
  used: number;
  waiting: number;
}

/**
 * Outcome of `deleteGroup`: `slot-held`/`waiting` refuse (nothing changed), `changed` means a
 * concurrent `putGroup` rewrote the group meanwhile (nothing deleted).
 */
export type DeleteGroupResult = "deleted" | "not-found" | "slot-held" | "waiting" | "changed";

export interface TaskGroupStore {
  /**
   * Creates the group, or changes capacity and description of an existing one (keeping its
   * createdAt, clearing a delete mark).
   * @returns whether it was created, and the stored record.
   */
  putGroup(g: TaskGroupRecord): Promise<{ created: boolean; group: TaskGroupRecord }>;
  getGroup(name: string): Promise<TaskGroupRecord | undefined>;
  /**
   * Groups by name, `limit` per page; `nextToken` only when more exist.
   * @throws RequestError ValidationError for a token this store did not return.
   */
  listGroups(limit: number, nextToken?: string): Promise<Page<TaskGroupRecord>>;
  /**
   * Deletes the group unless a slot is held or a waiter exists. Marks the head first, then
   * looks for slots and waiters, then deletes the head only if it still carries its own mark: an
   * acquirer checks the head again after its own write, so one of the two sees the other.
   * @param now epoch ms, the mark's value.
   */
  deleteGroup(name: string, now: number): Promise<DeleteGroupResult>;

  /** Held slots of the group, by index (strongly consistent). */
  listSlots(group: string): Promise<TaskGroupSlot[]>;
  /**
   * Takes slot `index` for `holder` if no one holds it.
   * @returns false when it is held (by anyone, the same holder included).
   * @throws RangeError for an index outside 0..99999.
   */
  takeSlot(group: string, index: number, holder: TaskGroupHolder, now: number): Promise<boolean>;
  /** Frees slot `index` if `holder` holds it. @returns false otherwise. */
  freeSlot(group: string, index: number, holder: TaskGroupHolder): Promise<boolean>;

  /**
   * Writes the waiter (idempotent: the same key is the same item).
   * @throws RangeError for a priority outside 0..100, a bad queuedAt, or a payload of 300 KB or more.
   */
  putWaiter(w: TaskGroupWaiter): Promise<void>;
  getWaiter(key: TaskGroupWaiterKey): Promise<TaskGroupWaiter | undefined>;
  /** The first `limit` waiters, next first (see `waiterOrderKey`), strongly consistent. */
  firstWaiters(group: string, limit: number): Promise<TaskGroupWaiter[]>;
  /** Removes the waiter. @returns true only for the caller that removed it. */
  deleteWaiter(key: TaskGroupWaiterKey): Promise<boolean>;
  /**
   * Claims the waiter for one granter: sets `claimedAt = now` and the granter's `token` if the
   * waiter exists and is unclaimed or its claim is older than `staleBefore` (epoch ms).
   * @returns false when it is gone or another granter's claim is still fresh.
   */
  claimWaiter(
    key: TaskGroupWaiterKey,
    token: string,
    now: number,
    staleBefore: number,
  ): Promise<boolean>;
  /** Drops the claim `token` made (the granter found no slot); a newer claim is left alone. */
  unclaimWaiter(key: TaskGroupWaiterKey, token: string): Promise<void>;

  /** Held slots (any index) and waiters. */
  counts(group: string): Promise<TaskGroupCounts>;
}

/** `<instanceId>#<code>#<attempt>`: instance ids are UUIDs and codes match NAME_PATTERN, so no '#'. */
export function holderId(h: TaskGroupHolder): string {
  return `${h.instanceId}#${h.code}#${h.attempt}`;
}

/** Inverse of `holderId`; undefined for a string it did not make. */
export function parseHolderId(id: string): TaskGroupHolder | undefined {
  const parts = id.split("#");
  if (parts.length !== 3) return undefined;
  const [instanceId, code, attempt] = parts as [string, string, string];
  const n = Number(attempt);
  if (!instanceId || !code || !Number.isInteger(n)) return undefined;
  return { instanceId, code, attempt: n };
}

export function sameHolder(a: TaskGroupHolder, b: TaskGroupHolder): boolean {
  return a.instanceId === b.instanceId && a.code === b.code && a.attempt === b.attempt;
}

/** Largest queuedAt that fits 15 digits. */
const MAX_TIME = 10 ** 15 - 1;

/**
 * The sort key of a waiter without its `wait#` prefix: task-group priority descending, then
 * instance priority (HIGHEST first), then task priority, then queuedAt ascending, then holder id
 * (a total order, so ties are stable). Comparing two keys as strings compares the waiters.
 * @throws RangeError for a taskGroupPriority outside 0..100, a queuedAt outside 0..10^15-1 or an
 *   unknown priority.
 */
export function waiterOrderKey(w: TaskGroupWaiterKey): string {
  const p = w.taskGroupPriority;
  if (!Number.isInteger(p) || p < TASK_GROUP_PRIORITY.min || p > TASK_GROUP_PRIORITY.max) {
    throw new RangeError(`taskGroupPriority must be a whole number 0..100: ${p}`);
  }
  if (!Number.isInteger(w.queuedAt) || w.queuedAt < 0 || w.queuedAt > MAX_TIME) {
    throw new RangeError(`queuedAt must be a whole number of ms in 0..${MAX_TIME}: ${w.queuedAt}`);
  }
  const ip = priorityRank(w.instancePriority);
  const tp = priorityRank(w.taskPriority);
  if (ip < 0 || tp < 0) {
    throw new RangeError(`unknown priority: ${w.instancePriority} / ${w.taskPriority}`);
  }
  const inverted = String(TASK_GROUP_PRIORITY.max - p).padStart(3, "0");
  const ranks = `${ip}${tp}`;
  return `${inverted}#${ranks}#${String(w.queuedAt).padStart(15, "0")}#${holderId(w)}`;
}

/** Whether `g` carries a delete mark younger than DELETE_MARK_MS at `now` (epoch ms). */
export function isBeingDeleted(g: TaskGroupRecord, now: number): boolean {
  return g.deletingSince !== undefined && now - g.deletingSince < DELETE_MARK_MS;
}
