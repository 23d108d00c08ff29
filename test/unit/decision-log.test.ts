/**
 * The log of tasks no worker ran (lib/core/decision-log.ts): what the dispatcher decided for a
 * CONDITIONS, SWITCH, SUB_WORKFLOW or DEPENDENT task, and why a task was SKIPPED.
 */
import { describe, expect, it } from "vitest";
import { skipCause } from "../../lib/core/branches.js";
import { Dag } from "../../lib/core/dag.js";
import { type DecidedAttempt, decisionLines } from "../../lib/core/decision-log.js";
import type { TaskDefinition } from "../../lib/core/model.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";

const T = Date.parse("2026-11-21T05:00:00.000Z");

function tasksOf(tasks: unknown[]): TaskDefinition[] {
  return parseWorkflowDefinition({ tasks }).tasks;
}

const done = (extra: Partial<DecidedAttempt> = {}): DecidedAttempt => ({
  state: "SUCCESS",
  submittedAt: T,
  startedAt: T,
  endedAt: T + 1_000,
  ...extra,
});

const messages = (...args: Parameters<typeof decisionLines>) =>
  decisionLines(...args).map((l) => l.message);

const shell = (code: string, upstream: string[] = []) => ({
  code,
  type: "SHELL",
  command: "true",
  upstream,
});

const SWITCH = tasksOf([
  shell("count"),
  {
    code: "switch_1",
    type: "SWITCH",
    upstream: ["count"],
    cases: [
      { condition: "rows > 100", next: "big_load" },
      { condition: "rows > 10", next: "mid_load" },
    ],
    defaultNext: "small_load",
  },
  shell("big_load", ["switch_1"]),
  shell("mid_load", ["switch_1"]),
  shell("small_load", ["switch_1"]),
  shell("small_report", ["small_load"]),
]);
const switchTask = SWITCH[1] as TaskDefinition;

describe("SWITCH", () => {
  it("names the case that matched, its condition, the branch taken and the ones skipped", () => {
    expect(
      messages({ task: switchTask, attempt: done({ branch: ["big_load"], switchCase: 0 }) }),
    ).toEqual(["SWITCH: case 0 (`rows > 100`) true → big_load; skipped: mid_load, small_load"]);
  });

  it("says when no case matched and the default branch was taken", () => {
    expect(
      messages({ task: switchTask, attempt: done({ branch: ["small_load"], switchCase: -1 }) }),
    ).toEqual(["SWITCH: no case true → default small_load; skipped: big_load, mid_load"]);
  });

  it("says the values the evaluated cases read (those given: the API masks secret-like ones)", () => {
    const guarded = tasksOf([
      {
        code: "gate",
        type: "SWITCH",
        cases: [
          { condition: "rows > threshold", next: "load" },
          { condition: 'params["db_password"] == "x" && region == "eu"', next: "eu" },
          { condition: "never > 1", next: "load" },
        ],
        defaultNext: "quarantine",
      },
      shell("load", ["gate"]),
      shell("eu", ["gate"]),
      shell("quarantine", ["gate"]),
    ])[0] as TaskDefinition;
    const params = { rows: "5", threshold: "100", db_password: "****", region: "us" };
    expect(
      messages({
        task: guarded,
        attempt: done({ branch: ["quarantine"], switchCase: -1 }),
        params,
      }),
    ).toEqual([
      'SWITCH: no case true → default quarantine; skipped: load, eu; values read: rows = "5", threshold = "100", db_password = "****", region = "us", never unset',
    ]);
    // Only the cases evaluated: up to the one that was true.
    expect(
      messages({
        task: guarded,
        attempt: done({ branch: ["load"], switchCase: 0 }),
        params: { ...params, rows: "500" },
      }),
    ).toEqual([
      'SWITCH: case 0 (`rows > threshold`) true → load; skipped: eu, quarantine; values read: rows = "500", threshold = "100"',
    ]);
  });

  it("says why it failed", () => {
    const lines = decisionLines({
      task: switchTask,
      attempt: done({ state: "FAILURE", error: "no case matched and there is no defaultNext" }),
    });
    expect(lines).toEqual([
      { at: T + 1_000, message: "SWITCH: FAILURE: no case matched and there is no defaultNext" },
    ]);
  });
});

describe("CONDITIONS", () => {
  const [, cond] = tasksOf([
    shell("check"),
    {
      code: "cond",
      type: "CONDITIONS",
      upstream: ["check"],
      successNext: ["publish"],
      failedNext: ["alert"],
    },
    shell("publish", ["cond"]),
    shell("alert", ["cond"]),
  ]) as [TaskDefinition, TaskDefinition];

  it("upstream all succeeded → successNext", () => {
    expect(
      messages({
        task: cond,
        attempt: done({ branch: ["publish"] }),
        upstream: [{ code: "check", state: "SUCCESS" }],
      }),
    ).toEqual(["CONDITIONS: upstream all succeeded → successNext [publish]; skipped: [alert]"]);
  });

  it("an upstream failed → failedNext, naming it", () => {
    expect(
      messages({
        task: cond,
        attempt: done({ branch: ["alert"] }),
        upstream: [{ code: "check", state: "FAILURE" }],
      }),
    ).toEqual(["CONDITIONS: upstream 'check' FAILURE → failedNext [alert]; skipped: [publish]"]);
  });
});

describe("SUB_WORKFLOW and DEPENDENT", () => {
  const [sub, dep] = tasksOf([
    { code: "child", type: "SUB_WORKFLOW", workflow: "etl" },
    {
      code: "wait",
      type: "DEPENDENT",
      checkIntervalSeconds: 30,
      dependence: {
        relation: "AND",
        groups: [
          { relation: "AND", items: [{ workflow: "daily", cycle: "day", dateValue: "today" }] },
        ],
      },
    },
  ]) as [TaskDefinition, TaskDefinition];

  it("a child instance: started, then ended (lines only get appended)", () => {
    const running = decisionLines({
      task: sub,
      attempt: { state: "RUNNING", submittedAt: T, startedAt: T, subInstanceId: "c-1" },
    });
    expect(running.map((l) => l.message)).toEqual([
      "SUB_WORKFLOW: started child instance c-1 of workflow 'etl'",
    ]);
    const ended = messages({
      task: sub,
      attempt: done({ subInstanceId: "c-1" }),
      childState: "SUCCESS",
    });
    expect(ended).toEqual([
      "SUB_WORKFLOW: started child instance c-1 of workflow 'etl'",
      "SUB_WORKFLOW: child instance c-1 ended SUCCESS",
    ]);
    expect(ended.slice(0, running.length)).toEqual(running.map((l) => l.message));
  });

  it("a child that could not start", () => {
    expect(
      messages({
        task: sub,
        attempt: done({ state: "FAILURE", error: "workflow 'etl' does not exist" }),
      }),
    ).toEqual(["SUB_WORKFLOW: FAILURE: workflow 'etl' does not exist"]);
  });

  it("a dependency: what it depends on, then whether it was met", () => {
    expect(
      messages({ task: dep, attempt: { state: "RUNNING", submittedAt: T, startedAt: T } }),
    ).toEqual(["DEPENDENT: depends on workflow 'daily' (day today); checked every 30 s"]);
    expect(messages({ task: dep, attempt: done() })).toEqual([
      "DEPENDENT: depends on workflow 'daily' (day today); checked every 30 s",
      "DEPENDENT: dependencies met → SUCCESS",
    ]);
    expect(
      messages({
        task: dep,
        attempt: done({ state: "FAILURE", error: "dependencies not met within 60s" }),
      }).at(-1),
    ).toBe("DEPENDENT: FAILURE: dependencies not met within 60s");
  });
});

describe("SKIPPED", () => {
  const dag = new Dag(SWITCH);
  const slots = "SSDsss";

  it("names the branch decision that skipped the task", () => {
    const cause = skipCause(SWITCH, dag.upstream, slots, 4);
    expect(cause).toEqual({ by: "switch_1", byType: "SWITCH", via: [] });
    expect(
      messages({
        task: SWITCH[4] as TaskDefinition,
        attempt: { state: "SKIPPED", submittedAt: T, endedAt: T },
        ...(cause ? { skipped: cause } : {}),
      }),
    ).toEqual(["SKIPPED: branch not taken by switch_1"]);
  });

  it("and through skipped upstream tasks", () => {
    const cause = skipCause(SWITCH, dag.upstream, slots, 5);
    expect(cause).toEqual({ by: "switch_1", byType: "SWITCH", via: ["small_load"] });
    expect(
      messages({
        task: SWITCH[5] as TaskDefinition,
        attempt: { state: "SKIPPED", submittedAt: T, endedAt: T },
        ...(cause ? { skipped: cause } : {}),
      }),
    ).toEqual(["SKIPPED: upstream 'small_load' was skipped (branch not taken by switch_1)"]);
  });
});

describe("SWITCH in a dry run", () => {
  it("names every branch it took, then its warning", () => {
    expect(
      messages({
        task: switchTask,
        attempt: done({
          branch: ["big_load", "mid_load"],
          warning: "depends on OUT parameter rows",
        }),
      }),
    ).toEqual([
      "SWITCH: → big_load, mid_load; skipped: small_load",
      "SWITCH: warning: depends on OUT parameter rows",
    ]);
  });
});
