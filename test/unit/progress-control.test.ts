/**
 * The dispatcher's decisions for pause/resume, rerun, recover-failed, force-success, END's kill
 * of running siblings, CONDITIONS/SWITCH branches and failover counting (lib/core/progress.ts).
 */
import { describe, expect, it } from "vitest";
import { Dag } from "../../lib/core/dag.js";
import type { FailureStrategy, TaskState } from "../../lib/core/model.js";
import {
  type AdvanceContext,
  type AdvanceResult,
  applyOutcomes,
  attemptOf,
  forceSuccessProgress,
  type Halt,
  MAX_FAILOVERS,
  type Progress,
  recoverProgress,
  rerunProgress,
  restProgress,
  resumeProgress,
  startProgress,
  type TaskKind,
} from "../../lib/core/progress.js";

interface T {
  code: string;
  upstream: string[];
  kind?: TaskKind;
  retries?: number;
}

const t = (code: string, upstream: string[] = [], extra: Partial<T> = {}): T => ({
  code,
  upstream,
  ...extra,
});

function ctxOf(
  tasks: T[],
  opts: { failureStrategy?: FailureStrategy; halt?: Halt } = {},
): AdvanceContext {
  return {
    dag: new Dag(tasks),
    policies: tasks.map((x) => ({ retries: x.retries ?? 0, retryIntervalSeconds: 0 })),
    failureStrategy: opts.failureStrategy ?? "END",
    kinds: tasks.map((x) => x.kind ?? "worker"),
    ...(opts.halt ? { halt: opts.halt } : {}),
  };
}

function finish(
  ctx: AdvanceContext,
  p: Progress,
  code: string,
  state: TaskState,
  skip: string[] = [],
): AdvanceResult {
  const index = ctx.dag.indexOf(code) as number;
  return applyOutcomes(ctx, p, [
    {
      index,
      attempt: attemptOf(p, index),
      state,
      skip: skip.map((c) => ctx.dag.indexOf(c) as number),
    },
  ]);
}

const codes = (ctx: AdvanceContext, r: AdvanceResult) =>
  r.dispatch.map((o) => ctx.dag.codes[o.index]).sort();
const all = (n: number) => Array.from({ length: n }, () => true);

describe("pause and resume", () => {
  const tasks = [t("a"), t("b"), t("c", ["a", "b"])];

  it("lets running tasks finish, starts nothing new, rests PAUSED, resumes where it was", () => {
    const run = ctxOf(tasks);
    const pausing = ctxOf(tasks, { halt: "pause" });
    let r = startProgress(run, all(3));
    expect(r.progress.slots).toBe("DD-");
    // b had not started: the pause ends that attempt (PAUSED), a runs on and succeeds.
    r = finish(pausing, r.progress, "b", "PAUSED");
    expect(r.progress.slots).toBe("DP-");
    expect(attemptOf(r.progress, 1)).toBe(2); // resume starts a new attempt of b
    r = finish(pausing, r.progress, "a", "SUCCESS");
    expect(r.dispatch).toEqual([]);
    expect(r.finalState).toBe("PAUSED");
    r = resumeProgress(run, r.progress);
    expect(codes(run, r)).toEqual(["b"]);
    expect(r.dispatch[0]?.attempt).toBe(2);
    r = finish(run, r.progress, "b", "SUCCESS");
    expect(codes(run, r)).toEqual(["c"]);
  });

  it("keeps a sub-workflow's attempt across a pause (the same child resumes)", () => {
    const sub = [t("s", [], { kind: "SUB_WORKFLOW" })];
    const r0 = startProgress(ctxOf(sub), all(1));
    const r1 = finish(ctxOf(sub, { halt: "pause" }), r0.progress, "s", "PAUSED");
    expect(attemptOf(r1.progress, 0)).toBe(1);
    expect(r1.finalState).toBe("PAUSED");
  });

  it("ignores a sub-workflow that paused on its own while the parent runs", () => {
    const sub = [t("s", [], { kind: "SUB_WORKFLOW" })];
    const r0 = startProgress(ctxOf(sub), all(1));
    const r1 = finish(ctxOf(sub), r0.progress, "s", "PAUSED");
    expect(r1.changed).toBe(false);
    expect(r1.progress.slots).toBe("D");
  });

  it("defers a retry that falls due while pausing", () => {
    const tasks1 = [t("a", [], { retries: 2 })];
    const r0 = startProgress(ctxOf(tasks1), all(1));
    const r1 = finish(ctxOf(tasks1, { halt: "pause" }), r0.progress, "a", "FAILURE");
    expect(r1.dispatch).toEqual([]);
    expect(r1.progress.slots).toBe("P");
    expect(r1.finalState).toBe("PAUSED");
    const r2 = resumeProgress(ctxOf(tasks1), r1.progress);
    expect(r2.dispatch).toEqual([{ index: 0, attempt: 2, delaySeconds: 0 }]);
  });

  it("a pause with nothing active comes to rest at once", () => {
    const r0 = startProgress(ctxOf(tasks), all(3));
    const paused = ctxOf(tasks, { halt: "pause" });
    const r1 = finish(paused, r0.progress, "a", "PAUSED");
    const r2 = finish(paused, r1.progress, "b", "PAUSED");
    expect(r2.finalState).toBe("PAUSED");
    expect(restProgress(paused, r2.progress).finalState).toBe("PAUSED");
  });

  it("runs the next attempt of a task its worker paused before it started, when a resume came between", () => {
    // The worker saw the instance PAUSING, the resume was applied before its PAUSED event
    // (lib/engine/halt-gate.ts): the task is not left PAUSED in a running instance.
    const one = [t("a")];
    const run = ctxOf(one);
    const r0 = startProgress(run, all(1));
    const r1 = finish(run, r0.progress, "a", "PAUSED");
    expect(r1.dispatch).toEqual([{ index: 0, attempt: 2, delaySeconds: 0 }]);
    expect(r1.progress.slots).toBe("D");
    expect(r1.finalState).toBeUndefined();
  });
});

describe("rerun and recover-failed", () => {
  const tasks = [t("a"), t("b", ["a"]), t("c", ["a"])];

  it("rerun starts every task again with the next attempt number", () => {
    const ctx = ctxOf(tasks, { failureStrategy: "CONTINUE" });
    let r = startProgress(ctx, all(3));
    r = finish(ctx, r.progress, "a", "SUCCESS");
    r = finish(ctx, r.progress, "b", "FAILURE");
    r = finish(ctx, r.progress, "c", "SUCCESS");
    expect(r.finalState).toBe("FAILURE");
    const again = rerunProgress(ctx, r.progress);
    expect(again.progress.slots).toBe("D--");
    expect(again.dispatch).toEqual([{ index: 0, attempt: 2, delaySeconds: 0 }]);
    expect(attemptOf(again.progress, 1)).toBe(2);
  });

  it("rerun keeps the original start-task scope", () => {
    const ctx = ctxOf(tasks);
    const r = startProgress(ctx, [false, true, false]);
    const done = finish(ctx, r.progress, "b", "SUCCESS");
    expect(done.finalState).toBe("SUCCESS");
    expect(rerunProgress(ctx, done.progress).progress.slots).toBe(".D.");
  });

  it("recover-failed reruns only FAILURE/KILLED tasks and what waits after them", () => {
    const chain = [t("a"), t("b", ["a"]), t("c", ["b"]), t("x")];
    const ctx = ctxOf(chain);
    let r = startProgress(ctx, all(4));
    r = finish(ctx, r.progress, "x", "SUCCESS");
    r = finish(ctx, r.progress, "a", "SUCCESS");
    r = finish(ctx, r.progress, "b", "FAILURE");
    expect(r.finalState).toBe("FAILURE");
    expect(r.progress.slots).toBe("SF-S");
    const rec = recoverProgress(ctx, r.progress);
    expect(codes(ctx, rec)).toEqual(["b"]);
    expect(rec.dispatch[0]?.attempt).toBe(2);
    const end = finish(ctx, finish(ctx, rec.progress, "b", "SUCCESS").progress, "c", "SUCCESS");
    expect(end.finalState).toBe("SUCCESS");
  });

  it("force-success lets recover-failed go on downstream without rerunning the task", () => {
    const chain = [t("a"), t("b", ["a"])];
    const ctx = ctxOf(chain);
    const failed = finish(ctx, startProgress(ctx, all(2)).progress, "a", "FAILURE");
    expect(forceSuccessProgress(failed.progress, 0, 2)).toBeUndefined(); // wrong attempt
    const forced = forceSuccessProgress(failed.progress, 0, 1) as Progress;
    expect(forced.slots).toBe("f-");
    expect(forceSuccessProgress(forced, 0, 1)).toBeUndefined(); // once
    expect(codes(ctx, recoverProgress(ctx, forced))).toEqual(["b"]);
  });
});

describe("failure strategy END", () => {
  it("asks to kill the running siblings when a task fails for good", () => {
    const tasks = [t("a"), t("b"), t("c")];
    const ctx = ctxOf(tasks);
    const r0 = startProgress(ctx, all(3));
    const r1 = finish(ctx, r0.progress, "a", "FAILURE");
    expect(r1.killActive).toBe(true);
    const r2 = finish(ctx, r1.progress, "b", "KILLED");
    expect(r2.killActive).toBeUndefined(); // asked once
    const r3 = finish(ctx, r2.progress, "c", "KILLED");
    expect(r3.finalState).toBe("FAILURE");
  });

  it("CONTINUE never kills siblings", () => {
    const ctx = ctxOf([t("a"), t("b")], { failureStrategy: "CONTINUE" });
    const r = finish(ctx, startProgress(ctx, all(2)).progress, "a", "FAILURE");
    expect(r.killActive).toBeUndefined();
  });

  it("the workflow timeout (halt fail) ends FAILURE", () => {
    const tasks = [t("a")];
    const r0 = startProgress(ctxOf(tasks), all(1));
    const r1 = finish(ctxOf(tasks, { halt: "fail" }), r0.progress, "a", "KILLED");
    expect(r1.finalState).toBe("FAILURE");
  });
});

describe("CONDITIONS and SWITCH branches", () => {
  // up → cond → (ok | bad); ok → after; bad → cleanup
  const tasks = [
    t("up"),
    t("cond", ["up"], { kind: "CONDITIONS" }),
    t("ok", ["cond"]),
    t("bad", ["cond"]),
    t("after", ["ok"]),
    t("cleanup", ["bad"]),
  ];

  it("a CONDITIONS task waits for a failed upstream, which does not fail the instance", () => {
    const ctx = ctxOf(tasks);
    const r0 = startProgress(ctx, all(6));
    const r1 = finish(ctx, r0.progress, "up", "FAILURE");
    expect(r1.progress.slots[0]).toBe("h");
    expect(r1.killActive).toBeUndefined();
    expect(codes(ctx, r1)).toEqual(["cond"]);
    const r2 = finish(ctx, r1.progress, "cond", "SUCCESS", ["ok"]);
    expect(codes(ctx, r2)).toEqual(["bad"]);
    expect(r2.progress.slots).toBe("hSsDs-"); // ok and what only it leads to are skipped
    const r3 = finish(ctx, r2.progress, "bad", "SUCCESS");
    const r4 = finish(ctx, r3.progress, "cleanup", "SUCCESS");
    expect(r4.finalState).toBe("SUCCESS");
  });

  it("a task after a skipped and a taken branch runs once the taken one is done", () => {
    const sw = [
      t("s", [], { kind: "SWITCH" }),
      t("x", ["s"]),
      t("y", ["s"]),
      t("join", ["x", "y"]),
    ];
    const ctx = ctxOf(sw);
    const r0 = startProgress(ctx, all(4));
    const r1 = finish(ctx, r0.progress, "s", "SUCCESS", ["y"]);
    expect(codes(ctx, r1)).toEqual(["x"]);
    const r2 = finish(ctx, r1.progress, "x", "SUCCESS");
    expect(codes(ctx, r2)).toEqual(["join"]);
  });

  it("a task all of whose upstreams were skipped is skipped too", () => {
    const sw = [t("s", [], { kind: "SWITCH" }), t("x", ["s"]), t("y", ["s"]), t("z", ["y"])];
    const ctx = ctxOf(sw);
    const r1 = finish(ctx, startProgress(ctx, all(4)).progress, "s", "SUCCESS", ["y"]);
    expect(r1.progress.slots).toBe("SDss");
    expect(finish(ctx, r1.progress, "x", "SUCCESS").finalState).toBe("SUCCESS");
  });
});

describe("failover", () => {
  it("is counted apart from retries and capped", () => {
    const tasks = [t("a", [], { retries: 1 })];
    const ctx = ctxOf(tasks);
    let r = startProgress(ctx, all(1));
    r = finish(ctx, r.progress, "a", "FAILURE"); // retry 1 used
    for (let i = 0; i < MAX_FAILOVERS; i++) {
      r = finish(ctx, r.progress, "a", "NEED_FAULT_TOLERANCE");
      expect(r.dispatch).toHaveLength(1);
    }
    expect(r.progress.attempts[0]).toEqual([2 + MAX_FAILOVERS, 1, MAX_FAILOVERS]);
    r = finish(ctx, r.progress, "a", "NEED_FAULT_TOLERANCE");
    expect(r.finalState).toBe("FAILURE");
  });
});
