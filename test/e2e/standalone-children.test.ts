/**
 * Standalone supervises its children (the DynamoDB and SQS emulators, the built-in worker) for
 * their whole life: a `kill -9` of one shows in `/v1/health` (503, the part "restarting"), the
 * child is started again (an emulator on the same port, over the same data), health is 200 again,
 * what was stored before is still there and a run submitted afterwards succeeds. An emulator
 * that cannot be started again stops the whole standalone, with a message and a non-zero exit.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  childPid,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

const CHILDREN = {
  worker: /worker-main\.ts/,
  dynamodb: /emulator-main\.ts .* dynamodb$/,
  sqs: /emulator-main\.ts .* sqs$/,
} as const;

type Part = keyof typeof CHILDREN;

/** Not quiet: the supervisor's log lines are part of what is checked. */
const LOUD = { SHOAL_QUIET: "" };

/** Kills `part`'s child with SIGKILL, sees health degrade, then recover; returns the new pid. */
async function killAndRecover(sa: RunningStandalone, part: Part): Promise<number> {
  const pid = sa.proc.pid as number;
  const before = await childPid(pid, CHILDREN[part], `standalone's ${part} child`);
  const healthy = await api(sa.url, "GET", "/v1/health");
  expect(healthy.status).toBe(200);
  expect(healthy.body).toMatchObject({ status: "ok", parts: { [part]: "ok" } });
  process.kill(before, "SIGKILL");
  const degraded = await until(
    async () => {
      const h = await api(sa.url, "GET", "/v1/health");
      return h.status === 503 ? h : undefined;
    },
    { intervalMs: 10, what: `health to report the ${part} child's death` },
  );
  expect(degraded.body.status).toBe("degraded");
  expect(degraded.body.parts[part]).toBe("restarting");
  const recovered = await until(
    async () => {
      const h = await api(sa.url, "GET", "/v1/health");
      return h.status === 200 ? h : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, what: `the ${part} child to be restarted` },
  );
  expect(recovered.body).toMatchObject({ status: "ok", parts: { [part]: "ok" } });
  const after = await childPid(pid, CHILDREN[part], `the new ${part} child`);
  expect(after).not.toBe(before);
  expect(sa.output()).toMatch(new RegExp(`${part}.*exited unexpectedly.*SIGKILL`));
  return after;
}

async function runSucceeds(sa: RunningStandalone, name: string): Promise<void> {
  const id = await startRun(sa.url, name);
  expect((await waitFinal(sa.url, id, 60_000)).state).toBe("SUCCESS");
}

/** These children exist on the emulators backend only (the embedded one has none). */
const EMULATORS = ["--backend", "emulators"];

describe("standalone's children", () => {
  it("restarts a killed worker child; runs submitted afterwards succeed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-children-w-"));
    const sa = await startStandaloneProcess({
      dataDir: dir,
      workers: 2,
      env: LOUD,
      args: EMULATORS,
    });
    try {
      await putWorkflow(sa.url, "two", {
        tasks: [
          { code: "a", type: "SHELL", command: "echo a" },
          { code: "b", type: "SHELL", command: "echo b", upstream: ["a"] },
        ],
      });
      await runSucceeds(sa, "two");
      await killAndRecover(sa, "worker");
      await runSucceeds(sa, "two");
    } finally {
      await sa.stop();
    }
  }, 120_000);

  it("restarts a killed emulator child on the same port, over the same data", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-children-e-"));
    const sa = await startStandaloneProcess({
      dataDir: dir,
      workers: 2,
      env: LOUD,
      args: EMULATORS,
    });
    try {
      await putWorkflow(sa.url, "kept", {
        tasks: [{ code: "a", type: "SHELL", command: "echo kept" }],
      });
      await killAndRecover(sa, "dynamodb");
      // The workflow stored before the kill is still there, and runs.
      const wf = await api(sa.url, "GET", "/v1/workflows/kept");
      expect(wf.status).toBe(200);
      await runSucceeds(sa, "kept");
      await killAndRecover(sa, "sqs");
      await runSucceeds(sa, "kept");
      expect(sa.proc.exitCode).toBeNull();
    } finally {
      await sa.stop();
    }
  }, 180_000);

  it("stops with a clear message and a non-zero exit when an emulator cannot be restarted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-children-x-"));
    const sa = await startStandaloneProcess({
      dataDir: dir,
      workers: 1,
      env: LOUD,
      args: EMULATORS,
    });
    try {
      const pid = await childPid(sa.proc.pid as number, CHILDREN.dynamodb, "the dynamodb child");
      const exited = new Promise<number | null>((r) => sa.proc.once("exit", (code) => r(code)));
      process.kill(pid, "SIGKILL");
      // A file where LevelDB's directory was: every restart fails.
      rmSync(join(dir, "dynamodb"), { recursive: true, force: true });
      writeFileSync(join(dir, "dynamodb"), "not a directory");
      const h = await until(
        async () => {
          const r = await api(sa.url, "GET", "/v1/health");
          return r.status === 503 ? r : undefined;
        },
        { intervalMs: 10, what: "health to report the dynamodb child's death" },
      );
      expect(h.body.parts.dynamodb).toBe("restarting");
      expect(await exited).toBe(1);
      expect(sa.output()).toMatch(
        /error: standalone stopped: the dynamodb process failed to restart: .*; it could not be restarted \(5 attempts in a row failed\), so standalone stops/,
      );
    } finally {
      await sa.stop();
    }
  }, 120_000);
});
