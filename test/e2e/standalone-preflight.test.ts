/**
 * `shoal standalone` checks its port and data dir before it starts anything
 * (lib/standalone/preflight.ts): a start that cannot succeed fails at once, naming the problem,
 * exits non-zero and writes nothing.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDataDir, LOCK_FILE } from "../../lib/standalone/preflight.js";
import { api, cli, type RunningStandalone, startStandaloneProcess } from "../helpers/standalone.js";

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "shoal-preflight-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** `shoal standalone` with these arguments, and how long it took to exit, ms. */
async function standalone(args: string[]) {
  const started = performance.now();
  const res = await cli(["standalone", "--no-examples", ...args], { SHOAL_QUIET: "true" });
  return { ...res, tookMs: performance.now() - started };
}

describe("shoal standalone preflight", () => {
  it("names a port in use at once, exits non-zero and writes nothing", async () => {
    const occupied: Server = createServer();
    await new Promise<void>((r) => occupied.listen(0, "127.0.0.1", () => r()));
    const port = (occupied.address() as { port: number }).port;
    const dataDir = join(root, "port-in-use");
    try {
      const res = await standalone(["--port", String(port), "--data-dir", dataDir]);
      expect(res.code, res.stderr).not.toBe(0);
      expect(res.stderr).toContain(
        `port ${port} is in use: stop what listens there or pass --port`,
      );
      expect(res.stderr).not.toMatch(/\n\s+at /); // no stack trace
      // Before any emulator starts (they took ~8 s to get to the port before).
      expect(res.tookMs).toBeLessThan(5_000);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise<void>((r) => occupied.close(() => r()));
    }
  });

  it("names an unknown --backend, SHOAL_BACKEND or SHOAL_TASK_EVENTS, exit 2, and writes nothing", async () => {
    const dataDir = join(root, "bad-backend");
    const flag = await standalone(["--backend", "dynamo", "--data-dir", dataDir]);
    expect(flag.code, flag.stderr).toBe(2);
    expect(flag.stderr).toContain("must be one of: embedded, emulators");
    const started = performance.now();
    const env = await cli(["standalone", "--no-examples", "--data-dir", dataDir], {
      SHOAL_QUIET: "true",
      SHOAL_BACKEND: "sqlite",
    });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(env.code, env.stderr).toBe(2);
    expect(env.stderr).toContain(
      "SHOAL_BACKEND must be one of: embedded, emulators (it is 'sqlite')",
    );
    const events = await cli(["standalone", "--no-examples", "--data-dir", dataDir], {
      SHOAL_QUIET: "true",
      SHOAL_TASK_EVENTS: "some",
    });
    expect(events.code, events.stderr).toBe(2);
    expect(events.stderr).toContain(
      "SHOAL_TASK_EVENTS must be one of: unsuccessful, all, none (it is 'some')",
    );
    expect(`${flag.stderr}${env.stderr}${events.stderr}`).not.toMatch(/\n\s+at /);
    expect(existsSync(dataDir)).toBe(false);
  });

  it("names a data dir that is a file, or under one", async () => {
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    const res = await standalone(["--port", "0", "--data-dir", file]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(`data dir ${file} is not a directory`);
    const under = await standalone(["--port", "0", "--data-dir", join(file, "data")]);
    expect(under.code).not.toBe(0);
    expect(under.stderr).toContain(`${file} is not a directory`);
    expect(readFileSync(file, "utf8")).toBe("x");
  });

  it("refuses a data dir another standalone uses, which keeps running", async () => {
    const dataDir = join(root, "shared");
    let first: RunningStandalone | undefined;
    try {
      first = await startStandaloneProcess({ dataDir, workers: 0 });
      const res = await standalone(["--port", "0", "--data-dir", dataDir]);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain(
        `data dir ${dataDir} is in use by another shoal standalone (pid ${first.proc.pid})`,
      );
      expect(res.tookMs).toBeLessThan(5_000);
      expect((await api(first.url, "GET", "/v1/health")).status).toBe(200);
    } finally {
      await first?.stop();
    }
    // The lock goes with the process that held it.
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
  }, 60_000);

  it("takes over a lock left by a process that is gone (a kill -9)", async () => {
    const dataDir = join(root, "stale");
    mkdirSync(dataDir);
    // Not a live process: pids stop well below this (Linux pid_max is at most 2^22).
    writeFileSync(join(dataDir, LOCK_FILE), "99999999\n");
    expect(await checkDataDir(dataDir)).toBeUndefined();
  });
});

describe("shoal standalone from another directory", () => {
  it("starts its children from a directory where Shoal's own packages do not resolve", async () => {
    // The children were forked with `--import tsx`, which Node resolves from the current
    // directory: from anywhere but the installation they died with "exited (1)".
    const cwd = join(root, "elsewhere");
    mkdirSync(cwd);
    const sa = await startStandaloneProcess({ dataDir: join(cwd, "data"), workers: 1, cwd });
    try {
      const health = await api(sa.url, "GET", "/v1/health");
      expect(health.status).toBe(200);
      expect(health.body.parts).toMatchObject(
        process.env.SHOAL_BACKEND === "emulators"
          ? { dynamodb: "ok", sqs: "ok", worker: "ok" }
          : { storage: "ok", worker: "ok" },
      );
    } finally {
      await sa.stop();
    }
  }, 60_000);
});
