/**
 * `shoal standalone --retention-days N` deletes finished instances N days after they end, with
 * their task instances, task logs and work directories (the emulators have no DynamoDB TTL, so
 * standalone sweeps itself); `--keep-all` keeps everything; an instance that still runs keeps
 * the attempts of its finished tasks, however old. A tiny retention (2 s) and a fast sweep
 * (SHOAL_RETENTION_SWEEP_SECONDS) stand in for days. Also: a `shoal worker --data-dir DIR`
 * joins the standalone whose data directory is DIR, as its banner says.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  putWorkflow,
  REPO,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

const SWEEP = { SHOAL_RETENTION_SWEEP_SECONDS: "0.5" };
/** 0.00002 days: 2 s. */
const TINY_DAYS = "0.00002";

async function runOne(sa: RunningStandalone, dataDir: string) {
  await putWorkflow(sa.url, "kept-or-not", {
    tasks: [{ code: "a", type: "SHELL", command: 'echo hello; echo x > "$SHOAL_INSTANCE_DIR/f"' }],
  });
  const id = await startRun(sa.url, "kept-or-not");
  expect((await waitFinal(sa.url, id)).state).toBe("SUCCESS");
  return {
    id,
    logs: join(dataDir, "logs", "kept-or-not", id),
    attempts: () => api(sa.url, "GET", `/v1/instances/${id}/tasks/a/attempts`),
  };
}

describe("standalone retention", () => {
  it("deletes an old instance, its tasks, logs and work directory; --keep-all keeps them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-retention-e2e-"));
    const keepDir = join(dir, "keep");
    const tinyDir = join(dir, "tiny");
    const keeping = await startStandaloneProcess({
      dataDir: keepDir,
      workers: 1,
      args: ["--keep-all"],
      env: SWEEP,
    });
    let tiny: RunningStandalone | undefined;
    try {
      expect(keeping.output()).toContain("everything kept (--keep-all)");
      const kept = await runOne(keeping, keepDir);
      expect(existsSync(kept.logs)).toBe(true);

      tiny = await startStandaloneProcess({
        dataDir: tinyDir,
        workers: 1,
        args: ["--retention-days", TINY_DAYS],
        env: SWEEP,
      });
      const gone = await runOne(tiny, tinyDir);
      expect(existsSync(gone.logs)).toBe(true);
      const url = tiny.url;
      // One sweep deletes the instance first (it answers 404 from then on), then its attempts and
      // files: wait for the sweep to finish, not just to begin.
      const workDir = join(tinyDir, "work", "kept-or-not", gone.id);
      await until(
        async () =>
          (await api(url, "GET", `/v1/instances/${gone.id}`)).status === 404 &&
          (await gone.attempts()).status === 404 &&
          !existsSync(gone.logs) &&
          !existsSync(workDir),
        { timeoutMs: 15_000, what: "the expired instance, its attempts and files to be deleted" },
      );
      expect((await gone.attempts()).status).toBe(404);
      expect(existsSync(gone.logs)).toBe(false);
      expect(existsSync(workDir)).toBe(false);

      // Meanwhile, for as long, the --keep-all standalone wrote no expiry and deleted nothing.
      expect((await api(keeping.url, "GET", `/v1/instances/${kept.id}`)).status).toBe(200);
      expect((await kept.attempts()).body.items).toHaveLength(1);
      expect(existsSync(kept.logs)).toBe(true);
    } finally {
      await Promise.all([tiny?.stop(), keeping.stop()]);
    }
  }, 60_000);
});

describe("standalone retention of a running instance", () => {
  it("keeps the attempts of an instance's finished tasks while it runs, past their own expiry", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "shoal-retention-live-"));
    const sa = await startStandaloneProcess({
      dataDir,
      workers: 2,
      args: ["--retention-days", TINY_DAYS],
      env: SWEEP,
    });
    try {
      await putWorkflow(sa.url, "a-then-b", {
        tasks: [
          { code: "a", type: "SHELL", command: "echo a" },
          {
            code: "b",
            type: "SHELL",
            upstream: ["a"],
            command: 'while [ ! -f "$SHOAL_INSTANCE_DIR/go" ]; do sleep 0.2; done',
          },
        ],
      });
      await putWorkflow(sa.url, "quick", {
        tasks: [{ code: "q", type: "SHELL", command: "true" }],
      });
      const id = await startRun(sa.url, "a-then-b");
      await until(
        async () => {
          const inst = (await api(sa.url, "GET", `/v1/instances/${id}`)).body;
          return inst.tasks?.some(
            (t: { code: string; state: string }) => t.code === "b" && t.state === "RUNNING",
          );
        },
        { timeoutMs: 20_000, what: "b to run (a ended)" },
      );
      // Two runs that end after a did, each deleted by a sweep: the second one's sweep started
      // after the first one's ended, which ran when a's attempt had expired on its own.
      for (let i = 0; i < 2; i++) {
        const q = await startRun(sa.url, "quick");
        expect((await waitFinal(sa.url, q)).state).toBe("SUCCESS");
        await until(async () => (await api(sa.url, "GET", `/v1/instances/${q}`)).status === 404, {
          timeoutMs: 15_000,
          what: "the quick run to be deleted",
        });
      }
      const attempts = await api(sa.url, "GET", `/v1/instances/${id}/tasks/a/attempts`);
      expect(attempts.status).toBe(200);
      expect(attempts.body.items).toHaveLength(1);
      expect(attempts.body.items[0].state).toBe("SUCCESS");
      // Once it ended, the instance goes, with every attempt.
      writeFileSync(join(dataDir, "work", "a-then-b", id, "shared", "go"), "");
      expect((await waitFinal(sa.url, id)).state).toBe("SUCCESS");
      await until(async () => (await api(sa.url, "GET", `/v1/instances/${id}`)).status === 404, {
        timeoutMs: 15_000,
        what: "the finished instance to be deleted",
      });
    } finally {
      await sa.stop();
    }
  }, 90_000);
});

describe("shoal worker --data-dir", () => {
  it("joins the standalone of that data directory, on any port, as its banner says", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "shoal-join-e2e-"));
    const sa = await startStandaloneProcess({ dataDir, workers: 0 });
    // From another directory, with no SHOAL_ENV_FILE: only --data-dir says where.
    const env: NodeJS.ProcessEnv = { ...process.env, SHOAL_QUIET: "true" };
    delete env.SHOAL_ENV_FILE;
    const worker = spawn(
      process.execPath,
      [join(REPO, "bin", "shoal.js"), "worker", "--data-dir", dataDir, "--concurrency", "1"],
      { cwd: tmpdir(), env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    worker.stdout.on("data", (d) => {
      out += d;
    });
    worker.stderr.on("data", (d) => {
      out += d;
    });
    const exited = new Promise<void>((r) => worker.once("exit", () => r()));
    try {
      expect(sa.output()).toContain(
        `start one: npx shoal worker --data-dir ${dataDir} --group default`,
      );
      await until(() => out.includes("shoal worker"), { what: `the worker to start (${out})` });
      expect(out).toContain(`environment from ${join(dataDir, "endpoints.env")}`);
      await putWorkflow(sa.url, "joined", {
        tasks: [{ code: "a", type: "SHELL", command: "echo joined" }],
      });
      const id = await startRun(sa.url, "joined");
      const inst = await waitFinal(sa.url, id, 30_000);
      expect(inst.state).toBe("SUCCESS");
      expect(inst.tasks[0].worker).toContain(String(worker.pid));
    } finally {
      if (worker.exitCode === null) worker.kill("SIGINT");
      await exited;
      await sa.stop();
    }
  }, 90_000);
});
