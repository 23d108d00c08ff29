import { describe, expect, it } from "vitest";
import { PRIORITIES, type Priority } from "../../lib/core/model.js";
import { compareDispatch, type DispatchKey, priorityRank } from "../../lib/core/priority.js";

const key = (over: Partial<DispatchKey> = {}): DispatchKey => ({
  instancePriority: "MEDIUM",
  instanceCreatedAt: 1_000,
  taskPriority: "MEDIUM",
  code: "m",
  ...over,
});

const first = (a: DispatchKey, b: DispatchKey) => {
  expect(compareDispatch(a, b)).toBeLessThan(0);
  expect(compareDispatch(b, a)).toBeGreaterThan(0);
};

describe("priorityRank", () => {
  it("ranks HIGHEST first and LOWEST last", () => {
    expect(PRIORITIES.map(priorityRank)).toEqual([0, 1, 2, 3, 4]);
  });
});

describe("compareDispatch", () => {
  it("equal keys compare equal", () => {
    expect(compareDispatch(key(), key())).toBe(0);
  });

  it("1st: the higher instance priority goes first, whatever the other keys", () => {
    first(
      key({
        instancePriority: "HIGH",
        instanceCreatedAt: 9_999,
        taskPriority: "LOWEST",
        code: "z",
      }),
      key({ instancePriority: "MEDIUM", instanceCreatedAt: 1, taskPriority: "HIGHEST", code: "a" }),
    );
  });

  it("2nd: with equal instance priority, the older instance goes first", () => {
    first(
      key({ instanceCreatedAt: 1_000, taskPriority: "LOWEST", code: "z" }),
      key({ instanceCreatedAt: 1_001, taskPriority: "HIGHEST", code: "a" }),
    );
  });

  it("3rd: within one instance, the higher task priority goes first", () => {
    first(key({ taskPriority: "HIGHEST", code: "z" }), key({ taskPriority: "HIGH", code: "a" }));
  });

  it("4th: the task code breaks the last tie", () => {
    first(key({ code: "extract" }), key({ code: "load" }));
    first(key({ code: "A" }), key({ code: "a" }));
    first(key({ code: "t10" }), key({ code: "t9" })); // plain string order, not numeric
  });

  it("sorts a shuffled list into DolphinScheduler's order", () => {
    // The expected order, written out by hand.
    const expected: DispatchKey[] = [];
    const levels: Priority[] = ["HIGHEST", "MEDIUM", "LOWEST"];
    for (const instancePriority of levels) {
      for (const instanceCreatedAt of [100, 200]) {
        for (const taskPriority of levels) {
          for (const code of ["a", "b"]) {
            expected.push({ instancePriority, instanceCreatedAt, taskPriority, code });
          }
        }
      }
    }
    // A deterministic shuffle (LCG), several times over.
    let seed = 42;
    const rand = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 20; round++) {
      const shuffled = [...expected];
      for (let i = shuffled.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [shuffled[i], shuffled[j]] = [shuffled[j] as DispatchKey, shuffled[i] as DispatchKey];
      }
      expect(shuffled.sort(compareDispatch)).toEqual(expected);
    }
  });

  it("is a consistent comparator (antisymmetric, transitive on a sample)", () => {
    const sample: DispatchKey[] = [];
    for (const instancePriority of PRIORITIES)
      for (const instanceCreatedAt of [1, 2])
        for (const taskPriority of ["HIGH", "LOW"] as const)
          for (const code of ["x", "y"])
            sample.push({ instancePriority, instanceCreatedAt, taskPriority, code });
    for (const a of sample) {
      for (const b of sample) {
        expect(Math.sign(compareDispatch(a, b)) + Math.sign(compareDispatch(b, a))).toBe(0);
        for (const c of sample) {
          if (compareDispatch(a, b) < 0 && compareDispatch(b, c) < 0) {
            expect(compareDispatch(a, c)).toBeLessThan(0);
          }
        }
      }
    }
  });
});
