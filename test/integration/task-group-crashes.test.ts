/**
 * Task-group grants survive a granter that dies mid-way (a `kill -9` of the dispatcher or
 * sweeper that was granting): the waiter is claimed, not deleted, until its task was sent, so
 * the next grant finishes the job once the claim is stale — the task is never left waiting with
 * no waiter. The store's claim is checked both ways first. On DynamoDB (dynalite, real SDK).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { grantTaskGroupSlot } from "../../lib/engine/task-dispatch.js";
import { type OnGranted, TaskGroupGate } from "../../lib/engine/task-group-gate.js";
import type { TaskMessage } from "../../lib/queue/messages.js";
import { createRuntime } from "../../lib/runtime/runtime.js";
import { DynamoTaskGroups } from "../../lib/store/dynamo-task-groups.js";
import {
  holderId,
  type TaskGroupStore,
  type TaskGroupWaiter,
  type TaskGroupWaiterKey,
} from "../../lib/store/task-groups.js";
import { type TestAws, testClients, useTestAws } from "../helpers/aws-env.js";
import { deleteRecords, receiveRecords } from "../helpers/sqs.js";

let seq = 0;
function waiter(group: string, code: string): TaskGroupWaiter {
  seq++;
  return {
    group,
    instanceId: `inst-${code}`,
    code,
    attempt: 1,
    taskGroupPriority: 0,
    instancePriority: "MEDIUM",
    taskPriority: "MEDIUM",
    queuedAt: 2_000_000 + seq,
    payload: JSON.stringify({ code }),
  };
}
const keyOf = ({ payload: _p, claimedAt: _c, ...k }: TaskGroupWaiter): TaskGroupWaiterKey => k;

/** A process death: thrown from inside a store call after its write went through. */
class Killed extends Error {}

/** The store, with one call for `code` made to "die" right before or right after it ran. */
function dying(
  store: TaskGroupStore,
  method: "takeSlot" | "deleteWaiter",
  code: string,
  when: "before" | "after",
): TaskGroupStore {
  let armed = true;
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== method || typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const who = (method === "takeSlot" ? args[2] : args[0]) as { code: string };
        const hit = armed && who.code === code;
        if (hit) armed = false;
        if (hit && when === "before") throw new Killed(`granter killed before ${method}`);
        const result = await value.apply(target, args);
        if (hit) throw new Killed(`granter killed after ${method}`);
        return result;
      };
    },
  });
}

describe("task-group grants when the granter dies", () => {
  let store: TaskGroupStore;
  let aws: TestAws;
  beforeAll(async () => {
    aws = await useTestAws();
    store = new DynamoTaskGroups(testClients().dynamo, aws.config.tables.taskGroups);
  });

  it("claims a waiter for exactly one granter; a stale claim can be taken over; unclaim needs the token", async () => {
    const w = waiter("claims", "c");
    await store.putWaiter(w);
    const k = keyOf(w);
    const results = await Promise.all([
      store.claimWaiter(k, "a", 1_000, 0),
      store.claimWaiter(k, "b", 1_000, 0),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await store.firstWaiters("claims", 1))[0]?.claimedAt).toBe(1_000);
    // Fresh (claimed at 1,000, stale only before 500): refused; stale (before 1,500): taken.
    expect(await store.claimWaiter(k, "c", 1_200, 500)).toBe(false);
    expect(await store.claimWaiter(k, "c", 2_000, 1_500)).toBe(true);
    await store.unclaimWaiter(k, "a"); // not its claim any more: left alone
    expect((await store.getWaiter(k))?.claimedAt).toBe(2_000);
    await store.unclaimWaiter(k, "c");
    expect((await store.getWaiter(k))?.claimedAt).toBeUndefined();
    expect(await store.deleteWaiter(k)).toBe(true);
    expect(await store.claimWaiter(k, "d", 3_000, 3_000)).toBe(false); // gone
  });

  it("a granter killed after taking the slot: the next grant after the claim goes stale sends the task", async () => {
    const g = "crash-slot";
    await store.putGroup({ name: g, capacity: 1, createdAt: 1, updatedAt: 1 });
    let now = 5_000_000;
    const opts = { now: () => now, claimStaleMs: 30_000, reconcileGraceMs: 30_000 };
    const first = waiter(g, "first");
    const next = waiter(g, "next");
    expect(await new TaskGroupGate(store, opts).acquire(first)).toBe("acquired");
    expect(await new TaskGroupGate(store, opts).acquire(next)).toBe("waiting");

    const sent: string[] = [];
    const onGranted: OnGranted = async (w) => {
      sent.push(w.code);
      return true;
    };
    // `first` ends and releases; the granter dies right after taking the slot for `next`.
    const killed = new TaskGroupGate(dying(store, "takeSlot", "next", "after"), opts);
    await expect(killed.release(g, first, onGranted)).rejects.toThrow(Killed);
    expect(sent).toEqual([]);
    // What it left: the slot held for `next`, and `next` still queued with its claim.
    expect((await store.listSlots(g)).map((s) => holderId(s.holder))).toEqual([holderId(next)]);
    expect((await store.firstWaiters(g, 5)).map((w) => w.code)).toEqual(["next"]);

    // A grant while the claim is fresh leaves it to its (presumably live) granter.
    const gate = new TaskGroupGate(store, opts);
    expect(await gate.grant(g, onGranted)).toBe(0);
    // Once stale, the next grant finishes: the task is sent once, on the slot already held.
    now += 31_000;
    expect(await gate.grant(g, onGranted)).toBe(1);
    expect(sent).toEqual(["next"]);
    expect((await store.listSlots(g)).map((s) => holderId(s.holder))).toEqual([holderId(next)]);
    expect(await store.counts(g)).toEqual({ used: 1, waiting: 0 });
  });

  it("a granter killed after sending, before deleting the waiter: the retake sends again (idempotent) and cleans up", async () => {
    const g = "crash-delete";
    await store.putGroup({ name: g, capacity: 1, createdAt: 1, updatedAt: 1 });
    let now = 6_000_000;
    const opts = { now: () => now, claimStaleMs: 30_000 };
    const first = waiter(g, "first");
    const next = waiter(g, "next");
    expect(await new TaskGroupGate(store, opts).acquire(first)).toBe("acquired");
    expect(await new TaskGroupGate(store, opts).acquire(next)).toBe("waiting");
    const sent: string[] = [];
    const onGranted: OnGranted = async (w) => {
      sent.push(w.code);
      return true;
    };
    const killed = new TaskGroupGate(dying(store, "deleteWaiter", "next", "before"), opts);
    await expect(killed.release(g, first, onGranted)).rejects.toThrow(Killed);
    expect(sent).toEqual(["next"]);
    now += 31_000;
    await new TaskGroupGate(store, opts).grant(g, onGranted);
    // Sent a second time (a duplicate message the worker's claim fences), one slot, no waiter.
    expect(sent).toEqual(["next", "next"]);
    expect(await store.counts(g)).toEqual({ used: 1, waiting: 0 });
  });

  it("a granter killed before taking any slot: reconcile needs nothing, the next grant takes over", async () => {
    const g = "crash-claim";
    await store.putGroup({ name: g, capacity: 1, createdAt: 1, updatedAt: 1 });
    let now = 7_000_000;
    const opts = { now: () => now, claimStaleMs: 30_000 };
    const w = waiter(g, "w");
    await store.putWaiter(w);
    // Claimed, then nothing (the granter died before its takeSlot).
    expect(await store.claimWaiter(keyOf(w), "dead", now, now - 30_000)).toBe(true);
    const sent: string[] = [];
    const onGranted: OnGranted = async (x) => {
      sent.push(x.code);
      return true;
    };
    const gate = new TaskGroupGate(store, opts);
    expect(await gate.grant(g, onGranted)).toBe(0);
    now += 31_000;
    expect(await gate.grant(g, onGranted)).toBe(1);
    expect(sent).toEqual(["w"]);
    expect(await store.counts(g)).toEqual({ used: 1, waiting: 0 });
  });

  it("the grant callback is idempotent: SUBMITTED and DISPATCHED are sent, RUNNING kept, a stopped task refused", async () => {
    const rt = createRuntime({
      ...aws.config,
      dataDir: mkdtempSync(join(tmpdir(), "shoal-tg-crash-")),
    });
    const deps = rt.engine;
    const message = (code: string): TaskMessage => ({
      instanceId: "inst-grant",
      workflow: "w",
      version: 1,
      code,
      attempt: 1,
      instancePriority: "MEDIUM",
      dryRun: false,
      submittedAt: 1,
      task: { code, type: "SHELL", command: "true" } as TaskMessage["task"],
      params: {},
    });
    const grantOf = (code: string): TaskGroupWaiter => ({
      ...waiter("g", code),
      instanceId: "inst-grant",
      payload: JSON.stringify({ message: message(code), workerGroup: "default", releaseAt: 0 }),
    });
    const put = (code: string, state: "SUBMITTED" | "DISPATCHED" | "RUNNING" | "KILLED") =>
      rt.api.store.putTaskInstance({
        instanceId: "inst-grant",
        workflow: "w",
        code,
        attempt: 1,
        type: "SHELL",
        state,
        priority: "MEDIUM",
        workerGroup: "default",
        submittedAt: 1,
      });
    await put("submitted", "SUBMITTED");
    await put("dispatched", "DISPATCHED");
    await put("running", "RUNNING");
    await put("killed", "KILLED");
    expect(await grantTaskGroupSlot(deps, grantOf("submitted"))).toBe(true);
    expect(await grantTaskGroupSlot(deps, grantOf("dispatched"))).toBe(true);
    expect(await grantTaskGroupSlot(deps, grantOf("running"))).toBe(true);
    expect(await grantTaskGroupSlot(deps, grantOf("killed"))).toBe(false);
    expect((await rt.api.store.getTaskInstance("inst-grant", "submitted", 1))?.state).toBe(
      "DISPATCHED",
    );
    // Sent: the two that had not run yet; nothing for RUNNING or KILLED.
    const url = aws.taskUrls[2] as string; // MEDIUM
    const sent: string[] = [];
    for (let i = 0; i < 5 && sent.length < 2; i++) {
      const records = await receiveRecords(url, { max: 10, waitSeconds: 1 });
      sent.push(...records.map((r) => (JSON.parse(r.body) as TaskMessage).code));
      await deleteRecords(url, records);
    }
    expect(sent.sort()).toEqual(["dispatched", "submitted"]);
    expect(await receiveRecords(url, { max: 10, waitSeconds: 1 })).toEqual([]);
  });
});
