import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  byCode,
  type E2eTask,
  type RunningStandalone,
  type RunningWorker,
  startStandaloneProcess,
  startWorkerProcess,
  waitFinal,
} from "../helpers/standalone.js";

type Task = E2eTask;

describe("tasks in shoal standalone", () => {
  let sa: RunningStandalone;
  let hook: Server;
  let hookUrl: string;
  const hits: string[] = [];
  beforeAll(async () => {
    sa = await startStandaloneProcess({
      dataDir: mkdtempSync(join(tmpdir(), "shoal-tasks-")),
      workers: 4,
    });
    hook = createServer(async (req, res) => {
      hits.push(`${req.method} ${req.url}`);
      if (req.url === "/slow") await new Promise((r) => setTimeout(r, 2_000));
      res.writeHead(req.url === "/fail" ? 503 : 200, { "content-type": "text/plain" });
      res.end(req.url === "/fail" ? "down" : "ok");
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await sa?.stop();
    hook?.close();
  });

  async function runWorkflow(name: string, def: unknown, run: unknown = {}) {
    const put = await api(sa.url, "PUT", `/v1/workflows/${name}`, def);
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const r = await api(sa.url, "POST", `/v1/workflows/${name}/runs`, run);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    return waitFinal(sa.url, r.body.instanceId, 60_000);
  }

  it("runs HTTP tasks and judges them by expectStatus", async () => {
    const inst = await runWorkflow("http-tasks", {
      failureStrategy: "CONTINUE",
      tasks: [
        { code: "ok", type: "HTTP", url: `${hookUrl}/ok`, method: "POST", body: "{}" },
        { code: "down", type: "HTTP", url: `${hookUrl}/fail` },
        { code: "accepts503", type: "HTTP", url: `${hookUrl}/fail`, expectStatus: [500, 599] },
      ],
    });
    expect(inst.state).toBe("FAILURE");
    const t = byCode(inst);
    expect(t.ok?.state).toBe("SUCCESS");
    expect(t.accepts503?.state).toBe("SUCCESS");
    expect(t.down?.state).toBe("FAILURE");
    expect(t.down?.error).toMatch(/503/);
    expect(hits).toContain("POST /ok");
  });

  it("retries a failing task, keeping every attempt and its own log", async () => {
    const inst = await runWorkflow("flaky", {
      tasks: [
        {
          code: "flaky",
          type: "SHELL",
          retries: 2,
          retryIntervalSeconds: 1,
          // Fails twice, then succeeds: the attempt number comes from the environment.
          command: 'echo "attempt $SHOAL_ATTEMPT"; [ "$SHOAL_ATTEMPT" -ge 3 ]',
        },
      ],
    });
    expect(inst.state).toBe("SUCCESS");
    const attempts = (
      await api(sa.url, "GET", `/v1/instances/${inst.instanceId}/tasks/flaky/attempts`)
    ).body.items;
    expect(attempts.map((a: Task) => [a.attempt, a.state, a.exitCode])).toEqual([
      [1, "FAILURE", 1],
      [2, "FAILURE", 1],
      [3, "SUCCESS", 0],
    ]);
    const log2 = (
      await api(sa.url, "GET", `/v1/instances/${inst.instanceId}/tasks/flaky/log?attempt=2`)
    ).body;
    expect(log2.lines.map((l: { message: string }) => l.message)).toContain("attempt 2");
    expect(log2.nextToken).toBeUndefined(); // finished: nothing more to follow
  });

  it("backs off exponentially between retries", async () => {
    const inst = await runWorkflow("backoff", {
      tasks: [
        {
          code: "flaky",
          type: "SHELL",
          retries: 2,
          retryIntervalSeconds: 1,
          retryBackoff: "EXPONENTIAL",
          maxRetryIntervalSeconds: 10,
          command: '[ "$SHOAL_ATTEMPT" -ge 3 ]',
        },
      ],
    });
    expect(inst.state).toBe("SUCCESS");
    const attempts = (
      await api(sa.url, "GET", `/v1/instances/${inst.instanceId}/tasks/flaky/attempts`)
    ).body.items as Array<Task & { startedAt: string }>;
    const gap = (i: number) =>
      Date.parse(attempts[i + 1]?.startedAt as string) - Date.parse(attempts[i]?.endedAt as string);
    expect(attempts.map((a) => a.state)).toEqual(["FAILURE", "FAILURE", "SUCCESS"]);
    expect(gap(0)).toBeGreaterThanOrEqual(900); // 1 s
    expect(gap(1)).toBeGreaterThanOrEqual(1_900); // 2 s
  });

  it("fails a task at its timeout and, under END, starts nothing after it", async () => {
    const inst = await runWorkflow("slow", {
      tasks: [
        { code: "slow", type: "SHELL", timeoutSeconds: 1, command: "sleep 30" },
        { code: "next", type: "SHELL", upstream: ["slow"], command: "true" },
      ],
    });
    expect(inst.state).toBe("FAILURE");
    expect(inst.tasks.map((t: Task) => t.code)).toEqual(["slow"]);
    expect(inst.tasks[0].error).toMatch(/timed out after 1s/);
  });

  it("a FAIL timeout is retried like any failure; a WARN timeout only warns", async () => {
    const inst = await runWorkflow("timeouts", {
      failureStrategy: "CONTINUE",
      tasks: [
        {
          code: "retried",
          type: "SHELL",
          timeoutSeconds: 1,
          retries: 1,
          command: '[ "$SHOAL_ATTEMPT" -ge 2 ] || sleep 30',
        },
        {
          code: "warned",
          type: "SHELL",
          timeoutSeconds: 1,
          timeoutStrategy: "WARN",
          command: "sleep 2; echo finished",
        },
        {
          code: "warned_http",
          type: "HTTP",
          url: `${hookUrl}/slow`,
          timeoutSeconds: 1,
          timeoutStrategy: "WARN",
        },
      ],
    });
    expect(inst.state).toBe("SUCCESS");
    const t = byCode(inst);
    expect(t.retried?.attempt).toBe(2);
    expect(t.warned?.state).toBe("SUCCESS");
    expect(t.warned?.warning).toMatch(/timeout of 1s/);
    expect(t.warned_http?.state).toBe("SUCCESS");
    expect(t.warned_http?.warning).toMatch(/timeout of 1s/);
    const attempts = await api(
      sa.url,
      "GET",
      `/v1/instances/${inst.instanceId}/tasks/retried/attempts`,
    );
    expect(attempts.body.items[0].error).toMatch(/timed out after 1s/);
  });

  it("CONTINUE runs what does not depend on the failure", async () => {
    const inst = await runWorkflow("branches", {
      failureStrategy: "CONTINUE",
      tasks: [
        { code: "bad", type: "SHELL", command: "exit 3" },
        { code: "after_bad", type: "SHELL", upstream: ["bad"], command: "true" },
        { code: "good", type: "SHELL", command: "true" },
        { code: "after_good", type: "SHELL", upstream: ["good"], command: "true" },
      ],
    });
    expect(inst.state).toBe("FAILURE");
    const t = byCode(inst);
    expect(t.bad?.exitCode).toBe(3);
    expect(t.after_good?.state).toBe("SUCCESS");
    expect(t.after_bad).toBeUndefined();
  });

  it("a dry run passes every task through its states without running it", async () => {
    const inst = await runWorkflow(
      "dry",
      {
        tasks: [
          { code: "boom", type: "SHELL", command: "exit 1" },
          { code: "then", type: "SHELL", upstream: ["boom"], command: "exit 1" },
        ],
      },
      { dryRun: true },
    );
    expect(inst.state).toBe("SUCCESS");
    expect(inst.dryRun).toBe(true);
    const log = (await api(sa.url, "GET", `/v1/instances/${inst.instanceId}/tasks/boom/log`)).body;
    expect(log.lines.map((l: { message: string }) => l.message).join("\n")).toMatch(/dry run/);
  });

  it("starts from a task with its scope and keeps startup parameters", async () => {
    const inst = await runWorkflow(
      "scoped",
      {
        params: { greeting: "hello" },
        tasks: [
          { code: "a", type: "SHELL", command: "true" },
          { code: "b", type: "SHELL", upstream: ["a"], command: 'echo "$greeting $who"' },
          { code: "c", type: "SHELL", upstream: ["b"], command: "true" },
        ],
      },
      { startTasks: ["b"], taskScope: "ONLY", params: { who: "world" } },
    );
    expect(inst.state).toBe("SUCCESS");
    expect(inst.tasks.map((t: Task) => t.code)).toEqual(["b"]);
    const log = (await api(sa.url, "GET", `/v1/instances/${inst.instanceId}/tasks/b/log`)).body;
    expect(log.lines.map((l: { message: string }) => l.message)).toContain("hello world");
  });
});

it("with --workers 0, an external `shoal worker` started with endpoints.env runs the tasks", async () => {
  const dir = mkdtempSync(join(tmpdir(), "shoal-extworker-"));
  const sa = await startStandaloneProcess({ dataDir: dir, workers: 0 });
  const worker = startWorkerProcess(dir, ["--concurrency", "2"]);
  try {
    await worker.ready();
    await api(sa.url, "PUT", "/v1/workflows/ext", {
      tasks: [{ code: "a", type: "SHELL", command: "echo from-worker" }],
    });
    const run = await api(sa.url, "POST", "/v1/workflows/ext/runs", {});
    const inst = await waitFinal(sa.url, run.body.instanceId, 30_000);
    expect(inst.state).toBe("SUCCESS");
    expect(inst.tasks[0].worker).toContain(String(worker.proc.pid));
  } finally {
    await worker.stop("SIGINT");
    await sa.stop();
  }
  expect(worker.proc.exitCode ?? 0).toBe(0);
}, 90_000);

it("a `shoal worker` stopped with SIGTERM kills its tasks and hands them to another worker at once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "shoal-sigterm-"));
  const sa = await startStandaloneProcess({ dataDir: dir, workers: 0 });
  const startWorker = () => startWorkerProcess(dir, ["--concurrency", "2"]);
  const a = startWorker();
  let b: ReturnType<typeof startWorker> | undefined;
  try {
    await a.ready();
    await api(sa.url, "PUT", "/v1/workflows/handover", {
      tasks: [
        {
          code: "long",
          type: "SHELL",
          // Sleeps long on its first attempt only; the grandchild's pid shows whether it was killed.
          command:
            'if [ "$SHOAL_ATTEMPT" = 1 ]; then sleep 60 & echo $! > "$SHOAL_INSTANCE_DIR/pid"; wait; fi; echo done',
        },
      ],
    });
    const id = (await api(sa.url, "POST", "/v1/workflows/handover/runs", {})).body
      .instanceId as string;
    const pidFile = join(dir, "work", "handover", id, "shared", "pid");
    const pid = await until(() => Number(readFileSync(pidFile, "utf8")) || undefined, {
      what: "attempt 1 to start",
    });
    const stoppedAt = Date.now();
    await a.stop("SIGTERM");
    expect(a.proc.exitCode).toBe(0);
    // No orphan left behind (polled: the killed process may wait a moment to be reaped).
    await until(
      () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      { what: "attempt 1's process to be gone" },
    );
    b = startWorker();
    await b.ready();
    const inst = await waitFinal(sa.url, id, 30_000);
    expect(inst.state).toBe("SUCCESS");
    const attempts = (await api(sa.url, "GET", `/v1/instances/${id}/tasks/long/attempts`)).body
      .items;
    expect(attempts.map((t: Task) => t.state)).toEqual(["NEED_FAULT_TOLERANCE", "SUCCESS"]);
    expect(attempts[0].error).toMatch(/shut down/);
    // Handed over at once, not after the 10 s lease.
    expect(Date.parse(attempts[0].endedAt) - stoppedAt).toBeLessThan(8_000);
  } finally {
    await a.stop("SIGKILL");
    await b?.stop("SIGTERM");
    await sa.stop();
  }
}, 90_000);

it("a worker group without a live worker delays only its own tasks", async () => {
  const dir = mkdtempSync(join(tmpdir(), "shoal-groups-"));
  const sa = await startStandaloneProcess({ dataDir: dir, workers: 2 });
  let gpu: RunningWorker | undefined;
  try {
    await api(sa.url, "PUT", "/v1/workflows/mixed", {
      failureStrategy: "CONTINUE",
      tasks: [
        { code: "train", type: "SHELL", workerGroup: "gpu", command: "echo trained" },
        { code: "report", type: "SHELL", command: "echo report" },
        { code: "after_report", type: "SHELL", upstream: ["report"], command: "true" },
      ],
    });
    const id = (await api(sa.url, "POST", "/v1/workflows/mixed/runs", {})).body
      .instanceId as string;
    // The default group's tasks finish while the gpu task waits for a gpu worker.
    const partial = await until(
      async () => {
        const i = (await api(sa.url, "GET", `/v1/instances/${id}`)).body;
        const states = Object.fromEntries(i.tasks.map((t: Task) => [t.code, t.state]));
        return states.after_report === "SUCCESS" ? states : undefined;
      },
      { what: "the default group's tasks" },
    );
    expect(partial.train).toBe("DISPATCHED");
    gpu = startWorkerProcess(dir, ["--group", "gpu", "--concurrency", "1"]);
    const inst = await waitFinal(sa.url, id, 30_000);
    expect(inst.state).toBe("SUCCESS");
    expect(inst.tasks.find((t: Task) => t.code === "train")?.state).toBe("SUCCESS");
  } finally {
    await gpu?.stop();
    await sa.stop();
  }
}, 60_000);
