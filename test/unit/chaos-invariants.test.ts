/**
 * The invariant checker of `npm run chaos` (scripts/chaos/invariants.ts) over hand-made
 * side-effect logs, instances and fire ledgers: it passes a clean run and names each violation.
 */
import { describe, expect, it } from "vitest";
import {
  checkFires,
  checkRuns,
  type InstanceView,
  latencySummary,
  parseEffects,
  percentile,
  replacementLatencies,
} from "../../scripts/chaos/invariants.js";

/** a → b, a → c. */
const DAGS = { wf: { a: [], b: ["a"], c: ["a"] } };

const ok = (id: string, attempts: Record<string, number> = {}): InstanceView => ({
  instanceId: id,
  workflow: "wf",
  state: "SUCCESS",
  tasks: ["a", "b", "c"].map((code) => ({ code, state: "SUCCESS", attempt: attempts[code] ?? 1 })),
});

/** Lines of `i1`, one per entry: `code attempt kind atMs`. */
const log = (...lines: string[]) => parseEffects(lines.map((l) => `i1 ${l}`).join("\n")).effects;

const CLEAN = [
  "a 1 start 0",
  "a 1 end 100",
  "b 1 start 200",
  "c 1 start 210",
  "c 1 end 300",
  "b 1 end 400",
];

function run(instances: InstanceView[], effects: ReturnType<typeof log>) {
  const { checks, figures } = checkRuns({
    instances,
    dags: DAGS,
    effects,
    boundS: 60,
    overlapWindowMs: 3000,
  });
  return { failed: checks.filter((c) => !c.ok), checks, figures };
}

describe("parseEffects", () => {
  it("reads lines in file order and sets malformed ones apart", () => {
    const { effects, malformed } = parseEffects("i1 a 1 start 5\n\ngarbage\ni1 a 1 end 9\n");
    expect(effects).toEqual([
      { instanceId: "i1", code: "a", attempt: 1, kind: "start", at: 5, seq: 0 },
      { instanceId: "i1", code: "a", attempt: 1, kind: "end", at: 9, seq: 1 },
    ]);
    expect(malformed).toEqual(["garbage"]);
  });
});

describe("checkRuns", () => {
  it("passes a clean run and counts it", () => {
    const { failed, figures } = run([ok("i1")], log(...CLEAN));
    expect(failed).toEqual([]);
    expect(figures).toMatchObject({ instances: 1, success: 1, attempts: 3, failovers: 0 });
    expect(figures.maxIdle.ms).toBe(100);
  });

  it("passes a failover: the killed attempt never ended, the next one ran after it", () => {
    const { failed, figures } = run(
      [ok("i1", { a: 2 })],
      log("a 1 start 0", "a 2 start 11000", "a 2 end 11100", ...CLEAN.slice(2)),
    );
    expect(failed).toEqual([]);
    expect(figures).toMatchObject({ failovers: 1, attempts: 4, doubleExecutions: 0 });
    expect(figures.maxIdle).toEqual({
      ms: 11000,
      where: "i1: a attempt 1 start → a attempt 2 start",
    });
  });

  it("fails an instance that is not final, or failed", () => {
    const stuck = { ...ok("i1"), state: "RUNNING_EXECUTION" };
    const failedOne = {
      ...ok("i2"),
      state: "FAILURE",
      tasks: [{ code: "a", state: "FAILURE", attempt: 6 }],
    };
    const { failed } = run([stuck, failedOne], log(...CLEAN));
    expect(failed.map((c) => c.name)).toEqual(["final within 60 s", "no instance failed"]);
    expect(failed[0]?.evidence).toEqual(["i1 wf RUNNING_EXECUTION"]);
    expect(failed[1]?.evidence).toEqual(["i2 FAILURE: a FAILURE attempt 6"]);
  });

  it("fails a SUCCESS instance without the end line of a task's succeeded attempt", () => {
    const { failed } = run([ok("i1", { b: 2 })], log(...CLEAN));
    expect(failed.map((c) => c.name)).toContain("SUCCESS has every end");
    expect(failed.find((c) => c.name === "SUCCESS has every end")?.evidence).toEqual([
      "i1 b (API: SUCCESS attempt 2)",
    ]);
  });

  it("fails a child that started before its parent's succeeded attempt ended", () => {
    const { failed } = run(
      [ok("i1")],
      log(
        "a 1 start 0",
        "b 1 start 50",
        "a 1 end 100",
        "b 1 end 150",
        "c 1 start 200",
        "c 1 end 300",
      ),
    );
    expect(failed.map((c) => c.name)).toEqual(["parent ends before child starts"]);
    expect(failed[0]?.evidence?.[0]).toContain(
      "b attempt 1 started (line 2) before a ended (line 3)",
    );
  });

  it("fails an attempt that started or ended twice", () => {
    const { failed } = run([ok("i1")], log(...CLEAN, "b 1 end 450", "c 1 start 500"));
    expect(failed.map((c) => c.name)).toEqual(["no attempt runs or ends twice"]);
    expect(failed[0]?.evidence).toEqual(["i1 c 1: 2 starts", "i1 b 1: 2 ends"]);
  });

  it("counts double executions and fails one longer than the window", () => {
    const short = run(
      [ok("i1", { a: 2 })],
      log("a 1 start 0", "a 2 start 1000", "a 1 end 2000", "a 2 end 2100", ...CLEAN.slice(2)),
    );
    expect(short.failed).toEqual([]);
    expect(short.figures).toMatchObject({ doubleExecutions: 1, maxOverlapMs: 1000 });
    const long = run(
      [ok("i1", { a: 2 })],
      log("a 1 start 0", "a 2 start 1000", "a 1 end 9000", "a 2 end 9100", ...CLEAN.slice(2)),
    );
    expect(long.failed.map((c) => c.name)).toEqual(["double executions within 3000 ms"]);
    expect(long.failed[0]?.evidence).toEqual([
      "i1 a: attempt 1 ended 8000 ms after attempt 2 started",
    ]);
  });
});

describe("checkFires", () => {
  const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
  const fired = (s: number, id = `x${s}`) => ({
    nominalTime: t(s),
    decision: "FIRED",
    instanceId: id,
  });
  const ids = new Set(["x1", "x2", "x3", "x4"]);

  it("passes one entry per nominal time, each with its instance", () => {
    const { check } = checkFires(
      "s",
      [1, 2, 3, 4].map((s) => fired(s)),
      1000,
      [t(1), t(2), t(3), t(4)],
      ids,
      {
        from: Date.parse(t(1)),
        to: Date.parse(t(4)),
      },
    );
    expect(check.ok).toBe(true);
  });

  it("names a gap, a duplicate, an unknown instance, two instances of one time and a short ledger", () => {
    const { check } = checkFires(
      "s",
      [fired(1), fired(2), fired(2, "x9"), fired(4)],
      1000,
      [t(1), t(2), t(2)],
      ids,
      { from: Date.parse(t(1)), to: Date.parse(t(5)) },
    );
    expect(check.ok).toBe(false);
    expect(check.evidence).toEqual([
      `missing at the end: last entry ${t(4)}, expected ${t(5)} or later`,
      `duplicate entry ${t(2)}`,
      `gap: ${t(2)} → ${t(4)}`,
      `${t(2)}: FIRED names no listed instance (x9)`,
      `2 instances for schedule time ${t(2)}`,
    ]);
  });
});

describe("replacementLatencies", () => {
  it("measures kill → next start of a held task, and names the unreplaced", () => {
    const effects = log("a 1 start 0", "a 2 start 10500", "b 3 start 20000");
    const { latencies, unreplaced } = replacementLatencies(
      [
        { at: 500, held: [{ instanceId: "i1", code: "a", attempt: 1 }] },
        { at: 15000, held: [{ instanceId: "i1", code: "c", attempt: 1 }] },
      ],
      effects,
    );
    expect(latencies).toEqual([10000]);
    expect(unreplaced).toEqual(["i1 c attempt 1"]);
  });

  it("summarizes percentiles", () => {
    expect(percentile([], 50)).toBeUndefined();
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([5, 1, 3, 2, 4], 99)).toBe(5);
    expect(latencySummary([1000, 2000, 12000])).toBe("2.0/12.0/12.0 s");
    expect(latencySummary([])).toBe("-");
  });
});
