/**
 * Conformance suite of the Store interface, run against every implementation (today: DynamoDB,
 * here on dynalite through the real AWS SDK). Each conditional write is checked both ways.
 */
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";
import { DynamoStore } from "../../lib/store/dynamo-store.js";
import type { InstanceRecord, TaskInstanceRecord } from "../../lib/store/records.js";
import type { Store } from "../../lib/store/store.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";
import { instanceRecord } from "../helpers/records.js";

/** The instances table of the DynamoStore under test. */
let instancesTable = "";

/** The stored instance item as DynamoDB holds it (the document client's view). */
async function rawInstanceItem(instanceId: string): Promise<Record<string, unknown> | undefined> {
  const r = await testClients().dynamo.send(
    new GetCommand({ TableName: instancesTable, Key: { instanceId } }),
  );
  return r.Item;
}

const implementations: Array<[string, () => Promise<Store>]> = [
  [
    "DynamoStore",
    async () => {
      const aws = await useTestAws();
      instancesTable = aws.config.tables.instances;
      return new DynamoStore(testClients().dynamo, aws.config.tables);
    },
  ],
];

const def = parseWorkflowDefinition({
  tasks: [
    { code: "a", type: "SHELL", command: "true" },
    { code: "b", type: "SHELL", command: "true", upstream: ["a"] },
  ],
});

const instance = (
  id: string,
  workflow: string,
  createdAt: number,
  state: InstanceRecord["state"] = "RUNNING",
) => instanceRecord(id, { workflow, createdAt, state, progress: { slots: "D-", attempts: {} } });

function task(instanceId: string, code: string, attempt: number): TaskInstanceRecord {
  return {
    instanceId,
    workflow: "w",
    code,
    attempt,
    type: "SHELL",
    state: "DISPATCHED",
    priority: "MEDIUM",
    workerGroup: "default",
    submittedAt: 1,
  };
}

describe.each(implementations)("%s conformance", (_name, make) => {
  let store: Store;
  beforeAll(async () => {
    store = await make();
  });

  it("stores definitions once per version and moves the head only from the expected version", async () => {
    expect(
      await store.putDefinition({ name: "wf", version: 1, definition: def, createdAt: 10 }),
    ).toBe(true);
    expect(
      await store.putDefinition({ name: "wf", version: 1, definition: def, createdAt: 11 }),
    ).toBe(false);
    const head = {
      name: "wf",
      latestVersion: 1,
      releaseState: "ONLINE" as const,
      createdAt: 10,
      updatedAt: 10,
    };
    expect(await store.putWorkflowHead(head, 0)).toBe(true);
    expect(await store.putWorkflowHead(head, 0)).toBe(false);
    expect(await store.putWorkflowHead({ ...head, latestVersion: 2 }, 5)).toBe(false);
    expect(await store.putWorkflowHead({ ...head, latestVersion: 2 }, 1)).toBe(true);
    expect((await store.getWorkflowHead("wf"))?.latestVersion).toBe(2);
    expect((await store.getDefinition("wf", 1))?.definition).toEqual(def);
    expect(await store.getDefinition("wf", 7)).toBeUndefined();
    expect((await store.setReleaseState("wf", "OFFLINE", 20))?.releaseState).toBe("OFFLINE");
    expect(await store.setReleaseState("nope", "OFFLINE", 20)).toBeUndefined();
  });

  it("lists workflows in pages and deletes every version", async () => {
    for (const n of ["l1", "l2", "l3"]) {
      await store.putDefinition({ name: n, version: 1, definition: def, createdAt: 1 });
      await store.putWorkflowHead(
        { name: n, latestVersion: 1, releaseState: "ONLINE", createdAt: 1, updatedAt: 1 },
        0,
      );
    }
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await store.listWorkflows(1, token);
      names.push(...page.items.map((w) => w.name));
      token = page.nextToken;
    } while (token);
    expect(names).toEqual(expect.arrayContaining(["l1", "l2", "l3"]));
    await store.deleteWorkflow("l2");
    // A tombstone head remembers the last version, unlisted; the versions stay for the
    // instances that ran them.
    expect(await store.getWorkflowHead("l2")).toMatchObject({ deleted: true, latestVersion: 1 });
    expect(await store.getDefinition("l2", 1)).toMatchObject({ name: "l2", version: 1 });
    expect(await store.setReleaseState("l2", "OFFLINE", 5)).toBeUndefined();
    const after: string[] = [];
    let t: string | undefined;
    do {
      const page = await store.listWorkflows(10, t);
      after.push(...page.items.map((w) => w.name));
      t = page.nextToken;
    } while (t);
    expect(after).not.toContain("l2");
    expect(
      await store.putWorkflowHead(
        { name: "l2", latestVersion: 2, releaseState: "ONLINE", createdAt: 9, updatedAt: 9 },
        1,
      ),
    ).toBe(true);
    expect((await store.getWorkflowHead("l2"))?.deleted).toBeUndefined();
    await expect(store.listWorkflows(1, "not-a-token")).rejects.toMatchObject({
      code: "ValidationError",
    });
  });

  it("writes a command once, lets one claimer in, and drops it from the pending index when done", async () => {
    const cmd = {
      commandId: "start:c1",
      type: "START_WORKFLOW" as const,
      instanceId: "c1",
      workflow: "wf",
      version: 1,
      state: "PENDING" as const,
      createdAt: 100,
    };
    expect(await store.putCommand(cmd)).toBe(true);
    expect(await store.putCommand(cmd)).toBe(false);
    expect((await store.listPendingCommands(1000, 10)).map((c) => c.commandId)).toContain(
      "start:c1",
    );
    expect(await store.claimCommand("start:c1", 1000, 60_000)).toBeDefined();
    expect(await store.claimCommand("start:c1", 1001, 60_000)).toBeUndefined(); // live claim
    expect(await store.claimCommand("start:c1", 70_000, 60_000)).toBeDefined(); // stale claim taken over
    await store.completeCommand("start:c1", 70_001);
    expect(await store.claimCommand("start:c1", 200_000, 60_000)).toBeUndefined();
    expect((await store.getCommand("start:c1"))?.state).toBe("DONE");
    expect((await store.listPendingCommands(1_000_000, 10)).map((c) => c.commandId)).not.toContain(
      "start:c1",
    );
  });

  it("updates an instance only from the revision it read", async () => {
    const inst = instance("i1", "wf", 1000);
    expect(await store.putInstance(inst)).toBe(true);
    expect(await store.putInstance(inst)).toBe(false);
    const next = { ...inst, state: "SUCCESS" as const, rev: 2 };
    expect(await store.updateInstance(next)).toBe(true);
    expect(await store.updateInstance(next)).toBe(false); // same revision again: stale
    expect((await store.getInstance("i1"))?.state).toBe("SUCCESS");
  });

  it("stores a 10,000-task progress in a small item, and OUT values by the attempts that set them", async () => {
    // Dispatched and finished in about their order: few runs of equal states.
    const slots = "S".repeat(6000) + "D".repeat(16) + "-".repeat(3984);
    const inst = instanceRecord("big", {
      progress: { slots, attempts: { "17": [2, 1, 0] } },
      outputSlots: "1".repeat(9000) + "0".repeat(1000),
      outputBytes: 40,
      outputs: { t1: { x: "1" } },
    });
    expect(await store.putInstance(inst)).toBe(true);
    const back = await store.getInstance("big");
    expect(back?.progress).toEqual({ slots, attempts: { "17": [2, 1, 0] } });
    expect(back?.outputSlots).toBe("1".repeat(9000) + "0".repeat(1000));
    expect(back?.outputBytes).toBe(40);
    // The values are not in the item: they are read from the task items.
    expect(back?.outputs).toBeUndefined();
    const raw = (await rawInstanceItem("big")) as Record<string, Uint8Array>;
    expect(raw.progress?.length).toBeLessThan(100);
    expect(raw.outputSlots?.length).toBeLessThan(100);
    expect((await store.getInstancesProgress(["big"])).get("big")?.slots).toBe(slots);
  });

  it("reads an instance item written with its progress and OUT values inline (0.1.0)", async () => {
    const inst = instanceRecord("old", {
      progress: { slots: "SD", attempts: {} },
      outputs: { a: { x: "1" } },
    });
    expect(await store.putInstance(inst)).toBe(true);
    // Written as 0.1.0 wrote it: a plain progress map, OUT values inline.
    const raw = (await rawInstanceItem("old")) as Record<string, unknown>;
    await testClients().dynamo.send(
      new PutCommand({
        TableName: instancesTable,
        Item: { ...raw, progress: { slots: "SD", attempts: {} }, outputs: { a: { x: "1" } } },
      }),
    );
    const back = await store.getInstance("old");
    expect(back?.progress).toEqual({ slots: "SD", attempts: {} });
    expect(back?.outputs).toEqual({ a: { x: "1" } });
    expect((await store.getInstancesProgress(["old"])).get("old")?.slots).toBe("SD");
    // A rewrite keeps them inline until the dispatcher marks the tasks (nothing lost on upgrade).
    expect(await store.updateInstance({ ...(back as InstanceRecord), rev: 2 })).toBe(true);
    expect((await store.getInstance("old"))?.outputs).toEqual({ a: { x: "1" } });
  });

  it("reads the OUT values of attempts by key, consistently", async () => {
    await store.putTaskInstance({ ...task("o1", "a", 1), outputs: { x: "1" } });
    await store.putTaskInstance({ ...task("o1", "b", 2), outputs: { y: "2" } });
    await store.putTaskInstance(task("o1", "c", 1));
    const found = await store.getTaskOutputs([
      { instanceId: "o1", code: "a", attempt: 1 },
      { instanceId: "o1", code: "b", attempt: 2 },
      { instanceId: "o1", code: "c", attempt: 1 },
      { instanceId: "o1", code: "d", attempt: 1 },
    ]);
    expect(found.sort((p, q) => p.code.localeCompare(q.code))).toEqual([
      { instanceId: "o1", code: "a", attempt: 1, outputs: { x: "1" } },
      { instanceId: "o1", code: "b", attempt: 2, outputs: { y: "2" } },
    ]);
  });

  it("lists instances newest first, by workflow and state, and knows unfinished ones", async () => {
    await store.putInstance(instance("x1", "listwf", 1_000, "SUCCESS"));
    await store.putInstance(instance("x2", "listwf", 2_000, "RUNNING"));
    await store.putInstance(instance("x3", "other", 3_000, "RUNNING"));
    const byWf = await store.listInstances({ workflow: "listwf", limit: 10 });
    expect(byWf.items.map((i) => i.instanceId)).toEqual(["x2", "x1"]);
    const running = await store.listInstances({ workflow: "listwf", state: "RUNNING", limit: 10 });
    expect(running.items.map((i) => i.instanceId)).toEqual(["x2"]);
    const all = await store.listInstances({ limit: 2 });
    expect(all.items.length).toBe(2);
    expect(all.nextToken).toBeDefined();
    expect(await store.hasUnfinishedInstances("listwf")).toBe(true);
    expect(await store.hasUnfinishedInstances("nothing")).toBe(false);
  });

  it("claims a task attempt once, fences results by worker, and finds expired leases", async () => {
    const key = { instanceId: "t1", code: "a", attempt: 1 };
    expect(await store.putTaskInstance(task("t1", "a", 1))).toBe(true);
    expect(await store.putTaskInstance(task("t1", "a", 1))).toBe(false);
    const claim = { state: "RUNNING" as const, worker: "w1", startedAt: 5, leaseExpiresAt: 100 };
    expect(await store.updateTask(key, ["DISPATCHED"], claim)).toBeDefined();
    expect(await store.updateTask(key, ["DISPATCHED"], { ...claim, worker: "w2" })).toBeUndefined();
    expect((await store.listExpiredLeases(101, 10)).map((t) => t.code)).toContain("a");
    expect((await store.listExpiredLeases(99, 10)).map((t) => t.instanceId)).not.toContain("t1");
    // Another worker cannot write the result; the lease holder can, once.
    expect(
      await store.updateTask(key, ["RUNNING"], { state: "SUCCESS" }, { worker: "w2" }),
    ).toBeUndefined();
    expect(
      await store.updateTask(
        key,
        ["RUNNING"],
        { state: "SUCCESS" },
        { worker: "w1", removeLease: true },
      ),
    ).toBeDefined();
    expect(
      await store.updateTask(key, ["RUNNING"], { state: "FAILURE" }, { worker: "w1" }),
    ).toBeUndefined();
    expect((await store.listExpiredLeases(1_000_000, 100)).map((t) => t.instanceId)).not.toContain(
      "t1",
    );
    // Lease take-over only when it really expired.
    const k2 = { instanceId: "t1", code: "b", attempt: 1 };
    await store.putTaskInstance(task("t1", "b", 1));
    await store.updateTask(k2, ["DISPATCHED"], { ...claim, leaseExpiresAt: 500 });
    expect(
      await store.updateTask(
        k2,
        ["RUNNING"],
        { state: "NEED_FAULT_TOLERANCE" },
        { leaseExpiredBefore: 400 },
      ),
    ).toBeUndefined();
    expect(
      await store.updateTask(
        k2,
        ["RUNNING"],
        { state: "NEED_FAULT_TOLERANCE" },
        { leaseExpiredBefore: 600, removeLease: true },
      ),
    ).toBeDefined();
  });

  it("lets a claim create a task instance the dispatcher has not written yet, never twice", async () => {
    const key = { instanceId: "t3", code: "early", attempt: 1 };
    const base = task("t3", "early", 1);
    const claim = { state: "RUNNING" as const, worker: "w1", startedAt: 7, leaseExpiresAt: 100 };
    const created = await store.updateTask(key, ["SUBMITTED", "DISPATCHED"], claim, {
      createWith: base,
    });
    expect(created).toMatchObject({
      state: "RUNNING",
      worker: "w1",
      type: "SHELL",
      submittedAt: 1,
    });
    // The dispatcher's put comes second and finds it; a second claim finds it RUNNING.
    expect(await store.putTaskInstance(base)).toBe(false);
    expect(
      await store.updateTask(
        key,
        ["SUBMITTED", "DISPATCHED"],
        { ...claim, worker: "w2" },
        { createWith: base },
      ),
    ).toBeUndefined();
    // An existing item keeps its own fields.
    const k2 = { instanceId: "t3", code: "late", attempt: 1 };
    await store.putTaskInstance({ ...task("t3", "late", 1), submittedAt: 5 });
    const c2 = await store.updateTask(k2, ["DISPATCHED"], claim, {
      createWith: { ...task("t3", "late", 1), submittedAt: 999 },
    });
    expect(c2?.submittedAt).toBe(5);
  });

  it("lists attempts oldest first and all task instances", async () => {
    for (const attempt of [2, 1, 10]) await store.putTaskInstance(task("t2", "job", attempt));
    await store.putTaskInstance(task("t2", "job2", 1));
    expect((await store.listAttempts("t2", "job")).map((t) => t.attempt)).toEqual([1, 2, 10]);
    expect((await store.listTaskInstances("t2")).length).toBe(4);
  });
});
