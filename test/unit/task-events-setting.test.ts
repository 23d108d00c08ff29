/**
 * SHOAL_TASK_EVENTS (lib/aws/config.ts) and what it leaves out of a dispatcher write's events
 * (lib/engine/state-change-events.ts): by default a successful attempt's task event, which cost
 * one EventBridge event per task that nothing of Shoal's consumed.
 */
import { describe, expect, it } from "vitest";
import { configFromEnv, taskEventsSetting } from "../../lib/aws/config.js";
import { Dag } from "../../lib/core/dag.js";
import type { WorkflowDefinition } from "../../lib/core/model.js";
import { DETAIL_TYPES } from "../../lib/core/state-events.js";
import type { LoadedDefinition } from "../../lib/engine/definitions.js";
import { stateChangesOf } from "../../lib/engine/state-change-events.js";
import type { InstanceRecord } from "../../lib/store/records.js";

describe("SHOAL_TASK_EVENTS", () => {
  it("defaults to unsuccessful, takes all and none, and names itself on anything else", () => {
    expect(taskEventsSetting(undefined)).toBe("unsuccessful");
    expect(taskEventsSetting("")).toBe("unsuccessful");
    expect(taskEventsSetting("all")).toBe("all");
    expect(taskEventsSetting("none")).toBe("none");
    expect(() => taskEventsSetting("ALL")).toThrow(
      "SHOAL_TASK_EVENTS must be one of: unsuccessful, all, none (it is 'ALL')",
    );
    expect(configFromEnv({}).taskEvents).toBe("unsuccessful");
    expect(configFromEnv({ SHOAL_TASK_EVENTS: "all" }).taskEvents).toBe("all");
  });

  it("leaves a successful attempt's event out unless `all`; instance events always go", () => {
    const definition = {
      name: "w",
      tasks: [
        { code: "a", type: "SHELL", command: "true", upstream: [] },
        { code: "b", type: "SHELL", command: "false", upstream: [] },
      ],
    } as unknown as WorkflowDefinition;
    const def = { definition, dag: new Dag(definition.tasks) } as unknown as LoadedDefinition;
    const before = {
      instanceId: "i",
      workflow: "w",
      version: 1,
      state: "RUNNING",
      priority: "MEDIUM",
      commandType: "START_WORKFLOW",
      createdAt: 0,
      progress: { slots: "DD", attempts: {} },
      rev: 3,
    } as unknown as InstanceRecord;
    const after = {
      ...before,
      state: "FAILURE",
      progress: { slots: "SF", attempts: {} },
      rev: 4,
    } as InstanceRecord;
    const outcomes = [
      { index: 0, attempt: 1, state: "SUCCESS" as const },
      { index: 1, attempt: 1, state: "FAILURE" as const },
    ];
    const tasks = (setting: "all" | "unsuccessful" | "none") =>
      stateChangesOf(before, after, def, outcomes, 1_000, setting)
        .filter((e) => e.detailType === DETAIL_TYPES.task)
        .map((e) => (e.detail as { taskCode: string }).taskCode);
    expect(tasks("all")).toEqual(["a", "b"]);
    expect(tasks("unsuccessful")).toEqual(["b"]);
    expect(tasks("none")).toEqual([]);
    for (const s of ["all", "unsuccessful", "none"] as const)
      expect(
        stateChangesOf(before, after, def, outcomes, 1_000, s).filter(
          (e) => e.detailType === DETAIL_TYPES.instance,
        ),
      ).toHaveLength(1);
  });
});
