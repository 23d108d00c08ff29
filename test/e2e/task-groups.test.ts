/**
 * Task groups and worker failover with real processes: a group's capacity holds across
 * workflows, and a `shoal worker` killed with `kill -9` mid-task loses nothing: the task runs
 * again elsewhere (exactly one attempt SUCCESS) and the group's slot comes back.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  type RunningStandalone,
  startStandaloneProcess,
  startWorkerProcess,
  waitFinal,
} from "../helpers/standalone.js";

describe("task groups and failover in shoal standalone", () => {
  let sa: RunningStandalone;
  let dir: string;
  let dataDir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "shoal-groups-"));
    dataDir = join(dir, "data");
    // Short leases, so that a killed worker's task fails over within seconds (external
    // workers inherit this process's environment).
    process.env.SHOAL_LEASE_SECONDS = "2";
    process.env.SHOAL_LEASE_RENEW_SECONDS = "0.5";
    sa = await startStandaloneProcess({ dataDir, workers: 8 });
  });
  afterAll(async () => {
    delete process.env.SHOAL_LEASE_SECONDS;
    delete process.env.SHOAL_LEASE_RENEW_SECONDS;
    await sa?.stop();
  });

  it("never runs more tasks of a group at once than its capacity, across workflows", async () => {
    const put = await api(sa.url, "PUT", "/v1/task-groups/db", { capacity: 2 });
    expect(put.status).toBe(201);
    const trace = join(dir, "trace");
    const task = (code: string) => ({
      code,
      type: "SHELL",
      taskGroup: "db",
      command: `echo "+ $(date +%s%N)" >> ${trace}; sleep 0.3; echo "- $(date +%s%N)" >> ${trace}`,
    });
    const ids: string[] = [];
    for (const wf of ["g1", "g2"]) {
      await api(sa.url, "PUT", `/v1/workflows/${wf}`, {
        tasks: [task("a"), task("b"), task("c")],
      });
      ids.push((await api(sa.url, "POST", `/v1/workflows/${wf}/runs`, {})).body.instanceId);
    }
    for (const id of ids) expect((await waitFinal(sa.url, id, 60_000)).state).toBe("SUCCESS");
    const events = readFileSync(trace, "utf8")
      .trim()
      .split("\n")
      .map((l) => {
        const [sign, t] = l.split(" ");
        return { d: sign === "+" ? 1 : -1, t: BigInt(t as string) };
      })
      .sort((x, y) => (x.t < y.t ? -1 : x.t > y.t ? 1 : x.d - y.d));
    let running = 0;
    let peak = 0;
    for (const e of events) {
      running += e.d;
      peak = Math.max(peak, running);
    }
    expect(events).toHaveLength(12);
    expect(peak).toBe(2);
    const group = await api(sa.url, "GET", "/v1/task-groups/db");
    expect(group.body).toMatchObject({ capacity: 2, used: 0, waiting: 0 });
  }, 90_000);

  it("a worker killed with kill -9 mid-task: the task completes elsewhere, its slot comes back", async () => {
    await api(sa.url, "PUT", "/v1/task-groups/solo", { capacity: 1 });
    const runs = join(dir, "runs");
    await api(sa.url, "PUT", "/v1/workflows/survives", {
      tasks: [
        {
          code: "work",
          type: "SHELL",
          workerGroup: "remote",
          taskGroup: "solo",
          command: `echo "$SHOAL_ATTEMPT" >> ${runs}; sleep 3; echo done`,
        },
      ],
    });
    const first = startWorkerProcess(dataDir, ["--group", "remote", "--concurrency", "1"]);
    await first.ready();
    const id = (await api(sa.url, "POST", "/v1/workflows/survives/runs", {})).body.instanceId;
    // The task's process has started on the first worker once it wrote its attempt number.
    await until(() => existsSync(runs) && readFileSync(runs, "utf8").includes("1"), {
      timeoutMs: 30_000,
      what: "the task to run on the first worker",
    });
    await first.stop("SIGKILL");
    const second = startWorkerProcess(dataDir, ["--group", "remote", "--concurrency", "1"]);
    try {
      await second.ready();
      const done = await waitFinal(sa.url, id, 40_000).catch(async (e) => {
        const snap = (await api(sa.url, "GET", `/v1/instances/${id}`)).body;
        const g = (await api(sa.url, "GET", "/v1/task-groups/solo")).body;
        throw new Error(
          `${e}: ${JSON.stringify(snap)} ${JSON.stringify(g)} ${sa.output().slice(-2000)}`,
        );
      });
      expect(done.state).toBe("SUCCESS");
      const attempts = (await api(sa.url, "GET", `/v1/instances/${id}/tasks/work/attempts`)).body
        .items as Array<{ state: string; attempt: number }>;
      expect(attempts.map((a) => a.state)).toEqual(["NEED_FAULT_TOLERANCE", "SUCCESS"]);
      expect(readFileSync(runs, "utf8").trim().split("\n")).toEqual(["1", "2"]);
      const group = await until(
        async () => {
          const g = (await api(sa.url, "GET", "/v1/task-groups/solo")).body;
          return g.used === 0 ? g : undefined;
        },
        { timeoutMs: 30_000, what: "the slot to come back" },
      );
      expect(group.waiting).toBe(0);
    } finally {
      await second.stop();
    }
  }, 120_000);
});
