/**
 * Control verbs through the HTTP API of a real `shoal standalone`: pause/resume, rerun,
 * recover-failed, force-success, stop, END killing siblings, the workflow timeout, and that each
 * verb sent twice is a no-op or a clear 409.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  byCode,
  type E2eTask,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

type Task = E2eTask;

describe("control verbs in shoal standalone", () => {
  let sa: RunningStandalone;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "shoal-control-"));
    sa = await startStandaloneProcess({ dataDir: join(dir, "data"), workers: 4 });
  });
  afterAll(async () => {
    await sa?.stop();
  });

  const put = (name: string, def: unknown) => putWorkflow(sa.url, name, def);
  const start = (name: string, run: unknown = {}) => startRun(sa.url, name, run);
  const get = async (id: string) => (await api(sa.url, "GET", `/v1/instances/${id}`)).body;
  const waitState = (id: string, state: string) =>
    until(async () => ((await get(id))?.state === state ? get(id) : undefined), {
      timeoutMs: 60_000,
      what: `${id} ${state}`,
    });
  const waitTask = (id: string, code: string, state: string) =>
    until(
      async () => {
        const t = byCode(await get(id))[code];
        return t?.state === state ? t : undefined;
      },
      { timeoutMs: 60_000, what: `${code} ${state}` },
    );

  it("pause lets the running task finish, starts nothing new, and resume continues", async () => {
    const flag = join(dir, "release-pause");
    await put("pausable", {
      tasks: [
        {
          code: "slow",
          type: "SHELL",
          command: `while [ ! -f ${flag} ]; do sleep 0.1; done; echo done`,
        },
        { code: "next", type: "SHELL", command: "echo next", upstream: ["slow"] },
      ],
    });
    const id = await start("pausable");
    await waitTask(id, "slow", "RUNNING");
    const p = await api(sa.url, "POST", `/v1/instances/${id}/pause`);
    expect(p.status).toBe(202);
    expect(p.body).toEqual({ instanceId: id, state: "PAUSING" });
    await waitState(id, "PAUSING");
    // Sent again while pausing: a clear 409 names the state.
    const again = await api(sa.url, "POST", `/v1/instances/${id}/pause`);
    expect([202, 409]).toContain(again.status);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(flag, "");
    const paused = await waitState(id, "PAUSED");
    expect(byCode(paused).slow?.state).toBe("SUCCESS");
    expect(byCode(paused).next).toBeUndefined(); // nothing new started
    const twice = await api(sa.url, "POST", `/v1/instances/${id}/pause`);
    expect(twice.status).toBe(409);
    expect(twice.body.error.message).toMatch(/PAUSED/);
    const r = await api(sa.url, "POST", `/v1/instances/${id}/resume`);
    expect(r.status).toBe(202);
    const done = await waitFinal(sa.url, id, 60_000);
    expect(done.state).toBe("SUCCESS");
    expect(byCode(done).next?.state).toBe("SUCCESS");
    expect(byCode(done).slow?.attempt).toBe(1); // not run again
  });

  it("rerun runs a finished instance again with new attempts; old attempts stay readable", async () => {
    await put("rerunnable", {
      tasks: [
        { code: "a", type: "SHELL", command: "echo run-$SHOAL_ATTEMPT" },
        { code: "b", type: "SHELL", command: "echo b", upstream: ["a"] },
      ],
    });
    const id = await start("rerunnable");
    expect((await waitFinal(sa.url, id)).state).toBe("SUCCESS");
    const r = await api(sa.url, "POST", `/v1/instances/${id}/rerun`);
    expect(r.status).toBe(202);
    const dup = await api(sa.url, "POST", `/v1/instances/${id}/rerun`);
    expect([202, 409]).toContain(dup.status); // same command, or already running again
    const done = await until(
      async () => {
        const i = await get(id);
        return i.state === "SUCCESS" && i.runs >= 2 ? i : undefined;
      },
      { timeoutMs: 60_000, what: "the rerun" },
    );
    expect(done.instanceId).toBe(id);
    expect(byCode(done).a?.attempt).toBe(2);
    const attempts = await api(sa.url, "GET", `/v1/instances/${id}/tasks/a/attempts`);
    expect(attempts.body.items.map((t: Task) => [t.attempt, t.state])).toEqual([
      [1, "SUCCESS"],
      [2, "SUCCESS"],
    ]);
    const log1 = await api(sa.url, "GET", `/v1/instances/${id}/tasks/a/log?attempt=1`);
    expect(log1.body.lines.map((l: { message: string }) => l.message)).toContain("run-1");
  }, 60_000);

  it("recover-failed re-runs only the failed task and what follows; force-success unblocks", async () => {
    const marker = join(dir, "fixed");
    await put("recoverable", {
      failureStrategy: "CONTINUE",
      tasks: [
        { code: "ok", type: "SHELL", command: "echo ok" },
        { code: "flaky", type: "SHELL", command: `test -f ${marker}` },
        { code: "after", type: "SHELL", command: "echo after", upstream: ["flaky"] },
        { code: "broken", type: "SHELL", command: "exit 3" },
        { code: "tail", type: "SHELL", command: "echo tail", upstream: ["broken"] },
      ],
    });
    const id = await start("recoverable");
    const failed = await waitFinal(sa.url, id);
    expect(failed.state).toBe("FAILURE");
    expect(byCode(failed).after).toBeUndefined();
    // force-success needs a failed task of a finished instance.
    const notFailed = await api(sa.url, "POST", `/v1/instances/${id}/tasks/ok/force-success`);
    expect(notFailed.status).toBe(409);
    const forced = await api(sa.url, "POST", `/v1/instances/${id}/tasks/broken/force-success`);
    expect(forced.status).toBe(200);
    expect(forced.body.state).toBe("FORCED_SUCCESS");
    const forcedAgain = await api(sa.url, "POST", `/v1/instances/${id}/tasks/broken/force-success`);
    expect(forcedAgain.status).toBe(200);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(marker, "");
    expect((await api(sa.url, "POST", `/v1/instances/${id}/recover-failed`)).status).toBe(202);
    const done = await until(
      async () => {
        const i = await get(id);
        return i.state === "SUCCESS" ? i : undefined;
      },
      { timeoutMs: 60_000, what: "the recovery" },
    );
    const t = byCode(done);
    expect(t.ok?.attempt).toBe(1); // successful tasks are not re-run
    expect(t.flaky).toMatchObject({ state: "SUCCESS", attempt: 2 });
    expect(t.after?.state).toBe("SUCCESS");
    expect(t.broken?.state).toBe("FORCED_SUCCESS");
    expect(t.tail?.state).toBe("SUCCESS");
    const over = await api(sa.url, "POST", `/v1/instances/${id}/recover-failed`);
    expect(over.status).toBe(409);
  }, 90_000);

  it("END kills running siblings when a task fails", async () => {
    const survivor = join(dir, "sibling-survived");
    await put("end-kills", {
      failureStrategy: "END",
      tasks: [
        { code: "fails", type: "SHELL", command: "sleep 0.5; exit 1" },
        { code: "long", type: "SHELL", command: `sleep 30; touch ${survivor}` },
      ],
    });
    const id = await start("end-kills");
    const done = await waitFinal(sa.url, id, 30_000);
    expect(done.state).toBe("FAILURE");
    expect(byCode(done).long?.state).toBe("KILLED");
    // The attempt says why it was killed (shown by `shoal attempts` and `get instance`).
    expect(byCode(done).long?.error).toBe(
      "killed: task 'fails' failed and the failure strategy is END",
    );
    expect(existsSync(survivor)).toBe(false);
  }, 40_000);

  it("the workflow timeout kills what runs and ends FAILURE", async () => {
    await put("times-out", {
      timeoutSeconds: 2,
      tasks: [{ code: "forever", type: "SHELL", command: "sleep 60" }],
    });
    const id = await start("times-out");
    const done = await waitFinal(sa.url, id, 30_000);
    expect(done.state).toBe("FAILURE");
    expect(done.error).toMatch(/timed out/);
    expect(byCode(done).forever?.state).toBe("KILLED");
    expect(byCode(done).forever?.error).toBe("killed: the workflow timed out after 2s");
  }, 40_000);

  it("stop kills the running task; the instance ends STOPPED; a second stop is a 409", async () => {
    await put("stoppable", {
      tasks: [
        { code: "sleepy", type: "SHELL", command: "sleep 60" },
        { code: "never", type: "SHELL", command: "echo never", upstream: ["sleepy"] },
      ],
    });
    const id = await start("stoppable");
    await waitTask(id, "sleepy", "RUNNING");
    expect((await api(sa.url, "POST", `/v1/instances/${id}/stop`)).status).toBe(202);
    const done = await waitFinal(sa.url, id, 30_000);
    expect(done.state).toBe("STOPPED");
    expect(byCode(done).sleepy?.state).toBe("KILLED");
    expect(byCode(done).sleepy?.error).toBe("killed: the instance was stopped");
    expect(byCode(done).never).toBeUndefined();
    expect((await api(sa.url, "POST", `/v1/instances/${id}/stop`)).status).toBe(409);
  }, 40_000);
});
