/**
 * Conformance suites of LeaseStore, BackfillStore and TriggerStore, each run against every
 * implementation (today: DynamoDB, here on dynalite through the real AWS SDK). Every conditional
 * write is checked both ways, and the races sweepers and trigger handlers rely on are run for
 * real. Schedules and the fire ledger: schedule-stores.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { BackfillRecord, BackfillStore, BackfillSummary } from "../../lib/store/backfills.js";
import { DynamoBackfills } from "../../lib/store/dynamo-backfills.js";
import { DynamoLeases } from "../../lib/store/dynamo-leases.js";
import { DynamoTriggers } from "../../lib/store/dynamo-triggers.js";
import type { LeaseStore } from "../../lib/store/leases.js";
import type { TriggerRecord, TriggerStore } from "../../lib/store/triggers.js";
import { sharedTables, testClients } from "../helpers/aws-env.js";
import { eventually } from "../helpers/poll.js";

const tables = sharedTables();

const leaseStores: Array<[string, () => Promise<LeaseStore>]> = [
  ["DynamoLeases", async () => new DynamoLeases(testClients().dynamo, (await tables()).leases)],
];
const backfillStores: Array<[string, () => Promise<BackfillStore>]> = [
  [
    "DynamoBackfills",
    async () => new DynamoBackfills(testClients().dynamo, (await tables()).backfills),
  ],
];
const triggerStores: Array<[string, () => Promise<TriggerStore>]> = [
  [
    "DynamoTriggers",
    async () => new DynamoTriggers(testClients().dynamo, (await tables()).triggers),
  ],
];

const T0 = 1_700_000_000_000;

/** Index reads are eventually consistent on DynamoDB: assertions retried until they hold. */
const settled = eventually;

describe.each(leaseStores)("%s conformance", (_name, make) => {
  let store: LeaseStore;
  beforeAll(async () => {
    store = await make();
  });

  it("claims a free lease, refuses others until it expires, renews for its owner", async () => {
    const got = await store.claimLease("lease-a", "me", T0, 1_000);
    expect(got).toEqual({ name: "lease-a", owner: "me", expiresAt: T0 + 1_000, acquiredAt: T0 });
    expect(await store.getLease("lease-a")).toEqual(got);
    expect(await store.claimLease("lease-a", "you", T0 + 500, 1_000)).toBeUndefined();
    // Free only once expiresAt < now.
    expect(await store.claimLease("lease-a", "you", T0 + 1_000, 1_000)).toBeUndefined();
    // Renewal keeps acquiredAt.
    const renewed = await store.claimLease("lease-a", "me", T0 + 900, 1_000);
    expect(renewed).toEqual({
      name: "lease-a",
      owner: "me",
      expiresAt: T0 + 1_900,
      acquiredAt: T0,
    });
    expect(await store.claimLease("lease-a", "you", T0 + 1_500, 1_000)).toBeUndefined();
    // Expired: taken over, with a new acquiredAt; the old owner is now refused.
    const taken = await store.claimLease("lease-a", "you", T0 + 1_901, 2_000);
    expect(taken).toEqual({
      name: "lease-a",
      owner: "you",
      expiresAt: T0 + 3_901,
      acquiredAt: T0 + 1_901,
    });
    expect(await store.claimLease("lease-a", "me", T0 + 2_000, 1_000)).toBeUndefined();
    expect(await store.getLease("lease-a")).toEqual(taken);
    expect(await store.getLease("lease-none")).toBeUndefined();
  });

  it("10 concurrent claimers of a free lease: one owner", async () => {
    const owners = Array.from({ length: 10 }, (_, k) => `owner-${k}`);
    const results = await Promise.all(
      owners.map((o) => store.claimLease("lease-race", o, T0, 5_000)),
    );
    const won = results.filter((r) => r !== undefined);
    expect(won).toHaveLength(1);
    expect(await store.getLease("lease-race")).toEqual(won[0]);
    // The same race after expiry: again one owner.
    const later = await Promise.all(
      owners.map((o) => store.claimLease("lease-race", o, T0 + 6_000, 5_000)),
    );
    const wonLater = later.filter((r) => r !== undefined);
    expect(wonLater).toHaveLength(1);
    expect(wonLater[0]?.acquiredAt).toBe(T0 + 6_000);
  });

  it("concurrent claims by one owner all hold the lease", async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, () => store.claimLease("lease-same", "me", T0, 1_000)),
    );
    expect(results.every((r) => r?.owner === "me")).toBe(true);
  });

  it("releases only its owner's lease", async () => {
    await store.claimLease("lease-rel", "me", T0, 1_000);
    expect(await store.releaseLease("lease-rel", "you")).toBe(false);
    expect((await store.getLease("lease-rel"))?.owner).toBe("me");
    expect(await store.releaseLease("lease-rel", "me")).toBe(true);
    expect(await store.getLease("lease-rel")).toBeUndefined();
    expect(await store.releaseLease("lease-rel", "me")).toBe(false);
    // Free again at once, expiry or not.
    expect((await store.claimLease("lease-rel", "you", T0 + 1, 1_000))?.owner).toBe("you");
  });

  it("refuses a TTL that is not positive", async () => {
    await expect(store.claimLease("lease-bad", "me", T0, 0)).rejects.toThrow(RangeError);
    await expect(store.claimLease("lease-bad", "me", T0, Number.NaN)).rejects.toThrow(RangeError);
    expect(await store.getLease("lease-bad")).toBeUndefined();
  });
});

function backfill(id: string, extra: Partial<BackfillRecord> = {}): BackfillRecord {
  return {
    id,
    workflow: "bf-wf",
    nominalTimes: [T0, T0 + 3_600_000, T0 + 7_200_000],
    mode: "SERIAL",
    parallelism: 1,
    priority: "MEDIUM",
    params: {},
    state: "RUNNING",
    next: 0,
    running: [],
    done: 0,
    failed: 0,
    createdAt: T0,
    updatedAt: T0,
    rev: 1,
    ...extra,
  };
}

/** What a list shows of a backfill. */
function summaryOf(b: BackfillRecord): BackfillSummary {
  const { nominalTimes, ...rest } = b;
  return {
    ...rest,
    total: nominalTimes.length,
    ...(nominalTimes.length > 0
      ? { firstTime: nominalTimes[0], lastTime: nominalTimes[nominalTimes.length - 1] }
      : {}),
  };
}

describe.each(backfillStores)("%s conformance", (_name, make) => {
  let store: BackfillStore;
  beforeAll(async () => {
    store = await make();
  });

  it("creates once and reads back every field, without index attributes", async () => {
    const b = backfill("b-full", {
      mode: "PARALLEL",
      parallelism: 4,
      priority: "HIGHEST",
      params: { day: "x" },
      failureStrategy: "CONTINUE",
      running: ["i-1", "i-2"],
      next: 2,
      done: 1,
      failed: 1,
    });
    expect(await store.putBackfill(b)).toBe(true);
    expect(await store.putBackfill({ ...b, workflow: "other" })).toBe(false);
    expect(await store.getBackfill("b-full")).toEqual(b);
    expect(await store.getBackfill("b-missing")).toBeUndefined();
    await expect(store.putBackfill(backfill("b-bad", { createdAt: -5 }))).rejects.toThrow(
      RangeError,
    );
  });

  it("updates only from the stored rev", async () => {
    const b = backfill("b-rev");
    await store.putBackfill(b);
    const v2 = { ...b, next: 1, running: ["i-1"], rev: 2 };
    expect(await store.updateBackfill(v2)).toBe(true);
    expect(await store.updateBackfill({ ...v2, next: 2 })).toBe(false);
    expect(await store.updateBackfill({ ...v2, rev: 4 })).toBe(false);
    expect(await store.getBackfill("b-rev")).toEqual(v2);
    expect(await store.updateBackfill(backfill("b-absent", { rev: 2 }))).toBe(false);
    expect(await store.getBackfill("b-absent")).toBeUndefined();
  });

  it("lists only RUNNING backfills as active, oldest first", async () => {
    // Other tests' backfills share the table: look at this test's ids only.
    const mine = (list: BackfillSummary[]) =>
      list.filter((b) => b.id.startsWith("b-act-")).map((b) => b.id);
    await store.putBackfill(backfill("b-act-2", { createdAt: T0 + 2 }));
    await store.putBackfill(backfill("b-act-1", { createdAt: T0 + 1 }));
    await store.putBackfill(backfill("b-act-paused", { state: "PAUSED" }));
    await store.putBackfill(backfill("b-act-done", { state: "SUCCESS" }));
    await store.putBackfill(
      backfill("b-act-empty", { createdAt: T0 + 3, nominalTimes: [], workflow: "bf-empty" }),
    );
    await settled(async () => {
      const active = await store.listActiveBackfills(100);
      expect(mine(active)).toEqual(["b-act-1", "b-act-2", "b-act-empty"]);
      const createdAt = active.map((b) => b.createdAt);
      expect(createdAt).toEqual([...createdAt].sort((x, y) => x - y));
      expect(active.find((b) => b.id === "b-act-1")).toEqual(
        summaryOf((await store.getBackfill("b-act-1")) as BackfillRecord),
      );
      expect(active.find((b) => b.id === "b-act-empty")).toEqual(
        summaryOf(
          backfill("b-act-empty", { createdAt: T0 + 3, nominalTimes: [], workflow: "bf-empty" }),
        ),
      );
    });
    expect(await store.listActiveBackfills(1)).toHaveLength(1);
    expect(await store.listActiveBackfills(0)).toEqual([]);

    // Finishing, failing or pausing leaves the index; resuming returns to it.
    const one = (await store.getBackfill("b-act-1")) as BackfillRecord;
    await store.updateBackfill({ ...one, state: "SUCCESS", done: 3, next: 3, rev: 2 });
    const two = (await store.getBackfill("b-act-2")) as BackfillRecord;
    await store.updateBackfill({ ...two, state: "FAILURE", failed: 1, rev: 2 });
    const empty = (await store.getBackfill("b-act-empty")) as BackfillRecord;
    await store.updateBackfill({ ...empty, state: "CANCELLED", rev: 2 });
    const paused = (await store.getBackfill("b-act-paused")) as BackfillRecord;
    await store.updateBackfill({ ...paused, state: "RUNNING", rev: 2 });
    await settled(async () => {
      expect(mine(await store.listActiveBackfills(100))).toEqual(["b-act-paused"]);
    });
  });

  it("lists newest first, all or by workflow, as summaries, a page at a time", async () => {
    const ids = ["bl-1", "bl-2", "bl-3", "bl-4", "bl-5"];
    for (const [n, id] of ids.entries()) {
      await store.putBackfill(
        backfill(id, { workflow: "bf-list", createdAt: T0 + 100 + n, state: "SUCCESS" }),
      );
    }
    const expected = [...ids].reverse();
    const walk = async (workflow?: string) => {
      const seen: BackfillSummary[] = [];
      let token: string | undefined;
      do {
        const p = await store.listBackfills({ workflow, limit: 2, nextToken: token });
        expect(p.items.length).toBeLessThanOrEqual(2);
        seen.push(...p.items);
        token = p.nextToken;
      } while (token);
      return seen;
    };
    await settled(async () => {
      const byWorkflow = await walk("bf-list");
      expect(byWorkflow.map((b) => b.id)).toEqual(expected);
      expect(byWorkflow[0]).toEqual(summaryOf((await store.getBackfill("bl-5")) as BackfillRecord));
      expect(byWorkflow[0]).not.toHaveProperty("nominalTimes");
      const all = await walk();
      expect(all.map((b) => b.id).filter((id) => ids.includes(id))).toEqual(expected);
      expect(new Set(all.map((b) => b.id)).size).toBe(all.length);
    });
    const token = (await store.listBackfills({ workflow: "bf-list", limit: 1 })).nextToken;
    expect(token).toBeDefined();
    await expect(store.listBackfills({ limit: 1, nextToken: token })).rejects.toMatchObject({
      code: "ValidationError",
    });
    expect(await store.listBackfills({ workflow: "bf-none", limit: 5 })).toEqual({ items: [] });
  });
});

function trigger(id: string, extra: Partial<TriggerRecord> = {}): TriggerRecord {
  return {
    id,
    workflow: "tr-wf",
    eventPattern: '{"source":["app"]}',
    params: { order: "$.detail.orderId" },
    debounceSeconds: 60,
    createdAt: T0,
    rev: 1,
    ...extra,
  };
}

describe.each(triggerStores)("%s conformance", (_name, make) => {
  let store: TriggerStore;
  beforeAll(async () => {
    store = await make();
  });

  it("creates once, reads back, deletes once", async () => {
    const t = trigger("t-full", { lastFiredAt: T0 - 1 });
    expect(await store.putTrigger(t)).toBe(true);
    expect(await store.putTrigger({ ...t, workflow: "other" })).toBe(false);
    expect(await store.getTrigger("t-full")).toEqual(t);
    expect(await store.deleteTrigger("t-full")).toBe(true);
    expect(await store.deleteTrigger("t-full")).toBe(false);
    expect(await store.getTrigger("t-full")).toBeUndefined();
    await expect(store.putTrigger(trigger("t-bad", { createdAt: 1.5 }))).rejects.toThrow(
      RangeError,
    );
  });

  it("updates only from the stored rev, keeping lastFiredAt", async () => {
    await store.putTrigger(trigger("t-upd"));
    expect(await store.markFired("t-upd", undefined, T0 + 10)).toBe(true);
    // The editor read the trigger before the fire: its copy has no lastFiredAt.
    const edited = trigger("t-upd", { eventPattern: "{}", params: {}, debounceSeconds: 5, rev: 2 });
    expect(await store.updateTrigger(edited)).toBe(true);
    expect(await store.getTrigger("t-upd")).toEqual({ ...edited, lastFiredAt: T0 + 10 });
    expect(await store.updateTrigger({ ...edited, workflow: "x" })).toBe(false);
    expect(await store.updateTrigger({ ...edited, rev: 4 })).toBe(false);
    expect(await store.updateTrigger(trigger("t-upd-absent", { rev: 2 }))).toBe(false);
    expect(await store.getTrigger("t-upd-absent")).toBeUndefined();
  });

  it("lists newest first, a page at a time", async () => {
    const ids = ["tl-1", "tl-2", "tl-3"];
    for (const [n, id] of ids.entries())
      await store.putTrigger(trigger(id, { createdAt: T0 + 50 + n }));
    const expected = [...ids].reverse();
    await settled(async () => {
      const seen: TriggerRecord[] = [];
      let token: string | undefined;
      do {
        const p = await store.listTriggers(1, token);
        expect(p.items.length).toBeLessThanOrEqual(1);
        seen.push(...p.items);
        token = p.nextToken;
      } while (token);
      expect(seen.map((t) => t.id).filter((id) => ids.includes(id))).toEqual(expected);
      expect(seen.find((t) => t.id === "tl-2")).toEqual(trigger("tl-2", { createdAt: T0 + 51 }));
      const createdAt = seen.map((t) => t.createdAt);
      expect(createdAt).toEqual([...createdAt].sort((x, y) => y - x));
    });
    await expect(store.listTriggers(1, "garbage")).rejects.toMatchObject({
      code: "ValidationError",
    });
  });

  it("markFired moves lastFiredAt only from the expected value", async () => {
    await store.putTrigger(trigger("t-mark"));
    expect(await store.markFired("t-mark", T0, T0 + 1)).toBe(false);
    expect(await store.markFired("t-mark", undefined, T0 + 1)).toBe(true);
    expect(await store.markFired("t-mark", undefined, T0 + 2)).toBe(false);
    expect(await store.markFired("t-mark", T0 + 2, T0 + 3)).toBe(false);
    expect(await store.markFired("t-mark", T0 + 1, T0 + 4)).toBe(true);
    expect((await store.getTrigger("t-mark"))?.lastFiredAt).toBe(T0 + 4);
    // A trigger that does not exist is not created.
    expect(await store.markFired("t-mark-none", undefined, T0)).toBe(false);
    expect(await store.getTrigger("t-mark-none")).toBeUndefined();
  });

  it("of racing markFired calls from one previous value, one wins", async () => {
    await store.putTrigger(trigger("t-race"));
    for (const prev of [undefined, T0]) {
      const times = Array.from({ length: 10 }, (_, k) => (prev ?? T0 - 100) + 100 + k);
      const results = await Promise.all(times.map((t) => store.markFired("t-race", prev, t)));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = times[results.indexOf(true)];
      expect((await store.getTrigger("t-race"))?.lastFiredAt).toBe(winner);
      // Make the next round start from a known value.
      await store.markFired("t-race", winner, T0);
    }
  });
});
