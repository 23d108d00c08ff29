// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is the parameter syntax of DolphinScheduler and Shoal
/**
 * The DolphinScheduler importer (lib/import/dolphinscheduler/) on the two fixtures written from
 * DolphinScheduler's export format (3.2 and 3.3 key spellings): every mapping, stable and
 * unique names, and every converted definition and schedule valid by the API's validators.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAlertsConfig } from "../../lib/alerts/channels.js";
import { scheduleSchema } from "../../lib/api/schedules.js";
import type { Schedule } from "../../lib/cli/api-types.js";
import { alertRulesOption, createBody, updateBody } from "../../lib/cli/schedule-options.js";
import { checkTiming } from "../../lib/core/schedule-check.js";
import { NAME_PATTERN, parseWithSchema, parseWorkflowDefinition } from "../../lib/core/validate.js";
import { scheduleAlerts } from "../../lib/import/dolphinscheduler/alerts.js";
import {
  type ConvertedWorkflow,
  convertDolphinScheduler,
  type DsConversion,
} from "../../lib/import/dolphinscheduler/convert.js";
import { DsImportError } from "../../lib/import/dolphinscheduler/errors.js";
import type { DsSchedule } from "../../lib/import/dolphinscheduler/export-format.js";
import { switchCondition } from "../../lib/import/dolphinscheduler/logic-tasks.js";
import { asciiSlug, NameScope, shoalName } from "../../lib/import/dolphinscheduler/names.js";
import { NoteBook } from "../../lib/import/dolphinscheduler/notes.js";
import {
  applyOrder,
  outputFiles,
  scheduleCommand,
} from "../../lib/import/dolphinscheduler/report.js";
import { quartzToCron } from "../../lib/import/dolphinscheduler/schedule.js";

const fixture = (v: string): unknown =>
  JSON.parse(
    readFileSync(new URL(`../fixtures/dolphinscheduler/export-${v}.json`, import.meta.url), "utf8"),
  );

type Task = Record<string, unknown> & { code: string; type: string; displayName?: string };
const wfOf = (c: DsConversion, dsName: string): ConvertedWorkflow => {
  const w = c.workflows.find((x) => x.dsName === dsName);
  if (!w) throw new Error(`no workflow ${dsName}`);
  return w;
};
const tasksOf = (w: ConvertedWorkflow) => w.definition.tasks as Task[];
const taskOf = (w: ConvertedWorkflow, dsName: string): Task => {
  const t = tasksOf(w).find((x) => (x.displayName ?? x.code) === dsName);
  if (!t) throw new Error(`no task ${dsName} in ${w.name}`);
  return t;
};
const notesOf = (c: DsConversion, task: string) =>
  c.notes.filter((n) => n.task === task).map((n) => `${n.kind}: ${n.message}`);

const v32 = () => convertDolphinScheduler(fixture("3.2"), { placeholder: true });
const v33 = () => convertDolphinScheduler(fixture("3.3"), { placeholder: true });

describe("names", () => {
  it("keeps a valid name, slugs the ASCII part of any other and adds a hash of the whole text", () => {
    expect(shoalName("load", "task")).toBe("load");
    expect(shoalName("daily_orders.v2", "wf")).toBe("daily_orders.v2");
    expect(shoalName("每日订单汇总", "wf")).toMatch(/^wf-[0-9a-f]{6}$/);
    expect(shoalName("extract 抽取", "task")).toMatch(/^extract-[0-9a-f]{6}$/);
    expect(shoalName("Spark计算 v2", "task")).toMatch(/^spark-v2-[0-9a-f]{6}$/);
    expect(shoalName("每日订单汇总", "wf")).toBe(shoalName("每日订单汇总", "wf"));
    expect(shoalName("每日订单汇总", "wf")).not.toBe(shoalName("每日订单汇", "wf"));
    expect(asciiSlug("x".repeat(80))).toHaveLength(48);
  });

  it("gives two identical names in one scope different names, by code", () => {
    const scope = new NameScope("wf");
    const a = scope.name("报表", "1");
    const b = scope.name("报表", "2");
    expect(a).not.toBe(b);
    expect(b).toBe(`${a}-2`);
    expect(NAME_PATTERN.test(b)).toBe(true);
  });

  it("are the same on every run and unique within the file and each workflow", () => {
    for (const run of [v32, v33]) {
      const a = run();
      const b = run();
      expect(b).toEqual(a);
      const wfNames = a.workflows.map((w) => w.name);
      expect(new Set(wfNames).size).toBe(wfNames.length);
      for (const w of a.workflows) {
        expect(w.name).toMatch(NAME_PATTERN);
        const codes = tasksOf(w).map((t) => t.code);
        expect(new Set(codes).size).toBe(codes.length);
        for (const c of codes) expect(c).toMatch(NAME_PATTERN);
      }
    }
  });
});

describe("every converted definition is valid", () => {
  it.each(["3.2", "3.3"])(
    "%s: passes parseWorkflowDefinition; schedules pass the schedule schema and timing check",
    (v) => {
      const c = convertDolphinScheduler(fixture(v), { placeholder: true });
      expect(c.workflows.length).toBeGreaterThan(0);
      for (const w of c.workflows) {
        expect(() => parseWorkflowDefinition(w.definition)).not.toThrow();
        if (w.schedule) {
          const s = parseWithSchema(scheduleSchema, w.schedule);
          expect(
            checkTiming({
              cron: s.cron,
              timezone: s.timezone ?? "UTC",
              startTime: Date.parse(s.startTime as string),
              endTime: Date.parse(s.endTime as string),
            }),
          ).toEqual([]);
        }
      }
    },
  );
});

describe("3.2 export (processDefinition spelling)", () => {
  const c = v32();
  const main = wfOf(c, "每日订单汇总");
  const child = wfOf(c, "订单子流程");
  const upstreamWf = wfOf(c, "上游装载");

  it("reads the spelling, keeps the original names as displayName and the description", () => {
    expect(c.spellings).toEqual(["3.0-3.2"]);
    expect(main.definition.displayName).toBe("每日订单汇总");
    expect(main.definition.description).toBe("订单日报");
    expect(main.definition.releaseState).toBe("ONLINE");
    expect(main.definition.params).toEqual({ biz_date: "$[yyyyMMdd-1]", env: "prod" });
    expect(main.definition.timezone).toBe("Asia/Shanghai");
    // A task whose name is already valid keeps it and gets no displayName.
    expect(tasksOf(upstreamWf).find((t) => t.code === "load")?.displayName).toBeUndefined();
    expect(taskOf(main, "准备数据").description).toBe("准备当日订单数据");
  });

  it("SHELL: script, IN params, retries (min → s), timeout (min → s, WARNFAILED → FAIL), delay, priority, task group", () => {
    const t = taskOf(main, "准备数据");
    expect(t.type).toBe("SHELL");
    expect(t.command).toBe(
      "sleep 60 # DolphinScheduler delayTime: 1 min\ncat > script.sh <<'SHOAL_BASH_EOF'\necho \"biz_date=${biz_date} table=${table}\"\necho '${setValue(row_count=150)}'\nSHOAL_BASH_EOF\nbash script.sh",
    );
    expect(
      c.notes.filter(
        (n) =>
          n.workflow === main.name &&
          /^runs with bash: the worker needs bash \(the \d+ SHELL tasks' scripts are written to script.sh/.test(
            n.message,
          ),
      ),
    ).toHaveLength(1);
    expect(t.params).toEqual({ table: "orders" });
    expect(t).toMatchObject({
      retries: 2,
      retryIntervalSeconds: 300,
      priority: "HIGH",
      timeoutSeconds: 30 * 60 + 60,
    });
    expect(t.timeoutStrategy).toBeUndefined();
    expect(t).toMatchObject({ taskGroup: "ds-task-group-2", taskGroupPriority: 1 });
    expect(t.upstream).toBeUndefined();
    expect(notesOf(c, t.code).join("\n")).toMatch(/shoal task-group put ds-task-group-2/);
    expect(notesOf(c, t.code).join("\n")).toMatch(/delayTime 1 min/);
    // WARNFAILED: DolphinScheduler's timeout alert becomes the schedule's TASK_RETRY_EXHAUSTED rule.
    expect(notesOf(c, t.code).join("\n")).toMatch(
      /approximated: timeout WARNFAILED: the timeout fails the task, as in DolphinScheduler; .*TASK_RETRY_EXHAUSTED to ds-alert-group-1/,
    );
  });

  it("CONDITIONS: successNode/failedNode as successNext/failedNext, upstream from the relations", () => {
    const t = taskOf(main, "检查结果");
    expect(t).toMatchObject({
      type: "CONDITIONS",
      upstream: [taskOf(main, "准备数据").code],
      successNext: [taskOf(main, "环境分支").code],
      failedNext: [taskOf(main, "失败通知").code],
    });
    expect(notesOf(c, t.code)).toEqual([]);
  });

  it("SWITCH: JavaScript conditions as CEL over parameters, default branch", () => {
    const t = taskOf(main, "环境分支");
    expect(t.type).toBe("SWITCH");
    expect(t.cases).toEqual([
      { condition: 'env == "prod"', next: taskOf(main, "生产汇总子流程").code },
      { condition: "row_count > 100", next: taskOf(main, "等待上游").code },
    ]);
    expect(t.defaultNext).toBe(taskOf(main, "Python 统计").code);
  });

  it("SUB_PROCESS: the child's Shoal name; local params and the parent's global params as startup params", () => {
    const t = taskOf(main, "生产汇总子流程");
    expect(t).toMatchObject({ type: "SUB_WORKFLOW", workflow: child.name, priority: "HIGHEST" });
    expect(t.params).toEqual({ mode: "full", biz_date: "${biz_date}", env: "${env}" });
  });

  it("HTTP: query, header and BODY parameters, custom status, timeouts (ms), OUT as the whole response", () => {
    const t = taskOf(main, "失败通知");
    expect(t).toMatchObject({
      type: "HTTP",
      url: "https://hooks.example.com/notify?channel=ops%20team",
      method: "POST",
      headers: { "X-Source": "dolphinscheduler", "Content-Type": "application/json" },
      body: '{"message":"orders failed for ${biz_date}"}',
      expectStatus: [202, 202],
      outputs: { response: "$" },
      timeoutSeconds: 30,
      retries: 3,
      retryIntervalSeconds: 60,
      priority: "LOW",
    });
  });

  it("HTTP: a BODY_CONTAINS check is noted; a used `<name>.response` becomes an output of the whole response", () => {
    const ping = taskOf(child, "ping");
    expect(ping).toMatchObject({
      type: "HTTP",
      expectStatus: [200, 200],
      outputs: { "ping.response": "$" },
      timeoutSeconds: 120,
    });
    expect(ping.headers).toBeUndefined();
    expect(notesOf(c, "ping").join("\n")).toMatch(/BODY_CONTAINS 'ok'/);
    expect(taskOf(child, "汇总").upstream).toEqual(["ping"]);
  });

  it("DEPENDENT: in-file items by Shoal name (task by code), out-of-file kept and reported", () => {
    const t = taskOf(main, "等待上游");
    expect(t).toMatchObject({ type: "DEPENDENT", checkIntervalSeconds: 30, timeoutSeconds: 7200 });
    expect(t.dependence).toEqual({
      relation: "AND",
      groups: [
        {
          relation: "OR",
          items: [
            { workflow: upstreamWf.name, cycle: "day", dateValue: "last1Days" },
            { workflow: upstreamWf.name, task: "load", cycle: "hour", dateValue: "currentHour" },
          ],
        },
        {
          relation: "AND",
          items: [
            {
              workflow: "ds-workflow-13999999999999",
              task: "ds-task-13999999999901",
              cycle: "week",
              dateValue: "lastWeek",
            },
          ],
        },
      ],
    });
    const external = c.notes.filter((n) => n.kind === "external");
    expect(external).toHaveLength(1);
    expect(external[0]?.message).toMatch(/workflow code 13999999999999/);
  });

  it("PYTHON: a SHELL task running python3 on the script; a non-ASCII worker group gets an ASCII name", () => {
    const t = taskOf(main, "Python 统计");
    expect(t.type).toBe("SHELL");
    expect(t.command).toBe(
      "cat > script.py <<'SHOAL_PYTHON_EOF'\nimport sys\nprint('rows for ${biz_date}')\nsys.exit(0)\nSHOAL_PYTHON_EOF\npython3 script.py",
    );
    expect(t.workerGroup).toMatch(/^gpu-[0-9a-f]{6}$/);
    expect(t.priority).toBe("LOWEST");
  });

  it("SQL and SPARK: failing SHELL placeholders with --placeholder, listed as unsupported", () => {
    expect(c.unsupported.map((u) => `${u.task}:${u.type}`)).toEqual([
      "加载到数仓:SQL",
      "spark计算:SPARK",
    ]);
    const sql = taskOf(main, "加载到数仓");
    expect(sql.type).toBe("SHELL");
    expect(sql.command).toMatch(
      /^echo 'shoal import: this DolphinScheduler SQL task \(加载到数仓\) has no Shoal equivalent.*' >&2\nexit 1\n/,
    );
    expect(sql.command).toMatch(/# +"sql": "insert into dw.orders/);
    expect(sql.upstream).toEqual([taskOf(main, "生产汇总子流程").code]);
  });

  it("a disabled task (flag NO) exits 0 first, its script kept", () => {
    expect(taskOf(main, "停用的任务").command).toMatch(
      /^# Disabled in DolphinScheduler.*\nexit 0\ncat > script.sh <<'SHOAL_BASH_EOF'\necho never runs\nSHOAL_BASH_EOF\nbash script.sh$/,
    );
  });

  it("schedule: Quartz → cron (day of week 2-6 → 1-5), zone, start/end in that zone, priority, strategy, overlap, OFFLINE", () => {
    expect(main.schedule).toEqual({
      workflow: main.name,
      cron: "30 2 * * 1-5",
      timezone: "Asia/Shanghai",
      startTime: "2024-04-30T16:00:00.000Z",
      endTime: "2124-04-30T16:00:00.000Z",
      priority: "HIGH",
      failureStrategy: "CONTINUE",
      overlapPolicy: "SERIAL_WAIT",
      state: "OFFLINE",
      // warningType FAILURE to alert group 1, and 准备数据's WARNFAILED timeout alert.
      alerts: [
        { on: ["FAILURE"], channels: ["ds-alert-group-1"] },
        { on: ["TASK_RETRY_EXHAUSTED"], channels: ["ds-alert-group-1"] },
      ],
    });
    // warningType NONE, warningGroupId 0, and a FAILED timeout: no rule.
    expect(upstreamWf.schedule?.alerts).toBeUndefined();
    expect(c.alertGroups).toEqual([{ id: 1, channel: "ds-alert-group-1", workflows: [main.name] }]);
    expect(upstreamWf.schedule).toMatchObject({
      cron: "0 1 * * *",
      timezone: "UTC",
      overlapPolicy: "SERIAL_PRIORITY",
    });
    expect(child.schedule).toBeUndefined();
    expect(
      c.notes.some(
        (n) => n.workflow === child.name && /SERIAL_DISCARD.*no schedule/.test(n.message),
      ),
    ).toBe(true);
    expect(
      c.notes.find((n) => n.workflow === main.name && /workflow timeout 120 min/.test(n.message))
        ?.message,
    ).toContain(
      "A TIMEOUT alert needs the workflow's timeoutSeconds, which also fails the instance at that time (nothing new starts, it ends FAILURE): to have both, add `timeoutSeconds: 7200` and `alerts: [{ on: [TIMEOUT], channels: [ds-alert-group-1] }]`",
    );
  });

  it("--server-timezone reads start/end in the server's zone", () => {
    const s = convertDolphinScheduler(fixture("3.2"), { placeholder: true, serverTimezone: "UTC" });
    expect(wfOf(s, "每日订单汇总").schedule?.startTime).toBe("2024-05-01T00:00:00.000Z");
  });
});

describe("3.3 export (workflowDefinition spelling)", () => {
  const c = v33();
  const main = wfOf(c, "数据同步");
  const sub = wfOf(c, "同步子任务");

  it("reads the 3.3 spelling: SUB_WORKFLOW by workflowDefinitionCode, taskParams as a string, workflowInstancePriority", () => {
    expect(c.spellings).toEqual(["3.3"]);
    expect(taskOf(main, "同步子任务")).toMatchObject({
      type: "SUB_WORKFLOW",
      workflow: sub.name,
      params: { biz_date: "${biz_date}", region: "${region}" },
    });
    expect(notesOf(c, taskOf(main, "拉取接口").code).join("\n")).toMatch(
      /'拉取接口.response' is not a Shoal parameter name/,
    );
    expect(taskOf(main, "路由")).toMatchObject({
      cases: [{ condition: "region == 'cn'", next: taskOf(main, "同步子任务").code }],
      defaultNext: taskOf(main, "跨项目依赖").code,
    });
    expect(main.schedule).toMatchObject({
      cron: "0/15 8-18 * * MON-FRI",
      timezone: "Europe/Paris",
      startTime: "2025-12-31T23:00:00.000Z",
      priority: "HIGH",
      overlapPolicy: "SERIAL_PRIORITY",
    });
  });

  it("CONDITIONS on one upstream's FAILURE swaps the branches; HTTP WARN timeout; DEPENDENT ALL tasks and thisMonthEnd", () => {
    expect(taskOf(main, "判断")).toMatchObject({
      successNext: [],
      failedNext: [taskOf(main, "告警").code],
    });
    expect(taskOf(main, "拉取接口")).toMatchObject({
      url: "https://api.example.com/v1/orders?date=${biz_date}",
      expectStatus: [200, 200],
      timeoutSeconds: 600,
      timeoutStrategy: "WARN",
    });
    const dep = taskOf(main, "跨项目依赖");
    expect(dep.dependence).toEqual({
      relation: "AND",
      groups: [
        {
          relation: "AND",
          items: [
            { workflow: "ds-workflow-23999999999999", cycle: "month", dateValue: "thisMonth" },
          ],
        },
      ],
    });
    expect(notesOf(c, dep.code).join("\n")).toMatch(/thisMonthEnd/);
  });

  it("--project keeps one project's workflows; a Quartz year becomes start and end", () => {
    const a = convertDolphinScheduler(fixture("3.3"), { project: "22000000000001" });
    expect(a.workflows.map((w) => w.dsName)).toEqual(["数据同步", "同步子任务"]);
    const b = convertDolphinScheduler(fixture("3.3"), {
      project: "22000000000002",
      placeholder: true,
    });
    expect(b.workflows[0]?.schedule).toMatchObject({
      cron: "0 6 L * *",
      timezone: "America/New_York",
      startTime: "2026-01-01T05:00:00.000Z",
      endTime: "2027-01-01T04:59:59.000Z",
    });
  });
});

describe("bad input", () => {
  const err = (doc: unknown, opts = {}) => {
    try {
      convertDolphinScheduler(doc, opts);
    } catch (e) {
      expect(e).toBeInstanceOf(DsImportError);
      return (e as Error).message;
    }
    throw new Error("no error");
  };
  const el = (over: Record<string, unknown> = {}) => ({
    processDefinition: { code: 1, name: "坏的", projectCode: 9, globalParams: "[]" },
    processTaskRelationList: [{ preTaskCode: 0, postTaskCode: 11 }],
    taskDefinitionList: [
      { code: 11, name: "a", taskType: "SHELL", taskParams: { rawScript: "true" } },
    ],
    ...over,
  });

  it("names what is wrong", () => {
    expect(err("x")).toMatch(/expected a JSON array/);
    expect(err([])).toMatch(/holds no workflow/);
    expect(err([{ foo: 1 }])).toMatch(
      /element 1: has neither processDefinition.*nor workflowDefinition/,
    );
    expect(err([el({ taskDefinitionList: [] })])).toBe(
      "workflow '坏的': has no tasks (taskDefinitionList is empty or missing)",
    );
    expect(
      err([
        el({
          processTaskRelationList: [
            { preTaskCode: 0, postTaskCode: 11 },
            { preTaskCode: 77, postTaskCode: 11 },
          ],
        }),
      ]),
    ).toBe("workflow '坏的': task 'a' has an unknown upstream task code 77");
    expect(
      err([
        el({
          taskDefinitionList: [{ code: 11, name: "a", taskType: "SHELL", taskParams: "{oops" }],
        }),
      ]),
    ).toMatch(/workflow '坏的', task 'a': taskParams: not JSON/);
    expect(err(fixture("3.3"), { project: "P" })).toMatch(
      /no workflow of project 'P'.*22000000000001: 2 workflows; 22000000000002: 1 workflow/,
    );
  });

  it("input the validator refuses names the DolphinScheduler workflow and task", () => {
    const cyclic = el({
      processTaskRelationList: [
        { preTaskCode: 11, postTaskCode: 12 },
        { preTaskCode: 12, postTaskCode: 11 },
      ],
      taskDefinitionList: [
        { code: 11, name: "甲", taskType: "SHELL", taskParams: { rawScript: "true" } },
        { code: 12, name: "乙", taskType: "HTTP", taskParams: { url: "not a url" } },
      ],
    });
    const message = err([cyclic]);
    expect(message).toMatch(/^workflow '坏的': cannot be converted: /);
    expect(message).toContain("task '乙' url: must be an http(s) URL");
  });

  it("without --placeholder, unsupported task types stop the import, each named", () => {
    expect(err(fixture("3.2"))).toBe(
      "2 tasks have types Shoal does not have (workflow / task: type):\n  每日订单汇总 / 加载到数仓: SQL\n  每日订单汇总 / spark计算: SPARK\nnothing written; with --placeholder each becomes a SHELL task that fails saying what to replace",
    );
  });
});

describe("Quartz cron and switch conditions", () => {
  it.each([
    ["0 0 * * * ? *", "0 * * * *"],
    ["0 30 2 ? * 2-6 *", "30 2 * * 1-5"],
    ["15 0/5 * * * ?", "15 0/5 * * * *"],
    ["0 0 12 ? * 6#3", "0 12 * * 5#3"],
    ["0 0 12 ? * 6L", "0 12 * * 5L"],
    ["0 0 12 ? * 1,7", "0 12 * * 0,6"],
    ["0 0 12 ? * SUN-SAT", "0 12 * * SUN-SAT"],
    ["0 0 0 L * ?", "0 0 L * *"],
  ])("%s → %s", (quartz, cron) => {
    expect(quartzToCron(quartz)).toEqual({ cron });
  });

  it("a year range limits the years; bad shapes say why", () => {
    expect(quartzToCron("0 0 1 * * ? 2026-2027")).toEqual({
      cron: "0 1 * * *",
      years: { from: 2026, to: 2027 },
    });
    expect(quartzToCron("0 0 1 * *")).toEqual({
      problem: "'0 0 1 * *' is not a Quartz cron of 6 or 7 fields",
    });
    expect(quartzToCron("0 0 1 * * ? 2026/2")).toMatchObject({
      problem: expect.stringMatching(/year field/),
    });
  });

  it("switch conditions: pasted ${x} (quoted or not) become CEL variables", () => {
    expect(switchCondition('"${env}" == "prod"')).toBe('env == "prod"');
    expect(switchCondition("${rows} > 100 && ${rows} !== 0")).toBe("rows > 100 && rows != 0");
    expect(switchCondition("${system.biz.date} === '20260101'")).toBe(
      "params[\"system.biz.date\"] == '20260101'",
    );
    expect(switchCondition("${x}.length > 3 ||")).toBeUndefined();
  });
});

describe("output files", () => {
  it("one YAML per workflow, schedules.sh with shoal schedule create, and the report", () => {
    const c = v32();
    const files = outputFiles(c, "export-3.2.json");
    expect(files.map((f) => f.path)).toEqual([
      ...c.workflows.map((w) => `${w.name}.yaml`),
      "schedules.sh",
      "import-report.md",
    ]);
    const main = wfOf(c, "每日订单汇总");
    expect(scheduleCommand(main.schedule as Record<string, unknown>)).toBe(
      `shoal schedule create ${main.name} --cron '30 2 * * 1-5' --timezone Asia/Shanghai --start 2024-04-30T16:00:00.000Z --end 2124-04-30T16:00:00.000Z --priority HIGH --failure-strategy CONTINUE --overlap SERIAL_WAIT --alerts '[{"on":["FAILURE"],"channels":["ds-alert-group-1"]},{"on":["TASK_RETRY_EXHAUSTED"],"channels":["ds-alert-group-1"]}]' --offline`,
    );
    const report = files.find((f) => f.path === "import-report.md")?.content ?? "";
    for (const heading of [
      "## Workflows",
      "## Unsupported task types",
      "## References to workflows outside the file",
      "## Approximated",
      "## Not converted",
    ]) {
      expect(report).toContain(heading);
    }
    expect(report).toContain("| 每日订单汇总 |");
    // Sub-workflows first: the child before the workflow that runs it.
    const order = applyOrder(c.workflows);
    expect(order.indexOf(wfOf(c, "订单子流程").name)).toBeLessThan(order.indexOf(main.name));
    expect(report).toContain(order.map((n) => `   shoal apply -f ${n}.yaml`).join("\n"));
  });
});

describe("alerts: warningType and warningGroupId as the schedule's rules", () => {
  const schedule = (fields: Partial<DsSchedule>): DsSchedule => ({
    crontab: "0 0 1 * * ? *",
    timezoneId: "UTC",
    startTime: "",
    endTime: "",
    failureStrategy: "END",
    warningType: "NONE",
    warningGroupId: 0,
    releaseState: "OFFLINE",
    priority: "MEDIUM",
    workerGroup: "default",
    tenantCode: "default",
    environmentCode: "-1",
    ...fields,
  });
  const rulesOf = (fields: Partial<DsSchedule>, taskTimeoutAlerts = false) => {
    const notes = new NoteBook("w");
    const rules = scheduleAlerts(schedule(fields), notes, taskTimeoutAlerts);
    return { rules, notes: notes.notes.map((n) => `${n.kind}: ${n.message}`) };
  };

  it("NONE, SUCCESS, FAILURE, ALL (also as codes) to the channel ds-alert-group-<id>", () => {
    expect(rulesOf({ warningType: "NONE", warningGroupId: 4 })).toEqual({ rules: [], notes: [] });
    expect(rulesOf({ warningType: "SUCCESS", warningGroupId: 4 }).rules).toEqual([
      { on: ["SUCCESS"], channels: ["ds-alert-group-4"] },
    ]);
    expect(rulesOf({ warningType: "FAILURE", warningGroupId: 4 }).rules).toEqual([
      { on: ["FAILURE"], channels: ["ds-alert-group-4"] },
    ]);
    expect(rulesOf({ warningType: "ALL", warningGroupId: 4 }).rules).toEqual([
      { on: ["SUCCESS", "FAILURE", "STOPPED"], channels: ["ds-alert-group-4"] },
    ]);
    expect(rulesOf({ warningType: "3", warningGroupId: 4 }).rules).toEqual([
      { on: ["SUCCESS", "FAILURE", "STOPPED"], channels: ["ds-alert-group-4"] },
    ]);
  });

  it("a task's timeout alert goes to the group whatever the warningType; no group: no rule, noted", () => {
    expect(rulesOf({ warningType: "NONE", warningGroupId: 7 }, true).rules).toEqual([
      { on: ["TASK_RETRY_EXHAUSTED"], channels: ["ds-alert-group-7"] },
    ]);
    expect(rulesOf({ warningType: "FAILURE", warningGroupId: 0 }, true)).toEqual({
      rules: [],
      notes: [
        "not-converted: schedule warningType FAILURE without an alert group (warningGroupId 0): DolphinScheduler sends these alerts nowhere; no rule",
      ],
    });
    expect(rulesOf({ warningType: "GLOBAL", warningGroupId: 2 }).notes[0]).toMatch(
      /^not-converted: schedule warningType GLOBAL .*no Shoal rule/,
    );
  });

  it("3.3 fixture: ALL to group 3, a WARN timeout noted, GLOBAL noted; the rules pass the schedule schema", () => {
    const c = v33();
    const main = wfOf(c, "数据同步");
    expect(main.schedule?.alerts).toEqual([
      { on: ["SUCCESS", "FAILURE", "STOPPED"], channels: ["ds-alert-group-3"] },
    ]);
    expect(parseWithSchema(scheduleSchema, main.schedule).alerts).toEqual(main.schedule?.alerts);
    expect(notesOf(c, taskOf(main, "拉取接口").code).join("\n")).toMatch(
      /approximated: timeout WARN: the task goes on after its timeout .*Shoal has no alert for a task's timeout warning \(DolphinScheduler alerts alert group 3\)/,
    );
    const other = wfOf(c, "other project 报表");
    expect(other.schedule?.alerts).toBeUndefined();
    expect(c.notes.some((n) => n.workflow === other.name && /GLOBAL/.test(n.message))).toBe(true);
    expect(c.alertGroups).toEqual([{ id: 3, channel: "ds-alert-group-3", workflows: [main.name] }]);
  });

  it("the report lists each alert group to configure, with an alerts-file snippet standalone accepts", () => {
    const c = v32();
    const report = outputFiles(c, "export-3.2.json").find((f) => f.path === "import-report.md")
      ?.content as string;
    const todo = report.split("## To do before running")[1]?.split("\n## ")[0] ?? "";
    expect(todo).toContain(
      `- alert group 1 (the schedule of \`${wfOf(c, "每日订单汇总").name}\`): configure the alert channel \`ds-alert-group-1\``,
    );
    const snippet = /```yaml\n([\s\S]*?)\n {2}```/.exec(todo)?.[1] as string;
    const config = parseAlertsConfig(snippet.replace(/^ {2}/gm, ""), "snippet");
    expect(Object.keys(config.channels)).toEqual(["ds-alert-group-1"]);
  });
});

describe("shoal schedule create/update --alerts (the flag schedules.sh uses)", () => {
  const rules = [{ on: ["FAILURE"], channels: ["ds-alert-group-1"] }];

  it("reads JSON or YAML, inline or from @FILE; refuses what is not a list", () => {
    expect(alertRulesOption(JSON.stringify(rules))).toEqual(rules);
    expect(alertRulesOption("[{on: [FAILURE], channels: [ds-alert-group-1]}]")).toEqual(rules);
    const file = join(mkdtempSync(join(tmpdir(), "shoal-alerts-opt-")), "rules.yaml");
    writeFileSync(file, "- on: [FAILURE]\n  channels: [ds-alert-group-1]\n");
    expect(alertRulesOption(`@${file}`)).toEqual(rules);
    expect(() => alertRulesOption("@/nonexistent/rules.json")).toThrow(
      /cannot read \/nonexistent\/rules.json: no such file/,
    );
    expect(() => alertRulesOption('{"on": ["FAILURE"]}')).toThrow(/must be a list of rules/);
    expect(() => alertRulesOption("[{")).toThrow(/not JSON or YAML/);
  });

  it("create sends them; update keeps the schedule's rules unless --alerts replaces them ([] removes)", () => {
    expect(createBody("etl", { cron: "0 2 * * *", alerts: rules })).toEqual({
      workflow: "etl",
      cron: "0 2 * * *",
      alerts: rules,
    });
    const current = {
      id: "s-1",
      workflow: "etl",
      cron: "0 2 * * *",
      timezone: "UTC",
      params: {},
      misfirePolicy: "FIRE_ONCE",
      misfireThresholdSeconds: 60,
      maxCatchup: 100,
      overlapPolicy: "PARALLEL",
      state: "ONLINE",
      alerts: rules,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
    } as Schedule;
    expect(updateBody(current, { priority: "LOW" }).alerts).toEqual(rules);
    const other = [{ on: ["SUCCESS"], channels: ["ops"] }];
    expect(updateBody(current, { alerts: other }).alerts).toEqual(other);
    expect(updateBody(current, { alerts: [] }).alerts).toEqual([]);
  });
});

describe("docs/import-dolphinscheduler.md's worked example", () => {
  it("is what the importer writes for test/fixtures/dolphinscheduler/example-doc.json", () => {
    const doc = readFileSync(
      new URL("../../docs/import-dolphinscheduler.md", import.meta.url),
      "utf8",
    );
    const example = doc.split("## 2. A worked example")[1]?.split("\n## 3. ")[0] ?? "";
    const input = readFileSync(
      new URL("../fixtures/dolphinscheduler/example-doc.json", import.meta.url),
      "utf8",
    ).trimEnd();
    expect(example).toContain(`\`\`\`json\n${input}\n\`\`\``);
    const c = convertDolphinScheduler(JSON.parse(input));
    const files = outputFiles(c, "daily-report.json");
    const text = (path: string) => files.find((f) => f.path === path)?.content ?? "";
    const w = c.workflows[0] as ConvertedWorkflow;
    expect(example).toContain(`\`\`\`yaml\n${text(`${w.name}.yaml`)}\`\`\``);
    expect(example).toContain(`\`\`\`sh\n${scheduleCommand(w.schedule ?? {})}\n\`\`\``);
    const report = text("import-report.md");
    const from = report.slice(
      report.indexOf("## To do before running"),
      report.indexOf("\n## Next steps"),
    );
    expect(example).toContain(`\`\`\`\`markdown\n${from.trimEnd()}\n\`\`\`\``);
  });
});
