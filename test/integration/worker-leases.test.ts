/**
 * Worker leases (lib/store/worker-leases.ts, lib/engine/worker-lease.ts): a long-running attempt
 * is handed to its worker's lease at its first renewal and costs no write of its own after that;
 * a stop reaches it through the lease; a lapsed worker lease has its attempts failed over, and
 * its worker, should it come back, can never renew it and kills what it ran.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DEAD_WORKER_LEASE_KEPT_MS, Sweeper } from "../../lib/engine/sweeper.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import type { TaskInstanceRecord } from "../../lib/store/records.js";
import type { Store } from "../../lib/store/store.js";
import { type TestAws, useTestAws } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";
import { callApi } from "../helpers/runtime-api.js";
import { deleteRecords, receiveRecords } from "../helpers/sqs.js";

const attempt = (instanceId: string, code: string): TaskInstanceRecord => ({
  instanceId,
  workflow: "w",
  code,
  attempt: 1,
  type: "SHELL",
  state: "DISPATCHED",
  priority: "MEDIUM",
  workerGroup: "default",
  submittedAt: 1,
});

describe("worker leases in the store", () => {
  let store: Store;
  let rt: Runtime;
  beforeAll(async () => {
    const aws = await useTestAws();
    rt = createRuntime({ ...aws.config, dataDir: mkdtempSync(join(tmpdir(), "shoal-wl-")) });
    store = rt.api.store;
  });

  it("creates once, renews while alive, carries kill requests, and refuses a dead lease", async () => {
    expect(await store.renewWorkerLease("l1", "w1", 1_000, { create: true })).toEqual({
      kills: {},
    });
    // The id is taken: a second creation fails.
    expect(await store.renewWorkerLease("l1", "w2", 1_000, { create: true })).toBeUndefined();
    // A renewal of a lease that does not exist fails (a worker whose lease was deleted).
    expect(await store.renewWorkerLease("nope", "w1", 1_000, { create: false })).toBeUndefined();
    expect(await store.requestWorkerKill("l1", "i/t#0001", "stopped by the user")).toBe(true);
    expect(await store.requestWorkerKill("nope", "i/t#0001", "x")).toBe(false);
    expect(await store.renewWorkerLease("l1", "w1", 2_000, { create: false })).toEqual({
      kills: { "i/t#0001": "stopped by the user" },
    });
    // Acted on: taken off by the next renewal.
    expect(
      await store.renewWorkerLease("l1", "w1", 3_000, {
        create: false,
        handledKills: ["i/t#0001"],
      }),
    ).toEqual({ kills: {} });
    // Not lapsed at 2,999: not marked; lapsed at 3,001: listed and marked dead.
    expect(await store.markWorkerLeaseDead("l1", 2_999)).toBe(false);
    expect((await store.listExpiredWorkerLeases(3_001, 10)).map((l) => l.leaseId)).toContain("l1");
    expect(await store.markWorkerLeaseDead("l1", 3_001)).toBe(true);
    expect(await store.renewWorkerLease("l1", "w1", 9_000, { create: false })).toBeUndefined();
    expect(await store.requestWorkerKill("l1", "i/t#0001", "x")).toBe(false);
    const listed = (await store.listExpiredWorkerLeases(3_001, 10)).find((l) => l.leaseId === "l1");
    expect(listed).toEqual({
      leaseId: "l1",
      worker: "w1",
      leaseExpiresAt: 3_000,
      dead: true,
      deadAt: 3_001,
    });
    await store.deleteWorkerLease("l1");
    expect((await store.listExpiredWorkerLeases(3_001, 10)).map((l) => l.leaseId)).not.toContain(
      "l1",
    );
  });

  it("keeps a live lease when asked to delete it", async () => {
    await store.renewWorkerLease("l2", "w1", 5_000, { create: true });
    await store.deleteWorkerLease("l2");
    expect(await store.renewWorkerLease("l2", "w1", 6_000, { create: false })).toEqual({
      kills: {},
    });
  });

  it("moves an attempt handed over into its worker lease's shard, out of the attempt leases", async () => {
    const key = { instanceId: "wl-move", code: "t", attempt: 1 };
    await store.putTaskInstance(attempt("wl-move", "t"));
    await store.updateTask(key, ["DISPATCHED"], {
      state: "RUNNING",
      worker: "w1",
      leaseExpiresAt: 10,
    });
    expect((await store.listExpiredLeases(11, 100)).map((t) => t.instanceId)).toContain("wl-move");
    const moved = await store.updateTask(
      key,
      ["RUNNING"],
      { leaseExpiresAt: 20, workerLease: "l3" },
      { worker: "w1" },
    );
    expect(moved?.workerLease).toBe("l3");
    expect((await store.listExpiredLeases(Date.now(), 100)).map((t) => t.instanceId)).not.toContain(
      "wl-move",
    );
    expect((await store.listWorkerLeaseTasks("l3", 10)).map((t) => t.instanceId)).toEqual([
      "wl-move",
    ]);
    // Its result moves it on to the outbox of task events, out of the worker lease.
    await store.updateTask(key, ["RUNNING"], { state: "SUCCESS", endedAt: 30, leaseExpiresAt: 40 });
    expect(await store.listWorkerLeaseTasks("l3", 10)).toEqual([]);
    expect((await store.listOverdueTaskEvents(41, 100)).map((t) => t.instanceId)).toContain(
      "wl-move",
    );
  });
});

describe("a lapsed worker lease", () => {
  it("is swept again while it is kept dead, so a hand-over written late is failed over too", async () => {
    const aws = await useTestAws();
    const rt = createRuntime({ ...aws.config, dataDir: mkdtempSync(join(tmpdir(), "shoal-wl-")) });
    const store = rt.api.store;
    const sent: unknown[] = [];
    const sweeperAt = (offsetMs: number) =>
      new Sweeper({
        ...rt.engine,
        now: () => Date.now() + offsetMs,
        queues: {
          ...rt.api.queues,
          sendToDispatcher: async (e: unknown[]) => void sent.push(...e),
        } as never,
        commandResignalMs: 600_000,
      });
    const handOver = async (instanceId: string) => {
      const key = { instanceId, code: "t", attempt: 1 };
      await store.putTaskInstance(attempt(instanceId, "t"));
      await store.updateTask(key, ["DISPATCHED"], {
        state: "RUNNING",
        worker: "wz",
        leaseExpiresAt: Date.now() + 600_000,
      });
      await store.updateTask(
        key,
        ["RUNNING"],
        { leaseExpiresAt: 1, workerLease: "late" },
        { worker: "wz" },
      );
    };
    await store.renewWorkerLease("late", "wz", 1_000, { create: true });
    await handOver("late-1");
    await sweeperAt(0).sweep();
    expect((await store.getTaskInstance("late-1", "t", 1))?.state).toBe("NEED_FAULT_TOLERANCE");
    // Written after the sweeper took the lease over: the next sweep finds it all the same.
    await handOver("late-2");
    await sweeperAt(0).sweep();
    expect((await store.getTaskInstance("late-2", "t", 1))?.state).toBe("NEED_FAULT_TOLERANCE");
    expect(sent).toContainEqual({
      kind: "task",
      instanceId: "late-2",
      code: "t",
      attempt: 1,
      state: "NEED_FAULT_TOLERANCE",
    });
    const listed = async () =>
      (await store.listExpiredWorkerLeases(Date.now() + 3_600_000, 100)).map((l) => l.leaseId);
    expect(await listed()).toContain("late");
    // Deleted once it has been dead longer than DEAD_WORKER_LEASE_KEPT_MS.
    await sweeperAt(DEAD_WORKER_LEASE_KEPT_MS + 60_000).sweep();
    expect(await listed()).not.toContain("late");
  });
});

describe("a long-running task on its worker's lease", () => {
  let aws: TestAws;
  let rt: Runtime;
  const api = (method: string, path: string, body?: unknown) => callApi(rt.api, method, path, body);
  const mediumQueue = () => aws.taskUrls[2] as string;

  beforeAll(async () => {
    aws = await useTestAws();
    const dataDir = mkdtempSync(join(tmpdir(), "shoal-wl-run-"));
    rt = createRuntime({ ...aws.config, dataDir, leaseMs: 2_000, leaseRenewMs: 100 });
  });

  /** Starts a one-task run and returns its id and the task message, not yet handled. */
  async function startLong(name: string, command: string) {
    expect(
      (
        await api("PUT", `/v1/workflows/${name}`, {
          tasks: [{ code: "t", type: "SHELL", command }],
        })
      ).status,
    ).toBe(201);
    const run = await api("POST", `/v1/workflows/${name}/runs`, {});
    const id = run.body.instanceId as string;
    const cmd = await receiveRecords(aws.eventsUrl);
    await rt.dispatcher.handleBatch(cmd);
    await deleteRecords(aws.eventsUrl, cmd);
    const task = await until(async () => {
      const r = await receiveRecords(mediumQueue());
      return r.length ? r : undefined;
    });
    return { id, task };
  }

  /** The task item of run `id` once its attempt was handed to a worker lease. */
  function handedOver(id: string) {
    return until(async () => {
      const t = await rt.api.store.getTaskInstance(id, "t", 1);
      return t?.workerLease ? t : undefined;
    });
  }

  /** Waits for the worker's batch, which must end within 10 s, and deletes its message. */
  async function endsSoon(running: Promise<unknown>, task: Parameters<typeof deleteRecords>[1]) {
    const t0 = Date.now();
    await running;
    await deleteRecords(mediumQueue(), task);
    expect(Date.now() - t0).toBeLessThan(10_000);
  }

  /** Stops a run through the API and lets the dispatcher carry the stop out. */
  async function stop(id: string) {
    expect((await api("POST", `/v1/instances/${id}/stop`, {})).status).toBe(202);
    const cmd = await until(async () => {
      const r = await receiveRecords(aws.eventsUrl);
      return r.length ? r : undefined;
    });
    await rt.dispatcher.handleBatch(cmd);
    await deleteRecords(aws.eventsUrl, cmd);
  }

  it("writes its task item once to hand it over, then only the worker lease is renewed", async () => {
    const { id, task } = await startLong("long", "sleep 1.5");
    const running = rt.worker.handleBatch(task);
    const handed = await handedOver(id);
    expect(handed.state).toBe("RUNNING");
    const leaseId = handed.workerLease as string;
    // Renewals (every 100 ms) move the worker lease, not the task item.
    await until(async () => {
      const later = await rt.api.store.getTaskInstance(id, "t", 1);
      const expired = await rt.api.store.listExpiredWorkerLeases(Date.now() + 1_950, 100);
      const lease = expired.find((l) => l.leaseId === leaseId);
      return later?.leaseExpiresAt === handed.leaseExpiresAt &&
        lease !== undefined &&
        lease.leaseExpiresAt > (handed.leaseExpiresAt ?? 0) + 300
        ? true
        : undefined;
    });
    expect((await running).batchItemFailures).toEqual([]);
    await deleteRecords(mediumQueue(), task);
    const done = await rt.api.store.getTaskInstance(id, "t", 1);
    expect(done?.state).toBe("SUCCESS");
    expect(await rt.api.store.listWorkerLeaseTasks(leaseId, 10)).toEqual([]);
  });

  it("kills a handed-over task on a stop, with the stop's reason", async () => {
    const { id, task } = await startLong("stopped", "sleep 30");
    const running = rt.worker.handleBatch(task);
    await handedOver(id);
    await stop(id);
    // Killed within a few renewals, not after the 30 s sleep.
    await endsSoon(running, task);
    const killed = await rt.api.store.getTaskInstance(id, "t", 1);
    expect(killed?.state).toBe("KILLED");
    expect(killed?.error).toMatch(/stop/);
  });

  it("fails over the attempts of a worker lease that lapsed, and its worker kills them", async () => {
    const { id, task } = await startLong("orphaned", "sleep 30");
    const running = rt.worker.handleBatch(task);
    const handed = await handedOver(id);
    // The sweeper of a clock 1 minute ahead: the worker lease looks lapsed to it.
    const sent: unknown[] = [];
    const sweeper = new Sweeper({
      ...rt.engine,
      now: () => Date.now() + 60_000,
      queues: {
        ...rt.api.queues,
        sendToDispatcher: async (e: unknown[]) => void sent.push(...e),
      } as never,
      commandResignalMs: 600_000,
    });
    const report = await sweeper.sweep();
    expect(report.failedOver).toBeGreaterThanOrEqual(1);
    expect(sent).toContainEqual({
      kind: "task",
      instanceId: id,
      code: "t",
      attempt: 1,
      state: "NEED_FAULT_TOLERANCE",
    });
    const failedOver = await rt.api.store.getTaskInstance(id, "t", 1);
    expect(failedOver?.state).toBe("NEED_FAULT_TOLERANCE");
    expect(failedOver?.error).toMatch(/stopped renewing its lease/);
    // The lease is gone; the worker's next renewal fails, and it kills the task (not after its
    // sleep).
    await endsSoon(running, task);
    expect(await rt.api.store.listWorkerLeaseTasks(handed.workerLease as string, 10)).toEqual([]);
    // Its result was dropped: the failed-over state stands.
    expect((await rt.api.store.getTaskInstance(id, "t", 1))?.state).toBe("NEED_FAULT_TOLERANCE");
  });

  it("hands back a task whose worker lease was taken over before the sweeper saw the task", async () => {
    const { id, task } = await startLong("late-hand-over", "sleep 30");
    const running = rt.worker.handleBatch(task);
    const handed = await handedOver(id);
    // The lease taken over (as by a sweeper whose clock runs ahead) while its task is still
    // RUNNING in it: the worker's next renewal fails, it kills the task and hands it back.
    expect(
      await rt.api.store.markWorkerLeaseDead(handed.workerLease as string, Date.now() + 60_000),
    ).toBe(true);
    // Killed within a few renewals, not after its sleep.
    await endsSoon(running, task);
    const back = await rt.api.store.getTaskInstance(id, "t", 1);
    expect(back?.state).toBe("NEED_FAULT_TOLERANCE");
    expect(back?.error).toMatch(/lost its lease/);
    const event = await until(async () => {
      const r = await receiveRecords(aws.eventsUrl);
      const found = r.find((m) => m.body.includes(id) && m.body.includes("NEED_FAULT_TOLERANCE"));
      await deleteRecords(aws.eventsUrl, r);
      return found;
    });
    expect(JSON.parse(event.body)).toMatchObject({ kind: "task", instanceId: id, code: "t" });
  });

  it("starts a new worker lease for the next long task once the old one was taken over", async () => {
    const { id, task } = await startLong("next-long", "sleep 0.6");
    const running = rt.worker.handleBatch(task);
    const handed = await handedOver(id);
    expect((await running).batchItemFailures).toEqual([]);
    await deleteRecords(mediumQueue(), task);
    expect((await rt.api.store.getTaskInstance(id, "t", 1))?.state).toBe("SUCCESS");
    // A new lease, live (the lost one was taken over by the sweeper).
    const leases = await rt.api.store.listExpiredWorkerLeases(Date.now() + 600_000, 100);
    expect(leases.map((l) => l.leaseId)).toContain(handed.workerLease);
    expect(leases.find((l) => l.leaseId === handed.workerLease)?.dead).toBeUndefined();
  });

  it("leases an attempt of a Lambda invocation past the invocation's end once, and never renews it", async () => {
    const { id, task } = await startLong("in-lambda", "sleep 30");
    const deadline = Date.now() + 120_000;
    const running = rt.worker.handleBatch(task, { deadline });
    const claimed = await until(async () => {
      const t = await rt.api.store.getTaskInstance(id, "t", 1);
      return t?.state === "RUNNING" ? t : undefined;
    });
    // The claim's own lease first (a task that crashes at once fails over after one lease)…
    expect(claimed.leaseExpiresAt).toBe((claimed.startedAt ?? 0) + 2_000);
    // …set past the invocation's end at the first renewal, then left alone.
    await until(async () => {
      const t = await rt.api.store.getTaskInstance(id, "t", 1);
      return t?.leaseExpiresAt === deadline + 2_000 ? t : undefined;
    });
    await until(async () => {
      const later = await rt.api.store.getTaskInstance(id, "t", 1);
      return Date.now() - (claimed.startedAt ?? 0) > 700 ? later : undefined;
    }).then((later) => {
      expect(later.leaseExpiresAt).toBe(deadline + 2_000);
      expect(later.workerLease).toBeUndefined();
    });
    // A stop reaches it by the read each renewal period makes.
    await stop(id);
    // Killed within a few renewals, not after its sleep.
    await endsSoon(running, task);
    expect((await rt.api.store.getTaskInstance(id, "t", 1))?.state).toBe("KILLED");
  });
});
