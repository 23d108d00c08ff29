/**
 * End-to-end suite of the HTTP API v1 (its contract: docs/api.md) against the Shoal
 * stack deployed on LocalStack (`npm run localstack:up && npm run localstack:deploy`, then
 * `npm run test:localstack`): the API, dispatcher, worker and sweeper Lambdas, SQS event
 * sources, the EventBridge sweeper rule and CloudWatch task logs, all as deployed. Requests
 * are SigV4-signed (signed-fetch.ts). Without LocalStack or without the stack, the global setup
 * prints why and every test here is skipped.
 *
 * Names carry a random run id, so the suite can run again against the same deployment.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { pollUntil } from "./poll.js";
import { type ApiCall, type ApiResponse, apiClient } from "./signed-fetch.js";

const target = inject("localstack");
const runId = randomUUID().slice(0, 8);
const CHAIN = `ls-${runId}-chain`;
const SLEEPY = `ls-${runId}-sleepy`;
const TERMINAL = new Set(["SUCCESS", "FAILURE", "STOPPED"]);

/** Cold starts: the first run pulls the Node 22 image and boots the dispatcher and worker. */
const RUN_TIMEOUT_MS = 4 * 60_000;
/** The sweeper runs every minute (EventBridge rate(1 minute)) with a 60 s look-ahead. */
const FIRE_TIMEOUT_MS = 4 * 60_000;

describe.skipIf(!target.apiUrl)(`Shoal API on LocalStack (${target.apiUrl ?? "skipped"})`, () => {
  let api: ApiCall;
  let chainInstance: string | undefined;
  let sleepyInstance: string | undefined;
  let scheduleId: string | undefined;

  beforeAll(() => {
    api = apiClient(target.apiUrl as string, target.region);
  });

  afterAll(async () => {
    // Best effort: leave nothing firing or running behind.
    const quiet = (p: Promise<ApiResponse>) => p.catch(() => undefined);
    if (scheduleId) await quiet(api("DELETE", `/v1/schedules/${scheduleId}`));
    if (sleepyInstance) await quiet(api("POST", `/v1/instances/${sleepyInstance}/stop`));
  }, 60_000);

  const instance = (id: string) => api("GET", `/v1/instances/${id}`);
  const finished = (id: string, what: string) =>
    pollUntil(
      () => instance(id),
      (r) => r.status === 200 && TERMINAL.has(r.body.state),
      { timeoutMs: RUN_TIMEOUT_MS, what },
    );
  // biome-ignore lint/suspicious/noExplicitAny: TaskInstance fields are checked one by one
  const task = (r: ApiResponse, code: string): any =>
    // biome-ignore lint/suspicious/noExplicitAny: see above
    (r.body.tasks as any[]).find((t) => t.code === code);

  it("GET /v1/health answers ok and the version", async () => {
    const r = await api("GET", "/v1/health");
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ status: "ok", version: expect.any(String) });
  }, 180_000);

  it("PUT /v1/workflows/{name} creates a→b (201), and the same body again is 200", async () => {
    const body = {
      description: "LocalStack suite: a, then b",
      tasks: [
        { code: "a", type: "SHELL", command: "echo hello from a" },
        { code: "b", type: "SHELL", upstream: ["a"], command: "echo b after a" },
      ],
    };
    const created = await api("PUT", `/v1/workflows/${CHAIN}`, body);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ name: CHAIN, version: 1, releaseState: "ONLINE" });
    const again = await api("PUT", `/v1/workflows/${CHAIN}`, body);
    expect(again.status, again.text).toBe(200);
    expect(again.body.version).toBe(1);
  });

  it(
    "a run goes SUBMITTED → SUCCESS, b after a",
    async () => {
      const started = await api("POST", `/v1/workflows/${CHAIN}/runs`, {});
      expect(started.status, started.text).toBe(202);
      expect(started.body).toMatchObject({ workflow: CHAIN, version: 1, state: "SUBMITTED" });
      chainInstance = started.body.instanceId as string;

      const done = await finished(chainInstance, `instance ${chainInstance} of ${CHAIN} to finish`);
      expect(done.body.state, done.text).toBe("SUCCESS");
      const a = task(done, "a");
      const b = task(done, "b");
      expect(a).toMatchObject({ state: "SUCCESS", attempt: 1, exitCode: 0 });
      expect(b).toMatchObject({ state: "SUCCESS", attempt: 1, exitCode: 0 });
      expect(Date.parse(b.startedAt)).toBeGreaterThanOrEqual(Date.parse(a.endedAt));
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it("GET …/tasks/{code}/attempts lists the task instances", async () => {
    expect(chainInstance, "needs the run above").toBeDefined();
    const r = await api("GET", `/v1/instances/${chainInstance}/tasks/b/attempts`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.items).toHaveLength(1);
    expect(r.body.items[0]).toMatchObject({ code: "b", state: "SUCCESS", attempt: 1 });
  });

  it("GET …/tasks/{code}/log reads the task's output (CloudWatch Logs)", async () => {
    expect(chainInstance, "needs the run above").toBeDefined();
    // CloudWatch Logs may show events a moment after they were put.
    const r = await pollUntil(
      () => api("GET", `/v1/instances/${chainInstance}/tasks/a/log`),
      (res) =>
        res.status === 200 &&
        (res.body.lines as Array<{ message: string }>).some((l) => l.message === "hello from a"),
      { timeoutMs: 60_000, what: "the log line of task a" },
    );
    expect(r.body.lines[0]).toMatchObject({ timestamp: expect.any(String) });
  }, 90_000);

  it("400 for an invalid workflow, naming the field, and nothing is written", async () => {
    const bad = `ls-${runId}-bad`;
    const r = await api("PUT", `/v1/workflows/${bad}`, {
      tasks: [
        { code: "load", type: "SHELL", command: "echo load" },
        { code: "report", type: "SHELL", upstream: ["lod"], command: "echo report" },
      ],
    });
    expect(r.status, r.text).toBe(400);
    expect(r.body.error.code).toBe("ValidationError");
    expect(r.body.error.details).toContainEqual({
      path: "tasks[1].upstream[0]",
      message: expect.stringContaining("'lod'"),
    });
    const after = await api("GET", `/v1/workflows/${bad}`);
    expect(after.status, after.text).toBe(404);
  });

  it("404 for an unknown instance", async () => {
    const r = await api("GET", `/v1/instances/${randomUUID()}`);
    expect(r.status, r.text).toBe(404);
    expect(r.body.error.code).toBe("NotFound");
  });

  it(
    "stop ends a long-running run: STOPPING → STOPPED, its task KILLED",
    async () => {
      const put = await api("PUT", `/v1/workflows/${SLEEPY}`, {
        tasks: [{ code: "nap", type: "SHELL", command: "sleep 600", timeoutSeconds: 840 }],
      });
      expect(put.status, put.text).toBe(201);
      const started = await api("POST", `/v1/workflows/${SLEEPY}/runs`, {});
      expect(started.status, started.text).toBe(202);
      const id = started.body.instanceId as string;
      sleepyInstance = id;

      await pollUntil(
        () => instance(id),
        (r) => r.status === 200 && task(r, "nap")?.state === "RUNNING",
        { timeoutMs: RUN_TIMEOUT_MS, what: `task nap of ${id} to run` },
      );
      const stop = await api("POST", `/v1/instances/${id}/stop`);
      expect(stop.status, stop.text).toBe(202);
      expect(stop.body).toMatchObject({ instanceId: id, state: "STOPPING" });

      // Running tasks are killed at their worker's next lease renewal (15 s on AWS).
      const done = await pollUntil(
        () => instance(id),
        (r) => r.status === 200 && TERMINAL.has(r.body.state),
        { timeoutMs: 3 * 60_000, what: `instance ${id} to stop` },
      );
      expect(done.body.state, done.text).toBe("STOPPED");
      expect(task(done, "nap")?.state).toBe("KILLED");
    },
    RUN_TIMEOUT_MS + 4 * 60_000,
  );

  it(
    "a rate schedule fires through the sweeper, and its run succeeds",
    async () => {
      const created = await api("POST", "/v1/schedules", {
        workflow: CHAIN,
        rate: "1 minute",
        // Bounded, in case the cleanup below does not run.
        endTime: new Date(Date.now() + 10 * 60_000).toISOString(),
      });
      expect(created.status, created.text).toBe(201);
      scheduleId = created.body.id as string;
      expect(created.body.nextFireTime).toEqual(expect.any(String));

      const fires = await pollUntil(
        () => api("GET", `/v1/schedules/${scheduleId}/fires`),
        (r) =>
          r.status === 200 &&
          (r.body.items as Array<{ decision: string }>).some((f) => f.decision === "FIRED"),
        { timeoutMs: FIRE_TIMEOUT_MS, intervalMs: 5_000, what: `a fire of schedule ${scheduleId}` },
      );
      const fire = (fires.body.items as Array<{ decision: string; instanceId?: string }>).find(
        (f) => f.decision === "FIRED",
      );
      expect(fire?.instanceId).toEqual(expect.any(String));
      const done = await finished(fire?.instanceId as string, "the scheduled run to finish");
      expect(done.body.state, done.text).toBe("SUCCESS");
      expect(done.body.commandType).toBe("SCHEDULED");
    },
    FIRE_TIMEOUT_MS + RUN_TIMEOUT_MS + 30_000,
  );
});
