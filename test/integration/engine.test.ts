/**
 * The engine's handlers driven by hand with real SQS messages (fauxqs) and real DynamoDB writes
 * (dynalite): duplicate and concurrent deliveries, at every step, change nothing twice.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { type TestAws, useTestAws } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";
import { taskRecord } from "../helpers/records.js";
import { callApi } from "../helpers/runtime-api.js";
import { deleteRecords, receiveRecords } from "../helpers/sqs.js";

describe("duplicate and concurrent deliveries", () => {
  let aws: TestAws;
  let rt: Runtime;
  let dir: string;
  const api = (method: string, path: string, body?: unknown) => callApi(rt.api, method, path, body);
  const mediumQueue = () => aws.taskUrls[2] as string;

  beforeAll(async () => {
    aws = await useTestAws();
    dir = mkdtempSync(join(tmpdir(), "shoal-engine-"));
    rt = createRuntime({ ...aws.config, dataDir: dir, leaseMs: 5_000, leaseRenewMs: 200 });
  });

  it("runs each task attempt once and advances the DAG once, whatever is delivered twice", async () => {
    const marks = join(dir, "marks.txt");
    const put = await api("PUT", "/v1/workflows/dup", {
      params: { MARKS: marks },
      tasks: [
        { code: "a", type: "SHELL", command: 'echo a >> "$MARKS"' },
        { code: "b", type: "SHELL", command: 'echo b >> "$MARKS"', upstream: ["a"] },
      ],
    });
    expect(put.status).toBe(201);
    const run = await api("POST", "/v1/workflows/dup/runs", {});
    expect(run.status).toBe(202);
    const id = run.body.instanceId as string;

    // The start command, delivered twice (and once more concurrently).
    const cmd = await receiveRecords(aws.eventsUrl);
    expect(cmd).toHaveLength(1);
    await rt.dispatcher.handleBatch(cmd);
    await Promise.all([rt.dispatcher.handleBatch(cmd), rt.dispatcher.handleBatch(cmd)]);
    await deleteRecords(aws.eventsUrl, cmd);
    expect((await api("GET", `/v1/instances/${id}`)).body.state).toBe("RUNNING");

    const taskA = await receiveRecords(mediumQueue());
    expect(taskA).toHaveLength(1); // the repeats sent nothing more
    expect(await receiveRecords(mediumQueue(), { waitSeconds: 0 })).toHaveLength(0);

    // The task message delivered twice at once: one claim wins, the command runs once.
    const rec = taskA[0] as NonNullable<(typeof taskA)[0]>;
    const results = await rt.worker.handleBatch([rec, { ...rec, messageId: "copy" }]);
    expect(results.batchItemFailures).toEqual([]);
    expect(readFileSync(marks, "utf8")).toBe("a\n");
    await deleteRecords(mediumQueue(), taskA);

    // Its state-change event, delivered twice and concurrently: b is dispatched once.
    const events = await until(async () => {
      const r = await receiveRecords(aws.eventsUrl);
      return r.length ? r : undefined;
    });
    await Promise.all([rt.dispatcher.handleBatch(events), rt.dispatcher.handleBatch(events)]);
    await rt.dispatcher.handleBatch(events);
    await deleteRecords(aws.eventsUrl, events);
    // Two dispatchers racing on one event (only possible after a visibility timeout) may both
    // send b's message; the instance write lets one decision through, the worker claim one run.
    const taskB = await receiveRecords(mediumQueue());
    expect(
      new Set(taskB.map((r) => `${JSON.parse(r.body).code}#${JSON.parse(r.body).attempt}`)),
    ).toEqual(new Set(["b#1"]));
    expect(await receiveRecords(mediumQueue(), { waitSeconds: 0 })).toHaveLength(0);

    // A late redelivery of a's message: not run again (its event is re-sent, which is harmless).
    await rt.worker.handleBatch([rec]);
    expect(readFileSync(marks, "utf8")).toBe("a\n");

    await rt.worker.handleBatch(taskB);
    await deleteRecords(mediumQueue(), taskB);
    await until(async () => {
      const r = await receiveRecords(aws.eventsUrl);
      if (r.length) {
        await rt.dispatcher.handleBatch(r);
        await rt.dispatcher.handleBatch(r);
        await deleteRecords(aws.eventsUrl, r);
      }
      const inst = await api("GET", `/v1/instances/${id}`);
      return inst.body.state === "SUCCESS" ? inst : undefined;
    });
    expect(readFileSync(marks, "utf8")).toBe("a\nb\n");
    const inst = (await api("GET", `/v1/instances/${id}`)).body;
    expect(inst.tasks.map((t: { code: string; attempt: number }) => [t.code, t.attempt])).toEqual([
      ["a", 1],
      ["b", 1],
    ]);
  });

  it("never lets a stale attempt overwrite a newer one", async () => {
    const key = { instanceId: "fence", code: "t", attempt: 1 };
    const base = {
      workflow: "w",
      type: "SHELL" as const,
      priority: "MEDIUM" as const,
      workerGroup: "default",
      submittedAt: 1,
    };
    const store = rt.api.store;
    await store.putTaskInstance({ ...key, ...base, state: "DISPATCHED" });
    await store.updateTask(key, ["DISPATCHED"], {
      state: "RUNNING",
      worker: "old",
      leaseExpiresAt: 10,
    });
    // The sweeper fails the attempt over; attempt 2 is created and runs elsewhere.
    const sweeper = await rt.sweeper.sweep();
    expect(sweeper.failedOver).toBeGreaterThanOrEqual(1);
    expect((await store.getTaskInstance("fence", "t", 1))?.state).toBe("NEED_FAULT_TOLERANCE");
    await store.putTaskInstance({ ...key, attempt: 2, ...base, state: "DISPATCHED" });
    await store.updateTask({ ...key, attempt: 2 }, ["DISPATCHED"], {
      state: "RUNNING",
      worker: "new",
      leaseExpiresAt: Date.now() + 60_000,
    });
    // The old worker comes back with its result: rejected for attempt 1, and cannot touch attempt 2.
    expect(
      await store.updateTask(key, ["RUNNING"], { state: "SUCCESS" }, { worker: "old" }),
    ).toBeUndefined();
    expect(
      await store.updateTask(
        { ...key, attempt: 2 },
        ["RUNNING"],
        { state: "FAILURE" },
        { worker: "old" },
      ),
    ).toBeUndefined();
    expect((await store.getTaskInstance("fence", "t", 2))?.state).toBe("RUNNING");
    // Drain the failover event this test caused.
    await until(async () => {
      const r = await receiveRecords(aws.eventsUrl, { waitSeconds: 0 });
      await deleteRecords(aws.eventsUrl, r);
      return r.length > 0 ? true : undefined;
    });
  });
});

describe("failover survives a lost event", () => {
  it("keeps a failed-over attempt in the lease index until its event was sent", async () => {
    const aws = await useTestAws();
    const { createRuntime: create } = await import("../../lib/runtime/runtime.js");
    const { Sweeper } = await import("../../lib/engine/sweeper.js");
    const rt = create({ ...aws.config, dataDir: mkdtempSync(join(tmpdir(), "shoal-fo-")) });
    const store = rt.api.store;
    const key = { instanceId: "fo", code: "t", attempt: 1 };
    await store.putTaskInstance(taskRecord(key));
    await store.updateTask(key, ["DISPATCHED"], {
      state: "RUNNING",
      worker: "gone",
      leaseExpiresAt: 10,
    });
    const sent: unknown[] = [];
    let fail = true;
    const queues = {
      ...rt.api.queues,
      sendToDispatcher: async (events: unknown[]) => {
        if (fail) throw new Error("SQS is down");
        sent.push(...events);
      },
    };
    const sweeper = new Sweeper({
      ...rt.engine,
      queues: queues as never,
      commandResignalMs: 60_000,
    });
    await sweeper.sweep(); // the write lands, the send fails
    expect((await store.getTaskInstance("fo", "t", 1))?.state).toBe("NEED_FAULT_TOLERANCE");
    expect((await store.listExpiredLeases(Date.now(), 100)).map((t) => t.instanceId)).toContain(
      "fo",
    );
    fail = false;
    await sweeper.sweep(); // the next sweep sends it and only then leaves the index
    expect(sent).toEqual([{ kind: "task", ...key, state: "NEED_FAULT_TOLERANCE" }]);
    expect((await store.listExpiredLeases(Date.now(), 100)).map((t) => t.instanceId)).not.toContain(
      "fo",
    );
  });
});
