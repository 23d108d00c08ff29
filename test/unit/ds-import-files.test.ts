/**
 * `shoal import dolphinscheduler` over several export files at once (convertDolphinSchedulerFiles):
 * test/fixtures/dolphinscheduler/pair/ holds two exports of one project whose workflows refer to
 * each other (a DEPENDENT each way, a SUB_PROCESS), and one DEPENDENT item on a workflow in
 * neither. Together, every reference between them resolves to its Shoal name and only the
 * outside one is reported; names that collide across files are an error naming both files; one
 * file converts exactly as before.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  type ConvertedWorkflow,
  convertDolphinScheduler,
  convertDolphinSchedulerFiles,
  type DsConversion,
  type DsExportFile,
} from "../../lib/import/dolphinscheduler/convert.js";
import { DsImportError } from "../../lib/import/dolphinscheduler/errors.js";
import { outputFiles, reportMarkdown } from "../../lib/import/dolphinscheduler/report.js";

const read = (path: string): unknown =>
  JSON.parse(
    readFileSync(new URL(`../fixtures/dolphinscheduler/${path}`, import.meta.url), "utf8"),
  );
const pairFile = (name: string): DsExportFile => ({
  source: `pair/${name}`,
  doc: read(`pair/${name}`),
});
const PAIR = [pairFile("orders.json"), pairFile("inventory.json")];

type Task = Record<string, unknown> & { code: string; type: string; displayName?: string };
const wfOf = (c: DsConversion, dsName: string): ConvertedWorkflow => {
  const w = c.workflows.find((x) => x.dsName === dsName);
  if (!w) throw new Error(`no workflow ${dsName}`);
  return w;
};
const taskOf = (w: ConvertedWorkflow, dsName: string): Task => {
  const t = (w.definition.tasks as Task[]).find((x) => (x.displayName ?? x.code) === dsName);
  if (!t) throw new Error(`no task ${dsName} in ${w.name}`);
  return t;
};
const dependentItems = (t: Task) =>
  (t.dependence as { groups: Array<{ items: Array<Record<string, string>> }> }).groups.flatMap(
    (g) => g.items,
  );

/** A minimal export of one workflow named `name` with DolphinScheduler code `code`. */
const oneWorkflow = (name: string, code: number) => [
  {
    processDefinition: { name, code, projectCode: 1 },
    processTaskRelationList: [{ preTaskCode: 0, postTaskCode: code + 1 }],
    taskDefinitionList: [
      { code: code + 1, name: "t", taskType: "SHELL", taskParams: { rawScript: "true" } },
    ],
  },
];

function importError(files: DsExportFile[]): string {
  try {
    convertDolphinSchedulerFiles(files, { placeholder: true });
  } catch (e) {
    expect(e).toBeInstanceOf(DsImportError);
    return (e as Error).message;
  }
  throw new Error("no error");
}

describe("several export files imported together", () => {
  const c = convertDolphinSchedulerFiles(PAIR);
  const orders = wfOf(c, "订单日报");
  const load = wfOf(c, "库存装载");
  const summary = wfOf(c, "库存汇总");

  it("a DEPENDENT or SUB_PROCESS task on a workflow of the other file gets its Shoal name", () => {
    expect(dependentItems(taskOf(orders, "等待库存装载"))).toEqual([
      { workflow: load.name, task: "load", cycle: "day", dateValue: "today" },
      { workflow: "ds-workflow-39999999999999", cycle: "day", dateValue: "today" },
    ]);
    expect(taskOf(orders, "库存汇总子流程")).toMatchObject({
      type: "SUB_WORKFLOW",
      workflow: summary.name,
    });
    // And the other way round: inventory.json's DEPENDENT on orders.json's workflow.
    expect(dependentItems(taskOf(load, "昨日订单完成"))).toEqual([
      { workflow: orders.name, cycle: "day", dateValue: "last1Days" },
    ]);
    expect(c.workflows.map((w) => w.source)).toEqual([
      "pair/orders.json",
      "pair/inventory.json",
      "pair/inventory.json",
    ]);
  });

  it("reports only the reference to none of the files, with the code it named", () => {
    const external = c.notes.filter((n) => n.kind === "external");
    expect(external).toEqual([
      {
        kind: "external",
        workflow: orders.name,
        task: taskOf(orders, "等待库存装载").code,
        message:
          "group 0 item 1 depends on workflow code 39999999999999 of project 32000000000099, which is in none of the imported files: named 'ds-workflow-39999999999999'; rename it to the Shoal workflow that replaces it",
      },
    ]);
    const report = reportMarkdown(c, "pair/orders.json, pair/inventory.json");
    expect(report).toContain("2 files imported together (pair/orders.json, pair/inventory.json)");
    expect(report).toContain("## References to workflows outside the imported files\n\n- ");
    expect(report).toContain(
      `| \`${load.name}\` | 库存装载 | 2 SHELL, 1 DEPENDENT | — | pair/inventory.json |`,
    );
    // Applied children first across the files: the sub-workflow before its parent.
    expect(report.indexOf(`shoal apply -f ${summary.name}.yaml`)).toBeLessThan(
      report.indexOf(`shoal apply -f ${orders.name}.yaml`),
    );
    const yaml = outputFiles(c, "x").find((f) => f.path === `${orders.name}.yaml`)?.content;
    expect(yaml).toContain("(code 33000000000001, project 32000000000001, file pair/orders.json)");
  });

  it("each file alone leaves the other's workflows as placeholders (what the import did before)", () => {
    const alone = convertDolphinScheduler(PAIR[0]?.doc);
    const items = dependentItems(taskOf(wfOf(alone, "订单日报"), "等待库存装载"));
    expect(items[0]).toMatchObject({
      workflow: "ds-workflow-34000000000001",
      task: "ds-task-34000000000102",
    });
    expect(alone.notes.filter((n) => n.kind === "external")).toHaveLength(3);
  });

  it("one file converts exactly as convertDolphinScheduler does", () => {
    const doc = read("export-3.2.json");
    const one = convertDolphinSchedulerFiles([{ source: "export-3.2.json", doc }], {
      placeholder: true,
    });
    expect(one).toEqual(convertDolphinScheduler(doc, { placeholder: true }));
    expect(one.sources).toBeUndefined();
  });

  it("two files' workflows that would get one Shoal name: an error naming both files", () => {
    expect(
      importError([
        { source: "a.json", doc: oneWorkflow("orders", 10) },
        { source: "b.json", doc: oneWorkflow("orders", 20) },
      ]),
    ).toBe(
      "two workflows would both be named 'orders': 'orders' (code 10) in a.json and 'orders' (code 20) in b.json; rename one of them in DolphinScheduler and export it again, or import the files separately",
    );
    expect(
      importError([
        { source: "a.json", doc: oneWorkflow("orders", 10) },
        { source: "b.json", doc: oneWorkflow("orders v2", 10) },
      ]),
    ).toMatch(
      /^workflow code 10 is in two files: 'orders' \(code 10\) in a\.json and 'orders v2' \(code 10\) in b\.json/,
    );
  });

  it("a file that cannot be converted is named in the error", () => {
    expect(importError([PAIR[0] as DsExportFile, { source: "broken.json", doc: "text" }])).toMatch(
      /^broken\.json: not a DolphinScheduler export: expected a JSON array/,
    );
    const noTasks = [{ processDefinition: { name: "空", code: 5 }, taskDefinitionList: [] }];
    expect(importError([PAIR[0] as DsExportFile, { source: "empty.json", doc: noTasks }])).toBe(
      "empty.json: workflow '空': has no tasks (taskDefinitionList is empty or missing)",
    );
  });
});
