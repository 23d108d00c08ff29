// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is the parameter syntax of DolphinScheduler and Shoal
/**
 * `shoal import dolphinscheduler --apply` against a real `shoal standalone`: the workflows of
 * the 3.2 fixture are created children first with their schedules (OFFLINE, as exported), a
 * second import changes nothing, and a converted SHELL chain (OUT parameter, global `$[…]`
 * parameter, local parameter) runs to SUCCESS, and so does an imported script that needs bash
 * (the worker's /bin/sh may be dash), its plain-text password warned about by --apply. The schedule's alert rules (warningType and
 * alert group) are on the created schedule, and schedules.sh's `--alerts` creates the same.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { convertDolphinScheduler } from "../../lib/import/dolphinscheduler/convert.js";
import { runCli } from "../helpers/cli-run.js";
import {
  api,
  byCode,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

const FIXTURE = new URL("../fixtures/dolphinscheduler/export-3.2.json", import.meta.url);

describe("shoal import dolphinscheduler --apply", () => {
  let sa: RunningStandalone;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-ds-e2e-"));
    sa = await startStandaloneProcess({ dataDir: join(dir, "data"), workers: 2 });
  });
  afterAll(async () => {
    await sa?.stop();
  });

  // The names the import gives (the converter is deterministic: the same as the CLI's).
  const names = convertDolphinScheduler(JSON.parse(readFileSync(FIXTURE, "utf8")), {
    placeholder: true,
  });
  const nameOf = (ds: string) => names.workflows.find((w) => w.dsName === ds)?.name as string;
  const file = FIXTURE.pathname;

  it("creates the workflows children first, then their schedules; a second import changes nothing", async () => {
    const first = await runCli(["import", "dolphinscheduler", file, "--apply", "--placeholder"], {
      endpoint: sa.url,
    });
    expect(first.code, first.stderr).toBe(0);
    const lines = first.stdout.split("\n");
    const at = (ds: string) =>
      lines.findIndex((l) => l.startsWith(`${nameOf(ds)}: version 1 (created)`));
    expect(at("订单子流程")).toBeGreaterThanOrEqual(0);
    expect(at("每日订单汇总")).toBeGreaterThan(at("订单子流程"));
    expect(first.stdout).toMatch(
      new RegExp(
        `${nameOf("每日订单汇总")}: schedule \\S+ \\(created, OFFLINE; cron 30 2 \\* \\* 1-5 Asia/Shanghai\\)`,
      ),
    );

    const wf = await api(sa.url, "GET", `/v1/workflows/${nameOf("每日订单汇总")}`);
    expect(wf.status).toBe(200);
    expect(wf.body.displayName).toBe("每日订单汇总");
    const schedules = await api(sa.url, "GET", `/v1/schedules?workflow=${nameOf("每日订单汇总")}`);
    expect(schedules.body.items).toHaveLength(1);
    expect(schedules.body.items[0]).toMatchObject({
      cron: "30 2 * * 1-5",
      timezone: "Asia/Shanghai",
      state: "OFFLINE",
      overlapPolicy: "SERIAL_WAIT",
      priority: "HIGH",
    });
    // warningType FAILURE to alert group 1, and the WARNFAILED task timeout's alert.
    const alerts = [
      { on: ["FAILURE"], channels: ["ds-alert-group-1"] },
      { on: ["TASK_RETRY_EXHAUSTED"], channels: ["ds-alert-group-1"] },
    ];
    const one = await api(sa.url, "GET", `/v1/schedules/${schedules.body.items[0].id}`);
    expect(one.status).toBe(200);
    expect(one.body.alerts).toEqual(alerts);
    expect(first.stdout).toContain(
      "alert channel to configure: ds-alert-group-1 (DolphinScheduler alert group 1; docs/alerts.md)",
    );

    const again = await runCli(["import", "dolphinscheduler", file, "--apply", "--placeholder"], {
      endpoint: sa.url,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain("(created");
    expect(again.stdout).toContain(`${nameOf("每日订单汇总")}: version 1 (unchanged)`);
    expect(again.stdout).toMatch(/schedule \S+ \(unchanged, OFFLINE\)/);
  });

  it("the --output files are what --apply created: shoal apply -f finds each unchanged", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "shoal-ds-out-")), "out");
    const r = await runCli(["import", "dolphinscheduler", file, "--output", out, "--placeholder"]);
    expect(r.code, r.stderr).toBe(0);
    const report = readFileSync(join(out, "import-report.md"), "utf8");
    const files = [...report.matchAll(/^ {3}shoal apply -f (\S+)$/gm)].map((m) => m[1] as string);
    expect(files).toHaveLength(3);
    for (const f of files) {
      const applied = await runCli(["apply", "-f", join(out, f)], { endpoint: sa.url });
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout).toMatch(/: version 1 \(unchanged\)/);
    }
  });

  it("schedules.sh's command creates the schedule with its alerts; update keeps them; a re-import says when they differ", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "shoal-ds-sh-")), "out");
    const r = await runCli(["import", "dolphinscheduler", file, "--output", out, "--placeholder"]);
    expect(r.code, r.stderr).toBe(0);
    const name = nameOf("每日订单汇总");
    const line = readFileSync(join(out, "schedules.sh"), "utf8")
      .split("\n")
      .find((l) => l.startsWith(`shoal schedule create ${name} `)) as string;
    // The words as sh reads them: shellWord quotes with '…' (no quote inside these values).
    const words = [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => (m[1] ?? m[2]) as string);
    const created = await runCli(words.slice(1), { endpoint: sa.url });
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.split("\n")[0] as string;
    const s = await api(sa.url, "GET", `/v1/schedules/${id}`);
    expect(s.body).toMatchObject({ workflow: name, state: "OFFLINE", cron: "30 2 * * 1-5" });
    expect(s.body.alerts).toEqual([
      { on: ["FAILURE"], channels: ["ds-alert-group-1"] },
      { on: ["TASK_RETRY_EXHAUSTED"], channels: ["ds-alert-group-1"] },
    ]);

    const updated = await runCli(["schedule", "update", id, "--priority", "LOW"], {
      endpoint: sa.url,
    });
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toMatch(
      /^alerts: +FAILURE → ds-alert-group-1; TASK_RETRY_EXHAUSTED → ds-alert-group-1$/m,
    );
    expect((await api(sa.url, "GET", `/v1/schedules/${id}`)).body.alerts).toHaveLength(2);

    const bad = await runCli(
      ["schedule", "update", id, "--alerts", '[{"on":["FAILURE"],"channels":["no spaces"]}]'],
      { endpoint: sa.url },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--alerts.*must match/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);

    const removed = await runCli(["schedule", "update", id, "--alerts", "[]"], {
      endpoint: sa.url,
    });
    expect(removed.code, removed.stderr).toBe(0);
    expect((await api(sa.url, "GET", `/v1/schedules/${id}`)).body.alerts).toBeUndefined();
    // Two schedules of the workflow now: the import's first match (the one --apply made) still
    // has its rules; delete it so the re-import meets the one without rules.
    const all = await api(sa.url, "GET", `/v1/schedules?workflow=${name}`);
    for (const other of all.body.items.filter((x: { id: string }) => x.id !== id))
      expect((await api(sa.url, "DELETE", `/v1/schedules/${other.id}`)).status).toBe(204);
    const again = await runCli(["import", "dolphinscheduler", file, "--apply", "--placeholder"], {
      endpoint: sa.url,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(
      `${name}: schedule ${id} (exists, OFFLINE; its alerts differ from the export's: shoal schedule update ${id} --alerts '[{"on":["FAILURE"],"channels":["ds-alert-group-1"]},{"on":["TASK_RETRY_EXHAUSTED"],"channels":["ds-alert-group-1"]}]')`,
    );
    expect((await api(sa.url, "GET", `/v1/schedules/${id}`)).body.alerts).toBeUndefined();
  });

  it("runs an imported bash script (set -o pipefail, [[ ]], an array) to SUCCESS; --apply warns of a plain-text credential", async () => {
    // Shoal runs SHELL commands with /bin/sh -c (dash on Debian and Ubuntu, where this script
    // fails); DolphinScheduler ran it with bash, and so does the imported task.
    const script = [
      "set -o pipefail",
      "parts=(x y z)",
      'if [[ "${greeting}" == hello* ]]; then echo "bash ok: ${#parts[@]} parts, ${greeting}"; fi',
      "printf '%s\\n' a b | grep b | wc -l",
      'test -n "${db_password}"',
    ].join("\n");
    const file = join(mkdtempSync(join(tmpdir(), "shoal-ds-bash-")), "bash.json");
    writeFileSync(
      file,
      JSON.stringify([
        {
          processDefinition: { name: "bash-check", code: 31, releaseState: "ONLINE" },
          processTaskRelationList: [{ preTaskCode: 0, postTaskCode: 32 }],
          taskDefinitionList: [
            {
              code: 32,
              name: "script",
              taskType: "SHELL",
              taskParams: {
                rawScript: script,
                localParams: [
                  { prop: "greeting", direct: "IN", type: "VARCHAR", value: "hello world" },
                  { prop: "db_password", direct: "IN", type: "VARCHAR", value: "hunter2" },
                ],
              },
            },
          ],
        },
      ]),
    );
    const r = await runCli(["import", "dolphinscheduler", file, "--apply"], { endpoint: sa.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("bash-check: version 1 (created)");
    expect(r.stderr).toMatch(
      /^warning: bash-check \/ script: plain-text credential: local parameter `db_password` holds a literal credential/m,
    );
    const id = await startRun(sa.url, "bash-check");
    const inst = await waitFinal(sa.url, id, 60_000);
    expect(inst.state).toBe("SUCCESS");
    const log = await api(sa.url, "GET", `/v1/instances/${id}/tasks/script/log`);
    const lines = log.body.lines.map((l: { message: string }) => l.message);
    expect(lines).toContain("bash ok: 3 parts, hello world");
    expect(lines).toContain("1");
  });

  it("--apply of a directory of exports: the other file's sub-workflow first, references between the files resolved", async () => {
    const pair = new URL("../fixtures/dolphinscheduler/pair/", import.meta.url).pathname;
    const r = await runCli(["import", "dolphinscheduler", pair, "--apply"], { endpoint: sa.url });
    expect(r.code, r.stderr).toBe(0);
    const created = [...r.stdout.matchAll(/^(\S+): version 1 \(created\) — (.+)$/gm)].map(
      (m): [string, string] => [m[2] as string, m[1] as string],
    );
    const names = new Map(created);
    expect([...names.keys()].sort()).toEqual(["库存装载", "库存汇总", "订单日报"].sort());
    // 订单日报 (orders.json) runs 库存汇总 (inventory.json) as a sub-workflow: created after it.
    const order = created.map(([ds]) => ds);
    expect(order.indexOf("订单日报")).toBeGreaterThan(order.indexOf("库存汇总"));
    const orders = await api(sa.url, "GET", `/v1/workflows/${names.get("订单日报")}`);
    const items = orders.body.tasks.flatMap(
      (t: {
        type: string;
        dependence?: { groups: Array<{ items: Array<{ workflow: string; task?: string }> }> };
      }) => (t.type === "DEPENDENT" ? (t.dependence?.groups.flatMap((g) => g.items) ?? []) : []),
    );
    expect(items.map((i: { workflow: string }) => i.workflow)).toEqual([
      names.get("库存装载"),
      "ds-workflow-39999999999999",
    ]);
  });

  it("runs a converted SHELL chain to SUCCESS", async () => {
    const name = nameOf("上游装载");
    const id = await startRun(sa.url, name);
    const inst = await waitFinal(sa.url, id, 60_000);
    expect(inst.state).toBe("SUCCESS");
    const tasks = byCode(inst);
    const extract = Object.values(tasks).find((t) => t.code.startsWith("extract-"));
    expect(extract?.outputs).toEqual({ rows: "42" });
    expect(tasks.load?.state).toBe("SUCCESS");
    // The local parameter and the upstream task's OUT parameter reached the command.
    const log = await api(sa.url, "GET", `/v1/instances/${id}/tasks/load/log`);
    expect(log.status).toBe(200);
    expect(log.body.lines.map((l: { message: string }) => l.message)).toContain(
      "loaded 42 rows into dw",
    );
    const check = Object.values(tasks).find((t) => t.code.startsWith("task-"));
    expect(check?.state).toBe("SUCCESS");
  });
});
