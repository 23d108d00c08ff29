import { describe, expect, it } from "vitest";
import { dispatcherMessageDedupId } from "../../lib/queue/messages.js";

describe("dispatcherMessageDedupId", () => {
  it("is at most 128 characters and distinct for events that differ anywhere", () => {
    const code = (mid: string) => `${"a".repeat(60)}${mid}${"b".repeat(60)}`;
    const one = dispatcherMessageDedupId({
      kind: "task",
      instanceId: "i",
      code: code("x"),
      attempt: 1,
      state: "SUCCESS",
    });
    const two = dispatcherMessageDedupId({
      kind: "task",
      instanceId: "i",
      code: code("y"),
      attempt: 1,
      state: "SUCCESS",
    });
    expect(one.length).toBeLessThanOrEqual(128);
    expect(one).not.toBe(two);
  });

  it("differs by attempt, state and resignal count", () => {
    const base = {
      kind: "task" as const,
      instanceId: "i",
      code: "c",
      attempt: 1,
      state: "SUCCESS" as const,
    };
    expect(dispatcherMessageDedupId(base)).not.toBe(
      dispatcherMessageDedupId({ ...base, attempt: 2 }),
    );
    expect(dispatcherMessageDedupId(base)).not.toBe(
      dispatcherMessageDedupId({ ...base, state: "FAILURE" }),
    );
    const cmd = { kind: "command" as const, commandId: "start:x", instanceId: "x" };
    expect(dispatcherMessageDedupId(cmd)).not.toBe(
      dispatcherMessageDedupId({ ...cmd, resignal: 1 }),
    );
  });
});

describe("packTaskEvents", () => {
  it("packs the task events of one instance into one message and keeps commands apart", async () => {
    const { packTaskEvents, taskEventsOf } = await import("../../lib/queue/messages.js");
    const ev = (instanceId: string, code: string) =>
      ({ kind: "task", instanceId, code, attempt: 1, state: "SUCCESS" }) as const;
    const packed = packTaskEvents([
      ev("a", "x"),
      ev("b", "y"),
      { kind: "command", commandId: "c", instanceId: "a" },
      ev("a", "z"),
    ]);
    expect(packed.map((m) => m.kind)).toEqual(["tasks", "task", "command"]);
    expect(packed.flatMap(taskEventsOf).map((e) => `${e.instanceId}:${e.code}`)).toEqual([
      "a:x",
      "a:z",
      "b:y",
    ]);
  });
});
