/**
 * Conformance suites of ScheduleStore and FireStore, each run against every
 * implementation (today: DynamoDB, here on dynalite through the real AWS SDK). Every conditional
 * write is checked both ways, and the races the sweepers rely on are run for real.
 * Leases, backfills and triggers: lease-backfill-trigger-stores.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { DynamoFires } from "../../lib/store/dynamo-fires.js";
import { DynamoSchedules } from "../../lib/store/dynamo-schedules.js";
import type { FireRecord, FireStore } from "../../lib/store/fires.js";
import type { ScheduleRecord, ScheduleStore } from "../../lib/store/schedules.js";
import { sharedTables, testClients } from "../helpers/aws-env.js";
import { eventually } from "../helpers/poll.js";

const tables = sharedTables();

const scheduleStores: Array<[string, () => Promise<ScheduleStore>]> = [
  [
    "DynamoSchedules",
    async () => new DynamoSchedules(testClients().dynamo, (await tables()).schedules),
  ],
];
const fireStores: Array<[string, () => Promise<FireStore>]> = [
  ["DynamoFires", async () => new DynamoFires(testClients().dynamo, (await tables()).fires)],
];

const T0 = 1_700_000_000_000;

/** Index reads are eventually consistent on DynamoDB: assertions retried until they hold. */
const settled = eventually;

function schedule(id: string, extra: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    id,
    workflow: "wf",
    cron: "0 * * * *",
    timezone: "UTC",
    params: {},
    misfirePolicy: "SKIP",
    misfireThresholdSeconds: 60,
    maxCatchup: 10,
    overlapPolicy: "PARALLEL",
    state: "ONLINE",
    shard: "0",
    nextFireTime: T0,
    createdAt: T0,
    updatedAt: T0,
    rev: 1,
    ...extra,
  };
}

describe.each(scheduleStores)("%s conformance", (_name, make) => {
  let store: ScheduleStore;
  beforeAll(async () => {
    store = await make();
  });

  it("creates once and reads back every field, without index attributes", async () => {
    const s = schedule("s-full", {
      rate: "15 minutes",
      at: T0 + 1,
      timezone: "Europe/Paris",
      startTime: T0 - 10,
      endTime: T0 + 10,
      params: { a: "1", b: "" },
      priority: "HIGH",
      failureStrategy: "CONTINUE",
      workerGroup: "gpu",
      misfirePolicy: "FIRE_ALL",
      overlapPolicy: "SERIAL_WAIT",
      queued: [T0 + 1, T0 + 2],
      activeInstanceId: "i-1",
    });
    expect(await store.putSchedule(s)).toBe(true);
    expect(await store.putSchedule({ ...s, workflow: "other" })).toBe(false);
    expect(await store.getSchedule("s-full")).toEqual(s);
    expect(await store.getSchedule("s-missing")).toBeUndefined();
  });

  it("updates only from the stored rev", async () => {
    const s = schedule("s-rev");
    await store.putSchedule(s);
    const v2 = { ...s, nextFireTime: T0 + 60_000, updatedAt: T0 + 1, rev: 2 };
    expect(await store.updateSchedule(v2)).toBe(true);
    // The same rev again, and a rev that skips one: both stale.
    expect(await store.updateSchedule({ ...v2, cron: "x" })).toBe(false);
    expect(await store.updateSchedule({ ...v2, rev: 4 })).toBe(false);
    expect(await store.getSchedule("s-rev")).toEqual(v2);
    // Optional fields dropped by an update are gone.
    const { nextFireTime: _n, ...rest } = v2;
    expect(await store.updateSchedule({ ...rest, rev: 3 })).toBe(true);
    expect(await store.getSchedule("s-rev")).toEqual({ ...rest, rev: 3 });
    expect(await store.updateSchedule(schedule("s-absent", { rev: 2 }))).toBe(false);
    expect(await store.getSchedule("s-absent")).toBeUndefined();
  });

  it("deletes once", async () => {
    await store.putSchedule(schedule("s-del"));
    expect(await store.deleteSchedule("s-del")).toBe(true);
    expect(await store.deleteSchedule("s-del")).toBe(false);
    expect(await store.getSchedule("s-del")).toBeUndefined();
    expect(await store.updateSchedule(schedule("s-del", { rev: 2 }))).toBe(false);
  });

  it("lists due schedules of a shard only while ONLINE with a next fire time", async () => {
    const shard = "due-1";
    const at = (id: string, t: number, extra: Partial<ScheduleRecord> = {}) =>
      schedule(id, { shard, nextFireTime: t, ...extra });
    await store.putSchedule(at("d-late", T0 + 3_000));
    await store.putSchedule(at("d-b", T0 + 2_000));
    await store.putSchedule(at("d-a", T0 + 1_000));
    await store.putSchedule(at("d-off", T0, { state: "OFFLINE" }));
    const { nextFireTime: _n, ...noNext } = at("d-none", 0);
    await store.putSchedule(noNext);
    await store.putSchedule(at("d-other-shard", T0, { shard: "due-2" }));
    // A caller cannot put a schedule into the index by passing the index attribute.
    await store.putSchedule({
      ...at("d-forged", T0, { state: "OFFLINE" }),
      dueShard: shard,
    } as ScheduleRecord);

    const ids = async (before: number, limit = 10) =>
      (await store.listDue(shard, before, limit)).map((s) => s.id);
    await settled(async () => {
      expect(await ids(T0 + 999)).toEqual([]);
      expect(await ids(T0 + 1_000)).toEqual(["d-a"]);
      expect(await ids(T0 + 10_000)).toEqual(["d-a", "d-b", "d-late"]);
      expect(await ids(T0 + 10_000, 2)).toEqual(["d-a", "d-b"]);
    });
    expect(await store.listDue(shard, T0 + 10_000, 0)).toEqual([]);
    expect(await store.listDue("", T0 + 10_000, 10)).toEqual([]);
    const due = await store.listDue(shard, T0 + 1_000, 10);
    expect(due).toEqual([await store.getSchedule("d-a")]);

    // Going OFFLINE leaves the index, coming back ONLINE returns; so does the next fire time.
    const a = (await store.getSchedule("d-a")) as ScheduleRecord;
    await store.updateSchedule({ ...a, state: "OFFLINE", rev: 2 });
    const off = (await store.getSchedule("d-off")) as ScheduleRecord;
    await store.updateSchedule({ ...off, state: "ONLINE", rev: 2 });
    const { nextFireTime: _b, ...bNoNext } = (await store.getSchedule("d-b")) as ScheduleRecord;
    await store.updateSchedule({ ...bNoNext, rev: 2 });
    await store.updateSchedule({ ...noNext, nextFireTime: T0 + 2_500, rev: 2 });
    await settled(async () => {
      expect(await ids(T0 + 10_000)).toEqual(["d-off", "d-none", "d-late"]);
    });
    expect((await store.listDue("due-2", T0, 10)).map((s) => s.id)).toEqual(["d-other-shard"]);
  });

  it("lists newest first, all or by workflow, a page at a time", async () => {
    const mine = ["l-1", "l-2", "l-3", "l-4", "l-5"];
    for (const [n, id] of mine.entries()) {
      await store.putSchedule(schedule(id, { workflow: "list-wf", createdAt: T0 + 100 + n }));
    }
    // Same createdAt: by id, descending.
    await store.putSchedule(schedule("l-0b", { workflow: "list-wf", createdAt: T0 + 99 }));
    await store.putSchedule(schedule("l-0a", { workflow: "list-wf", createdAt: T0 + 99 }));
    const expected = ["l-5", "l-4", "l-3", "l-2", "l-1", "l-0b", "l-0a"];

    const walk = async (workflow?: string) => {
      const seen: ScheduleRecord[] = [];
      let token: string | undefined;
      do {
        const p = await store.listSchedules({ workflow, limit: 2, nextToken: token });
        expect(p.items.length).toBeLessThanOrEqual(2);
        seen.push(...p.items);
        token = p.nextToken;
      } while (token);
      return seen;
    };
    await settled(async () => {
      const byWorkflow = await walk("list-wf");
      expect(byWorkflow.map((s) => s.id)).toEqual(expected);
      expect(byWorkflow[0]).toEqual(await store.getSchedule("l-5"));
      // All schedules: the same relative order, newest first overall, no repeats.
      const all = await walk();
      expect(all.map((s) => s.id).filter((id) => expected.includes(id))).toEqual(expected);
      expect(new Set(all.map((s) => s.id)).size).toBe(all.length);
      const created = all.map((s) => s.createdAt);
      expect(created).toEqual([...created].sort((x, y) => y - x));
    });
    // A full page that ends exactly at the last item has no token.
    const exact = await store.listSchedules({ workflow: "list-wf", limit: 7 });
    expect(exact.items).toHaveLength(7);
    expect(exact.nextToken).toBeUndefined();
    expect(await store.listSchedules({ workflow: "no-such-wf", limit: 5 })).toEqual({ items: [] });
  });

  it("rejects tokens it did not hand out for the query", async () => {
    for (const id of ["t-1", "t-2"]) await store.putSchedule(schedule(id, { workflow: "tok-wf" }));
    await settled(async () => {
      expect((await store.listSchedules({ workflow: "tok-wf", limit: 1 })).nextToken).toBeDefined();
    });
    const token = (await store.listSchedules({ workflow: "tok-wf", limit: 1 })).nextToken as string;
    // A by-workflow token does not fit the all-schedules query, and garbage is no token.
    await expect(store.listSchedules({ limit: 1, nextToken: token })).rejects.toMatchObject({
      code: "ValidationError",
    });
    // Nor does it fit another workflow's query.
    await expect(
      store.listSchedules({ workflow: "list-wf", limit: 1, nextToken: token }),
    ).rejects.toMatchObject({ code: "ValidationError" });
    await expect(store.listSchedules({ limit: 1, nextToken: "nope" })).rejects.toMatchObject({
      code: "ValidationError",
    });
    expect(
      (await store.listSchedules({ workflow: "tok-wf", limit: 1, nextToken: token })).items,
    ).toHaveLength(1);
  });

  it("refuses records it cannot key", async () => {
    await expect(store.putSchedule(schedule("bad-shard", { shard: "" }))).rejects.toThrow(
      RangeError,
    );
    await expect(store.putSchedule(schedule("bad-created", { createdAt: -1 }))).rejects.toThrow(
      RangeError,
    );
    await expect(store.putSchedule(schedule("bad-created", { createdAt: 1.5 }))).rejects.toThrow(
      RangeError,
    );
    await expect(
      store.updateSchedule(schedule("bad-created", { createdAt: 10 ** 15 })),
    ).rejects.toThrow(RangeError);
    expect(await store.getSchedule("bad-shard")).toBeUndefined();
  });
});

function fire(
  scheduleId: string,
  nominalTime: number,
  extra: Partial<FireRecord> = {},
): FireRecord {
  return {
    scheduleId,
    nominalTime,
    actualTime: nominalTime + 5,
    latenessMs: 5,
    decision: "FIRED",
    instanceId: `i-${nominalTime}`,
    ...extra,
  };
}

describe.each(fireStores)("%s conformance", (_name, make) => {
  let store: FireStore;
  beforeAll(async () => {
    store = await make();
  });

  it("records a nominal time once: the first writer wins", async () => {
    const f = fire("f-once", T0);
    expect(await store.putFire(f)).toBe(true);
    expect(await store.putFire(fire("f-once", T0, { decision: "SKIPPED_MISFIRE" }))).toBe(false);
    expect(await store.getFire("f-once", T0)).toEqual(f);
    // Another time, or another schedule at the same time, is another entry.
    expect(await store.putFire(fire("f-once", T0 + 1))).toBe(true);
    expect(await store.putFire(fire("f-twice", T0))).toBe(true);
    expect(await store.getFire("f-once", T0 + 2)).toBeUndefined();
  });

  it("20 concurrent writers of one nominal time: exactly one wins", async () => {
    const writers = Array.from({ length: 20 }, (_, k) =>
      fire("f-race", T0, { instanceId: `i-${k}`, actualTime: T0 + k }),
    );
    const results = await Promise.all(writers.map((f) => store.putFire(f)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = writers[results.indexOf(true)];
    expect(await store.getFire("f-race", T0)).toEqual(winner);
  });

  it("moves a decision only from the expected one", async () => {
    const { instanceId: _i, ...queued } = fire("f-upd", T0, { decision: "QUEUED_SERIAL" });
    await store.putFire(queued);
    const fired = await store.updateFire("f-upd", T0, "QUEUED_SERIAL", {
      decision: "FIRED",
      instanceId: "i-9",
      actualTime: T0 + 100,
      latenessMs: 100,
    });
    const expected = {
      ...queued,
      decision: "FIRED",
      instanceId: "i-9",
      actualTime: T0 + 100,
      latenessMs: 100,
    };
    expect(fired).toEqual(expected);
    expect(
      await store.updateFire("f-upd", T0, "QUEUED_SERIAL", { decision: "DISCARDED_OVERLAP" }),
    ).toBeUndefined();
    expect(await store.getFire("f-upd", T0)).toEqual(expected);
    // Nothing to change: still checks the decision.
    expect(await store.updateFire("f-upd", T0, "FIRED", {})).toEqual(expected);
    expect(await store.updateFire("f-upd", T0, "QUEUED_SERIAL", {})).toBeUndefined();
    // A fire that does not exist is not created.
    expect(
      await store.updateFire("f-upd", T0 + 1, "QUEUED_SERIAL", { decision: "FIRED" }),
    ).toBeUndefined();
    expect(await store.getFire("f-upd", T0 + 1)).toBeUndefined();
  });

  it("of racing updates from one decision, one wins", async () => {
    await store.putFire(fire("f-upd-race", T0, { decision: "QUEUED_SERIAL" }));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, k) =>
        store.updateFire("f-upd-race", T0, "QUEUED_SERIAL", {
          decision: "FIRED",
          instanceId: `i-${k}`,
        }),
      ),
    );
    const won = results.filter((r) => r !== undefined);
    expect(won).toHaveLength(1);
    expect(await store.getFire("f-upd-race", T0)).toEqual(won[0]);
  });

  it("lists a schedule's fires by ascending nominal time, in a range, a page at a time", async () => {
    const times = [5, 1, 4, 2, 3].map((n) => T0 + n * 1000);
    for (const t of times) await store.putFire(fire("f-list", t));
    await store.putFire(fire("f-list-other", T0 + 2000));
    const nominal = (p: { items: FireRecord[] }) => p.items.map((f) => f.nominalTime - T0);

    const seen: number[] = [];
    let token: string | undefined;
    do {
      const p = await store.listFires("f-list", { limit: 2, nextToken: token });
      seen.push(...nominal(p));
      token = p.nextToken;
    } while (token);
    expect(seen).toEqual([1000, 2000, 3000, 4000, 5000]);

    expect(
      nominal(await store.listFires("f-list", { from: T0 + 2000, to: T0 + 4000, limit: 10 })),
    ).toEqual([2000, 3000, 4000]);
    expect(nominal(await store.listFires("f-list", { from: T0 + 4000, limit: 10 }))).toEqual([
      4000, 5000,
    ]);
    expect(nominal(await store.listFires("f-list", { to: T0 + 1000, limit: 10 }))).toEqual([1000]);
    expect(await store.listFires("f-list", { from: T0 + 4000, to: T0 + 2000, limit: 10 })).toEqual({
      items: [],
    });
    const first = await store.listFires("f-list", { limit: 1 });
    expect(first.items).toEqual([fire("f-list", T0 + 1000)]);
    expect(await store.listFires("f-list", { limit: 5 })).not.toHaveProperty("nextToken");
    await expect(
      store.listFires("f-list", { limit: 1, nextToken: "garbage" }),
    ).rejects.toMatchObject({
      code: "ValidationError",
    });
    expect(await store.listFires("f-none", { limit: 5 })).toEqual({ items: [] });
  });
});
