/**
 * An instance run more than once (rerun, recover-failed) shows its current round: a task the
 * round has not reached is "not started" (absent from `tasks`), never an earlier round's attempt,
 * and `tasks` agrees with `progress`; earlier rounds stay readable through the attempts endpoint.
 * The dispatcher and worker are driven by hand (test/helpers/api-engine.ts).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiServer,
  createWorkflow,
  del,
  expectError,
  get,
  post,
  startApiServer,
  startRun,
  stopApiServer,
} from "../helpers/api-client.js";
import { control, receiveTask, runNextTask, startInstance } from "../helpers/api-engine.js";

beforeAll(async () => {
  await startApiServer();
});
afterAll(stopApiServer);

interface Task {
  code: string;
  state: string;
  attempt: number;
}

const tasksOf = async (id: string) => {
  const body = (await get(`/v1/instances/${id}`)).body;
  const tasks = Object.fromEntries(
    (body.tasks as Task[]).map((t) => [t.code, `${t.state} ${t.attempt}`]),
  );
  return { state: body.state as string, progress: body.progress, tasks };
};

describe("the current round of an instance", () => {
  it("after rerun: tasks not yet reached are not started, and a failed rerun does not show the old SUCCESS", async () => {
    const marker = join(mkdtempSync(join(tmpdir(), "shoal-rounds-")), "broken");
    await createWorkflow("rounds", {
      tasks: [
        { code: "first", type: "SHELL", command: `test ! -f ${marker}` },
        { code: "final", type: "SHELL", command: "echo final", upstream: ["first"] },
      ],
    });
    const id = await startRun("rounds");
    await startInstance(id);
    await runNextTask(id);
    await runNextTask(id);
    expect(await tasksOf(id)).toEqual({
      state: "SUCCESS",
      progress: { done: 2, active: 0, failed: 0, total: 2 },
      tasks: { first: "SUCCESS 1", final: "SUCCESS 1" },
    });

    writeFileSync(marker, "");
    await control(id, "rerun");
    // The rerun dispatched `first` again; `final` has not been reached in this round.
    expect(await tasksOf(id)).toEqual({
      state: "RUNNING",
      progress: { done: 0, active: 1, failed: 0, total: 2 },
      tasks: { first: "DISPATCHED 2" },
    });
    await runNextTask(id);
    expect(await tasksOf(id)).toEqual({
      state: "FAILURE",
      progress: { done: 0, active: 0, failed: 1, total: 2 },
      tasks: { first: "FAILURE 2" },
    });
    // The earlier round is still there, through the attempts.
    const finalAttempts = (await get(`/v1/instances/${id}/tasks/final/attempts`)).body.items;
    expect(finalAttempts.map((t: Task) => `${t.state} ${t.attempt}`)).toEqual(["SUCCESS 1"]);

    // force-success acts on the current round too: `final` has not run in it.
    expectError(await post(`/v1/instances/${id}/tasks/final/force-success`), 409, "Conflict", {
      message: /'final' has not run in the current round/,
    });

    // recover-failed keeps what succeeded in the round and runs the rest again.
    await control(id, "recover-failed");
    expect((await tasksOf(id)).tasks).toEqual({ first: "DISPATCHED 3" });
  }, 30_000);

  it("force-success refuses a task a pause left waiting to run again (its failed attempt is history)", async () => {
    await createWorkflow("paused-retry", {
      tasks: [{ code: "a", type: "SHELL", command: "exit 3", retries: 1 }],
    });
    const id = await startRun("paused-retry");
    await startInstance(id);
    // `a` fails on its worker; the pause is handled before its event: the retry waits for a
    // resume (slot PAUSED, next attempt 2), and the instance comes to rest PAUSED.
    const { record } = await receiveTask(id);
    expect((await apiServer().rt.worker.handleBatch([record])).batchItemFailures).toEqual([]);
    await control(id, "pause");
    expect((await get(`/v1/instances/${id}`)).body.state).toBe("PAUSED");
    await control(id, "stop");
    const stopped = (await get(`/v1/instances/${id}`)).body;
    expect(stopped.state).toBe("STOPPED");
    expect(stopped.tasks).toMatchObject([{ code: "a", state: "FAILURE", attempt: 1 }]);
    expectError(await post(`/v1/instances/${id}/tasks/a/force-success`), 409, "Conflict", {
      message: /'a' is not failed in the current round/,
    });
    const attempts = (await get(`/v1/instances/${id}/tasks/a/attempts`)).body.items;
    expect(attempts.map((t: Task) => t.state)).toEqual(["FAILURE"]); // nothing written
  }, 30_000);

  it("a deleted workflow's instances keep their current round; a start left over starts nothing", async () => {
    const marker = join(mkdtempSync(join(tmpdir(), "shoal-rounds-")), "broken");
    await createWorkflow("gone-later", {
      tasks: [
        { code: "first", type: "SHELL", command: `test ! -f ${marker}` },
        { code: "final", type: "SHELL", command: "true", upstream: ["first"] },
      ],
    });
    const id = await startRun("gone-later");
    await startInstance(id);
    await runNextTask(id);
    await runNextTask(id);
    writeFileSync(marker, "");
    await control(id, "rerun"); // `first` fails in round 2; `final` is not reached
    await runNextTask(id);
    expect((await del("/v1/workflows/gone-later")).status).toBe(204);
    // The version the instance ran is still there for it: the tree shows the current round.
    expect((await tasksOf(id)).tasks).toEqual({ first: "FAILURE 2" });
    expect((await get(`/v1/instances/${id}/tasks/final/attempts`)).status).toBe(200);
    // A start command written before the delete (a schedule's fire racing it) starts nothing.
    const late = "00000000-0000-4000-8000-00000000d31e";
    await apiServer().rt.engine.store.putCommand({
      commandId: `start:${late}`,
      type: "SCHEDULED",
      instanceId: late,
      workflow: "gone-later",
      version: 1,
      state: "PENDING",
      run: { params: {}, taskScope: "DOWNSTREAM", dryRun: false },
      createdAt: Date.now(),
    });
    await startInstance(late);
    expect(await apiServer().rt.engine.store.getInstance(late)).toBeUndefined();
    expect((await apiServer().rt.engine.store.getCommand(`start:${late}`))?.state).toBe("DONE");
  }, 30_000);
});
