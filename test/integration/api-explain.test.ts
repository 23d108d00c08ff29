/**
 * "Why isn't my task running?" through the HTTP API on the emulators:
 * `GET /v1/instances/{id}/explain`, `GET /v1/instances/{id}/tasks/{code}/explain`, and the log
 * endpoint's answer for logic and skipped tasks. The dispatcher and worker are driven by hand
 * (test/helpers/api-engine.ts), so every state is held still while it is explained.
 */
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ensureTaskQueues } from "../../lib/standalone/provision.js";
import {
  apiServer,
  createWorkflow,
  expectError,
  get,
  put,
  startApiServer,
  startRun,
  stopApiServer,
} from "../helpers/api-client.js";
import { dispatch, receiveTask, startInstance } from "../helpers/api-engine.js";
import { testClients } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";

beforeAll(async () => {
  const s = await startApiServer();
  // The test's queues: "default" exists; "gpu" is a group no worker polls.
  await ensureTaskQueues(testClients().sqs, s.aws.config.prefix, "gpu");
});
afterAll(stopApiServer);

const explain = async (id: string, code?: string) => {
  const r = await get(
    code ? `/v1/instances/${id}/tasks/${code}/explain` : `/v1/instances/${id}/explain`,
  );
  expect(r.status, r.text).toBe(200);
  return r.body;
};

/** Runs the task message the dispatcher sent for `id` on the worker and reports its result. */
async function runNextTask(id: string): Promise<void> {
  const { record, msg } = await receiveTask(id);
  const w = await apiServer().rt.worker.handleBatch([record]);
  expect(w.batchItemFailures).toEqual([]);
  const t = await apiServer().rt.engine.store.getTaskInstance(id, msg.code, msg.attempt);
  await dispatch({
    kind: "task",
    instanceId: id,
    code: msg.code,
    attempt: msg.attempt,
    state: t?.state as "SUCCESS",
  });
}

describe("explain", () => {
  it("a task in a worker group no worker polls: no worker has polled 'gpu'", async () => {
    await createWorkflow("gpu-job", {
      tasks: [{ code: "train", type: "SHELL", command: "echo train", workerGroup: "gpu" }],
    });
    const id = await startRun("gpu-job");
    await startInstance(id);
    const e = await explain(id, "train");
    expect(e).toMatchObject({
      code: "train",
      type: "SHELL",
      state: "DISPATCHED",
      attempt: 1,
      reason: "NO_WORKER",
      facts: { workerGroup: "gpu", servedBy: "workers", silenceSeconds: 120 },
    });
    expect(e.message).toMatch(/^no worker has polled worker group 'gpu' in the last 120 s/);

    // A worker that polls now (its heartbeat): the task is queued for it, approximately.
    await apiServer().rt.heartbeats.recordPoll("gpu", "test-worker", Date.now(), 60_000);
    const queued = await explain(id, "train");
    expect(queued).toMatchObject({
      reason: "QUEUED",
      facts: { lastWorker: "test-worker", tier: "MEDIUM", higherPriorityQueued: 0 },
    });
    expect(queued.message).toMatch(
      /^queued for a worker of group 'gpu': approximately \d+ tasks? wait/,
    );

    const all = await explain(id);
    expect(all).toMatchObject({ instanceId: id, workflow: "gpu-job", state: "RUNNING" });
    expect(all.tasks.map((t: { code: string }) => t.code)).toEqual(["train"]);
  });

  it("waiting for upstream, and the whole instance before the dispatcher took it", async () => {
    await createWorkflow("chain", {
      tasks: [
        { code: "extract", type: "SHELL", command: "echo e" },
        { code: "load", type: "SHELL", command: "echo l", upstream: ["extract"] },
      ],
    });
    const id = await startRun("chain");
    const before = await explain(id);
    expect(before).toMatchObject({ state: "SUBMITTED", reason: "INSTANCE_STARTING" });
    expect(before.tasks.map((t: { reason: string }) => t.reason)).toEqual([
      "INSTANCE_STARTING",
      "INSTANCE_STARTING",
    ]);
    await startInstance(id);
    expect(await explain(id, "load")).toMatchObject({
      state: "NOT_STARTED",
      reason: "WAITING_FOR_UPSTREAM",
      message: "waiting for upstream 'extract' (DISPATCHED, attempt 1)",
      facts: { upstream: [{ code: "extract", state: "DISPATCHED", attempt: 1 }] },
    });
  });

  it("a task group that is full: used/capacity and the place in its queue", async () => {
    expect((await put("/v1/task-groups/one-slot", { capacity: 1 })).status).toBe(201);
    await createWorkflow("grouped", {
      tasks: ["a", "b"].map((code) => ({
        code,
        type: "SHELL",
        command: "echo x",
        taskGroup: "one-slot",
      })),
    });
    const id = await startRun("grouped");
    await startInstance(id);
    const all = await explain(id);
    const waiting = all.tasks.filter((t: { reason: string }) => t.reason === "TASK_GROUP_FULL");
    expect(waiting).toHaveLength(1);
    expect(waiting[0]).toMatchObject({
      state: "SUBMITTED",
      message: "task group 'one-slot' is full (1/1 slots used): position 1 of 1 waiting",
      facts: { taskGroup: { name: "one-slot", capacity: 1, used: 1, waiting: 1, position: 1 } },
    });
  });

  it("a delayed retry: retry due at T, stored on the task instance", async () => {
    await createWorkflow("flaky", {
      tasks: [
        { code: "f", type: "SHELL", command: "exit 3", retries: 1, retryIntervalSeconds: 600 },
      ],
    });
    const id = await startRun("flaky");
    await startInstance(id);
    const before = Date.now();
    await runNextTask(id);
    const record = await apiServer().rt.engine.store.getTaskInstance(id, "f", 2);
    expect(record?.state).toBe("SUBMITTED");
    expect(record?.dueAt).toBeGreaterThanOrEqual(before + 600_000);
    const e = await explain(id, "f");
    expect(e).toMatchObject({
      state: "SUBMITTED",
      attempt: 2,
      reason: "RETRY_DUE",
      message: `retry due at ${new Date(record?.dueAt as number).toISOString()}`,
    });
  });

  it("a scheduled run signalled ahead of its time: not before T", async () => {
    await createWorkflow("later", { tasks: [{ code: "x", type: "SHELL", command: "true" }] });
    const id = "0b1e7f9a-0000-4000-8000-00000000a0a0";
    const notBefore = Date.now() + 3_600_000;
    await apiServer().rt.engine.store.putCommand({
      commandId: `start:${id}`,
      type: "SCHEDULED",
      instanceId: id,
      workflow: "later",
      version: 1,
      state: "PENDING",
      run: { params: {}, taskScope: "DOWNSTREAM", dryRun: false },
      notBefore,
      createdAt: Date.now(),
    });
    expect(await explain(id, "x")).toMatchObject({
      reason: "NOT_BEFORE",
      message: `not before ${new Date(notBefore).toISOString()}: a scheduled run signalled ahead of its nominal time starts then`,
    });
  });

  it("answers 404 for an unknown instance or task, 400 for a bad code", async () => {
    expectError(await get("/v1/instances/no-such-instance/explain"), 404, "NotFound", {
      message: /instance 'no-such-instance' does not exist/,
    });
    await createWorkflow("known", { tasks: [{ code: "x", type: "SHELL", command: "true" }] });
    const id = await startRun("known");
    expectError(await get(`/v1/instances/${id}/tasks/nope/explain`), 404, "NotFound", {
      message: /has no task 'nope'/,
    });
    expectError(
      await get(`/v1/instances/${id}/tasks/${encodeURIComponent("bad code")}/explain`),
      400,
      "ValidationError",
      {
        path: "code",
      },
    );
  });
});

describe("explain: busy workers, ECS groups, what it reads", () => {
  it("a worker whose every slot is busy is busy, not absent; its held message is 'received'", async () => {
    await createWorkflow("busy-gpu", {
      tasks: [{ code: "train", type: "SHELL", command: "echo train", workerGroup: "gpu" }],
    });
    const id = await startRun("busy-gpu");
    await startInstance(id);
    // What a busy worker's timer writes: 1 of 1 slot used, one message held for the slot.
    const beats = apiServer().rt.heartbeats;
    await beats.forgetWorker("gpu", "test-worker"); // an idle worker an earlier test recorded
    await beats.recordPoll("gpu", "busy-worker", Date.now(), 0, { used: 1, slots: 1, held: 1 });
    const e = await until(
      async () => {
        const x = await explain(id, "train");
        return x.reason === "WORKERS_BUSY" ? x : undefined;
      },
      { what: "WORKERS_BUSY" },
    );
    expect(e.message).toMatch(/the only slot of worker busy-worker is busy/);
    expect(e.facts).toMatchObject({
      servedBy: "workers",
      workers: [{ worker: "busy-worker", used: 1, slots: 1, held: 1 }],
    });
    // Its message received by that worker (in flight, nothing visible): said so.
    const urls = await ensureTaskQueues(testClients().sqs, apiServer().aws.config.prefix, "gpu");
    await until(
      async () => {
        for (const url of urls) {
          const r = await testClients().sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: url,
              MaxNumberOfMessages: 10,
              VisibilityTimeout: 600,
            }),
          );
          if (r.Messages?.some((m) => m.Body?.includes(id))) return true;
        }
        return false;
      },
      { what: "the task message, received as a worker's prefetch does" },
    );
    const received = await until(
      async () => {
        const x = await explain(id, "train");
        return x.message.startsWith("received by a worker") ? x : undefined;
      },
      { what: "the received message" },
    );
    expect(received.message).toBe(
      "received by a worker of group 'gpu', waiting for a free slot: the only slot of worker busy-worker is busy",
    );
    await beats.forgetWorker("gpu", "busy-worker");
  });

  it("an ECS group without a worker: the service starts one, not 'shoal worker'", async () => {
    await ensureTaskQueues(testClients().sqs, apiServer().aws.config.prefix, "ecs");
    apiServer().rt.api.ecsWorkerGroup = "ecs";
    try {
      await createWorkflow("on-ecs", {
        tasks: [{ code: "big", type: "SHELL", command: "true", workerGroup: "ecs" }],
      });
      const id = await startRun("on-ecs");
      await startInstance(id);
      const e = await explain(id, "big");
      expect(e).toMatchObject({ reason: "NO_WORKER", facts: { servedBy: "ecs" } });
      expect(e.message).toMatch(
        /^worker group 'ecs' is served by ECS, which runs no worker now \(scaled to 0 while idle\): the queued task makes it start one/,
      );
    } finally {
      delete apiServer().rt.api.ecsWorkerGroup;
    }
  });

  it("one task's explanation reads its own attempts and its upstream's, not the instance's", async () => {
    await createWorkflow("reads", {
      tasks: [
        { code: "a", type: "SHELL", command: "true" },
        { code: "b", type: "SHELL", command: "true", upstream: ["a"] },
        { code: "other", type: "SHELL", command: "true" },
      ],
    });
    const id = await startRun("reads");
    await startInstance(id);
    const store = apiServer().rt.api.store;
    const all = vi.spyOn(store, "listTaskInstances");
    const one = vi.spyOn(store, "listAttempts");
    try {
      expect(await explain(id, "b")).toMatchObject({ reason: "WAITING_FOR_UPSTREAM" });
      expect(all).not.toHaveBeenCalled();
      expect(one.mock.calls.map((c) => c[1]).sort()).toEqual(["a", "b"]);
      await explain(id);
      expect(all).toHaveBeenCalledTimes(1);
    } finally {
      all.mockRestore();
      one.mockRestore();
    }
  });

  it("an instance's reads take its definition from the process's cache", async () => {
    await createWorkflow("cached", { tasks: [{ code: "x", type: "SHELL", command: "true" }] });
    const id = await startRun("cached");
    await startInstance(id);
    const fetched = vi.spyOn(apiServer().rt.api.store, "getDefinition");
    try {
      for (let i = 0; i < 5; i++) expect((await get(`/v1/instances/${id}`)).status).toBe(200);
      await explain(id, "x");
      await explain(id);
      expect((await get(`/v1/instances/${id}/tasks/x/log`)).status).toBe(200);
      expect((await get(`/v1/instances/${id}/tasks/x/attempts`)).status).toBe(200);
      expect(fetched.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      fetched.mockRestore();
    }
  });
});

describe("logs of tasks no worker ran", () => {
  const lines = async (id: string, code: string) => {
    const r = await get(`/v1/instances/${id}/tasks/${code}/log`);
    expect(r.status, r.text).toBe(200);
    return r.body as { lines: Array<{ timestamp: string; message: string }>; nextToken?: string };
  };

  it("SWITCH says which case decided; the branch not taken says it was skipped", async () => {
    await createWorkflow("switcher", {
      params: { region: "eu" },
      tasks: [
        {
          code: "route",
          type: "SWITCH",
          cases: [
            { condition: 'region == "us"', next: "us_load" },
            { condition: 'region == "eu"', next: "eu_load" },
          ],
        },
        { code: "us_load", type: "SHELL", command: "true", upstream: ["route"] },
        { code: "eu_load", type: "SHELL", command: "true", upstream: ["route"] },
      ],
    });
    const id = await startRun("switcher");
    await startInstance(id);
    const route = await lines(id, "route");
    expect(route.lines.map((l) => l.message)).toEqual([
      'SWITCH: case 1 (`region == "eu"`) true → eu_load; skipped: us_load; values read: region = "eu"',
    ]);
    expect(route.nextToken).toBeUndefined();
    expect(route.lines[0]?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await lines(id, "us_load")).lines.map((l) => l.message)).toEqual([
      "SKIPPED: branch not taken by route",
    ]);
    expect(await explain(id, "us_load")).toMatchObject({
      reason: "SKIPPED_BY_BRANCH",
      message: "skipped: branch not taken by route (it took eu_load)",
    });
  });

  it("SWITCH says the values its cases read, secret-like ones masked", async () => {
    await createWorkflow("gate", {
      params: { rows: "5", threshold: "100", api_token: "s3cr3t-value" },
      tasks: [
        {
          code: "gate",
          type: "SWITCH",
          cases: [{ condition: 'rows > threshold && api_token != ""', next: "load" }],
          defaultNext: "quarantine",
        },
        { code: "load", type: "SHELL", command: "true", upstream: ["gate"] },
        { code: "quarantine", type: "SHELL", command: "true", upstream: ["gate"] },
      ],
    });
    const id = await startRun("gate");
    await startInstance(id);
    const gate = await lines(id, "gate");
    expect(gate.lines.map((l) => l.message)).toEqual([
      'SWITCH: no case true → default quarantine; skipped: load; values read: rows = "5", threshold = "100", api_token = "****"',
    ]);
    expect(gate.lines[0]?.message).not.toContain("s3cr3t");
  });

  it("CONDITIONS names the failed upstream and the branch it followed", async () => {
    await createWorkflow("cond", {
      tasks: [
        { code: "check", type: "SHELL", command: "exit 1" },
        {
          code: "decide",
          type: "CONDITIONS",
          upstream: ["check"],
          successNext: ["publish"],
          failedNext: ["alert"],
        },
        { code: "publish", type: "SHELL", command: "true", upstream: ["decide"] },
        { code: "alert", type: "SHELL", command: "true", upstream: ["decide"] },
      ],
    });
    const id = await startRun("cond");
    await startInstance(id);
    await runNextTask(id);
    expect((await lines(id, "decide")).lines.map((l) => l.message)).toEqual([
      "CONDITIONS: upstream 'check' FAILURE → failedNext [alert]; skipped: [publish]",
    ]);
  });

  it("a sub-workflow: started, and a follower is given a token until it ends", async () => {
    await createWorkflow("child-wf", { tasks: [{ code: "c", type: "SHELL", command: "true" }] });
    await createWorkflow("parent-wf", {
      tasks: [{ code: "sub", type: "SUB_WORKFLOW", workflow: "child-wf" }],
    });
    const id = await startRun("parent-wf");
    await startInstance(id);
    const first = await lines(id, "sub");
    expect(first.lines.map((l) => l.message)).toEqual([
      expect.stringMatching(/^SUB_WORKFLOW: started child instance \S+ of workflow 'child-wf'$/),
    ]);
    expect(first.nextToken).toBe("d1");
    const next = await get(`/v1/instances/${id}/tasks/sub/log?nextToken=d1`);
    expect(next.body).toEqual({ lines: [], nextToken: "d1" });
    const e = await explain(id, "sub");
    expect(e).toMatchObject({ reason: "WAITING_FOR_SUB_WORKFLOW" });
    expectError(
      await get(`/v1/instances/${id}/tasks/sub/log?nextToken=bogus`),
      400,
      "ValidationError",
      { path: "nextToken" },
    );
  });
});
