/**
 * `shoal standalone --retention-days N` deletes finished instances N days after they end, with
 * their task instances, task logs and work directories (the emulators have no DynamoDB TTL, so
 * standalone sweeps itself); `--keep-all` keeps everything. A tiny retention (2 s) and a fast
 * sweep (SHOAL_RETENTION_SWEEP_SECONDS) stand in for days.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  putWorkflow,
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
      await until(async () => (await api(url, "GET", `/v1/instances/${gone.id}`)).status === 404, {
        timeoutMs: 15_000,
        what: "the expired instance to be deleted",
      });
      expect((await gone.attempts()).status).toBe(404);
      expect(existsSync(gone.logs)).toBe(false);
      expect(existsSync(join(tinyDir, "work", "kept-or-not", gone.id))).toBe(false);

      // Meanwhile, for as long, the --keep-all standalone wrote no expiry and deleted nothing.
      expect((await api(keeping.url, "GET", `/v1/instances/${kept.id}`)).status).toBe(200);
      expect((await kept.attempts()).body.items).toHaveLength(1);
      expect(existsSync(kept.logs)).toBe(true);
    } finally {
      await Promise.all([tiny?.stop(), keeping.stop()]);
    }
  }, 60_000);
});
