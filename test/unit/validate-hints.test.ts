// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} in plain strings is the syntax under test
/**
 * What a user coming from DolphinScheduler or Airflow sees when a definition is refused: every
 * problem of every task at once (a missing or unknown `type` no longer hides the rest), and a
 * hint naming the Shoal field a foreign or misspelt field stands for.
 */
import { describe, expect, it } from "vitest";
import { statusOf } from "../../lib/api/http.js";
import { type ErrorDetail, RequestError } from "../../lib/core/errors.js";
import { unknownFieldMessage } from "../../lib/core/field-hints.js";
import { parseRunRequest, parseWorkflowDefinition } from "../../lib/core/validate.js";

const TYPE_RULE =
  "type must be SHELL, HTTP, LAMBDA, STEP_FUNCTIONS, CONDITIONS, SWITCH, SUB_WORKFLOW or DEPENDENT";

function rejectionOf(body: unknown): RequestError {
  try {
    parseWorkflowDefinition(body);
  } catch (e) {
    expect(e).toBeInstanceOf(RequestError);
    return e as RequestError;
  }
  throw new Error("expected the body to be rejected");
}

function detailsOf(body: unknown): ErrorDetail[] {
  const e = rejectionOf(body);
  expect(statusOf(e.code)).toBe(400);
  return e.details;
}

const lines = (details: readonly ErrorDetail[]) => details.map((d) => `${d.path}: ${d.message}`);

describe("every problem of a task whose type is missing or unknown", () => {
  it("reports the type, each unknown field with its Shoal name, and each bad common field", () => {
    const details = detailsOf({
      tasks: [
        { code: "a", type: "SHELL", command: "echo a" },
        {
          code: "b",
          taskType: "SHELL",
          rawScript: "echo ${bizdate}",
          failRetryTimes: 3,
          failRetryInterval: 1,
          preTasks: ["a"],
          priority: "URGENT",
          retries: -1,
        },
      ],
    });
    expect(lines(details)).toEqual([
      `tasks[1].type: ${TYPE_RULE}`,
      "tasks[1].priority: must be one of HIGHEST, HIGH, MEDIUM, LOW, LOWEST",
      "tasks[1].retries: must be >= 0",
      "tasks[1].taskType: unknown field 'taskType' (did you mean 'type'?)",
      "tasks[1].rawScript: unknown field 'rawScript' (did you mean 'command'?)",
      "tasks[1].failRetryTimes: unknown field 'failRetryTimes' (did you mean 'retries'?)",
      "tasks[1].failRetryInterval: unknown field 'failRetryInterval' (did you mean 'retryIntervalSeconds'? DolphinScheduler's failRetryInterval is in minutes, Shoal's in seconds)",
      "tasks[1].preTasks: unknown field 'preTasks' (did you mean 'upstream'?)",
    ]);
  });

  it("reports the problems of every task, not only of the first bad one", () => {
    const details = detailsOf({
      tasks: [
        { code: "a", type: "BATCH", command: "x", colour: 1 },
        { code: "b c", type: "SHELL", command: "x", retrys: 2 },
        { task_id: "c", bash_command: "echo", retry_delay: 300 },
      ],
    });
    expect(lines(details)).toEqual([
      `tasks[0].type: ${TYPE_RULE}`,
      "tasks[0].colour: unknown field 'colour'",
      "tasks[1].code: must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$",
      "tasks[1].retrys: unknown field 'retrys' (did you mean 'retries'?)",
      `tasks[2].type: ${TYPE_RULE}`,
      "tasks[2].code: is required",
      "tasks[2].task_id: unknown field 'task_id' (did you mean 'code'?)",
      "tasks[2].bash_command: unknown field 'bash_command' (did you mean 'command'?)",
      "tasks[2].retry_delay: unknown field 'retry_delay' (did you mean 'retryIntervalSeconds'? in seconds)",
    ]);
  });

  it("does not call a field of some task type unknown when the type is missing", () => {
    const details = detailsOf({ tasks: [{ code: "a", url: "http://x/", command: "echo" }] });
    expect(lines(details)).toEqual([`tasks[0].type: ${TYPE_RULE}`]);
  });
});

describe("graph problems in the same answer as the shape problems", () => {
  it("reports duplicate codes and unknown upstreams with the schema's problems, each at its path", () => {
    const details = detailsOf({
      tasks: [
        { code: "extract", type: "SHELL", command: "x", retrys: 2 },
        { code: "extract", type: "SHELL", command: "y" },
        { code: "load", type: "SHEL", command: "z", upstream: ["extract", "extrct"] },
        { code: "report", type: "SHELL", command: 5, upstream: ["load", "load", "report"] },
      ],
    });
    expect(lines(details)).toEqual([
      "tasks[0].retrys: unknown field 'retrys' (did you mean 'retries'?)",
      `tasks[2].type: ${TYPE_RULE} (did you mean SHELL?)`,
      "tasks[3].command: must be a string",
      "tasks[1].code: duplicate task code 'extract' (also tasks[0])",
      "tasks[2].upstream[1]: unknown task code 'extrct'",
      "tasks[3].upstream[1]: 'load' is listed twice",
      "tasks[3].upstream[2]: a task cannot depend on itself",
    ]);
  });

  it("reports a cycle with the shape problems once codes and upstreams are right", () => {
    const details = detailsOf({
      tasks: [
        { code: "a", type: "SHELL", command: "x", upstream: ["b"], colour: 1 },
        { code: "b", type: "SHELL", command: "y", upstream: ["a"] },
      ],
    });
    expect(lines(details)).toEqual([
      "tasks[0].colour: unknown field 'colour'",
      "tasks[0].upstream: cycle: a -> b -> a",
    ]);
  });

  it("reads what it can of a body broken in every way, and never throws anything but the 400", () => {
    const details = detailsOf({
      tasks: [
        null,
        "a",
        7,
        [],
        { code: 7, upstream: "a" },
        { code: "a", upstream: [null, 3, { x: 1 }, "nope"] },
        { code: "a", upstream: { a: 1 } },
        { code: ["a"], upstream: ["a"] },
        { code: "__proto__", upstream: ["constructor", "toString"] },
      ],
    });
    // The schema's problems first, then the graph's: only what the body lets them read.
    expect(lines(details).slice(-4)).toEqual([
      "tasks[6].code: duplicate task code 'a' (also tasks[5])",
      "tasks[5].upstream[3]: unknown task code 'nope'",
      "tasks[8].upstream[0]: unknown task code 'constructor'",
      "tasks[8].upstream[1]: unknown task code 'toString'",
    ]);
    for (const tasks of [undefined, null, "x", 5, {}, [undefined]]) {
      expect(detailsOf({ tasks }).length).toBeGreaterThan(0);
    }
    expect(detailsOf(null).length).toBeGreaterThan(0);
  });

  it("answers 413 for size problems alone, 400 once a graph problem comes with them", () => {
    const big = "x".repeat(70_000);
    const tooLarge = rejectionOf({ tasks: [{ code: "a", type: "SHELL", command: big }] });
    expect(statusOf(tooLarge.code)).toBe(413);
    const both = rejectionOf({
      tasks: [
        { code: "a", type: "SHELL", command: big },
        { code: "a", type: "SHELL", command: "x" },
      ],
    });
    expect(statusOf(both.code)).toBe(400);
    expect(both.details.map((d) => d.path)).toEqual(["tasks[0].command", "tasks[1].code"]);
  });
});

describe("hints on unknown fields", () => {
  it("names the task type a field belongs to", () => {
    const details = detailsOf({
      tasks: [{ code: "a", type: "SHELL", command: "x", url: "http://x/", outputs: {} }],
    });
    expect(lines(details)).toEqual([
      "tasks[0].url: unknown field 'url' (only HTTP tasks have it; this task is SHELL)",
      "tasks[0].outputs: unknown field 'outputs' (only HTTP, LAMBDA and STEP_FUNCTIONS tasks have it; this task is SHELL)",
    ]);
  });

  it("maps DolphinScheduler and Airflow workflow fields, and misspellings of Shoal's", () => {
    const details = detailsOf({
      globalParams: [{ prop: "dt", value: "1" }],
      timeout: 60,
      executionType: "PARALLEL",
      default_args: {},
      descripton: "typo",
      tasks: [{ code: "a", type: "SHELL", command: "x", upstreams: [], timeout_seconds: 5 }],
    });
    expect(lines(details)).toEqual([
      "tasks[0].upstreams: unknown field 'upstreams' (did you mean 'upstream'?)",
      "tasks[0].timeout_seconds: unknown field 'timeout_seconds' (did you mean 'timeoutSeconds'?)",
      "globalParams: unknown field 'globalParams' (did you mean 'params'? a map of name to string value, not DolphinScheduler's list of {prop, value})",
      "timeout: unknown field 'timeout' (did you mean 'timeoutSeconds'? DolphinScheduler's timeout is in minutes, Shoal's in seconds)",
      "executionType: unknown field 'executionType' (DolphinScheduler's executionType is a schedule's 'overlapPolicy' in Shoal: PARALLEL, SERIAL_WAIT, SERIAL_DISCARD or SERIAL_PRIORITY)",
      "default_args: unknown field 'default_args' (Airflow's default_args has no Shoal equivalent: set the fields on each task)",
      "descripton: unknown field 'descripton' (did you mean 'description'?)",
    ]);
  });

  it("gives no hint for a field nothing resembles", () => {
    expect(unknownFieldMessage("colour", { level: "task", fields: ["code", "command"] })).toBe(
      "unknown field 'colour'",
    );
    expect(unknownFieldMessage("size", { level: "workflow", fields: ["tasks", "params"] })).toBe(
      "unknown field 'size'",
    );
  });

  it.each([
    ["taskPriority", "did you mean 'priority'?"],
    ["timeoutNotifyStrategy", "did you mean 'timeoutStrategy'? WARN or FAIL"],
    ["taskGroupId", "did you mean 'taskGroup'? a task group's name, not an id"],
    ["localParams", "did you mean 'params'?"],
    ["priority_weight", "did you mean 'priority'?"],
    ["queue", "did you mean 'workerGroup'?"],
    ["pool", "did you mean 'taskGroup'?"],
    ["execution_timeout", "did you mean 'timeoutSeconds'? in seconds"],
    ["depends_on", "did you mean 'upstream'?"],
    ["dependencies", "did you mean 'upstream'?"],
    ["operator", "did you mean 'type'? SHELL for a BashOperator"],
    ["python_callable", "did you mean 'command'? of a SHELL task that runs the Python code"],
    ["retires", "did you mean 'retries'?"],
    ["Command", "did you mean 'command'?"],
  ])("task field %s → %s", (key, hint) => {
    const fields = ["code", "type", "upstream", "priority", "retries", "retryIntervalSeconds"];
    fields.push("timeoutSeconds", "timeoutStrategy", "workerGroup", "params", "taskGroup");
    fields.push("command");
    expect(unknownFieldMessage(key, { level: "task", fields })).toContain(`(${hint}`);
  });
});

describe("plain messages instead of zod's wording", () => {
  it("says is required, must be a string, must be an object, must be a list", () => {
    const details = detailsOf({
      params: "x",
      tasks: [
        { type: "SHELL", command: "echo" },
        { code: "b", type: "SHELL", command: 5, upstream: "a" },
        null,
        "c",
      ],
    });
    expect(lines(details)).toEqual([
      "params: must be a map of name: value",
      "tasks[0].code: is required",
      "tasks[1].upstream: must be a list",
      "tasks[1].command: must be a string",
      "tasks[2]: must be an object",
      "tasks[3]: must be an object",
    ]);
  });

  it("names DolphinScheduler's numeric task codes and its list of {prop, value}", () => {
    const details = detailsOf({
      params: [{ prop: "dt", value: "1" }],
      tasks: [
        { code: 123456789, type: "SHELL", command: "echo" },
        {
          code: "b",
          type: "SHELL",
          command: "echo",
          upstream: [123456789],
          params: [{ prop: "dt", direct: "IN", type: "VARCHAR", value: "1" }],
        },
      ],
    });
    const numeric = "must be a string (DolphinScheduler's numeric task codes: use the task's name)";
    const list =
      "must be a map of name: value (DolphinScheduler's localParams list of {prop, value} becomes {prop: value})";
    expect(lines(details)).toEqual([
      `params: ${list}`,
      `tasks[0].code: ${numeric}`,
      `tasks[1].upstream[0]: ${numeric}`,
      `tasks[1].params: ${list}`,
    ]);
  });

  it("says an empty idempotency key must not be empty", () => {
    const def = parseWorkflowDefinition({ tasks: [{ code: "a", type: "SHELL", command: "x" }] });
    let details: ErrorDetail[] = [];
    try {
      parseRunRequest({ idempotencyKey: "", startTasks: [7] }, def);
    } catch (e) {
      details = (e as RequestError).details;
    }
    expect(lines(details)).toEqual([
      "startTasks[0]: must be a string (DolphinScheduler's numeric task codes: use the task's name)",
      "idempotencyKey: must not be empty",
    ]);
  });
});

describe("hints on a wrong task type", () => {
  it.each([
    ["SHEL", "did you mean SHELL?"],
    ["shell", "did you mean SHELL?"],
    ["Sub_Workflow", "did you mean SUB_WORKFLOW?"],
    ["SUB_PROCESS", "did you mean SUB_WORKFLOW? DolphinScheduler's SUB_PROCESS"],
    ["PYTHON", "DolphinScheduler's PYTHON has no Shoal type: run the script from a SHELL task"],
  ])("type %s → %s", (type, hint) => {
    const [detail] = detailsOf({ tasks: [{ code: "a", type, command: "echo" }] });
    expect(detail?.path).toBe("tasks[0].type");
    expect(detail?.message).toContain(`${TYPE_RULE} (${hint}`);
  });

  it("gives no hint for a type like none", () => {
    expect(detailsOf({ tasks: [{ code: "a", type: "SPARK", command: "x" }] })).toEqual([
      { path: "tasks[0].type", message: TYPE_RULE },
    ]);
  });
});

describe("hints on DolphinScheduler fields Shoal has no equivalent of", () => {
  it("says so for version, isCache, cpuQuota, memoryMax, taskExecuteType and projectCode", () => {
    const details = detailsOf({
      projectCode: 1,
      version: 3,
      tasks: [
        {
          code: "a",
          type: "SHELL",
          command: "x",
          version: 1,
          isCache: "NO",
          cpuQuota: -1,
          memoryMax: -1,
          taskExecuteType: "BATCH",
          projectCode: 1,
        },
      ],
    });
    const byPath = new Map(details.map((d) => [d.path, d.message]));
    expect(byPath.get("tasks[0].version")).toMatch(
      /^unknown field 'version' \(DolphinScheduler's version has no Shoal field: each change of a workflow is a new version/,
    );
    expect(byPath.get("tasks[0].isCache")).toMatch(
      /\(DolphinScheduler's isCache has no Shoal equivalent: a task runs on every run/,
    );
    for (const key of ["cpuQuota", "memoryMax"]) {
      expect(byPath.get(`tasks[0].${key}`)).toBe(
        `unknown field '${key}' (DolphinScheduler's ${key} has no Shoal equivalent: a task has the resources of the worker that runs it; pick workers with 'workerGroup')`,
      );
    }
    expect(byPath.get("tasks[0].taskExecuteType")).toMatch(
      /\(DolphinScheduler's taskExecuteType \(BATCH or STREAM\) has no Shoal equivalent/,
    );
    expect(byPath.get("tasks[0].projectCode")).toMatch(/Shoal has no projects/);
    expect(byPath.get("projectCode")).toMatch(/Shoal has no projects/);
    expect(byPath.get("version")).toMatch(/^unknown field 'version' \(version is read-only: /);
  });
});
