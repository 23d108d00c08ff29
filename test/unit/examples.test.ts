import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { TASK_TYPES } from "../../lib/core/model.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";
import { convertWfcommons } from "../../lib/import/wfcommons.js";
import { readWfcommonsFile, WFCOMMONS_DIR } from "../../lib/import/wfcommons-file.js";

const EXAMPLES = fileURLToPath(new URL("../../examples/", import.meta.url));
const CODE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

interface ExampleTask {
  code: string;
  type: string;
  upstream?: string[];
  command?: string;
}
interface Example {
  name: string;
  tasks: ExampleTask[];
  [field: string]: unknown;
}

function load(file: string): Example {
  return parse(readFileSync(join(EXAMPLES, file), "utf8")) as Example;
}

/** Codes in an order where every task follows its upstreams; throws on a cycle. */
function topologicalOrder(tasks: readonly ExampleTask[]): string[] {
  const done = new Set<string>();
  const order: string[] = [];
  while (order.length < tasks.length) {
    const ready = tasks.filter(
      (t) => !done.has(t.code) && (t.upstream ?? []).every((u) => done.has(u)),
    );
    if (ready.length === 0) throw new Error("cycle among the tasks");
    for (const t of ready) {
      done.add(t.code);
      order.push(t.code);
    }
  }
  return order;
}

const files = readdirSync(EXAMPLES).filter((f) => f.endsWith(".yaml"));

describe("examples/*.yaml", () => {
  it("contains the shipped examples", () => {
    expect(files).toEqual(
      expect.arrayContaining(["data-quality.yaml", "etl-report.yaml", "montage.yaml"]),
    );
  });

  for (const file of files) {
    it(`${file} is a valid workflow definition`, () => {
      const wf = load(file);
      expect(wf.name).toMatch(CODE);
      expect(`${wf.name}.yaml`).toBe(file);
      expect(Array.isArray(wf.tasks) && wf.tasks.length > 0).toBe(true);
      const codes = new Set(wf.tasks.map((t) => t.code));
      expect(codes.size).toBe(wf.tasks.length);
      for (const t of wf.tasks) {
        expect(t.code).toMatch(CODE);
        expect(TASK_TYPES as readonly string[]).toContain(t.type);
        if (t.type === "SHELL") expect(typeof t.command).toBe("string");
        for (const u of t.upstream ?? []) expect(codes.has(u), `${t.code} → ${u}`).toBe(true);
      }
      expect(() => topologicalOrder(wf.tasks)).not.toThrow();
      const { name: _name, ...body } = wf;
      expect(() => parseWorkflowDefinition(body)).not.toThrow(); // every rule of the API
      for (const value of Object.values((wf.params ?? {}) as object)) {
        expect(typeof value).toBe("string");
      }
    });
  }

  it("montage.yaml is what generate-montage.ts produces from the shipped trace", () => {
    const trace = join(WFCOMMONS_DIR, "montage-chameleon-2mass-005d-001.json.gz");
    const expected = convertWfcommons(readWfcommonsFile(trace), {
      timeScale: 0.1,
      source: "montage-chameleon-2mass-005d-001.json",
    });
    const wf = load("montage.yaml");
    expect(wf.name).toBe("montage");
    expect(wf.description).toBe(expected.definition.description);
    expect(wf.tasks).toEqual(expected.definition.tasks);
  });

  it("etl-report.yaml runs end to end with /bin/sh in topological order", () => {
    const wf = load("etl-report.yaml");
    const byCode = new Map(wf.tasks.map((t) => [t.code, t]));
    const instanceDir = mkdtempSync(join(tmpdir(), "shoal-etl-instance-"));
    const taskDirs: string[] = [];
    const logs = new Map<string, string>();
    try {
      for (const code of topologicalOrder(wf.tasks)) {
        // Like a worker: a fresh empty cwd per task, one directory shared by the instance.
        const cwd = mkdtempSync(join(tmpdir(), `shoal-etl-${code}-`));
        taskDirs.push(cwd);
        const result = spawnSync("/bin/sh", ["-c", byCode.get(code)?.command ?? "false"], {
          cwd,
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", SHOAL_INSTANCE_DIR: instanceDir },
          encoding: "utf8",
          timeout: 20_000,
        });
        const log = `${result.stdout}${result.stderr}`;
        logs.set(code, log);
        expect(result.status, `${code} failed:\n${log}`).toBe(0);
      }
      const report = readFileSync(join(instanceDir, "report.md"), "utf8");
      for (const region of ["north", "south", "east", "west"]) {
        expect(report).toContain(region);
        expect(logs.get("report")).toContain(`| ${region} |`);
      }
      expect(logs.get("validate")).toContain("OK: 20000 rows");
    } finally {
      for (const dir of [instanceDir, ...taskDirs]) rmSync(dir, { recursive: true, force: true });
    }
  });
});
