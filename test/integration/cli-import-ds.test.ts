/**
 * `shoal import dolphinscheduler … --output DIR` in-process (runCli): the files it writes (one
 * YAML per workflow that `shoal apply -f` reads and the API's validator accepts, schedules.sh,
 * import-report.md), and its messages and exit codes for unsupported types and bad input.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadWorkflowDocuments } from "../../lib/cli/documents.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";
import { runCli } from "../helpers/cli-run.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/dolphinscheduler/", import.meta.url));
const X32 = join(FIXTURES, "export-3.2.json");
const X33 = join(FIXTURES, "export-3.3.json");
/** Two exports whose workflows refer to each other (DEPENDENT both ways, a SUB_PROCESS). */
const PAIR = join(FIXTURES, "pair");
const tmp = () => mkdtempSync(join(tmpdir(), "shoal-ds-cli-"));

describe("shoal import dolphinscheduler --output", () => {
  it("writes one valid YAML per workflow, schedules.sh and the report", async () => {
    const dir = join(tmp(), "out");
    const r = await runCli(["import", "dolphinscheduler", X32, "--output", dir, "--placeholder"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(5);
    expect(files).toContain("import-report.md");
    expect(files).toContain("schedules.sh");
    const yamls = files.filter((f) => f.endsWith(".yaml"));
    expect(yamls).toHaveLength(3);
    const displayNames: string[] = [];
    for (const f of yamls) {
      const file = await loadWorkflowDocuments(join(dir, f));
      expect(file.problems).toEqual([]);
      const [doc] = file.documents;
      expect(`${doc?.name}.yaml`).toBe(f);
      const def = parseWorkflowDefinition(doc?.body);
      displayNames.push(def.displayName ?? "");
      expect(r.stdout).toContain(`${join(dir, f)}: ${def.displayName}`);
    }
    expect(displayNames.sort()).toEqual(["上游装载", "每日订单汇总", "订单子流程"].sort());
    const script = readFileSync(join(dir, "schedules.sh"), "utf8");
    expect(script.match(/^shoal schedule create /gm)).toHaveLength(2);
    expect(script).toContain("--cron '30 2 * * 1-5' --timezone Asia/Shanghai");
    // The schedule's alert rules (warningType FAILURE, alert group 1, a WARNFAILED task timeout).
    expect(script).toContain(
      `--alerts '[{"on":["FAILURE"],"channels":["ds-alert-group-1"]},{"on":["TASK_RETRY_EXHAUSTED"],"channels":["ds-alert-group-1"]}]' --offline`,
    );
    const report = readFileSync(join(dir, "import-report.md"), "utf8");
    expect(report).toContain("# DolphinScheduler import report: export-3.2.json");
    expect(report).toMatch(
      /## Unsupported task types\n\n- `wf-[0-9a-f]{6}` \/ `task-[0-9a-f]{6}`: SQL task/,
    );
    expect(report).toMatch(
      /## References to workflows outside the file\n\n.*workflow code 13999999999999/,
    );
    expect(report).toContain("shoal task-group put ds-task-group-2");
    expect(report).toMatch(
      /## To do before running\n[\s\S]*- alert group 1 \(the schedule of `wf-[0-9a-f]{6}`\): configure the alert channel `ds-alert-group-1`[\s\S]*channels:\n {4}ds-alert-group-1:\n/,
    );
    expect(r.stdout).toMatch(
      /import-report.md: 3 workflows; \d+ approximated, \d+ not converted, 1 external references, 2 placeholders/,
    );
  });

  it("writes the same files on a second run", async () => {
    const a = join(tmp(), "a");
    const b = join(tmp(), "b");
    await runCli(["import", "dolphinscheduler", X33, "--output", a, "--project", "22000000000001"]);
    await runCli(["import", "dolphinscheduler", X33, "--output", b, "--project", "22000000000001"]);
    const names = readdirSync(a).sort();
    expect(readdirSync(b).sort()).toEqual(names);
    for (const f of names)
      expect(readFileSync(join(b, f), "utf8")).toBe(readFileSync(join(a, f), "utf8"));
    expect(readFileSync(join(a, "import-report.md"), "utf8")).toContain(
      "imported: project 22000000000001 only",
    );
  });

  it("two workflows named Orders and orders: two files whatever the file system's case rule", async () => {
    const d = tmp();
    const wf = (name: string, code: number) => ({
      processDefinition: { name, code },
      processTaskRelationList: [{ preTaskCode: 0, postTaskCode: code + 1 }],
      taskDefinitionList: [
        { code: code + 1, name: "t", taskType: "SHELL", taskParams: { rawScript: "true" } },
      ],
    });
    const file = join(d, "case.json");
    writeFileSync(file, JSON.stringify([wf("Orders", 10), wf("orders", 20)]));
    const dir = join(d, "out");
    const r = await runCli(["import", "dolphinscheduler", file, "--output", dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(["Orders.yaml", "import-report.md", "orders-2.yaml"]);
    expect(r.stdout).toContain(`${join(dir, "orders-2.yaml")}: orders`);
    const [doc] = (await loadWorkflowDocuments(join(dir, "orders-2.yaml"))).documents;
    expect(doc?.name).toBe("orders");
    expect(readFileSync(join(dir, "import-report.md"), "utf8")).toContain(
      "`orders` is written to `orders-2.yaml`",
    );
  });

  it("a directory: its *.json files imported together, references between them resolved", async () => {
    const dir = join(tmp(), "out");
    const r = await runCli(["import", "dolphinscheduler", PAIR, "--output", dir]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // inventory.json before orders.json: a directory's files in name order.
    expect(r.stdout).toMatch(
      /: 库存装载 \(from .*pair\/inventory\.json\)\n.*: 库存汇总 \(from .*inventory\.json\)\n.*: 订单日报 \(from .*orders\.json\)\n/,
    );
    expect(r.stdout).toMatch(
      /import-report.md: 3 workflows; .* 1 external references, 0 placeholders/,
    );
    const yamls = readdirSync(dir).filter((f) => f.endsWith(".yaml"));
    const docs = new Map<string, Record<string, unknown>>();
    for (const f of yamls) {
      const [doc] = (await loadWorkflowDocuments(join(dir, f))).documents;
      const def = parseWorkflowDefinition(doc?.body);
      docs.set(def.displayName ?? "", { name: doc?.name, ...def });
    }
    const nameOf = (ds: string) => docs.get(ds)?.name as string;
    const orders = JSON.stringify(docs.get("订单日报"));
    expect(orders).toContain(`"workflow":"${nameOf("库存装载")}","task":"load"`);
    expect(orders).toContain(`"type":"SUB_WORKFLOW","workflow":"${nameOf("库存汇总")}"`);
    expect(JSON.stringify(docs.get("库存装载"))).toContain(`"workflow":"${nameOf("订单日报")}"`);
    const report = readFileSync(join(dir, "import-report.md"), "utf8");
    expect(report).toMatch(
      /## References to workflows outside the imported files\n\n- [^\n]*workflow code 39999999999999[^\n]*\n\n/,
    );
    expect(report).not.toContain("ds-workflow-3400");
  });

  it("several files: the same as their directory; one workflow name in two files is an error naming both", async () => {
    const a = join(tmp(), "a");
    const b = join(tmp(), "b");
    await runCli(["import", "dolphinscheduler", PAIR, "--output", a]);
    const files = ["inventory.json", "orders.json"].map((f) => join(PAIR, f));
    const r = await runCli(["import", "dolphinscheduler", ...files, "--output", b]);
    expect(r.code, r.stderr).toBe(0);
    for (const f of readdirSync(a))
      expect(readFileSync(join(b, f), "utf8")).toBe(readFileSync(join(a, f), "utf8"));

    const d = tmp();
    const wf = (code: number) => [
      {
        processDefinition: { name: "orders", code },
        processTaskRelationList: [{ preTaskCode: 0, postTaskCode: code + 1 }],
        taskDefinitionList: [
          { code: code + 1, name: "t", taskType: "SHELL", taskParams: { rawScript: "true" } },
        ],
      },
    ];
    writeFileSync(join(d, "one.json"), JSON.stringify(wf(10)));
    writeFileSync(join(d, "two.json"), JSON.stringify(wf(20)));
    const clash = await runCli(["import", "dolphinscheduler", d, "--output", join(d, "out")]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(
      `two workflows would both be named 'orders': 'orders' (code 10) in ${join(d, "one.json")} and 'orders' (code 20) in ${join(d, "two.json")}`,
    );
    expect(existsSync(join(d, "out"))).toBe(false);
    const empty = tmp();
    const none = await runCli(["import", "dolphinscheduler", empty, "--apply"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(
      /no \*\.json file in this directory \(subdirectories are not read\)/,
    );
  });

  it("without --placeholder: exit 1 naming each unsupported task, nothing written", async () => {
    const dir = join(tmp(), "out");
    const r = await runCli(["import", "dolphinscheduler", X32, "--output", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("每日订单汇总 / 加载到数仓: SQL");
    expect(r.stderr).toContain("每日订单汇总 / spark计算: SPARK");
    expect(r.stderr).toContain("nothing written");
    expect(existsSync(dir)).toBe(false);
  });

  it("bad input: a clear message and exit code, never a stack trace", async () => {
    const d = tmp();
    const write = (name: string, text: string) => {
      writeFileSync(join(d, name), text);
      return join(d, name);
    };
    const cases: Array<[string[], number, RegExp]> = [
      [[join(d, "missing.json"), "--apply"], 1, /cannot read .*missing.json: no such file/],
      [
        [write("bad.json", "{not json"), "--apply"],
        1,
        /bad.json: not JSON .*DolphinScheduler workflow export/,
      ],
      [[write("obj.json", '"text"'), "--apply"], 1, /expected a JSON array of workflows/],
      [
        [
          write(
            "empty.json",
            JSON.stringify([
              { processDefinition: { name: "空", code: 1 }, taskDefinitionList: [] },
            ]),
          ),
          "--apply",
        ],
        1,
        /workflow '空': has no tasks/,
      ],
      [
        [
          write(
            "up.json",
            JSON.stringify([
              {
                workflowDefinition: { name: "w", code: 1 },
                workflowTaskRelationList: [{ preTaskCode: 5, postTaskCode: 2 }],
                taskDefinitionList: [{ code: 2, name: "任务", taskType: "SHELL", taskParams: {} }],
              },
            ]),
          ),
          "--apply",
        ],
        1,
        /workflow 'w': task '任务' has an unknown upstream task code 5/,
      ],
      [[X32], 2, /give either --output DIR .* or --apply/],
      [[X32, "--apply", "--output", d], 2, /give either --output DIR .* or --apply/],
      [[X32, "--apply", "--server-timezone", "BST"], 2, /--server-timezone: .*abbreviation/],
      [[X33, "--apply", "--project", "nope"], 1, /no workflow of project 'nope'/],
    ];
    for (const [args, code, message] of cases) {
      const r = await runCli(["import", "dolphinscheduler", ...args]);
      expect({ args, code: r.code }).toEqual({ args, code });
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
