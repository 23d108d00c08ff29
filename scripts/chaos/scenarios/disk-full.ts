/**
 * Scenario 4b: a full disk under standalone's data dir. The data dir is on a small tmpfs of its
 * own (mounting takes root: without it the scenario is skipped, and says so); under load the
 * file system is filled with one file until ENOSPC, kept full for a third of the fault time, and
 * freed. `/v1/health` must say 503 while it is full and 200 once space is freed, and every
 * accepted run must finish. The side-effect file and the process output stay off the tmpfs, and
 * the data is copied to `<dir>/data` before it is unmounted.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Check } from "../invariants.js";
import { health, Submitter } from "../load.js";
import { freePort, startStandalone } from "../processes.js";
import { finishRuns, type Scenario, setUpLoad, tearDown } from "../scenario.js";

/** Size of the tmpfs: room for the emulators' data of a short run. */
const SIZE = "64m";

/** Writes one file as large as what is free on the file system (ENOSPC ends it). */
function fill(file: string): void {
  try {
    writeFileSync(file, Buffer.alloc(256 * 1024 * 1024));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
  }
}

export const diskFull: Scenario = async (ctx) => {
  const mnt = join(ctx.dir, "mnt");
  mkdirSync(mnt, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${SIZE}`, "tmpfs", mnt], { stdio: "ignore" });
  } catch {
    return {
      name: ctx.name,
      load: "-",
      faults: "skipped: mounting a small file system takes root",
      checks: [{ name: "skipped", ok: true, detail: "no tmpfs could be mounted" }],
      notes: [],
    };
  }
  try {
    const port = await freePort();
    const sa = await startStandalone({
      dataDir: join(mnt, "data"),
      logDir: join(ctx.dir, "chaos-logs"),
      port,
      workers: 8,
    });
    const base = () => sa.url;
    const { names, dags, effectsFile } = await setUpLoad(ctx, sa.url);
    const submitter = Submitter.start(ctx, base, names);
    await sleep(ctx.faultMs / 3);
    const filler = join(mnt, "fill");
    const filledAt = Date.now();
    fill(filler);
    ctx.log(`file system of ${mnt} filled at ${new Date(filledAt).toISOString()}`);
    let degradedMs: number | undefined;
    while (Date.now() - filledAt < ctx.faultMs / 3) {
      if (degradedMs === undefined && (await health(sa.url)).status === 503)
        degradedMs = Date.now() - filledAt;
      await sleep(200);
    }
    rmSync(filler, { force: true });
    const freedAt = Date.now();
    let healthyMs: number | undefined;
    while (Date.now() - freedAt < 30_000) {
      if ((await health(sa.url)).status === 200) {
        healthyMs = Date.now() - freedAt;
        break;
      }
      await sleep(200);
    }
    ctx.log(`freed; health 200 after ${healthyMs ?? "never"} ms`);
    await sleep(Math.max(0, ctx.faultMs / 3 - (Date.now() - freedAt)));
    const done = await finishRuns(ctx, base, submitter, dags, effectsFile);
    const orphans = await tearDown(ctx.dir);
    const healthCheck: Check = {
      name: "health reflects reality",
      ok: degradedMs !== undefined && healthyMs !== undefined,
      detail: `503 ${degradedMs === undefined ? "not seen" : `after ${degradedMs} ms`} while full; 200 ${healthyMs === undefined ? "never" : `${healthyMs} ms`} after space was freed`,
    };
    return {
      name: ctx.name,
      figures: done.figures,
      load: done.load,
      faults: `${SIZE} tmpfs filled for ${Math.round(ctx.faultMs / 3000)} s, then freed`,
      checks: [...done.checks, healthCheck, orphans],
      notes: [
        `disk full → health 503 after ${degradedMs ?? "-"} ms; freed → 200 after ${healthyMs ?? "-"} ms`,
      ],
    };
  } finally {
    // The data goes with the tmpfs: a copy stays for --keep and for a failed run's evidence.
    try {
      cpSync(join(mnt, "data"), join(ctx.dir, "data"), { recursive: true });
    } catch {
      // Nothing to copy (standalone never started).
    }
    // Lazily: processes still on it (after a failure, main kills them) do not keep it mounted.
    try {
      execFileSync("umount", ["-l", mnt], { stdio: "ignore" });
    } catch {
      // Unmounted already.
    }
  }
};
