/**
 * A stop or pause answered 202 is a promise kept through a `kill -9` (docs/reliability.md, "Stop
 * and pause are promises"; DolphinScheduler's WorkflowInstanceFailoverTestCase): the command is
 * accepted while its task has not started, standalone dies before its dispatcher carries it out
 * (SHOAL_TEST_HOLD_COMMANDS keeps the signal in flight, as a dispatcher that hung), and after a
 * restart on the same data dir the task never runs, although its message is claimed before the
 * command is carried out. Each task would write a file if it ran.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  byCode,
  putWorkflow,
  type RunningStandalone,
  type RunningWorker,
  startRun,
  startStandaloneProcess,
  startWorkerProcess,
} from "../helpers/standalone.js";

/** The first standalone's dispatcher never carries out a stop or a pause. */
const HOLD = { SHOAL_TEST_HOLD_COMMANDS: "stop,pause" };

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "shoal-halt-promise-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** A one-task workflow whose task writes `$MARK` (in task group `group`, if given). */
function marking(extra: Record<string, unknown> = {}) {
  return {
    params: { MARK: "" },
    tasks: [{ code: "t", type: "SHELL", command: 'touch "$MARK"', ...extra }],
  };
}

/** The instance as the API shows it, once its state is one of `states`. */
function waitState(url: string, id: string, states: string[], timeoutMs = 120_000) {
  return until(
    async () => {
      const r = await api(url, "GET", `/v1/instances/${id}`);
      return states.includes(r.body?.state) ? r.body : undefined;
    },
    { timeoutMs, intervalMs: 200, what: `instance ${id} to be ${states.join(" or ")}` },
  );
}

/** Waits until the instance's task `t` is in `state`. */
function waitTask(url: string, id: string, state: string) {
  return until(
    async () => {
      const r = await api(url, "GET", `/v1/instances/${id}`);
      return r.body?.tasks?.some((t: { state: string }) => t.state === state);
    },
    { timeoutMs: 30_000, what: `the task of ${id} to be ${state}` },
  );
}

async function accepted(url: string, id: string, verb: "stop" | "pause" | "resume") {
  const r = await api(url, "POST", `/v1/instances/${id}/${verb}`);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
}

describe("a stop or pause answered 202 just before a kill -9, its task not started yet", () => {
  const dataDir = () => join(root, "four");
  const mark = (name: string) => join(root, `${name}.ran`);
  let sa: RunningStandalone | undefined;
  /** Instance ids by case: pd pause+DISPATCHED, ps pause+SUBMITTED, sd, ss the stops. */
  const ids: Record<string, string> = {};
  // biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
  const ended: Record<string, any> = {};

  beforeAll(async () => {
    // No worker slots: every task stays queued (DISPATCHED), or waits for its group's one slot
    // (SUBMITTED) behind a holder that is queued too.
    sa = await startStandaloneProcess({ dataDir: dataDir(), workers: 0, env: HOLD });
    const url = sa.url;
    for (const g of ["slot-p", "slot-s"]) {
      expect((await api(url, "PUT", `/v1/task-groups/${g}`, { capacity: 1 })).status).toBe(201);
    }
    await putWorkflow(url, "free", marking());
    await putWorkflow(url, "grouped-p", marking({ taskGroup: "slot-p" }));
    await putWorkflow(url, "grouped-s", marking({ taskGroup: "slot-s" }));
    const run = async (key: string, workflow: string) => {
      ids[key] = await startRun(url, workflow, { params: { MARK: mark(key) } });
    };
    // The holders first, so that they take the slots.
    await run("holder-p", "grouped-p");
    await run("holder-s", "grouped-s");
    for (const key of ["holder-p", "holder-s"])
      await waitTask(url, ids[key] as string, "DISPATCHED");
    await run("ps", "grouped-p");
    await run("ss", "grouped-s");
    await run("pd", "free");
    await run("sd", "free");
    for (const key of ["ps", "ss"]) await waitTask(url, ids[key] as string, "SUBMITTED");
    for (const key of ["pd", "sd"]) await waitTask(url, ids[key] as string, "DISPATCHED");

    await accepted(url, ids.pd as string, "pause");
    await accepted(url, ids.ps as string, "pause");
    await accepted(url, ids.sd as string, "stop");
    await accepted(url, ids.ss as string, "stop");
    await sa.kill9();

    // Worker slots now: the queued messages are claimed at once, the holders run and hand their
    // slots to the waiting tasks, all while the commands' signals are still in flight.
    sa = await startStandaloneProcess({ dataDir: dataDir(), workers: 6 });
    for (const key of ["pd", "ps"]) {
      ended[key] = await waitState(sa.url, ids[key] as string, ["PAUSED", "SUCCESS", "FAILURE"]);
    }
    for (const key of ["sd", "ss"]) {
      ended[key] = await waitState(sa.url, ids[key] as string, ["STOPPED", "SUCCESS", "FAILURE"]);
    }
  }, 240_000);

  afterAll(async () => {
    await sa?.stop();
  });

  /** The case's instance ended `state` with its task `taskState`, and the task never ran. */
  function expectHalted(key: string, state: string, taskState: string): void {
    expect(ended[key].state).toBe(state);
    const task = byCode(ended[key]).t;
    expect(task?.state, JSON.stringify(task)).toBe(taskState);
    expect(existsSync(mark(key))).toBe(false);
  }

  it("pause, task DISPATCHED: ends PAUSED with the task paused, never run; resume runs it", async () => {
    expectHalted("pd", "PAUSED", "PAUSED");
    const url = (sa as RunningStandalone).url;
    await accepted(url, ids.pd as string, "resume");
    const done = await waitState(url, ids.pd as string, ["SUCCESS", "FAILURE"]);
    expect(done.state).toBe("SUCCESS");
    expect(existsSync(mark("pd"))).toBe(true);
  }, 120_000);

  it("pause, task SUBMITTED (task group full): ends PAUSED with the task paused, never run", () => {
    expectHalted("ps", "PAUSED", "PAUSED");
    expect(existsSync(mark("holder-p"))).toBe(true);
  });

  it("stop, task DISPATCHED: ends STOPPED with the task killed, never run", () => {
    expectHalted("sd", "STOPPED", "KILLED");
    expect(byCode(ended.sd).t?.error).toBe("killed: the instance was stopped");
  });

  it("stop, task SUBMITTED (task group full): ends STOPPED with the task killed, never run", () => {
    expectHalted("ss", "STOPPED", "KILLED");
    expect(existsSync(mark("holder-s"))).toBe(true);
  });
});

// On the emulators backend the storage (dynalite, fauxqs) dies with standalone, so a worker cannot
// claim anything while it is dead; the claim after the restart is what the cases above cover.
describe.skipIf(process.env.SHOAL_BACKEND === "emulators")(
  "a `shoal worker` that was already polling claims the task while standalone is dead",
  () => {
    it("holds it until the restarted dispatcher carries out the pause: PAUSED, never run", async () => {
      const dataDir = join(root, "worker");
      const go = join(root, "worker.go");
      const ran = join(root, "worker.ran");
      let sa: RunningStandalone | undefined;
      let worker: RunningWorker | undefined;
      try {
        sa = await startStandaloneProcess({ dataDir, workers: 0, env: HOLD });
        const url = sa.url;
        // One slot, taken by a task that waits for `go`: the other task's message stays queued.
        worker = startWorkerProcess(dataDir, ["--group", "ext", "--concurrency", "1"]);
        await worker.ready();
        await putWorkflow(url, "busy", {
          params: { GO: go },
          tasks: [
            {
              code: "t",
              type: "SHELL",
              workerGroup: "ext",
              command: 'while [ ! -f "$GO" ]; do sleep 0.1; done',
            },
          ],
        });
        await putWorkflow(url, "target", marking({ workerGroup: "ext" }));
        const busy = await startRun(url, "busy");
        await waitTask(url, busy, "RUNNING");
        const target = await startRun(url, "target", { params: { MARK: ran } });
        await waitTask(url, target, "DISPATCHED");
        await accepted(url, target, "pause");
        await sa.kill9();
        sa = undefined;

        // Standalone is dead: the worker's slot frees, and it claims the queued task.
        writeFileSync(go, "");
        const log = join(dataDir, "logs", "target", target, "t", "1.log");
        const claimed = await until(
          () =>
            existsSync(ran) ||
            (existsSync(log) && readFileSync(log, "utf8").includes("was accepted before")),
          { timeoutMs: 60_000, what: "the worker to claim the queued task" },
        );
        expect(claimed).toBe(true);
        expect(existsSync(ran)).toBe(false);

        sa = await startStandaloneProcess({ dataDir, workers: 0 });
        const inst = await waitState(sa.url, target, ["PAUSED", "SUCCESS", "FAILURE"]);
        expect(inst.state).toBe("PAUSED");
        expect(byCode(inst).t).toMatchObject({
          state: "PAUSED",
          error: "paused before it started",
        });
        expect(existsSync(ran)).toBe(false);
        expect((await waitState(sa.url, busy, ["SUCCESS", "FAILURE"])).state).toBe("SUCCESS");
      } finally {
        await worker?.stop();
        await sa?.stop();
      }
    }, 240_000);
  },
);
