/**
 * Task groups on DynamoDB (dynalite through the real AWS SDK): the TaskGroupStore conformance
 * suite (every conditional write both ways), then the TaskGroupGate — capacity under concurrent
 * acquirers, grant order, idempotency, the lost-wakeup race, reconcile and lowered capacity.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Priority } from "../../lib/core/model.js";
import { type OnGranted, TaskGroupGate } from "../../lib/engine/task-group-gate.js";
import { DynamoTaskGroups } from "../../lib/store/dynamo-task-groups.js";
import {
  holderId,
  type TaskGroupHolder,
  type TaskGroupRecord,
  type TaskGroupStore,
  type TaskGroupWaiter,
} from "../../lib/store/task-groups.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";

const implementations: Array<[string, () => Promise<TaskGroupStore>]> = [
  [
    "DynamoTaskGroups",
    async () => {
      const aws = await useTestAws();
      return new DynamoTaskGroups(testClients().dynamo, aws.config.tables.taskGroups);
    },
  ],
];

function group(name: string, capacity: number, at = 1_000): TaskGroupRecord {
  return { name, capacity, createdAt: at, updatedAt: at };
}

let seq = 0;
function waiter(
  g: string,
  code: string,
  o: Partial<Omit<TaskGroupWaiter, "group" | "code">> = {},
): TaskGroupWaiter {
  seq++;
  return {
    group: g,
    instanceId: o.instanceId ?? `inst-${code}`,
    code,
    attempt: o.attempt ?? 1,
    taskGroupPriority: o.taskGroupPriority ?? 0,
    instancePriority: o.instancePriority ?? "MEDIUM",
    taskPriority: o.taskPriority ?? "MEDIUM",
    queuedAt: o.queuedAt ?? 1_000_000 + seq,
    payload: o.payload ?? JSON.stringify({ code }),
  };
}

const id = (h: TaskGroupHolder) => holderId(h);

describe.each(implementations)("%s conformance", (_name, make) => {
  let store: TaskGroupStore;
  beforeAll(async () => {
    store = await make();
  });

  it("creates a group once, then changes it in place, keeping createdAt", async () => {
    const first = await store.putGroup({ ...group("etl", 2, 10), description: "nightly" });
    expect(first).toEqual({
      created: true,
      group: { name: "etl", capacity: 2, description: "nightly", createdAt: 10, updatedAt: 10 },
    });
    const second = await store.putGroup(group("etl", 5, 20));
    expect(second.created).toBe(false);
    // A put replaces: no description given, none kept.
    expect(second.group).toEqual({ name: "etl", capacity: 5, createdAt: 10, updatedAt: 20 });
    expect(await store.getGroup("etl")).toEqual(second.group);
    expect(await store.getGroup("nope")).toBeUndefined();
  });

  it("lists groups by name in pages and refuses a foreign token", async () => {
    for (const n of ["la", "lb", "lc"]) await store.putGroup(group(n, 1));
    const names: string[] = [];
    let token: string | undefined;
    do {
      const page = await store.listGroups(1, token);
      expect(page.items.length).toBeLessThanOrEqual(1);
      names.push(...page.items.map((g) => g.name));
      token = page.nextToken;
    } while (token);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(["la", "lb", "lc"]));
    const all = await store.listGroups(200);
    expect(all.nextToken).toBeUndefined();
    await expect(store.listGroups(1, "not-a-token")).rejects.toMatchObject({
      code: "ValidationError",
    });
  });

  it("takes a slot only if free and frees it only for its holder", async () => {
    const a = { instanceId: "i1", code: "a", attempt: 1 };
    const b = { instanceId: "i2", code: "b", attempt: 1 };
    expect(await store.takeSlot("slots", 0, a, 5)).toBe(true);
    expect(await store.takeSlot("slots", 0, b, 6)).toBe(false);
    expect(await store.takeSlot("slots", 0, a, 7)).toBe(false);
    expect(await store.takeSlot("slots", 1, b, 8)).toBe(true);
    expect(await store.listSlots("slots")).toEqual([
      { index: 0, holder: a, heldSince: 5 },
      { index: 1, holder: b, heldSince: 8 },
    ]);
    expect(await store.counts("slots")).toEqual({ used: 2, waiting: 0 });
    expect(await store.freeSlot("slots", 0, b)).toBe(false);
    expect(await store.freeSlot("slots", 0, { ...a, attempt: 2 })).toBe(false);
    expect(await store.freeSlot("slots", 0, a)).toBe(true);
    expect(await store.freeSlot("slots", 0, a)).toBe(false);
    expect(await store.freeSlot("slots", 7, a)).toBe(false);
    expect((await store.listSlots("slots")).map((s) => s.index)).toEqual([1]);
    // Exactly one of many concurrent takers wins a slot.
    const takers = Array.from({ length: 8 }, (_, i) => ({
      instanceId: `race-${i}`,
      code: "c",
      attempt: 1,
    }));
    const won = await Promise.all(takers.map((t) => store.takeSlot("slots", 3, t, 9)));
    expect(won.filter(Boolean)).toHaveLength(1);
    await expect(store.takeSlot("slots", 100_000, a, 1)).rejects.toThrow(RangeError);
    await expect(store.takeSlot("slots", -1, a, 1)).rejects.toThrow(RangeError);
  });

  it("orders waiters: task-group priority, instance priority, task priority, queuedAt, holder", async () => {
    const g = "order";
    const w = (code: string, o: Parameters<typeof waiter>[2]) => waiter(g, code, o);
    const expected = [
      w("p90", { taskGroupPriority: 90, instancePriority: "LOWEST", queuedAt: 9 }),
      w("p10-highest", { taskGroupPriority: 10, instancePriority: "HIGHEST", queuedAt: 9 }),
      w("p10-medium-high", {
        taskGroupPriority: 10,
        instancePriority: "MEDIUM",
        taskPriority: "HIGH",
        queuedAt: 9,
      }),
      w("p10-medium-medium-early", { taskGroupPriority: 10, queuedAt: 1 }),
      w("p10-medium-medium-late-a", { taskGroupPriority: 10, queuedAt: 5, instanceId: "a" }),
      w("p10-medium-medium-late-b", { taskGroupPriority: 10, queuedAt: 5, instanceId: "b" }),
      w("p0", { taskGroupPriority: 0, instancePriority: "HIGHEST", queuedAt: 0 }),
    ];
    for (const x of [...expected].reverse()) await store.putWaiter(x);
    const first = await store.firstWaiters(g, 100);
    expect(first.map((x) => x.code)).toEqual(expected.map((x) => x.code));
    expect(first[0]).toEqual(expected[0]);
    expect((await store.firstWaiters(g, 2)).map((x) => x.code)).toEqual(["p90", "p10-highest"]);
    expect(await store.firstWaiters(g, 0)).toEqual([]);
  });

  it("puts a waiter idempotently and deletes it for exactly one caller", async () => {
    const g = "waiters";
    const x = waiter(g, "x", { payload: '{"big":true}' });
    await store.putWaiter(x);
    await store.putWaiter(x);
    expect(await store.counts(g)).toEqual({ used: 0, waiting: 1 });
    expect(await store.getWaiter(x)).toEqual(x);
    const { payload: _p, ...key } = x;
    const results = await Promise.all([store.deleteWaiter(key), store.deleteWaiter(key)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.deleteWaiter(key)).toBe(false);
    expect(await store.getWaiter(x)).toBeUndefined();
    expect(await store.counts(g)).toEqual({ used: 0, waiting: 0 });
  });

  it("refuses waiters it cannot key or store", async () => {
    await expect(store.putWaiter(waiter("bad", "a", { taskGroupPriority: 101 }))).rejects.toThrow(
      RangeError,
    );
    await expect(store.putWaiter(waiter("bad", "a", { taskGroupPriority: -1 }))).rejects.toThrow(
      RangeError,
    );
    await expect(
      store.putWaiter(waiter("bad", "a", { taskPriority: "URGENT" as Priority })),
    ).rejects.toThrow(RangeError);
    await expect(store.putWaiter(waiter("bad", "a", { queuedAt: -5 }))).rejects.toThrow(RangeError);
    await expect(
      store.putWaiter(waiter("bad", "a", { payload: "x".repeat(300 * 1024) })),
    ).rejects.toThrow(RangeError);
    expect(await store.counts("bad")).toEqual({ used: 0, waiting: 0 });
  });

  it("deletes a group only while nothing holds or waits, and clears its mark when refused", async () => {
    expect(await store.deleteGroup("ghost", 1)).toBe("not-found");
    await store.putGroup(group("busy", 1));
    const h = { instanceId: "i", code: "c", attempt: 1 };
    await store.takeSlot("busy", 0, h, 1);
    const w = waiter("busy", "w");
    await store.putWaiter(w);
    expect(await store.deleteGroup("busy", 50)).toBe("slot-held");
    expect((await store.getGroup("busy"))?.deletingSince).toBeUndefined();
    await store.freeSlot("busy", 0, h);
    expect(await store.deleteGroup("busy", 60)).toBe("waiting");
    expect((await store.getGroup("busy"))?.deletingSince).toBeUndefined();
    const { payload: _p, ...key } = w;
    await store.deleteWaiter(key);
    expect(await store.deleteGroup("busy", 70)).toBe("deleted");
    expect(await store.getGroup("busy")).toBeUndefined();
    expect(await store.deleteGroup("busy", 80)).toBe("not-found");
    // Recreated afresh.
    expect((await store.putGroup(group("busy", 3, 90))).created).toBe(true);
  });
});

describe.each(implementations)("TaskGroupGate over %s", (_name, make) => {
  let store: TaskGroupStore;
  beforeAll(async () => {
    store = await make();
  });

  const holders = async (g: string) => (await store.listSlots(g)).map((s) => id(s.holder));

  it("answers unknown-group for a group that does not exist, and leaves nothing behind", async () => {
    const gate = new TaskGroupGate(store);
    expect(await gate.acquire(waiter("missing", "a"))).toBe("unknown-group");
    expect(await store.counts("missing")).toEqual({ used: 0, waiting: 0 });
  });

  it("never lets more than capacity hold a slot under 20 concurrent acquirers", async () => {
    const g = "storm";
    await store.putGroup(group(g, 3));
    let running = 0;
    let maxRunning = 0;
    const done = new Set<string>();
    const work: Promise<void>[] = [];
    // A task runs once it has a slot, then ends and releases it, which grants the next one.
    const run = (h: TaskGroupHolder) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      work.push(
        (async () => {
          await new Promise((r) => setImmediate(r));
          running--;
          expect(done.has(id(h)), `${id(h)} ran twice`).toBe(false);
          await gate.release(g, h, onGranted);
          done.add(id(h));
        })(),
      );
    };
    const onGranted: OnGranted = async (w) => {
      run(w);
      return true;
    };
    const gate = new TaskGroupGate(store, { onGranted });
    const ws = Array.from({ length: 20 }, (_, i) => waiter(g, `t${i}`));
    const first = await Promise.all(ws.map((w) => gate.acquire(w)));
    expect(first.filter((r) => r === "acquired").length).toBeLessThanOrEqual(3);
    ws.forEach((w, i) => {
      if (first[i] === "acquired") run(w);
    });
    await until(
      async () => {
        // Tasks that finish grant (and start) others: wait until no new work appears.
        for (let seen = 0; seen < work.length; ) {
          const batch = work.slice(seen);
          seen = work.length;
          await Promise.all(batch);
        }
        if (done.size < 20) await gate.reconcile(async () => true, onGranted);
        return done.size === 20;
      },
      { what: "all 20 tasks granted and finished" },
    );
    await Promise.all(work);
    expect(maxRunning).toBeLessThanOrEqual(3);
    expect(maxRunning).toBeGreaterThan(0);
    expect(await store.counts(g)).toEqual({ used: 0, waiting: 0 });
  });

  it("holds exactly capacity slots after 20 concurrent acquires, the rest waiting", async () => {
    const g = "burst";
    await store.putGroup(group(g, 3));
    const gate = new TaskGroupGate(store);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => gate.acquire(waiter(g, `b${i}`))),
    );
    const acquired = results.filter((r) => r === "acquired").length;
    expect(acquired).toBe(3);
    expect(await store.counts(g)).toEqual({ used: 3, waiting: 17 });
    expect((await store.listSlots(g)).every((s) => s.index < 3)).toBe(true);
  });

  it("grants in priority order when slots free up", async () => {
    const g = "prio";
    await store.putGroup(group(g, 1));
    const gate = new TaskGroupGate(store);
    const first = waiter(g, "first");
    expect(await gate.acquire(first)).toBe("acquired");
    const queue = [
      waiter(g, "low-late", { taskGroupPriority: 1, queuedAt: 20 }),
      waiter(g, "top", { taskGroupPriority: 50, instancePriority: "LOWEST" }),
      waiter(g, "low-early", { taskGroupPriority: 1, queuedAt: 10 }),
      waiter(g, "low-highest", { taskGroupPriority: 1, instancePriority: "HIGHEST", queuedAt: 30 }),
      waiter(g, "low-early-task-high", {
        taskGroupPriority: 1,
        taskPriority: "HIGH",
        queuedAt: 40,
      }),
    ];
    for (const w of queue) expect(await gate.acquire(w)).toBe("waiting");
    const order: string[] = [];
    const onGranted: OnGranted = async (w) => {
      order.push(w.code);
      return true;
    };
    let current: TaskGroupHolder = first;
    for (let i = 0; i < queue.length; i++) {
      await gate.release(g, current, onGranted);
      const [slot] = await store.listSlots(g);
      expect(slot).toBeDefined();
      current = slot?.holder as TaskGroupHolder;
    }
    expect(order).toEqual(["top", "low-highest", "low-early-task-high", "low-early", "low-late"]);
    await gate.release(g, current, onGranted);
    expect(await store.counts(g)).toEqual({ used: 0, waiting: 0 });
  });

  it("a new acquirer does not jump the queue while a better waiter waits", async () => {
    const g = "nojump";
    await store.putGroup(group(g, 1));
    const gate = new TaskGroupGate(store);
    const holder = waiter(g, "h");
    await gate.acquire(holder);
    const better = waiter(g, "better", { taskGroupPriority: 9 });
    expect(await gate.acquire(better)).toBe("waiting");
    // Free the slot behind the gate's back (a lost release): a worse acquirer must not take it.
    await store.freeSlot(g, 0, holder);
    const worse = waiter(g, "worse", { taskGroupPriority: 1 });
    expect(await gate.acquire(worse)).toBe("waiting");
    const granted: string[] = [];
    const onGranted: OnGranted = async (w) => {
      granted.push(w.code);
      return true;
    };
    expect(await gate.grant(g, onGranted)).toBe(1);
    expect(granted).toEqual(["better"]);
  });

  it("acquire and release are idempotent for the same holder", async () => {
    const g = "idem";
    await store.putGroup(group(g, 1));
    const gate = new TaskGroupGate(store);
    const a = waiter(g, "a");
    expect(await gate.acquire(a)).toBe("acquired");
    expect(await gate.acquire(a)).toBe("acquired");
    expect(await holders(g)).toEqual([id(a)]);
    const b = waiter(g, "b");
    expect(await gate.acquire(b)).toBe("waiting");
    expect(await gate.acquire(b)).toBe("waiting");
    expect(await store.counts(g)).toEqual({ used: 1, waiting: 1 });
    const granted: string[] = [];
    const onGranted: OnGranted = async (w) => {
      granted.push(w.code);
      return true;
    };
    await gate.release(g, a, onGranted);
    await gate.release(g, a, onGranted);
    expect(granted).toEqual(["b"]);
    expect(await holders(g)).toEqual([id(b)]);
    // A holder that holds nothing releases nothing.
    await gate.release(g, waiter(g, "stranger"), onGranted);
    expect(await holders(g)).toEqual([id(b)]);
    // b asks again after it was granted: still one slot, no waiter left.
    expect(await gate.acquire(b)).toBe("acquired");
    expect(await store.counts(g)).toEqual({ used: 1, waiting: 0 });
  });

  it("concurrent duplicate acquires of one attempt end with one slot", async () => {
    const g = "dups";
    await store.putGroup(group(g, 3));
    const gate = new TaskGroupGate(store, { reconcileGraceMs: 0 });
    const a = waiter(g, "a");
    const results = await Promise.all(Array.from({ length: 5 }, () => gate.acquire(a)));
    // At least one answers "acquired"; a duplicate that queued and then found the slot taken by
    // another may answer "waiting" (nothing more will be sent for it).
    expect(results).toContain("acquired");
    expect(results.every((r) => r === "acquired" || r === "waiting")).toBe(true);
    await gate.reconcile(
      async () => true,
      async () => true,
    );
    expect(await holders(g)).toEqual([id(a)]);
    expect(await store.counts(g)).toEqual({ used: 1, waiting: 0 });
    expect(await gate.acquire(a)).toBe("acquired");
  });

  it("closes the lost-wakeup race: a release between acquire's read and its queueing", async () => {
    const g = "wakeup";
    await store.putGroup(group(g, 1));
    const plain = new TaskGroupGate(store);
    const h = waiter(g, "h");
    expect(await plain.acquire(h)).toBe("acquired");
    const granted: string[] = [];
    const onGranted: OnGranted = async (w) => {
      granted.push(w.code);
      return true;
    };
    // The acquirer has seen the slot taken; before its waiter is written, the holder releases
    // and the releaser's grant finds nobody queued.
    const racing: TaskGroupStore = Object.create(store);
    racing.putWaiter = async (w) => {
      await plain.release(g, h, onGranted);
      expect(granted).toEqual([]);
      await store.putWaiter(w);
    };
    const w = waiter(g, "w");
    expect(await new TaskGroupGate(racing).acquire(w)).toBe("acquired");
    expect(await holders(g)).toEqual([id(w)]);
    expect(await store.counts(g)).toEqual({ used: 1, waiting: 0 });
  });

  it("a release concurrent with an acquire ends with the waiter granted, at the latest by reconcile", async () => {
    const g = "race";
    await store.putGroup(group(g, 1));
    for (let round = 0; round < 10; round++) {
      const granted = new Set<string>();
      const onGranted: OnGranted = async (w) => {
        granted.add(id(w));
        return true;
      };
      const gate = new TaskGroupGate(store, { onGranted });
      const h = waiter(g, `h${round}`);
      await until(async () => (await gate.acquire(h)) === "acquired", { what: "holder" });
      const w = waiter(g, `w${round}`);
      const [got] = await Promise.all([gate.acquire(w), gate.release(g, h, onGranted)]);
      if (got === "acquired") granted.add(id(w));
      if (!granted.has(id(w))) await gate.reconcile(async () => true, onGranted);
      expect(granted.has(id(w)), `round ${round}`).toBe(true);
      expect(await holders(g)).toEqual([id(w)]);
      expect(await store.counts(g)).toEqual({ used: 1, waiting: 0 });
      await gate.release(g, w, onGranted);
    }
  });

  it("reconcile frees a dead holder's slot after the grace period and grants the next", async () => {
    const g = "dead";
    await store.putGroup(group(g, 1));
    let now = 1_000_000;
    const gate = new TaskGroupGate(store, { now: () => now, reconcileGraceMs: 10_000 });
    const dead = waiter(g, "dead");
    const w = waiter(g, "w");
    expect(await gate.acquire(dead)).toBe("acquired");
    expect(await gate.acquire(w)).toBe("waiting");
    const granted: string[] = [];
    const onGranted: OnGranted = async (x) => {
      granted.push(x.code);
      return true;
    };
    const live = async (h: TaskGroupHolder) => id(h) !== id(dead);
    // Within the grace period a slot may belong to a grant in flight: left alone.
    now += 5_000;
    expect(await gate.reconcile(live, onGranted)).toMatchObject({ freed: 0, granted: 0 });
    now += 6_000;
    const r = await gate.reconcile(live, onGranted);
    expect(r.freed).toBe(1);
    expect(r.granted).toBeGreaterThanOrEqual(1);
    expect(granted).toEqual(["w"]);
    expect(await holders(g)).toEqual([id(w)]);
  });

  it("lowered capacity: holders keep their slots, no grant until fewer than capacity are held", async () => {
    const g = "lower";
    await store.putGroup(group(g, 3));
    const gate = new TaskGroupGate(store);
    const hs = [waiter(g, "h0"), waiter(g, "h1"), waiter(g, "h2")];
    for (const h of hs) expect(await gate.acquire(h)).toBe("acquired");
    await store.putGroup(group(g, 1, 2_000));
    expect((await store.listSlots(g)).map((s) => s.index)).toEqual([0, 1, 2]);
    const w = waiter(g, "w");
    expect(await gate.acquire(w)).toBe("waiting");
    const granted: string[] = [];
    const onGranted: OnGranted = async (x) => {
      granted.push(x.code);
      return true;
    };
    await gate.release(g, hs[0] as TaskGroupHolder, onGranted);
    await gate.release(g, hs[2] as TaskGroupHolder, onGranted);
    expect(granted).toEqual([]);
    expect((await store.listSlots(g)).map((s) => s.index)).toEqual([1]);
    await gate.release(g, hs[1] as TaskGroupHolder, onGranted);
    expect(granted).toEqual(["w"]);
    expect(await store.listSlots(g)).toMatchObject([{ index: 0, holder: { code: "w" } }]);
  });

  it("a granted task that no longer wants its slot passes it on; a throwing callback requeues", async () => {
    const g = "unwanted";
    await store.putGroup(group(g, 1));
    const gate = new TaskGroupGate(store);
    const h = waiter(g, "h");
    await gate.acquire(h);
    const stopped = waiter(g, "stopped", { taskGroupPriority: 5 });
    const next = waiter(g, "next");
    await gate.acquire(stopped);
    await gate.acquire(next);
    const seen: string[] = [];
    const boom: OnGranted = async () => {
      throw new Error("send failed");
    };
    await expect(gate.release(g, h, boom)).rejects.toThrow("send failed");
    expect(await store.counts(g)).toEqual({ used: 0, waiting: 2 });
    const granted = await gate.grant(g, async (w) => {
      seen.push(w.code);
      return w.code !== "stopped";
    });
    expect(granted).toBe(1);
    expect(seen).toEqual(["stopped", "next"]);
    expect(await holders(g)).toEqual([id(next)]);
    expect(await store.counts(g)).toEqual({ used: 1, waiting: 0 });
  });

  it("a group with a holder or a waiter cannot be deleted from under the gate", async () => {
    const g = "keep";
    await store.putGroup(group(g, 1));
    const gate = new TaskGroupGate(store);
    const h = waiter(g, "h");
    await gate.acquire(h);
    expect(await store.deleteGroup(g, Date.now())).toBe("slot-held");
    // The refused delete left no mark: acquiring still works.
    const w = waiter(g, "w");
    expect(await gate.acquire(w)).toBe("waiting");
    await store.freeSlot(g, 0, h);
    expect(await store.deleteGroup(g, Date.now())).toBe("waiting");
    expect(await gate.grant(g, async () => true)).toBe(1);
    await gate.release(g, w, async () => true);
    expect(await store.deleteGroup(g, Date.now())).toBe("deleted");
    expect(await gate.acquire(waiter(g, "late"))).toBe("unknown-group");
  });
});
