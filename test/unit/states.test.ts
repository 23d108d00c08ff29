import { describe, expect, it } from "vitest";
import { IllegalTransitionError } from "../../lib/core/errors.js";
import {
  INSTANCE_STATES,
  type InstanceState,
  isFinalInstanceState,
  isFinalTaskState,
  TASK_STATES,
} from "../../lib/core/model.js";
import { assertInstanceTransition, canTransitionInstance } from "../../lib/core/states.js";

/** The expected instance machine (DolphinScheduler WorkflowExecutionStatus, docs/api.md "States"). */
const INSTANCE_LEGAL: Record<InstanceState, InstanceState[]> = {
  SUBMITTED: ["RUNNING", "STOPPING", "STOPPED", "SUCCESS", "FAILURE"],
  RUNNING: ["PAUSING", "STOPPING", "SUCCESS", "FAILURE"],
  PAUSING: ["PAUSED", "RUNNING", "STOPPING", "SUCCESS", "FAILURE"],
  PAUSED: ["RUNNING", "STOPPING", "STOPPED", "FAILURE"],
  STOPPING: ["STOPPED"],
  STOPPED: ["RUNNING"],
  SUCCESS: ["RUNNING"],
  FAILURE: ["RUNNING"],
};

const pairs = <S extends string>(states: readonly S[]): Array<[S, S]> =>
  states.flatMap((from) => states.map((to) => [from, to] as [S, S]));

describe("workflow instance state machine", () => {
  it("follows a normal run", () => {
    for (const [from, to] of [
      ["SUBMITTED", "RUNNING"],
      ["RUNNING", "SUCCESS"],
    ] as const) {
      expect(() => assertInstanceTransition(from, to)).not.toThrow();
    }
  });

  it("stops through STOPPING, or directly before it ran", () => {
    expect(canTransitionInstance("RUNNING", "STOPPING")).toBe(true);
    expect(canTransitionInstance("STOPPING", "STOPPED")).toBe(true);
    expect(canTransitionInstance("SUBMITTED", "STOPPED")).toBe(true);
    expect(canTransitionInstance("PAUSED", "STOPPED")).toBe(true);
    expect(canTransitionInstance("RUNNING", "STOPPED")).toBe(false);
  });

  it("a stopping instance can only end STOPPED", () => {
    for (const to of INSTANCE_STATES) {
      expect(canTransitionInstance("STOPPING", to)).toBe(to === "STOPPED");
    }
  });

  it("pauses through PAUSING and resumes to RUNNING", () => {
    expect(canTransitionInstance("RUNNING", "PAUSING")).toBe(true);
    expect(canTransitionInstance("PAUSING", "PAUSED")).toBe(true);
    expect(canTransitionInstance("PAUSED", "RUNNING")).toBe(true);
    expect(canTransitionInstance("RUNNING", "PAUSED")).toBe(false);
    expect(canTransitionInstance("SUBMITTED", "PAUSING")).toBe(false);
  });

  it("final states only leave to RUNNING (rerun, recover-failed)", () => {
    for (const from of ["STOPPED", "SUCCESS", "FAILURE"] as const) {
      for (const to of INSTANCE_STATES) {
        expect(canTransitionInstance(from, to), `${from} -> ${to}`).toBe(to === "RUNNING");
      }
    }
  });

  it("allows exactly the transitions of the table", () => {
    for (const [from, to] of pairs(INSTANCE_STATES)) {
      const legal = INSTANCE_LEGAL[from].includes(to);
      expect(canTransitionInstance(from, to), `${from} -> ${to}`).toBe(legal);
      if (legal) expect(() => assertInstanceTransition(from, to)).not.toThrow();
      else expect(() => assertInstanceTransition(from, to)).toThrow(IllegalTransitionError);
    }
  });

  it("names both states in the error", () => {
    expect(() => assertInstanceTransition("SUCCESS", "FAILURE")).toThrow(
      "illegal instance transition SUCCESS -> FAILURE",
    );
    expect(() => assertInstanceTransition("STOPPING", "RUNNING")).toThrow(IllegalTransitionError);
    expect(() => assertInstanceTransition("RUNNING", "RUNNING")).toThrow(IllegalTransitionError);
    expect(() => assertInstanceTransition("RUNNING", "SUBMITTED")).toThrow(IllegalTransitionError);
  });

  it("final states are STOPPED, SUCCESS and FAILURE; PAUSED waits", () => {
    expect(INSTANCE_STATES.filter(isFinalInstanceState)).toEqual(["STOPPED", "SUCCESS", "FAILURE"]);
    expect(isFinalInstanceState("PAUSED")).toBe(false);
  });
});

describe("task instance states", () => {
  it("final task states are those in which an attempt is over", () => {
    expect(TASK_STATES.filter(isFinalTaskState).sort()).toEqual(
      ["FAILURE", "FORCED_SUCCESS", "KILLED", "NEED_FAULT_TOLERANCE", "SKIPPED", "SUCCESS"].sort(),
    );
    for (const s of ["SUBMITTED", "DISPATCHED", "RUNNING", "PAUSED"] as const) {
      expect(isFinalTaskState(s)).toBe(false);
    }
  });
});
