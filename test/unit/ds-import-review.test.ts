// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is the parameter syntax of DolphinScheduler and Shoal
/**
 * The DolphinScheduler importer's answers to review findings: SHELL scripts run with bash (the
 * command bash reads, parameters pasted as DolphinScheduler pastes them), plain-text
 * credentials flagged with their replacement, sub-workflow cycles, the timezone note of an
 * unconverted schedule, file names unique ignoring case, and schedules.sh's npx fallback.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { substitute } from "../../lib/core/params.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";
import {
  convertDolphinScheduler,
  type DsConversion,
} from "../../lib/import/dolphinscheduler/convert.js";
import { subWorkflowCycles } from "../../lib/import/dolphinscheduler/cycles.js";
import { fileNames, outputFiles } from "../../lib/import/dolphinscheduler/report.js";

let nextCode = 15000000000000;
interface TaskSpec {
  name: string;
  type?: string;
  params: Record<string, unknown>;
}
/** One export element (3.2 spelling) of tasks in a chain. */
function workflow(
  name: string,
  tasks: TaskSpec[],
  extra: {
    code?: number;
    globals?: Array<[string, string]>;
    schedule?: Record<string, unknown>;
  } = {},
): Record<string, unknown> {
  const codes = tasks.map(() => ++nextCode);
  return {
    processDefinition: {
      code: extra.code ?? ++nextCode,
      name,
      projectCode: 12000000000001,
      releaseState: "ONLINE",
      description: "",
      globalParams: JSON.stringify(
        (extra.globals ?? []).map(([prop, value]) => ({
          prop,
          direct: "IN",
          type: "VARCHAR",
          value,
        })),
      ),
      timeout: 0,
      executionType: "PARALLEL",
      flag: "YES",
    },
    processTaskRelationList: codes.map((c, i) => ({
      preTaskCode: i === 0 ? 0 : codes[i - 1],
      postTaskCode: c,
      conditionType: "NONE",
      conditionParams: {},
    })),
    taskDefinitionList: tasks.map((t, i) => ({
      code: codes[i],
      name: t.name,
      description: "",
      taskType: t.type ?? "SHELL",
      taskParams: { localParams: [], resourceList: [], ...t.params },
      flag: "YES",
      taskPriority: "MEDIUM",
      workerGroup: "default",
      environmentCode: -1,
      failRetryTimes: 0,
      failRetryInterval: 1,
      timeoutFlag: "CLOSE",
      timeoutNotifyStrategy: null,
      timeout: 0,
      delayTime: 0,
      taskGroupId: 0,
      taskGroupPriority: 0,
    })),
    schedule: extra.schedule ?? null,
  };
}
const local = (prop: string, value: string) => ({ prop, direct: "IN", type: "VARCHAR", value });
const notes = (c: DsConversion, kind?: string) =>
  c.notes.filter((n) => kind === undefined || n.kind === kind).map((n) => n.message);
const commandOf = (c: DsConversion, i = 0, t = 0): string => {
  const tasks = (c.workflows[i]?.definition.tasks ?? []) as Array<{ command?: string }>;
  return tasks[t]?.command ?? "";
};

describe("SHELL tasks run with bash", () => {
  const script =
    'set -o pipefail\nnames=(a b)\nif [[ "${x}" == "a b" ]]; then echo "x=${x} n=${#names[@]} home=${HOME:+set}"; fi';
  const c = convertDolphinScheduler([
    workflow("bashy", [
      { name: "t", params: { rawScript: script, localParams: [local("x", "a b")] } },
    ]),
  ]);

  it("writes the script through a quoted here-document and runs bash on it; one report line", () => {
    expect(commandOf(c)).toBe(
      `cat > script.sh <<'SHOAL_BASH_EOF'\n${script}\nSHOAL_BASH_EOF\nbash script.sh`,
    );
    expect(
      notes(c, "approximated").filter((m) => m.startsWith("runs with bash: the worker needs bash")),
    ).toHaveLength(1);
    expect(() => parseWorkflowDefinition(c.workflows[0]?.definition)).not.toThrow();
  });

  it("pastes ${param} into the script as it is (as DolphinScheduler does), and bash runs it", () => {
    const command = substitute(commandOf(c), { x: "a b" }, { mode: "shell", baseMs: 0 });
    expect(command).toContain('if [[ "a b" == "a b" ]]; then echo "x=a b n=${#names[@]}');
    const dir = mkdtempSync(join(tmpdir(), "shoal-ds-bash-"));
    // /bin/sh, as the worker runs a command; whatever sh is, the script runs with bash.
    const out = execFileSync("/bin/sh", ["-c", command], {
      cwd: dir,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: "/h" },
    });
    expect(out).toBe("x=a b n=2 home=set\n");
  });

  it("picks a delimiter no line of the script is", () => {
    const tricky = convertDolphinScheduler([
      workflow("eof", [
        { name: "t", params: { rawScript: "cat <<SHOAL_BASH_EOF\nhi\nSHOAL_BASH_EOF" } },
      ]),
    ]);
    expect(commandOf(tricky)).toMatch(
      /^cat > script.sh <<'SHOAL_BASH_EOF_'\n[\s\S]*\nSHOAL_BASH_EOF_\nbash script.sh$/,
    );
  });
});

describe("plain-text credentials", () => {
  const c = convertDolphinScheduler([
    workflow(
      "etl",
      [
        {
          name: "load",
          params: {
            rawScript: "psql -c 'select 1' --password=${db_password} ${api.token}",
            localParams: [local("db_password", "hunter2"), local("run_token", "${other}")],
          },
        },
        {
          name: "notify",
          type: "HTTP",
          params: {
            url: "https://api.example.com/x",
            httpMethod: "POST",
            httpParams: [
              { prop: "Authorization", httpParametersType: "HEADERS", value: "Bearer abc123" },
              { prop: "X-Trace", httpParametersType: "HEADERS", value: "1" },
              { prop: "api_key", httpParametersType: "PARAMETER", value: "k-1" },
            ],
            httpCheckCondition: "STATUS_CODE_DEFAULT",
          },
        },
      ],
      {
        globals: [
          ["api.token", "tok-9"],
          ["day", "$[yyyyMMdd]"],
        ],
      },
    ),
  ]);
  const todo = c.notes.filter((n) => n.credential);

  it("flags each under To do before running with its exact replacement, keeping the value", () => {
    expect(todo.every((n) => n.kind === "action")).toBe(true);
    expect(todo.map((n) => n.message)).toEqual([
      "global parameter `api.token` holds a literal credential, stored and shown as plain text (the YAML, the API, the console); kept so the workflow runs as before. Store it as the secret `etl/api.token` (docs/secrets.md), delete the parameter, and in `load` add `secrets: {API_TOKEN: etl/api.token}` and write `$API_TOKEN` where the script has `${api.token}`",
      "local parameter `db_password` holds a literal credential, stored and shown as plain text (the YAML, the API, the console); kept so the workflow runs as before. Store it as the secret `etl/load/db_password` (docs/secrets.md), delete the parameter, and in `load` add `secrets: {DB_PASSWORD: etl/load/db_password}` and write `$DB_PASSWORD` where the script has `${db_password}`",
      "HTTP header `Authorization` has a literal value, stored and shown as plain text (the YAML, the API, the console); kept so the workflow runs as before. Store the value after `Bearer ` as the secret `etl/notify/authorization` and write the header as `Authorization: Bearer ${secret:etl/notify/authorization}`",
      "URL query field `api_key` has a literal value, stored and shown as plain text (the YAML, the API, the console); kept so the workflow runs as before. Store it as the secret `etl/notify/api_key` and write `api_key=${secret:etl/notify/api_key}` in the url",
    ]);
    const def = c.workflows[0]?.definition as {
      params: Record<string, string>;
      tasks: Array<Record<string, unknown>>;
    };
    expect(def.params["api.token"]).toBe("tok-9");
    expect(def.tasks[0]?.params).toEqual({ db_password: "hunter2", run_token: "${other}" });
    expect(def.tasks[1]?.headers).toMatchObject({ Authorization: "Bearer abc123" });
    const report =
      outputFiles(c, "x.json").find((f) => f.path === "import-report.md")?.content ?? "";
    const section = report.split("## To do before running")[1]?.split("\n## ")[0] ?? "";
    for (const n of todo) expect(section).toContain(n.message);
  });

  it("the replacements the notes give are definitions the API accepts", () => {
    const def = structuredClone(c.workflows[0]?.definition) as {
      params: Record<string, string>;
      tasks: Array<Record<string, unknown>>;
    };
    delete def.params["api.token"];
    const load = def.tasks[0] as {
      command: string;
      params: Record<string, string>;
      secrets?: unknown;
    };
    load.command = load.command
      .replace("${db_password}", "$DB_PASSWORD")
      .replace("${api.token}", "$API_TOKEN");
    load.params = { run_token: "${other}" };
    load.secrets = { DB_PASSWORD: "etl/load/db_password", API_TOKEN: "etl/api.token" };
    const notify = def.tasks[1] as { url: string; headers: Record<string, string> };
    notify.headers.Authorization = "Bearer ${secret:etl/notify/authorization}";
    notify.url = notify.url.replace("api_key=k-1", "api_key=${secret:etl/notify/api_key}");
    expect(() => parseWorkflowDefinition(def)).not.toThrow();
  });

  it("a documented example line is what the importer writes", () => {
    const doc = readFileSync(
      new URL("../../docs/import-dolphinscheduler.md", import.meta.url),
      "utf8",
    );
    const flagged = todo.map((n) => n.message);
    expect(doc).toContain(`- \`etl\` / \`load\`: ${flagged[1]}`);
    expect(doc).toContain(`- \`etl\` / \`notify\`: ${flagged[2]}`);
  });
});

describe("sub-workflow cycles", () => {
  it("a cycle in the file is a Not converted note and a line above the apply commands", () => {
    const a = 15100000000001;
    const b = 15100000000002;
    const c = convertDolphinScheduler([
      workflow(
        "A",
        [{ name: "callB", type: "SUB_PROCESS", params: { processDefinitionCode: b } }],
        { code: a },
      ),
      workflow(
        "B",
        [{ name: "callA", type: "SUB_PROCESS", params: { processDefinitionCode: a } }],
        { code: b },
      ),
    ]);
    expect(c.cycles).toEqual([["A", "B", "A"]]);
    expect(notes(c, "not-converted")).toContainEqual(
      expect.stringMatching(/^sub-workflow cycle `A` → `B` → `A`: .*cannot be applied as written/),
    );
    const report =
      outputFiles(c, "x.json").find((f) => f.path === "import-report.md")?.content ?? "";
    expect(report).toMatch(/## Not converted\n\n- `A`: sub-workflow cycle `A` → `B` → `A`/);
    expect(report).toContain("First break the sub-workflow cycle `A` → `B` → `A`");
  });

  it("finds each cycle once, from its first member in file order; none in a tree", () => {
    expect(
      subWorkflowCycles([
        { name: "p", children: ["c"] },
        { name: "c", children: [] },
      ]),
    ).toEqual([]);
    expect(
      subWorkflowCycles([
        { name: "x", children: ["y"] },
        { name: "y", children: ["z"] },
        { name: "z", children: ["y", "z"] },
      ]),
    ).toEqual([
      ["y", "z", "y"],
      ["z", "z"],
    ]);
  });
});

describe("the timezone note", () => {
  const schedule = (crontab: string) => ({
    startTime: "2024-06-01 00:00:00",
    endTime: "2124-06-01 00:00:00",
    timezoneId: "Asia/Shanghai",
    crontab,
    failureStrategy: "END",
    warningType: "NONE",
    warningGroupId: 0,
    releaseState: "OFFLINE",
    processInstancePriority: "MEDIUM",
    workerGroup: "default",
    tenantCode: "default",
    environmentCode: -1,
  });
  it("says what was written: the schedule's zone, or no zone when the schedule is not converted", () => {
    for (const crontab of ["0 0 3 LW * ? *", "0 0 3 15W * ? *", "0 0 3 L-3 * ? *"]) {
      const c = convertDolphinScheduler([
        workflow("w", [{ name: "t", params: { rawScript: "true" } }], {
          schedule: schedule(crontab),
        }),
      ]);
      expect(c.workflows[0]?.schedule).toBeUndefined();
      expect(c.workflows[0]?.definition.timezone).toBeUndefined();
      const all = notes(c).join("\n");
      expect(all).not.toMatch(/the workflow's timezone is its schedule's/);
      expect(notes(c, "not-converted")).toContain(
        "the schedule's zone (Asia/Shanghai): the schedule is not converted, so the workflow has no timezone and the time parameters of its runs are computed in UTC; add `timezone: Asia/Shanghai` to the workflow to keep its zone",
      );
    }
    const ok = convertDolphinScheduler([
      workflow("w", [{ name: "t", params: { rawScript: "true" } }], {
        schedule: schedule("0 0 3 * * ? *"),
      }),
    ]);
    expect(ok.workflows[0]?.definition.timezone).toBe("Asia/Shanghai");
    expect(notes(ok, "approximated").join("\n")).toMatch(
      /the workflow's timezone is its schedule's \(Asia\/Shanghai\)/,
    );
  });
});

describe("file names", () => {
  it("are unique ignoring case: Orders / orders get a suffix, said in the report", () => {
    const c = convertDolphinScheduler([
      workflow("Orders", [{ name: "t", params: { rawScript: "true" } }]),
      workflow("orders", [{ name: "t", params: { rawScript: "true" } }]),
      workflow("ORDERS-2", [{ name: "t", params: { rawScript: "true" } }]),
    ]);
    expect(c.workflows.map((w) => w.name)).toEqual(["Orders", "orders", "ORDERS-2"]);
    expect([...fileNames(c.workflows).values()]).toEqual([
      "Orders.yaml",
      "orders-2.yaml",
      "ORDERS-2-2.yaml",
    ]);
    const files = outputFiles(c, "x.json");
    const lower = files.map((f) => f.path.toLowerCase());
    expect(new Set(lower).size).toBe(lower.length);
    const dir = mkdtempSync(join(tmpdir(), "shoal-ds-case-"));
    for (const f of files) writeFileSync(join(dir, f.path), f.content);
    expect(readFileSync(join(dir, "orders-2.yaml"), "utf8")).toMatch(/^name: orders$/m);
    const report = files.find((f) => f.path === "import-report.md")?.content ?? "";
    expect(report).toContain(
      "`orders` is written to `orders-2.yaml`: its name differs from `Orders`'s only by case, and on a case-insensitive file system (macOS, Windows) the two files would be one. The workflow keeps its name.",
    );
    expect(report).toContain("   shoal apply -f orders-2.yaml");
  });
});

describe("schedules.sh", () => {
  it("falls back to npx --no-install, which never installs a package", () => {
    const c = convertDolphinScheduler([
      workflow("w", [{ name: "t", params: { rawScript: "true" } }], {
        schedule: {
          crontab: "0 0 3 * * ? *",
          timezoneId: "UTC",
          startTime: "2024-06-01 00:00:00",
          endTime: "2124-06-01 00:00:00",
          failureStrategy: "END",
          warningType: "NONE",
          releaseState: "OFFLINE",
          workerGroup: "default",
        },
      }),
    ]);
    const script = outputFiles(c, "x.json").find((f) => f.path === "schedules.sh")?.content ?? "";
    expect(script).toContain(
      'command -v shoal >/dev/null 2>&1 || shoal() { npx --no-install shoal "$@"; }',
    );
    expect(script).not.toMatch(/npx shoal/);
  });
});
