/**
 * A worker killed with `kill -9` holds no queued task: it received no more messages than it had
 * free slots, and a message it received but did not start comes back within seconds (short
 * receive visibility), not after 20–40 s. Its running task fails over when its lease runs out
 * (10 s in standalone), so every task it held starts again elsewhere within ~12 s of the kill.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  type E2eTask,
  putWorkflow,
  type RunningStandalone,
  type RunningWorker,
  startRun,
  startStandaloneProcess,
  startWorkerProcess,
} from "../helpers/standalone.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "shoal-worker-kill-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The tasks of an instance as the API shows them now. */
async function tasksOf(url: string, id: string): Promise<E2eTask[]> {
  return ((await api(url, "GET", `/v1/instances/${id}`)).body.tasks ?? []) as E2eTask[];
}

describe("a worker killed with kill -9", () => {
  let sa: RunningStandalone;
  const workers: RunningWorker[] = [];
  afterAll(async () => {
    for (const w of workers) await w.stop("SIGKILL");
    await sa?.stop();
  });

  it("holds none of the queued tasks: each starts on another worker within 12 s", async () => {
    sa = await startStandaloneProcess({ dataDir: dir, workers: 0 });
    await putWorkflow(sa.url, "wide", {
      tasks: ["a", "b", "c"].map((code) => ({ code, type: "SHELL", command: "sleep 60" })),
    });
    const first = startWorkerProcess(dir, ["--concurrency", "1"]);
    workers.push(first);
    await first.ready();
    const id = await startRun(sa.url, "wide");
    // The first worker runs one task; before the fix it also took a second one ahead.
    await until(
      async () => (await tasksOf(sa.url, id)).filter((t) => t.state === "RUNNING").length === 1,
      { what: "one task running on the first worker" },
    );
    await new Promise((r) => setTimeout(r, 1_000)); // time for a prefetch, had there been one
    const second = startWorkerProcess(dir, ["--concurrency", "3"]);
    workers.push(second);
    await second.ready();
    const secondPid = String(second.proc.pid);
    await until(
      async () =>
        (await tasksOf(sa.url, id)).some(
          (t) => t.state === "RUNNING" && t.worker?.includes(secondPid),
        ),
      { what: "the second worker to run a queued task" },
    );
    const killedAt = Date.now();
    await first.stop("SIGKILL");
    const onSecond = await until(
      async () => {
        const tasks = await tasksOf(sa.url, id);
        const running = tasks.filter((t) => t.state === "RUNNING" && t.worker?.includes(secondPid));
        return running.length === 3 ? running : undefined;
      },
      { timeoutMs: 45_000, intervalMs: 100, what: "every task to run on the second worker" },
    );
    const lastStart = Math.max(...onSecond.map((t) => Date.parse(t.startedAt ?? "")));
    expect(lastStart - killedAt).toBeLessThan(12_000);
    await api(sa.url, "POST", `/v1/instances/${id}/stop`);
  }, 120_000);
});
