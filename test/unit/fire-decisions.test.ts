import { describe, expect, it } from "vitest";
import {
  decideMisfires,
  decideOverlap,
  MISFIRE_POLICIES,
  type MisfirePolicy,
  nextQueued,
  OVERLAP_POLICIES,
  type OverlapPolicy,
} from "../../lib/core/fire-decisions.js";

const MIN = 60_000;
const NOW = 1_000 * MIN;

/** Due times `n` minutes before NOW, ascending. */
const ago = (...minutes: number[]) => minutes.map((m) => NOW - m * MIN);

/** The decisions as "F" (FIRE) / "S" (SKIPPED_MISFIRE), in input order. */
function letters(due: number[], policy: MisfirePolicy, thresholdSeconds = 60, maxCatchup = 100) {
  return decideMisfires(due, NOW, policy, thresholdSeconds, maxCatchup)
    .map((d) => (d.decision === "FIRE" ? "F" : "S"))
    .join("");
}

describe("decideMisfires", () => {
  it("keeps the nominal times and their order", () => {
    const due = ago(30, 20, 10, 0);
    const out = decideMisfires(due, NOW, "SKIP", 60, 5);
    expect(out.map((d) => d.nominalTime)).toEqual(due);
  });

  it.each(MISFIRE_POLICIES)("%s: on-time fires always fire", (policy) => {
    expect(letters(ago(1, 0.5, 0), policy)).toBe("FFF");
    expect(letters([], policy)).toBe("");
  });

  it("the threshold is exclusive: exactly threshold seconds late is on time", () => {
    expect(letters([NOW - 60_000], "SKIP", 60)).toBe("F");
    expect(letters([NOW - 60_001], "SKIP", 60)).toBe("S");
    expect(letters([NOW], "SKIP", 0)).toBe("F");
    expect(letters([NOW - 1], "SKIP", 0)).toBe("S");
    // A nominal time not yet reached (clock skew) is not late.
    expect(letters([NOW + MIN], "SKIP", 0)).toBe("F");
  });

  it("SKIP: every misfired time is skipped, on-time ones fire", () => {
    expect(letters(ago(50, 40, 30), "SKIP")).toBe("SSS");
    expect(letters(ago(50, 40, 30, 0.5), "SKIP")).toBe("SSSF");
  });

  it("FIRE_ONCE: only the latest misfired time fires", () => {
    expect(letters(ago(50, 40, 30), "FIRE_ONCE")).toBe("SSF");
    expect(letters(ago(50), "FIRE_ONCE")).toBe("F");
    // The on-time one fires too: FIRE_ONCE bounds the catch-up, not the on-time fires.
    expect(letters(ago(50, 40, 30, 0.5), "FIRE_ONCE")).toBe("SSFF");
  });

  it("FIRE_ALL: the latest maxCatchup misfired times fire, older ones are skipped", () => {
    expect(letters(ago(50, 40, 30), "FIRE_ALL", 60, 100)).toBe("FFF");
    expect(letters(ago(50, 40, 30), "FIRE_ALL", 60, 3)).toBe("FFF");
    expect(letters(ago(50, 40, 30), "FIRE_ALL", 60, 2)).toBe("SFF");
    expect(letters(ago(50, 40, 30), "FIRE_ALL", 60, 1)).toBe("SSF");
    expect(letters(ago(50, 40, 30), "FIRE_ALL", 60, 0)).toBe("SSS");
    expect(letters(ago(50, 40, 30), "FIRE_ALL", 60, Number.POSITIVE_INFINITY)).toBe("FFF");
    // On-time fires do not count against maxCatchup.
    expect(letters(ago(50, 40, 30, 0.5, 0), "FIRE_ALL", 60, 1)).toBe("SSFFF");
  });

  it("a larger threshold turns misfires into on-time fires", () => {
    expect(letters(ago(50, 40, 30), "SKIP", 45 * 60)).toBe("SFF");
    expect(letters(ago(50, 40, 30), "SKIP", Number.POSITIVE_INFINITY)).toBe("FFF");
  });

  it("decides by time, not position", () => {
    const out = decideMisfires(ago(10, 50, 30), NOW, "FIRE_ONCE", 60, 1);
    expect(out.map((d) => d.decision)).toEqual(["FIRE", "SKIPPED_MISFIRE", "SKIPPED_MISFIRE"]);
  });

  it("rejects a negative or NaN threshold or maxCatchup", () => {
    expect(() => decideMisfires([], NOW, "SKIP", -1, 1)).toThrow(RangeError);
    expect(() => decideMisfires([], NOW, "SKIP", Number.NaN, 1)).toThrow(RangeError);
    expect(() => decideMisfires([], NOW, "FIRE_ALL", 60, -1)).toThrow(RangeError);
    expect(() => decideMisfires([], NOW, "FIRE_ALL", 60, Number.NaN)).toThrow(RangeError);
  });

  it("a fractional maxCatchup rounds down", () => {
    expect(letters(ago(50, 40, 30), "FIRE_ALL", 60, 1.9)).toBe("SSF");
  });
});

describe("decideOverlap", () => {
  const T = 100 * MIN;

  /** Every policy × running × queued-empty-or-not, with the expected decision. */
  const table: Array<[OverlapPolicy, boolean, number[], string, number[]]> = [
    ["PARALLEL", false, [], "FIRED", []],
    ["PARALLEL", true, [], "FIRED", []],
    ["PARALLEL", true, [T - MIN], "FIRED", []],
    ["PARALLEL", false, [T - MIN], "FIRED", []],
    ["SERIAL_WAIT", false, [], "FIRED", []],
    ["SERIAL_WAIT", true, [], "QUEUED_SERIAL", []],
    ["SERIAL_WAIT", true, [T - 2 * MIN, T - MIN], "QUEUED_SERIAL", []],
    ["SERIAL_WAIT", false, [T - MIN], "QUEUED_SERIAL", []],
    ["SERIAL_DISCARD", false, [], "FIRED", []],
    ["SERIAL_DISCARD", true, [], "DISCARDED_OVERLAP", []],
    ["SERIAL_DISCARD", true, [T - MIN], "DISCARDED_OVERLAP", []],
    ["SERIAL_DISCARD", false, [T - MIN], "FIRED", []],
    ["SERIAL_PRIORITY", false, [], "FIRED", []],
    ["SERIAL_PRIORITY", true, [], "QUEUED_SERIAL", []],
    ["SERIAL_PRIORITY", true, [T - MIN], "QUEUED_SERIAL", [T - MIN]],
    ["SERIAL_PRIORITY", true, [T - 2 * MIN, T - MIN], "QUEUED_SERIAL", [T - 2 * MIN, T - MIN]],
    ["SERIAL_PRIORITY", false, [T - MIN], "QUEUED_SERIAL", [T - MIN]],
  ];
  it.each(table)("%s running=%s queued=%j → %s, drop %j", (policy, running, queued, d, drop) => {
    expect(decideOverlap(policy, running, queued, T)).toEqual({ decision: d, dropQueued: drop });
  });

  it("covers every policy", () => {
    expect(new Set(table.map((r) => r[0]))).toEqual(new Set(OVERLAP_POLICIES));
  });

  it("SERIAL_PRIORITY: a fire older than one already waiting is itself discarded", () => {
    expect(decideOverlap("SERIAL_PRIORITY", true, [T + MIN], T)).toEqual({
      decision: "DISCARDED_OVERLAP",
      dropQueued: [],
    });
  });

  it("a nominal time already waiting stays queued and is not dropped", () => {
    expect(decideOverlap("SERIAL_WAIT", true, [T], T).decision).toBe("QUEUED_SERIAL");
    expect(decideOverlap("SERIAL_PRIORITY", true, [T - MIN, T], T)).toEqual({
      decision: "QUEUED_SERIAL",
      dropQueued: [T - MIN],
    });
  });

  it("does not modify the queue it is given", () => {
    const queued = [T - 2 * MIN, T - MIN];
    decideOverlap("SERIAL_PRIORITY", true, queued, T);
    expect(queued).toEqual([T - 2 * MIN, T - MIN]);
  });

  it("a run of fires behind a long run: SERIAL_WAIT queues all, SERIAL_PRIORITY keeps the newest", () => {
    const simulate = (policy: OverlapPolicy) => {
      let queued: number[] = [];
      const decisions: string[] = [];
      for (const nominal of [T, T + MIN, T + 2 * MIN, T + 3 * MIN]) {
        // The first fires (nothing runs yet); it is still running for the others.
        const o = decideOverlap(policy, decisions.length > 0, queued, nominal);
        decisions.push(o.decision);
        queued = queued.filter((q) => !o.dropQueued.includes(q));
        if (o.decision === "QUEUED_SERIAL") queued.push(nominal);
      }
      return { decisions, queued, next: nextQueued(policy, queued) };
    };
    expect(simulate("SERIAL_WAIT")).toEqual({
      decisions: ["FIRED", "QUEUED_SERIAL", "QUEUED_SERIAL", "QUEUED_SERIAL"],
      queued: [T + MIN, T + 2 * MIN, T + 3 * MIN],
      next: T + MIN,
    });
    expect(simulate("SERIAL_PRIORITY")).toEqual({
      decisions: ["FIRED", "QUEUED_SERIAL", "QUEUED_SERIAL", "QUEUED_SERIAL"],
      queued: [T + 3 * MIN],
      next: T + 3 * MIN,
    });
    expect(simulate("SERIAL_DISCARD")).toEqual({
      decisions: ["FIRED", "DISCARDED_OVERLAP", "DISCARDED_OVERLAP", "DISCARDED_OVERLAP"],
      queued: [],
      next: undefined,
    });
    expect(simulate("PARALLEL")).toEqual({
      decisions: ["FIRED", "FIRED", "FIRED", "FIRED"],
      queued: [],
      next: undefined,
    });
  });
});

describe("nextQueued", () => {
  const q = [3 * MIN, MIN, 2 * MIN];
  it.each(OVERLAP_POLICIES)("%s: nothing waits → undefined", (policy) => {
    expect(nextQueued(policy, [])).toBeUndefined();
  });
  it("SERIAL_WAIT starts the oldest, SERIAL_PRIORITY the newest", () => {
    expect(nextQueued("SERIAL_WAIT", q)).toBe(MIN);
    expect(nextQueued("SERIAL_PRIORITY", q)).toBe(3 * MIN);
  });
  it("leftovers from an earlier serial policy start oldest first under the others", () => {
    expect(nextQueued("SERIAL_DISCARD", q)).toBe(MIN);
    expect(nextQueued("PARALLEL", q)).toBe(MIN);
  });
});
