/**
 * Conformance suite of the TimerStore interface, run against every implementation (today:
 * DynamoDB, here on dynalite through the real AWS SDK). The conditional delete is checked both ways.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { DynamoTimers } from "../../lib/store/dynamo-timers.js";
import type { TimerRecord, TimerStore } from "../../lib/store/timers.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";

const implementations: Array<[string, () => Promise<TimerStore>]> = [
  [
    "DynamoTimers",
    async () => {
      const aws = await useTestAws();
      return new DynamoTimers(testClients().dynamo, aws.config.tables.timers);
    },
  ],
];

const T0 = 1_700_000_000_000;

function timer(id: string, dueAt: number, extra: Partial<TimerRecord> = {}): TimerRecord {
  return { id, dueAt, kind: "retry", instanceId: "i-1", ...extra };
}

describe.each(implementations)("%s conformance", (_name, make) => {
  let store: TimerStore;
  beforeAll(async () => {
    store = await make();
  });

  it("lists only due timers, oldest first, up to the limit, with every field", async () => {
    await store.putTimer(timer("late", T0 + 5_000));
    await store.putTimer(
      timer("b", T0 + 1_000, { code: "t1", attempt: 2, payload: '{"x":1}', kind: "timeout" }),
    );
    await store.putTimer(timer("a", T0 + 1_000));
    await store.putTimer(timer("early", T0));

    expect(await store.listDueTimers(T0 - 1, 10)).toEqual([]);
    expect((await store.listDueTimers(T0, 10)).map((t) => t.id)).toEqual(["early"]);
    const due = await store.listDueTimers(T0 + 1_000, 10);
    // Same due time: by id.
    expect(due.map((t) => t.id)).toEqual(["early", "a", "b"]);
    expect(due[2]).toEqual({
      id: "b",
      dueAt: T0 + 1_000,
      kind: "timeout",
      instanceId: "i-1",
      code: "t1",
      attempt: 2,
      payload: '{"x":1}',
    });
    expect((await store.listDueTimers(T0 + 10_000, 2)).map((t) => t.id)).toEqual(["early", "a"]);
    expect((await store.listDueTimers(T0 + 10_000, 10)).map((t) => t.id)).toEqual([
      "early",
      "a",
      "b",
      "late",
    ]);
    for (const t of await store.listDueTimers(T0 + 10_000, 10)) await store.deleteTimer(t);
  });

  it("putTimer is idempotent: the same id and due time is one timer", async () => {
    const t = timer("same", T0 + 50, { payload: "p" });
    await store.putTimer(t);
    await store.putTimer(t);
    expect(await store.listDueTimers(T0 + 50, 10)).toEqual([t]);
    expect(await store.deleteTimer(t)).toBe(true);
  });

  it("deleteTimer is true only for the caller that removed it", async () => {
    const t = timer("once", T0 + 7);
    expect(await store.deleteTimer(t)).toBe(false);
    await store.putTimer(t);
    const results = await Promise.all([store.deleteTimer(t), store.deleteTimer(t)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.deleteTimer(t)).toBe(false);
    expect(await store.listDueTimers(T0 + 10, 10)).toEqual([]);
    // Another due time is another timer.
    await store.putTimer(t);
    expect(await store.deleteTimer({ id: "once", dueAt: T0 + 8 })).toBe(false);
    expect(await store.deleteTimer({ id: "once", dueAt: T0 + 7 })).toBe(true);
  });

  it("rejects timers it cannot key", async () => {
    await expect(store.putTimer(timer("", T0))).rejects.toThrow(RangeError);
    await expect(store.putTimer(timer("x", -1))).rejects.toThrow(RangeError);
    await expect(store.putTimer(timer("x", 1.5))).rejects.toThrow(RangeError);
    await expect(store.putTimer(timer("x", 10 ** 15))).rejects.toThrow(RangeError);
    expect(await store.listDueTimers(10 ** 16, 10)).toEqual([]);
  });
});
