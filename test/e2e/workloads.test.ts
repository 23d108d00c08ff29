/**
 * Real workflow DAGs (WfCommons traces of Pegasus runs) through the real entry points: the CLI
 * imports them into a running `shoal standalone`, runs them with --wait, and every edge is checked
 * against the task instances' timestamps.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WFCOMMONS_DIR } from "../../lib/import/wfcommons-file.js";
import { api, cli, type RunningStandalone, startStandaloneProcess } from "../helpers/standalone.js";

interface Task {
  code: string;
  state: string;
  attempt: number;
  startedAt: string;
  endedAt: string;
}

describe("WfCommons workflows in shoal standalone", () => {
  let sa: RunningStandalone;
  beforeAll(async () => {
    sa = await startStandaloneProcess({
      dataDir: mkdtempSync(join(tmpdir(), "shoal-e2e-")),
      workers: 24,
    });
  });
  afterAll(async () => {
    await sa?.stop();
  });

  async function runTrace(file: string, name: string, timeScale: number, tasks: number) {
    const env = { SHOAL_ENDPOINT: sa.url };
    const imported = await cli(
      [
        "import",
        "wfcommons",
        join(WFCOMMONS_DIR, `${file}.gz`),
        "--name",
        name,
        "--time-scale",
        String(timeScale),
      ],
      env,
    );
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    const run = await cli(["run", name, "--wait", "--timeout", "240"], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/SUCCESS/);
    const id = run.stdout.trim().split("\n")[0] as string;
    const inst = (await api(sa.url, "GET", `/v1/instances/${id}`)).body;
    expect(inst.state).toBe("SUCCESS");
    const byCode = new Map<string, Task>(inst.tasks.map((t: Task) => [t.code, t]));
    expect(byCode.size).toBe(tasks);
    for (const t of byCode.values()) {
      expect(t.state).toBe("SUCCESS");
      expect(t.attempt).toBe(1);
    }
    const def = (await api(sa.url, "GET", `/v1/workflows/${name}`)).body;
    let edges = 0;
    for (const task of def.tasks as Array<{ code: string; upstream: string[] }>) {
      const child = byCode.get(task.code) as Task;
      for (const up of task.upstream) {
        const parent = byCode.get(up) as Task;
        expect(Date.parse(parent.endedAt), `${up} -> ${task.code}`).toBeLessThanOrEqual(
          Date.parse(child.startedAt),
        );
        edges++;
      }
    }
    return edges;
  }

  it("runs Montage (58 tasks) to SUCCESS with every parent ending before its children start", async () => {
    expect(await runTrace("montage-chameleon-2mass-005d-001.json", "montage-e2e", 0.01, 58)).toBe(
      114,
    );
  }, 300_000);

  // On the emulators (npm run test:e2e:emulators) its 1,695 tasks take two minutes of CI that
  // check nothing Montage does not check there: the scale runs on the default backend.
  it.skipIf(process.env.SHOAL_BACKEND === "emulators")(
    "runs Epigenomics (1,695 tasks) to SUCCESS with every parent ending before its children start",
    async () => {
      expect(
        await runTrace(
          "epigenomics-chameleon-ilmn-6seq-50k-001.json",
          "epigenomics-e2e",
          0.001,
          1695,
        ),
      ).toBe(2108);
    },
    300_000,
  );
});
