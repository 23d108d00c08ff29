/**
 * A full disk under standalone's data dir (issue 12, stall 1): a start on a full file system is
 * refused at once, naming it; a disk that fills while standalone runs fails the backend's
 * writes (the embedded backend's SQLite writes; on `--backend emulators`, the DynamoDB emulator
 * crashes), and meanwhile the API answers 503 with a Retry-After (never a 500), `/v1/health`
 * says `degraded` and the log says the file system is full; once space is freed the backend
 * takes writes again (the emulator is restarted over the same data) and every run accepted
 * before finishes. CI runs it on both backends (SHOAL_BACKEND).
 *
 * Needs a small file system of its own: a tmpfs mounted here (root; skipped where mounting is
 * not allowed).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  cli,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

let mnt: string;
let mounted = false;
beforeAll(() => {
  mnt = mkdtempSync(join(tmpdir(), "shoal-disk-full-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt], { stdio: "ignore" });
    mounted = true;
  } catch {
    // Not root, or no mount in this sandbox: the tests skip.
  }
});
afterAll(() => {
  if (mounted) execFileSync("umount", ["-l", mnt], { stdio: "ignore" });
  rmSync(mnt, { recursive: true, force: true });
});

/** Fills the file system: a file as large as what is free (ENOSPC ends it). */
function fill(): string {
  const file = join(mnt, "fill");
  try {
    writeFileSync(file, Buffer.alloc(32 * 1024 * 1024));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
  }
  return file;
}

describe("standalone on a full disk", () => {
  it("refuses to start on a full file system, naming it", async (ctx) => {
    if (!mounted) ctx.skip();
    const file = fill();
    try {
      const dataDir = join(mnt, "refused");
      const res = await cli(["standalone", "--port", "0", "--data-dir", dataDir, "--no-examples"]);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain(`the file system of ${mnt} is full`);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it("answers 503 while the disk is full, and carries on once space is freed", async (ctx) => {
    if (!mounted) ctx.skip();
    let sa: RunningStandalone | undefined;
    try {
      sa = await startStandaloneProcess({
        dataDir: join(mnt, "data"),
        workers: 1,
        env: { SHOAL_QUIET: "" },
      });
      const url = sa.url;
      await putWorkflow(url, "echo", { tasks: [{ code: "a", type: "SHELL", command: "true" }] });
      expect((await waitFinal(url, await startRun(url, "echo"))).state).toBe("SUCCESS");

      const file = fill();
      const accepted: string[] = [];
      const statuses = new Set<number>();
      await until(
        async () => {
          const r = await api(url, "POST", "/v1/workflows/echo/runs", {});
          statuses.add(r.status);
          expect([202, 503], JSON.stringify(r.body)).toContain(r.status);
          if (r.status === 202) accepted.push(r.body.instanceId);
          else expect(r.body.error.code).toBe("ServiceUnavailable");
          return r.status === 503;
        },
        { timeoutMs: 20_000, intervalMs: 100, what: "a 503 while the disk is full" },
      );
      expect((await api(url, "GET", "/v1/health")).status).toBe(503);
      await until(() => /the file system of .* is full/.test(sa?.output() ?? ""), {
        what: "the log to say the disk is full",
      });

      rmSync(file, { force: true });
      await until(async () => (await api(url, "GET", "/v1/health")).status === 200, {
        timeoutMs: 30_000,
        what: "health once space is freed",
      });
      for (const id of accepted) expect((await waitFinal(url, id, 60_000)).state).toBe("SUCCESS");
      expect((await waitFinal(url, await startRun(url, "echo"))).state).toBe("SUCCESS");
      expect(statuses.has(500)).toBe(false);
    } finally {
      await sa?.stop();
    }
  }, 120_000);
});
