import { describe, expect, it } from "vitest";
import { Dag } from "../../lib/core/dag.js";
import type { FailureStrategy, TaskScope, TaskState } from "../../lib/core/model.js";
import {
  type AdvanceContext,
  type AdvanceResult,
  activeTasks,
  applyOutcomes,
  attemptOf,
  type DispatchOrder,
  type Progress,
  progressCounts,
  SLOT,
  startProgress,
  type TaskOutcome,
} from "../../lib/core/progress.js";
import { prng, shuffle } from "../helpers/random.js";

interface Task {
  code: string;
  upstream: string[];
  retries?: number;
  retryIntervalSeconds?: number;
}

/** Random DAG: node k depends on some nodes < k; the list is shuffled afterwards. */
function randomDag(n: number, rand: () => number, extra: Partial<Task> = {}): Task[] {
  const tasks: Task[] = [];
  for (let k = 0; k < n; k++) {
    const ups = new Set<string>();
    const count = k === 0 ? 0 : Math.floor(rand() * 4);
    for (let j = 0; j < count; j++) ups.add(`n${Math.floor(rand() * k)}`);
    tasks.push({ code: `n${k}`, upstream: [...ups], ...extra });
  }
  return shuffle(tasks, rand);
}

const t = (code: string, upstream: string[] = [], extra: Partial<Task> = {}): Task => ({
  code,
  upstream,
  ...extra,
});

function context(
  tasks: readonly Task[],
  over: { failureStrategy?: FailureStrategy; stopping?: boolean } = {},
): AdvanceContext {
  return {
    dag: new Dag(tasks),
    policies: tasks.map((task) => ({
      retries: task.retries ?? 0,
      retryIntervalSeconds: task.retryIntervalSeconds ?? 0,
    })),
    failureStrategy: over.failureStrategy ?? "END",
    ...(over.stopping ? { halt: "stop" as const } : {}),
  };
}

function start(
  ctx: AdvanceContext,
  startTasks?: string[],
  scope: TaskScope = "DOWNSTREAM",
): AdvanceResult {
  return startProgress(ctx, ctx.dag.scope(startTasks, scope));
}

/** Codes of dispatch orders, sorted, for readable assertions. */
function codes(ctx: AdvanceContext, orders: readonly DispatchOrder[]): string[] {
  return orders.map((o) => ctx.dag.codes[o.index] as string).sort();
}

/** Slot of one task by code. */
function slot(ctx: AdvanceContext, progress: Progress, code: string): string | undefined {
  return progress.slots[ctx.dag.indexOf(code) as number];
}

/** Applies one outcome for the current attempt of `code`. */
function finish(
  ctx: AdvanceContext,
  progress: Progress,
  code: string,
  state: TaskState,
  attempt?: number,
): AdvanceResult {
  const index = ctx.dag.indexOf(code) as number;
  return applyOutcomes(ctx, progress, [
    { index, attempt: attempt ?? attemptOf(progress, index), state },
  ]);
}

/** a → b, a → c, b → d, c → d */
const diamond = (extra: Partial<Task> = {}) => [
  t("a", [], extra),
  t("b", ["a"], extra),
  t("c", ["a"], extra),
  t("d", ["b", "c"], extra),
];

describe("startProgress", () => {
  it("dispatches the roots, attempt 1, no delay", () => {
    const ctx = context(diamond());
    const r = start(ctx);
    expect(r.changed).toBe(true);
    expect(r.dispatch).toEqual([{ index: 0, attempt: 1, delaySeconds: 0 }]);
    expect(r.progress).toEqual({ slots: "D---", attempts: {} });
    expect(r.finalState).toBeUndefined();
  });

  it("dispatches every independent task at once", () => {
    const ctx = context([t("x"), t("y"), t("z", ["x"])]);
    expect(codes(ctx, start(ctx).dispatch)).toEqual(["x", "y"]);
  });
});

describe("applyOutcomes: a DAG runs to completion", () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    "random 150-task DAG, successes in random order (seed %i)",
    (seed) => {
      const rand = prng(seed);
      const tasks = randomDag(150, rand);
      const ctx = context(tasks);
      const succeeded = new Set<number>();
      const dispatchedTimes = new Array<number>(tasks.length).fill(0);
      const pending: DispatchOrder[] = [];
      const accept = (orders: readonly DispatchOrder[]) => {
        for (const o of orders) {
          dispatchedTimes[o.index] = (dispatchedTimes[o.index] ?? 0) + 1;
          expect(o.attempt).toBe(1);
          expect(o.delaySeconds).toBe(0);
          // (b) never before all its upstreams succeeded
          for (const u of ctx.dag.upstream[o.index] ?? []) expect(succeeded.has(u)).toBe(true);
          pending.push(o);
        }
      };
      let r = start(ctx);
      accept(r.dispatch);
      let progress = r.progress;
      let steps = 0;
      while (pending.length > 0) {
        expect(r.finalState).toBeUndefined();
        shuffle(pending, rand);
        const batch = pending.splice(0, 1 + Math.floor(rand() * Math.min(3, pending.length)));
        const outcomes: TaskOutcome[] = batch.map((o) => ({ ...o, state: "SUCCESS" }));
        // Now and then the same event is delivered twice in one batch.
        if (rand() < 0.2) outcomes.push({ ...(outcomes[0] as TaskOutcome) });
        for (const o of batch) succeeded.add(o.index);
        r = applyOutcomes(ctx, progress, outcomes);
        expect(r.changed).toBe(true);
        accept(r.dispatch);
        progress = r.progress;
        expect(activeTasks(progress).sort((x, y) => x - y)).toEqual(
          pending.map((o) => o.index).sort((x, y) => x - y),
        );
        // A redelivered batch changes nothing.
        const again = applyOutcomes(ctx, progress, outcomes);
        expect(again.changed).toBe(false);
        expect(again.dispatch).toEqual([]);
        expect(again.finalState).toBeUndefined();
        steps++;
      }
      // (a) every task dispatched exactly once
      expect(dispatchedTimes).toEqual(new Array(tasks.length).fill(1));
      // (c) SUCCESS exactly when the last task finished
      expect(r.finalState).toBe("SUCCESS");
      expect(progress.slots).toBe("S".repeat(tasks.length));
      expect(steps).toBeGreaterThan(10);
      expect(progressCounts(progress)).toEqual({
        done: tasks.length,
        active: 0,
        failed: 0,
        total: tasks.length,
      });
    },
  );

  it("random DAG with random failures and retries, CONTINUE (seed-driven)", () => {
    for (const seed of [101, 102, 103, 104]) {
      const rand = prng(seed);
      const tasks = randomDag(120, rand).map((task) => ({
        ...task,
        retries: Math.floor(rand() * 3),
        retryIntervalSeconds: Math.floor(rand() * 100),
      }));
      const ctx = context(tasks, { failureStrategy: "CONTINUE" });
      const state = new Map<number, "S" | "F">();
      const attempts = new Map<number, number>();
      const pending: DispatchOrder[] = [];
      const accept = (orders: readonly DispatchOrder[]) => {
        for (const o of orders) {
          const prev = attempts.get(o.index) ?? 0;
          expect(o.attempt).toBe(prev + 1);
          attempts.set(o.index, o.attempt);
          const policy = ctx.policies[o.index];
          if (o.attempt === 1) {
            expect(o.delaySeconds).toBe(0);
            for (const u of ctx.dag.upstream[o.index] ?? []) expect(state.get(u)).toBe("S");
          } else {
            expect(o.attempt).toBeLessThanOrEqual((policy?.retries ?? 0) + 1);
            expect(o.delaySeconds).toBe(policy?.retryIntervalSeconds);
          }
          pending.push(o);
        }
      };
      let r = start(ctx);
      accept(r.dispatch);
      while (pending.length > 0) {
        expect(r.finalState).toBeUndefined();
        const o = pending.splice(Math.floor(rand() * pending.length), 1)[0] as DispatchOrder;
        const fails = rand() < 0.3;
        const retries = ctx.policies[o.index]?.retries ?? 0;
        if (!fails) state.set(o.index, "S");
        else if (o.attempt > retries) state.set(o.index, "F");
        r = applyOutcomes(ctx, r.progress, [{ ...o, state: fails ? "FAILURE" : "SUCCESS" }]);
        accept(r.dispatch);
      }
      // Every task ran exactly when all its upstreams succeeded; the rest never ran.
      ctx.dag.codes.forEach((_, i) => {
        const ready = (ctx.dag.upstream[i] ?? []).every((u) => state.get(u) === "S");
        expect(attempts.has(i)).toBe(ready);
        const expectedSlot = !ready
          ? SLOT.WAITING
          : state.get(i) === "S"
            ? SLOT.SUCCESS
            : SLOT.FAILURE;
        expect(r.progress.slots[i]).toBe(expectedSlot);
      });
      const anyFailed = [...state.values()].includes("F");
      expect(r.finalState).toBe(anyFailed ? "FAILURE" : "SUCCESS");
    }
  });

  it("diamond: d waits for both b and c", () => {
    const ctx = context(diamond());
    let r = start(ctx);
    r = finish(ctx, r.progress, "a", "SUCCESS");
    expect(codes(ctx, r.dispatch)).toEqual(["b", "c"]);
    r = finish(ctx, r.progress, "c", "SUCCESS");
    expect(r.dispatch).toEqual([]);
    expect(r.progress.slots).toBe("SDS-");
    r = finish(ctx, r.progress, "b", "SUCCESS");
    expect(codes(ctx, r.dispatch)).toEqual(["d"]);
    expect(r.finalState).toBeUndefined();
    r = finish(ctx, r.progress, "d", "SUCCESS");
    expect(r.finalState).toBe("SUCCESS");
  });

  it("FORCED_SUCCESS satisfies downstream tasks like SUCCESS", () => {
    const ctx = context([t("a"), t("b", ["a"])]);
    let r = start(ctx);
    r = finish(ctx, r.progress, "a", "FORCED_SUCCESS");
    expect(r.progress.slots).toBe(`${SLOT.FORCED_SUCCESS}${SLOT.ACTIVE}`);
    expect(codes(ctx, r.dispatch)).toEqual(["b"]);
    r = finish(ctx, r.progress, "b", "SUCCESS");
    expect(r.finalState).toBe("SUCCESS");
  });

  it("does not change the progress it is given", () => {
    const ctx = context([t("a", [], { retries: 2 }), t("b", ["a"])]);
    const before = start(ctx).progress;
    const copy = structuredClone(before);
    finish(ctx, before, "a", "FAILURE");
    finish(ctx, before, "a", "SUCCESS");
    expect(before).toEqual(copy);
  });
});

describe("applyOutcomes: retries", () => {
  it("re-dispatches a failed task with attempt + 1 after retryIntervalSeconds", () => {
    const ctx = context([t("a", [], { retries: 2, retryIntervalSeconds: 30 }), t("b", ["a"])]);
    let r = start(ctx);
    r = finish(ctx, r.progress, "a", "FAILURE");
    expect(r.changed).toBe(true);
    expect(r.dispatch).toEqual([{ index: 0, attempt: 2, delaySeconds: 30 }]);
    expect(slot(ctx, r.progress, "a")).toBe(SLOT.ACTIVE);
    expect(attemptOf(r.progress, 0)).toBe(2);
    expect(r.finalState).toBeUndefined();
    r = finish(ctx, r.progress, "a", "FAILURE");
    expect(r.dispatch).toEqual([{ index: 0, attempt: 3, delaySeconds: 30 }]);
    r = finish(ctx, r.progress, "a", "SUCCESS");
    expect(codes(ctx, r.dispatch)).toEqual(["b"]);
    expect(r.dispatch[0]?.attempt).toBe(1);
  });

  it("marks the task FAILURE once its retries are used up", () => {
    const ctx = context([t("a", [], { retries: 1, retryIntervalSeconds: 5 }), t("b", ["a"])]);
    let r = start(ctx);
    r = finish(ctx, r.progress, "a", "FAILURE");
    expect(r.dispatch).toEqual([{ index: 0, attempt: 2, delaySeconds: 5 }]);
    r = finish(ctx, r.progress, "a", "FAILURE");
    expect(r.dispatch).toEqual([]);
    expect(r.progress.slots).toBe(`${SLOT.FAILURE}${SLOT.WAITING}`);
    expect(r.finalState).toBe("FAILURE");
  });

  it("without retries a failure is final at once", () => {
    const ctx = context([t("a")]);
    const r = finish(ctx, start(ctx).progress, "a", "FAILURE");
    expect(r.dispatch).toEqual([]);
    expect(r.progress.slots).toBe(SLOT.FAILURE);
    expect(r.finalState).toBe("FAILURE");
  });

  it("NEED_FAULT_TOLERANCE re-runs at once and does not use up a retry", () => {
    const ctx = context([t("a", [], { retries: 1, retryIntervalSeconds: 60 })]);
    let r = start(ctx);
    r = finish(ctx, r.progress, "a", "NEED_FAULT_TOLERANCE");
    expect(r.dispatch).toEqual([{ index: 0, attempt: 2, delaySeconds: 0 }]);
    r = finish(ctx, r.progress, "a", "NEED_FAULT_TOLERANCE");
    expect(r.dispatch).toEqual([{ index: 0, attempt: 3, delaySeconds: 0 }]);
    // The one retry is still there.
    r = finish(ctx, r.progress, "a", "FAILURE");
    expect(r.dispatch).toEqual([{ index: 0, attempt: 4, delaySeconds: 60 }]);
    r = finish(ctx, r.progress, "a", "FAILURE");
    expect(r.dispatch).toEqual([]);
    expect(r.finalState).toBe("FAILURE");
  });

  it("NEED_FAULT_TOLERANCE re-runs even a task without retries", () => {
    const ctx = context([t("a")]);
    let r = finish(ctx, start(ctx).progress, "a", "NEED_FAULT_TOLERANCE");
    expect(r.dispatch).toEqual([{ index: 0, attempt: 2, delaySeconds: 0 }]);
    r = finish(ctx, r.progress, "a", "SUCCESS");
    expect(r.finalState).toBe("SUCCESS");
  });
});

describe("applyOutcomes: stale and duplicate outcomes", () => {
  it("ignores an outcome of an earlier attempt", () => {
    const ctx = context([t("a", [], { retries: 1 }), t("b", ["a"])]);
    const retrying = finish(ctx, start(ctx).progress, "a", "FAILURE").progress;
    for (const state of ["SUCCESS", "FAILURE", "KILLED", "NEED_FAULT_TOLERANCE"] as const) {
      const r = finish(ctx, retrying, "a", state, 1);
      expect(r).toEqual({ progress: retrying, dispatch: [], changed: false });
    }
  });

  it("ignores an outcome of an attempt not yet dispatched", () => {
    const ctx = context([t("a", [], { retries: 3 })]);
    const p = start(ctx).progress;
    expect(finish(ctx, p, "a", "SUCCESS", 2).changed).toBe(false);
  });

  it("ignores a duplicate of an outcome already applied", () => {
    const ctx = context([t("a"), t("b", ["a"]), t("c")]);
    const first = finish(ctx, start(ctx).progress, "a", "SUCCESS");
    expect(codes(ctx, first.dispatch)).toEqual(["b"]);
    const dup = finish(ctx, first.progress, "a", "SUCCESS", 1);
    expect(dup.changed).toBe(false);
    expect(dup.dispatch).toEqual([]);
    // A different verdict for the same attempt is ignored as well.
    expect(finish(ctx, first.progress, "a", "FAILURE", 1).changed).toBe(false);
  });

  it("applies a duplicated outcome once within one batch", () => {
    const ctx = context([t("a", [], { retries: 5 }), t("b", ["a"])]);
    const p = start(ctx).progress;
    const fail: TaskOutcome = { index: 0, attempt: 1, state: "FAILURE" };
    const r = applyOutcomes(ctx, p, [fail, fail, fail]);
    expect(r.dispatch).toEqual([{ index: 0, attempt: 2, delaySeconds: 0 }]);
    const ok: TaskOutcome = { index: 0, attempt: 2, state: "SUCCESS" };
    expect(applyOutcomes(ctx, r.progress, [ok, ok]).dispatch).toEqual([
      { index: 1, attempt: 1, delaySeconds: 0 },
    ]);
  });

  it("ignores outcomes of tasks that are waiting, finished or out of scope", () => {
    const ctx = context([t("a"), t("b", ["a"]), t("x")]);
    const p = start(ctx, ["a"], "DOWNSTREAM").progress; // x is out of scope
    expect(p.slots).toBe(`${SLOT.ACTIVE}${SLOT.WAITING}${SLOT.OUT}`);
    expect(finish(ctx, p, "b", "SUCCESS", 1).changed).toBe(false);
    expect(finish(ctx, p, "x", "SUCCESS", 1).changed).toBe(false);
    expect(applyOutcomes(ctx, p, [{ index: 99, attempt: 1, state: "SUCCESS" }]).changed).toBe(
      false,
    );
  });

  it("ignores states that do not end an attempt", () => {
    const ctx = context([t("a")]);
    const p = start(ctx).progress;
    for (const state of ["SUBMITTED", "DISPATCHED", "RUNNING"] as const) {
      expect(finish(ctx, p, "a", state).changed).toBe(false);
    }
    expect(applyOutcomes(ctx, p, []).changed).toBe(false);
  });

  it("applies the fresh outcomes of a batch that also holds stale ones", () => {
    const ctx = context([t("a"), t("b", ["a"])]);
    const p = start(ctx).progress;
    const r = applyOutcomes(ctx, p, [
      { index: 0, attempt: 7, state: "FAILURE" },
      { index: 0, attempt: 1, state: "SUCCESS" },
    ]);
    expect(r.changed).toBe(true);
    expect(codes(ctx, r.dispatch)).toEqual(["b"]);
  });
});

describe("applyOutcomes: failure strategy", () => {
  // root → left1 → left2, root → right1 → right2
  const branches = () => [
    t("root"),
    t("left1", ["root"]),
    t("left2", ["left1"]),
    t("right1", ["root"]),
    t("right2", ["right1"]),
  ];

  it("END: nothing new starts after a final failure; FAILURE once the active tasks finish", () => {
    const ctx = context(branches(), { failureStrategy: "END" });
    let r = finish(ctx, start(ctx).progress, "root", "SUCCESS");
    expect(codes(ctx, r.dispatch)).toEqual(["left1", "right1"]);
    r = finish(ctx, r.progress, "left1", "FAILURE");
    expect(r.dispatch).toEqual([]);
    expect(r.finalState).toBeUndefined(); // right1 is still running
    r = finish(ctx, r.progress, "right1", "SUCCESS");
    expect(r.dispatch).toEqual([]); // right2 does not start
    expect(r.finalState).toBe("FAILURE");
    expect(slot(ctx, r.progress, "right2")).toBe(SLOT.WAITING);
    expect(progressCounts(r.progress)).toEqual({ done: 2, active: 0, failed: 1, total: 5 });
  });

  it("CONTINUE: independent branches keep running, the failed branch stops, then FAILURE", () => {
    const ctx = context(branches(), { failureStrategy: "CONTINUE" });
    let r = finish(ctx, start(ctx).progress, "root", "SUCCESS");
    r = finish(ctx, r.progress, "left1", "FAILURE");
    expect(r.dispatch).toEqual([]); // left2 never runs
    expect(r.finalState).toBeUndefined();
    r = finish(ctx, r.progress, "right1", "SUCCESS");
    expect(codes(ctx, r.dispatch)).toEqual(["right2"]);
    expect(r.finalState).toBeUndefined();
    r = finish(ctx, r.progress, "right2", "SUCCESS");
    expect(r.dispatch).toEqual([]);
    expect(r.finalState).toBe("FAILURE");
    expect(slot(ctx, r.progress, "left2")).toBe(SLOT.WAITING);
    expect(progressCounts(r.progress)).toEqual({ done: 3, active: 0, failed: 1, total: 5 });
  });

  it("CONTINUE: a task whose upstreams include a failed one never runs", () => {
    const ctx = context([t("a"), t("b"), t("c", ["a", "b"]), t("d", ["b"])], {
      failureStrategy: "CONTINUE",
    });
    let r = start(ctx);
    r = finish(ctx, r.progress, "a", "FAILURE");
    r = finish(ctx, r.progress, "b", "SUCCESS");
    expect(codes(ctx, r.dispatch)).toEqual(["d"]);
    r = finish(ctx, r.progress, "d", "SUCCESS");
    expect(r.finalState).toBe("FAILURE");
    expect(slot(ctx, r.progress, "c")).toBe(SLOT.WAITING);
  });

  it("a task killed outside a stop counts as a failure", () => {
    const ctx = context([t("a"), t("b", ["a"])]);
    const r = finish(ctx, start(ctx).progress, "a", "KILLED");
    expect(r.progress.slots).toBe(`${SLOT.KILLED}${SLOT.WAITING}`);
    expect(r.dispatch).toEqual([]);
    expect(r.finalState).toBe("FAILURE");
  });

  it("END: a task running when another fails for good is not retried after it fails", () => {
    const ctx = context([t("a"), t("b", [], { retries: 2, retryIntervalSeconds: 600 })]);
    let r = finish(ctx, start(ctx).progress, "a", "FAILURE");
    expect(r.finalState).toBeUndefined();
    r = finish(ctx, r.progress, "b", "FAILURE");
    expect(r.dispatch).toEqual([]);
    expect(r.finalState).toBe("FAILURE");
  });
});

describe("applyOutcomes: stopping", () => {
  it("starts nothing new, kills, and ends STOPPED when no task is active", () => {
    const tasks = [t("a"), t("b"), t("c", ["a"]), t("d", ["b"])];
    const running = start(context(tasks)).progress;
    expect(running.slots).toBe("DD--");
    const ctx = context(tasks, { stopping: true });
    let r = finish(ctx, running, "a", "SUCCESS");
    expect(r.dispatch).toEqual([]); // c does not start
    expect(r.finalState).toBeUndefined(); // b still active
    r = finish(ctx, r.progress, "b", "KILLED");
    expect(r.progress.slots).toBe(`${SLOT.SUCCESS}${SLOT.KILLED}--`);
    expect(r.finalState).toBe("STOPPED");
  });

  it("does not retry a failure while stopping", () => {
    const tasks = [t("a", [], { retries: 3 })];
    const running = start(context(tasks)).progress;
    const r = finish(context(tasks, { stopping: true }), running, "a", "FAILURE");
    expect(r.dispatch).toEqual([]);
    expect(r.progress.slots).toBe(SLOT.FAILURE);
    expect(r.finalState).toBe("STOPPED");
  });

  it("does not fail over a lost worker while stopping", () => {
    const tasks = [t("a")];
    const running = start(context(tasks)).progress;
    const r = finish(context(tasks, { stopping: true }), running, "a", "NEED_FAULT_TOLERANCE");
    expect(r.dispatch).toEqual([]);
    expect(r.progress.slots).toBe(SLOT.KILLED);
    expect(r.finalState).toBe("STOPPED");
  });

  it("kills every active task in one batch", () => {
    const tasks = [t("a"), t("b"), t("c"), t("d", ["a", "b", "c"])];
    const running = start(context(tasks)).progress;
    const ctx = context(tasks, { stopping: true });
    const r = applyOutcomes(
      ctx,
      running,
      activeTasks(running).map((index) => ({ index, attempt: 1, state: "KILLED" as const })),
    );
    expect(r.progress.slots).toBe("KKK-");
    expect(r.finalState).toBe("STOPPED");
    expect(progressCounts(r.progress)).toEqual({ done: 0, active: 0, failed: 3, total: 4 });
  });

  it("STOPPED even when the last active task succeeded", () => {
    const tasks = [t("a")];
    const running = start(context(tasks)).progress;
    const r = finish(context(tasks, { stopping: true }), running, "a", "SUCCESS");
    expect(r.finalState).toBe("STOPPED");
  });
});

describe("start scope", () => {
  it("DOWNSTREAM: out-of-scope upstreams count as satisfied", () => {
    const ctx = context(diamond());
    let r = start(ctx, ["b"], "DOWNSTREAM");
    expect(r.progress.slots).toBe(`${SLOT.OUT}${SLOT.ACTIVE}${SLOT.OUT}${SLOT.WAITING}`);
    expect(codes(ctx, r.dispatch)).toEqual(["b"]);
    r = finish(ctx, r.progress, "b", "SUCCESS");
    expect(codes(ctx, r.dispatch)).toEqual(["d"]);
    r = finish(ctx, r.progress, "d", "SUCCESS");
    expect(r.finalState).toBe("SUCCESS");
    expect(progressCounts(r.progress)).toEqual({ done: 2, active: 0, failed: 0, total: 2 });
  });

  it("ONLY: the start tasks run at once and alone", () => {
    const ctx = context(diamond());
    let r = start(ctx, ["d"], "ONLY");
    expect(r.progress.slots).toBe(`...${SLOT.ACTIVE}`);
    expect(codes(ctx, r.dispatch)).toEqual(["d"]);
    r = finish(ctx, r.progress, "d", "SUCCESS");
    expect(r.dispatch).toEqual([]);
    expect(r.finalState).toBe("SUCCESS");
  });

  it("ONLY with directly chained start tasks still respects their order", () => {
    const ctx = context(diamond());
    let r = start(ctx, ["a", "b"], "ONLY");
    expect(codes(ctx, r.dispatch)).toEqual(["a"]);
    r = finish(ctx, r.progress, "a", "SUCCESS");
    expect(codes(ctx, r.dispatch)).toEqual(["b"]);
  });

  it("ONLY: an order through out-of-scope tasks is not kept (as in DolphinScheduler)", () => {
    // d depends on a only through b and c, which are out of scope: both start at once.
    const ctx = context(diamond());
    const r = start(ctx, ["a", "d"], "ONLY");
    expect(codes(ctx, r.dispatch)).toEqual(["a", "d"]);
  });

  it("UPSTREAM: the start task runs after everything before it", () => {
    const ctx = context(diamond());
    let r = start(ctx, ["b"], "UPSTREAM");
    expect(r.progress.slots).toBe(`${SLOT.ACTIVE}${SLOT.WAITING}..`);
    r = finish(ctx, r.progress, "a", "SUCCESS");
    expect(codes(ctx, r.dispatch)).toEqual(["b"]);
    r = finish(ctx, r.progress, "b", "SUCCESS");
    expect(r.finalState).toBe("SUCCESS");
  });

  it("several start tasks in DOWNSTREAM scope", () => {
    const ctx = context([t("a"), t("b", ["a"]), t("c", ["a"]), t("d", ["b"]), t("e", ["c"])]);
    const r = start(ctx, ["b", "c"], "DOWNSTREAM");
    expect(r.progress.slots).toBe(".DD--");
    expect(codes(ctx, r.dispatch)).toEqual(["b", "c"]);
  });
});

describe("progressCounts and activeTasks", () => {
  it("counts done, active, failed and total in scope", () => {
    const progress: Progress = { slots: ".-DSFKfD..S", attempts: {} };
    expect(progressCounts(progress)).toEqual({ done: 3, active: 2, failed: 2, total: 8 });
    expect(activeTasks(progress)).toEqual([2, 7]);
  });

  it("follows a run", () => {
    const ctx = context(diamond());
    let r = start(ctx);
    expect(progressCounts(r.progress)).toEqual({ done: 0, active: 1, failed: 0, total: 4 });
    r = finish(ctx, r.progress, "a", "SUCCESS");
    expect(progressCounts(r.progress)).toEqual({ done: 1, active: 2, failed: 0, total: 4 });
  });

  it("attemptOf is 1 before any retry", () => {
    expect(attemptOf({ slots: "D", attempts: {} }, 0)).toBe(1);
    expect(attemptOf({ slots: "D", attempts: { 0: [3, 2] } }, 0)).toBe(3);
  });
});

describe("applyOutcomes: failover limit", () => {
  it("fails a task that needed failover more than MAX_FAILOVERS times", async () => {
    const { MAX_FAILOVERS } = await import("../../lib/core/progress.js");
    const ctx = context([t("a")]);
    let r = start(ctx);
    for (let attempt = 1; attempt <= MAX_FAILOVERS; attempt++) {
      r = applyOutcomes(ctx, r.progress, [{ index: 0, attempt, state: "NEED_FAULT_TOLERANCE" }]);
      expect(r.dispatch).toEqual([{ index: 0, attempt: attempt + 1, delaySeconds: 0 }]);
    }
    r = applyOutcomes(ctx, r.progress, [
      { index: 0, attempt: MAX_FAILOVERS + 1, state: "NEED_FAULT_TOLERANCE" },
    ]);
    expect(r.dispatch).toEqual([]);
    expect(r.finalState).toBe("FAILURE");
  });
});
