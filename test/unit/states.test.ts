import { describe, expect, it } from "vitest";
import { IllegalTransitionError } from "../../lib/core/errors.js";
import {
  INSTANCE_STATES,
  type InstanceState,
  isFinalInstanceState,
  isFinalTaskState,
  TASK_STATES,
  type TaskState,
} from "../../lib/core/model.js";
import {
  assertInstanceTransition,
  assertTaskTransition,
  canTransitionInstance,
  canTransitionTask,
  taskStatesLeadingTo,
} from "../../lib/core/states.js";

/** The expected instance machine (DolphinScheduler WorkflowExecutionStatus, API-v1.md). */
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

/** The expected task machine (DolphinScheduler TaskExecutionStatus). */
const TASK_LEGAL: Record<TaskState, TaskState[]> = {
  SUBMITTED: ["DISPATCHED", "RUNNING", "KILLED", "PAUSED", "FAILURE"],
  DISPATCHED: ["RUNNING", "SUCCESS", "KILLED", "PAUSED", "NEED_FAULT_TOLERANCE"],
  RUNNING: ["SUCCESS", "FAILURE", "KILLED", "NEED_FAULT_TOLERANCE"],
  FAILURE: ["FORCED_SUCCESS"],
  KILLED: ["FORCED_SUCCESS"],
  PAUSED: [],
  SUCCESS: ["FAILURE"],
  NEED_FAULT_TOLERANCE: [],
  FORCED_SUCCESS: [],
  SKIPPED: [],
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

describe("task instance state machine", () => {
  it("follows a normal attempt", () => {
    for (const [from, to] of [
      ["SUBMITTED", "DISPATCHED"],
      ["DISPATCHED", "RUNNING"],
      ["RUNNING", "SUCCESS"],
    ] as const) {
      expect(() => assertTaskTransition(from, to)).not.toThrow();
    }
  });

  it("a running attempt can fail, be killed or lose its worker", () => {
    expect(canTransitionTask("RUNNING", "FAILURE")).toBe(true);
    expect(canTransitionTask("RUNNING", "KILLED")).toBe(true);
    expect(canTransitionTask("RUNNING", "NEED_FAULT_TOLERANCE")).toBe(true);
  });

  it("a failed or killed attempt can only be forced to success", () => {
    for (const from of ["FAILURE", "KILLED"] as const) {
      for (const to of TASK_STATES) {
        expect(canTransitionTask(from, to), `${from} -> ${to}`).toBe(to === "FORCED_SUCCESS");
      }
    }
  });

  it("FORCED_SUCCESS, NEED_FAULT_TOLERANCE, SKIPPED and PAUSED never change", () => {
    for (const from of ["FORCED_SUCCESS", "NEED_FAULT_TOLERANCE", "SKIPPED", "PAUSED"] as const) {
      for (const to of TASK_STATES) {
        expect(() => assertTaskTransition(from, to)).toThrow(IllegalTransitionError);
      }
    }
  });

  it("a task cannot go back to an earlier state", () => {
    expect(() => assertTaskTransition("RUNNING", "DISPATCHED")).toThrow(
      "illegal task transition RUNNING -> DISPATCHED",
    );
    expect(() => assertTaskTransition("DISPATCHED", "SUBMITTED")).toThrow(IllegalTransitionError);
    expect(() => assertTaskTransition("SUCCESS", "RUNNING")).toThrow(IllegalTransitionError);
    expect(() => assertTaskTransition("RUNNING", "RUNNING")).toThrow(IllegalTransitionError);
  });

  it("an attempt that never started cannot succeed (it fails only on a bad parameter or group)", () => {
    expect(canTransitionTask("SUBMITTED", "FAILURE")).toBe(true);
    expect(canTransitionTask("SUBMITTED", "SUCCESS")).toBe(false);
    expect(canTransitionTask("SUBMITTED", "NEED_FAULT_TOLERANCE")).toBe(false);
  });

  it("allows exactly the transitions of the table", () => {
    for (const [from, to] of pairs(TASK_STATES)) {
      const legal = TASK_LEGAL[from].includes(to);
      expect(canTransitionTask(from, to), `${from} -> ${to}`).toBe(legal);
      if (legal) expect(() => assertTaskTransition(from, to)).not.toThrow();
      else expect(() => assertTaskTransition(from, to)).toThrow(IllegalTransitionError);
    }
  });

  it("lists the states a write may come from", () => {
    expect(taskStatesLeadingTo("RUNNING").sort()).toEqual(["DISPATCHED", "SUBMITTED"]);
    expect(taskStatesLeadingTo("KILLED").sort()).toEqual(["DISPATCHED", "RUNNING", "SUBMITTED"]);
    expect(taskStatesLeadingTo("FORCED_SUCCESS").sort()).toEqual(["FAILURE", "KILLED"]);
    expect(taskStatesLeadingTo("NEED_FAULT_TOLERANCE").sort()).toEqual(["DISPATCHED", "RUNNING"]);
    expect(taskStatesLeadingTo("SUBMITTED")).toEqual([]);
    expect(taskStatesLeadingTo("SKIPPED")).toEqual([]);
  });

  it("final task states are those in which an attempt is over", () => {
    expect(TASK_STATES.filter(isFinalTaskState).sort()).toEqual(
      ["FAILURE", "FORCED_SUCCESS", "KILLED", "NEED_FAULT_TOLERANCE", "SKIPPED", "SUCCESS"].sort(),
    );
    for (const s of ["SUBMITTED", "DISPATCHED", "RUNNING", "PAUSED"] as const) {
      expect(isFinalTaskState(s)).toBe(false);
    }
  });

  it("a non-final state always has a way out", () => {
    for (const from of TASK_STATES) {
      if (isFinalTaskState(from) || from === "PAUSED") continue;
      expect(
        TASK_STATES.some((to) => canTransitionTask(from, to)),
        from,
      ).toBe(true);
    }
  });
});
