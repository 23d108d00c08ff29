import { describe, expect, it } from "vitest";
import {
  packOutputSlots,
  packProgress,
  unpackOutputSlots,
  unpackProgress,
} from "../../lib/store/instance-packing.js";

describe("the stored form of an instance's progress", () => {
  it("round-trips slots and attempt counters", () => {
    const p = { slots: "SSDD--.F", attempts: { "3": [2, 1, 0] as [number, number, number] } };
    expect(unpackProgress(packProgress(p))).toEqual(p);
    expect(unpackOutputSlots(packOutputSlots("0101"))).toBe("0101");
  });

  it("reads the plain map items written by 0.1.0", () => {
    expect(unpackProgress({ slots: "SD", attempts: {} })).toEqual({ slots: "SD", attempts: {} });
    expect(unpackOutputSlots(undefined)).toBe("");
  });

  it("stays small whatever the DAG's size while states come in runs", () => {
    for (const n of [1_000, 10_000, 100_000]) {
      const third = Math.floor(n / 3);
      const slots = "S".repeat(third) + "D".repeat(16) + "-".repeat(n - third - 16);
      expect(packProgress({ slots, attempts: {} }).length).toBeLessThan(160);
    }
  });

  it("refuses bytes that are not a packed progress", () => {
    expect(() => unpackProgress(packOutputSlots("1"))).toThrow(/no slots/);
  });
});
