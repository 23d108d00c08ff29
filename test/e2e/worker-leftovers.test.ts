/**
 * What a worker leaves behind, through a real `shoal standalone` and `shoal worker`s: a worker
 * killed with `kill -9` takes its task's processes with it (the failover attempt is the only one
 * whose side effects happen), and work directories go: a successful attempt's at once, its
 * succeeded instance's at the next sweep, a failed attempt's after the keep time
 * (SHOAL_KEEP_FAILED_WORK_MINUTES), while a failed instance keeps its shared directory for
 * `recover-failed`. A worker sweeps at its start (and every 30 s to 5 min): the tests start one
 * to have a sweep now.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processStartTime } from "../../lib/tasks/task-processes.js";
import { until } from "../helpers/poll.js";
import {
  api,
  byCode,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  startWorkerProcess,
  waitFinal,
} from "../helpers/standalone.js";

/** Keep time of failed attempts' directories in these tests: 3 s. */
const KEEP_MINUTES = "0.05";

const ENV = {
  // Short leases, so that a killed worker's task fails over within seconds (external workers
  // inherit this process's environment).
  SHOAL_LEASE_SECONDS: "2",
  SHOAL_LEASE_RENEW_SECONDS: "0.5",
  SHOAL_KEEP_FAILED_WORK_MINUTES: KEEP_MINUTES,
};

describe("what a worker leaves behind", () => {
  let sa: RunningStandalone;
  let dir: string;
  let dataDir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "shoal-leftovers-"));
    dataDir = join(dir, "data");
    Object.assign(process.env, ENV);
    sa = await startStandaloneProcess({ dataDir, workers: 2 });
  });
  afterAll(async () => {
    for (const k of Object.keys(ENV)) delete process.env[k];
    await sa?.stop();
  });

  const workOf = (workflow: string, id: string) => join(dataDir, "work", workflow, id);

  it.skipIf(process.platform !== "linux")(
    "a worker killed with kill -9 takes its task's processes with it; only the failover attempt's side effects happen",
    async () => {
      await putWorkflow(sa.url, "side-effects", {
        tasks: [
          {
            code: "write",
            type: "SHELL",
            workerGroup: "crashy",
            // Sleeps, then has its side effect: the attempt's marker file.
            command: `echo $$ > ${dir}/pid-$SHOAL_ATTEMPT; sleep 3; touch ${dir}/marker-$SHOAL_ATTEMPT`,
          },
        ],
      });
      const first = startWorkerProcess(dataDir, ["--group", "crashy", "--concurrency", "1"]);
      await first.ready();
      const id = await startRun(sa.url, "side-effects");
      const pid = await until(
        () => existsSync(join(dir, "pid-1")) && Number(readFileSync(join(dir, "pid-1"), "utf8")),
        { timeoutMs: 30_000, what: "attempt 1 to start on the first worker" },
      );
      await first.stop("SIGKILL");
      // The task's shell goes with its worker, long before its lease runs out.
      await until(() => processStartTime(pid) === undefined, {
        timeoutMs: 2_000,
        what: "attempt 1's processes to die with their worker",
      });
      const second = startWorkerProcess(dataDir, ["--group", "crashy", "--concurrency", "1"]);
      try {
        await second.ready();
        const done = await waitFinal(sa.url, id, 40_000);
        expect(done.state).toBe("SUCCESS");
        const attempts = (await api(sa.url, "GET", `/v1/instances/${id}/tasks/write/attempts`)).body
          .items as Array<{ state: string }>;
        expect(attempts.map((a) => a.state)).toEqual(["NEED_FAULT_TOLERANCE", "SUCCESS"]);
        // Attempt 2 started after attempt 1's lease lapsed and ran its 3 s: an orphaned
        // attempt 1 would have written its marker by now.
        expect(existsSync(join(dir, "marker-2"))).toBe(true);
        expect(existsSync(join(dir, "marker-1"))).toBe(false);
      } finally {
        await second.stop();
      }
    },
    90_000,
  );

  /** A sweep now: a worker (of an otherwise unused group) sweeps at its start. */
  async function sweepWith<T>(until: () => Promise<T>): Promise<T> {
    const w = startWorkerProcess(dataDir, ["--group", "sweeps", "--concurrency", "1"]);
    try {
      await w.ready();
      return await until();
    } finally {
      await w.stop();
    }
  }

  it("removes a successful attempt's directory at once and the instance's once it is over", async () => {
    await putWorkflow(sa.url, "tidy", {
      tasks: [
        {
          code: "a",
          type: "SHELL",
          command: 'echo data > out.txt; echo shared > "$SHOAL_INSTANCE_DIR/s.txt"',
        },
      ],
    });
    const id = await startRun(sa.url, "tidy");
    expect((await waitFinal(sa.url, id)).state).toBe("SUCCESS");
    await until(() => !existsSync(join(workOf("tidy", id), "a", "1")), {
      what: "the attempt's directory to go",
    });
    await sweepWith(() =>
      until(() => !existsSync(workOf("tidy", id)), {
        timeoutMs: 10_000,
        what: "the instance's shared directory to go",
      }),
    );
  });

  it("keeps a failed attempt's directory for the keep time, and the shared one for recover-failed", async () => {
    const fixed = join(dir, "fixed");
    await putWorkflow(sa.url, "broken", {
      tasks: [
        {
          code: "a",
          type: "SHELL",
          command: 'echo upstream-data > "$SHOAL_INSTANCE_DIR/data.txt"',
        },
        {
          code: "b",
          type: "SHELL",
          upstream: ["a"],
          command: `echo evidence > debug.txt; test -f ${fixed} || exit 2; cat "$SHOAL_INSTANCE_DIR/data.txt"`,
        },
      ],
    });
    const id = await startRun(sa.url, "broken");
    const failed = await waitFinal(sa.url, id);
    expect(failed.state).toBe("FAILURE");
    expect(byCode(failed).b?.error).toBe("command exited with code 2");
    const attemptDir = join(workOf("broken", id), "b", "1");
    // Kept for debugging: what the task wrote is there to look at.
    const marker = `${attemptDir}.kept-until`;
    await until(() => existsSync(marker), { what: "the kept marker" });
    expect(readFileSync(join(attemptDir, "debug.txt"), "utf8")).toBe("evidence\n");
    expect(readdirSync(join(workOf("broken", id), "shared"))).toEqual(["data.txt"]);
    const keptUntil = Number(readFileSync(marker, "utf8"));
    await until(() => Date.now() >= keptUntil, { what: "the keep time to pass" });
    // After the keep time the failed attempt's directory goes; the shared one stays.
    await sweepWith(() =>
      until(() => !existsSync(attemptDir), { what: "the kept attempt directory to go" }),
    );
    expect(readdirSync(join(workOf("broken", id), "shared"))).toEqual(["data.txt"]);
    // So recover-failed reruns b on what a wrote.
    writeFileSync(fixed, "");
    expect((await api(sa.url, "POST", `/v1/instances/${id}/recover-failed`, {})).status).toBe(202);
    const recovered = await until(
      async () => {
        const inst = (await api(sa.url, "GET", `/v1/instances/${id}`)).body;
        const b = byCode(inst).b;
        return b && b.attempt > 1 && ["SUCCESS", "FAILURE"].includes(inst.state) ? inst : undefined;
      },
      { timeoutMs: 30_000, what: "the recovered run to end" },
    );
    expect(recovered.state).toBe("SUCCESS");
    const log = (await api(sa.url, "GET", `/v1/instances/${id}/tasks/b/log`)).body;
    expect(log.lines.map((l: { message: string }) => l.message)).toContain("upstream-data");
  }, 60_000);
});
