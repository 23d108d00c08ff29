/**
 * Stop and crash recovery through the real process: a stop kills the task's whole process group;
 * a `kill -9` of standalone followed by a restart on the same data dir loses nothing.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import { api, startStandaloneProcess, waitFinal } from "../helpers/standalone.js";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("stop", () => {
  it("kills the running task's process group, starts nothing more and ends STOPPED", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-stop-"));
    const sa = await startStandaloneProcess({ dataDir: dir, workers: 2 });
    try {
      const put = await api(sa.url, "PUT", "/v1/workflows/sleeper", {
        tasks: [
          // The sleep runs in a grandchild: only a process-group kill reaches it.
          {
            code: "long",
            type: "SHELL",
            command: 'sleep 60 & echo $! > "$SHOAL_INSTANCE_DIR/sleep.pid"; wait',
          },
          { code: "after", type: "SHELL", command: "true", upstream: ["long"] },
        ],
      });
      expect(put.status).toBe(201);
      const run = await api(sa.url, "POST", "/v1/workflows/sleeper/runs", {});
      const id = run.body.instanceId as string;
      const pidFile = join(dir, "work", "sleeper", id, "shared", "sleep.pid");
      const pid = await until(() => Number(readFileSync(pidFile, "utf8")) || undefined, {
        what: "the task to start",
      });
      expect(alive(pid)).toBe(true);
      const stop = await api(sa.url, "POST", `/v1/instances/${id}/stop`);
      expect(stop.status).toBe(202);
      expect(stop.body.state).toBe("STOPPING");
      const inst = await waitFinal(sa.url, id, 30_000);
      expect(inst.state).toBe("STOPPED");
      expect(inst.tasks.map((t: { code: string; state: string }) => [t.code, t.state])).toEqual([
        ["long", "KILLED"],
      ]);
      await until(() => !alive(pid), { what: "the grandchild sleep to be killed" });
      // Stopping a finished instance is a clear 409.
      const again = await api(sa.url, "POST", `/v1/instances/${id}/stop`);
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe("Conflict");
    } finally {
      await sa.stop();
    }
  }, 60_000);
});

describe("kill -9 and restart", () => {
  it("completes running instances and loses no submitted run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-crash-"));
    let sa = await startStandaloneProcess({ dataDir: dir, workers: 4 });
    const put = await api(sa.url, "PUT", "/v1/workflows/crashy", {
      tasks: [
        { code: "a", type: "SHELL", command: "sleep 0.2" },
        { code: "b1", type: "SHELL", command: "sleep 2", upstream: ["a"] },
        { code: "b2", type: "SHELL", command: "sleep 2", upstream: ["a"] },
        { code: "b3", type: "SHELL", command: "sleep 2", upstream: ["a"] },
        { code: "c", type: "SHELL", command: "echo done", upstream: ["b1", "b2", "b3"] },
      ],
    });
    expect(put.status).toBe(201);
    const first = (await api(sa.url, "POST", "/v1/workflows/crashy/runs", {})).body
      .instanceId as string;
    await until(
      async () => {
        const i = (await api(sa.url, "GET", `/v1/instances/${first}`)).body;
        return i.tasks.filter((t: { state: string }) => t.state === "RUNNING").length === 3
          ? i
          : undefined;
      },
      { what: "b1..b3 to run" },
    );
    // A second run accepted just before the crash.
    const second = (await api(sa.url, "POST", "/v1/workflows/crashy/runs", {})).body
      .instanceId as string;
    await sa.kill9();

    sa = await startStandaloneProcess({ dataDir: dir, workers: 4 });
    try {
      const [one, two] = await Promise.all([
        waitFinal(sa.url, first, 90_000),
        waitFinal(sa.url, second, 90_000),
      ]);
      expect(one.state).toBe("SUCCESS");
      expect(two.state).toBe("SUCCESS");
      for (const t of one.tasks as Array<{ code: string; state: string; attempt: number }>) {
        expect(t.state).toBe("SUCCESS");
        // The interrupted attempts were failed over to a new attempt, not counted as retries.
        if (t.code.startsWith("b")) {
          expect(t.attempt).toBe(2);
          const attempts = (
            await api(sa.url, "GET", `/v1/instances/${first}/tasks/${t.code}/attempts`)
          ).body.items;
          expect(attempts.map((a: { state: string }) => a.state)).toEqual([
            "NEED_FAULT_TOLERANCE",
            "SUCCESS",
          ]);
        }
      }
      const list = (await api(sa.url, "GET", "/v1/instances?workflow=crashy")).body.items;
      expect(list.map((i: { instanceId: string }) => i.instanceId).sort()).toEqual(
        [first, second].sort(),
      );
    } finally {
      await sa.stop();
    }
  }, 150_000);
});
