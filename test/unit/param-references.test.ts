// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} in plain strings is the syntax under test
/**
 * Warnings for `${name}` references nothing in a definition can set (a typo such as
 * `${bizdat}` silently stays as written, and a shell then reads an unset variable).
 */
import { describe, expect, it } from "vitest";
import type { WorkflowDefinition } from "../../lib/core/model.js";
import { BUILTIN_PARAM_NAMES, unresolvedParamReferences } from "../../lib/core/param-references.js";
import { builtinParams } from "../../lib/core/time-params.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";

const def = (body: Record<string, unknown>): WorkflowDefinition => parseWorkflowDefinition(body);
const shell = (code: string, command: string, extra: Record<string, unknown> = {}) => ({
  code,
  type: "SHELL",
  command,
  ...extra,
});
const warnings = (body: Record<string, unknown>) =>
  unresolvedParamReferences(def(body)).map((w) => `${w.path}: ${w.message}`);

describe("unresolvedParamReferences", () => {
  it("warns about a typo in a SHELL command, naming the parameter it resembles", () => {
    expect(
      warnings({
        params: { bizdate: "$[yyyyMMdd-1]" },
        tasks: [shell("a", "echo ${bizdat}")],
      }),
    ).toEqual([
      "tasks[0].command: ${bizdat} is not a global, local or built-in parameter, nor an OUT parameter of an upstream task; unless the run's parameters set it, it stays as written and the shell reads an unset variable (did you mean ${bizdate}?)",
    ]);
  });

  it("accepts global, local and built-in parameters, and references inside $[…]", () => {
    expect(
      warnings({
        params: { day: "$[yyyyMMdd-${lag}]", lag: "1" },
        tasks: [
          shell("a", "echo ${day} ${table} ${system.biz.date} ${system.task.instance.attempt}", {
            params: { table: "orders", path: "/d/${day}/${table}" },
          }),
        ],
      }),
    ).toEqual([]);
  });

  it("accepts the OUT parameters of ancestors, and only of ancestors", () => {
    const body = {
      tasks: [
        shell("a", "echo '${setValue(rows=12)}'; echo \"#{setValue( size = 3 )}\""),
        {
          code: "h",
          type: "HTTP",
          url: "http://127.0.0.1:9/x",
          outputs: { id: "$.id" },
        },
        shell("b", "echo ${rows} ${size}", { upstream: ["a"] }),
        shell("c", "echo ${rows} ${id}", { upstream: ["b"] }),
        {
          code: "d",
          type: "HTTP",
          url: "http://127.0.0.1:9/${id}?n=${rows}",
          upstream: ["a"],
        },
      ],
    };
    expect(warnings(body)).toEqual([
      "tasks[3].command: ${id} is not a global, local or built-in parameter, nor an OUT parameter of an upstream task (task 'h' sets it, but is not upstream of this task); unless the run's parameters set it, it stays as written and the shell reads an unset variable",
      "tasks[4].url: ${id} is not a global, local or built-in parameter, nor an OUT parameter of an upstream task (task 'h' sets it, but is not upstream of this task); unless the run's parameters set it, it stays as written",
    ]);
  });

  it("does not warn below an ancestor whose OUT parameters cannot be known", () => {
    const body = {
      tasks: [
        shell("a", 'name=rows; echo "#{setValue(${name}=1)}"'),
        shell("b", "echo ${anything}", { upstream: ["a"] }),
        shell("c", "echo ${other}"),
      ],
    };
    expect(warnings(body).map((w) => w.split(":")[0])).toEqual(["tasks[2].command"]);
  });

  it("checks HTTP headers and body, LAMBDA payloads, STEP_FUNCTIONS input and names, params", () => {
    const body = {
      params: { ok: "1", g: "${nope1}" },
      tasks: [
        {
          code: "h",
          type: "HTTP",
          url: "http://127.0.0.1:9/${ok}",
          method: "POST",
          headers: { "x-a": "${nope2}" },
          body: '{"a": "${nope3}"}',
          params: { l: "${nope4}" },
        },
        {
          code: "l",
          type: "LAMBDA",
          functionName: "f",
          payload: '{"n": ${nope5}}',
        },
        {
          code: "s",
          type: "STEP_FUNCTIONS",
          stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:m",
          input: '{"d": "$[yyyyMMdd-${nope6}]"}',
          executionName: "run-${nope7}",
        },
        { code: "sub", type: "SUB_WORKFLOW", workflow: "child", params: { x: "${nope8}" } },
      ],
    };
    expect(unresolvedParamReferences(def(body)).map((w) => w.path)).toEqual([
      "params.g",
      "tasks[0].headers.x-a",
      "tasks[0].body",
      "tasks[0].params.l",
      "tasks[1].payload",
      "tasks[2].input",
      "tasks[2].executionName",
      "tasks[3].params.x",
    ]);
  });

  it("leaves the shell's own variables alone in a SHELL command", () => {
    const body = {
      params: { region: "eu", "system.x": "1" },
      tasks: [
        shell(
          "a",
          [
            "export OUT=/tmp; for f in a b; do echo ${f}; done",
            "n=1; echo ${n} ${HOME} ${PATH} ${SHOAL_INSTANCE_DIR} ${JAVA_HOME}",
            "read -r line; echo ${line}; echo ${system_biz_date} ${system_x}",
          ].join("\n"),
        ),
        shell("b", "echo ${REGOIN} ${Region}"),
      ],
    };
    expect(
      warnings(body).map((w) => w.replace(/ is not .*\(did you mean/, " … (did you mean")),
    ).toEqual([
      "tasks[1].command: ${REGOIN} … (did you mean ${region}?)",
      "tasks[1].command: ${Region} … (did you mean ${region}?)",
    ]);
  });

  it("checks a global parameter's value against every task's parameters", () => {
    const body = {
      params: { path: "/d/${table}/${nope}" },
      tasks: [shell("a", "echo ${path}", { params: { table: "t" } })],
    };
    expect(warnings(body).map((w) => w.split(":")[0])).toEqual(["params.path"]);
    expect(warnings(body)[0]).toContain("${nope}");
  });

  it("analyses 10,000 tasks in a chain in linear time", () => {
    const tasks = Array.from({ length: 10_000 }, (_, i) =>
      shell(`t${i}`, i === 0 ? "echo '${setValue(rows=1)}'" : `echo ${"${rows}"} ${"${nope}"}`, {
        upstream: i > 0 ? [`t${i - 1}`] : [],
      }),
    );
    const parsed = def({ tasks });
    const started = performance.now();
    const found = unresolvedParamReferences(parsed);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(found).toHaveLength(9_999);
    expect(found.every((w) => w.message.startsWith("${nope}"))).toBe(true);
  });

  it("checks the parameters SWITCH conditions read, except those they test for", () => {
    const body = {
      params: { threshold: "100" },
      tasks: [
        shell("count", "echo '${setValue(rows=12)}'"),
        shell("other", "echo '${setValue(late=1)}'"),
        {
          code: "route",
          type: "SWITCH",
          upstream: ["count"],
          cases: [
            { condition: "rowz > threshold", next: "big" },
            { condition: 'params["system.biz.dat"] >= "20260101" || late == "1"', next: "big" },
            { condition: '"override" in params && params.override == "yes"', next: "big" },
            { condition: 'has(params.flag) && params.flag == "1" && rows > 0', next: "big" },
            { condition: "[1, 2].exists(k, k == rows) && size(params) > 0", next: "big" },
          ],
          defaultNext: "small",
        },
        shell("big", "true", { upstream: ["route"] }),
        shell("small", "true", { upstream: ["route"] }),
      ],
    };
    expect(warnings(body)).toEqual([
      `tasks[2].cases[0].condition: rowz is not a global, local or built-in parameter, nor an OUT parameter of an upstream task; unless the run's parameters set it, the SWITCH fails when it evaluates this case (did you mean rows?)`,
      `tasks[2].cases[1].condition: system.biz.dat is not a global, local or built-in parameter, nor an OUT parameter of an upstream task; unless the run's parameters set it, the SWITCH fails when it evaluates this case (did you mean system.biz.date?)`,
      `tasks[2].cases[1].condition: late is not a global, local or built-in parameter, nor an OUT parameter of an upstream task (task 'other' sets it, but is not upstream of this task); unless the run's parameters set it, the SWITCH fails when it evaluates this case`,
    ]);
  });

  it("reports a name once per field", () => {
    expect(warnings({ tasks: [shell("a", "echo ${x} ${x} ${y}")] })).toHaveLength(2);
  });

  it("knows every built-in parameter", () => {
    const all = builtinParams({
      baseMs: 0,
      workflow: "w",
      instanceId: "i",
      taskCode: "t",
      attempt: 1,
    });
    expect([...BUILTIN_PARAM_NAMES].sort()).toEqual(Object.keys(all).sort());
  });
});
