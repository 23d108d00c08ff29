/**
 * "Why isn't my task running?" with real processes: a task in a worker group no worker polls is
 * explained as such (API and `shoal explain`), `shoal logs --follow` says so on stderr instead of
 * hanging silently, and once a `shoal worker --group gpu` polls (its heartbeat), the task runs
 * and the follow ends with its log. A task queued behind a busy worker of a polled group is
 * "busy" or "queued", not "no worker", and the worker's heartbeat says how many slots it has.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  cli,
  putWorkflow,
  REPO,
  type RunningStandalone,
  type RunningWorker,
  startRun,
  startStandaloneProcess,
  startWorkerProcess,
  waitFinal,
} from "../helpers/standalone.js";

const BIN = fileURLToPath(new URL("../../bin/shoal.js", import.meta.url));

describe("explain in shoal standalone", () => {
  let sa: RunningStandalone;
  let dataDir: string;
  let gpuWorker: RunningWorker | undefined;
  beforeAll(async () => {
    dataDir = join(mkdtempSync(join(tmpdir(), "shoal-explain-")), "data");
    sa = await startStandaloneProcess({ dataDir, workers: 1 });
  });
  afterAll(async () => {
    await gpuWorker?.stop();
    await sa?.stop();
  });

  it("a task in a worker group with no worker: explained, announced by logs --follow, run once a worker polls", async () => {
    await putWorkflow(sa.url, "train-gpu", {
      tasks: [{ code: "train", type: "SHELL", command: "echo trained", workerGroup: "gpu" }],
    });
    const id = await startRun(sa.url, "train-gpu");
    const e = await until(async () => {
      const r = await api(sa.url, "GET", `/v1/instances/${id}/tasks/train/explain`);
      return r.body?.reason === "NO_WORKER" ? r.body : undefined;
    });
    expect(e.message).toMatch(/^no worker has polled worker group 'gpu' in the last 120 s/);

    const explained = await cli(["explain", id, "--endpoint", sa.url]);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toMatch(
      /^train \(DISPATCHED\): no worker has polled worker group 'gpu' in the last 120 s/,
    );

    // Follow the log: it says what the task waits for instead of hanging silently.
    const follow = spawn(
      process.execPath,
      [BIN, "logs", id, "train", "--follow", "--endpoint", sa.url],
      {
        cwd: REPO,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    let err = "";
    follow.stdout.on("data", (d) => {
      out += d;
    });
    follow.stderr.on("data", (d) => {
      err += d;
    });
    const exited = new Promise<number>((r) => follow.once("exit", (code) => r(code ?? -1)));
    try {
      await until(() => err.includes("waiting: no worker has polled worker group 'gpu'"), {
        what: `the waiting notice (stderr so far: ${err})`,
      });
      gpuWorker = startWorkerProcess(dataDir, ["--group", "gpu", "--concurrency", "1"]);
      await gpuWorker.ready();
      expect(await exited).toBe(0);
    } finally {
      follow.kill();
    }
    expect(out).toMatch(/ trained\n/);
    expect((await waitFinal(sa.url, id, 30_000)).state).toBe("SUCCESS");
  });

  it("a task behind a busy worker of a polled group is queued, not without a worker", async () => {
    await putWorkflow(sa.url, "busy", {
      tasks: [
        { code: "slow", type: "SHELL", command: "sleep 2" },
        { code: "next", type: "SHELL", command: "echo next", priority: "LOW" },
      ],
    });
    const id = await startRun(sa.url, "busy");
    // One worker slot: whichever task runs first, the other waits in the queue.
    const waiting = await until(async () => {
      const r = await api(sa.url, "GET", `/v1/instances/${id}/explain`);
      const t = r.body?.tasks?.find((x: { state: string }) => x.state === "DISPATCHED");
      return t?.reason ? t : undefined;
    });
    // Busy (when the worker's last heartbeat saw its slot taken) or queued: never "no worker".
    expect(["QUEUED", "QUEUED_BEHIND_HIGHER_PRIORITY", "WORKERS_BUSY"]).toContain(waiting.reason);
    expect(waiting.facts).toMatchObject({ workerGroup: "default", servedBy: "workers" });
    expect(waiting.facts.lastPollAt).toMatch(/^\d{4}-/);
    // The worker's timer-written heartbeat carries its slots (standalone --workers 1: one slot).
    expect(waiting.facts.workers).toEqual([expect.objectContaining({ slots: 1 })]);
    expect((await waitFinal(sa.url, id, 30_000)).state).toBe("SUCCESS");
  });
});
