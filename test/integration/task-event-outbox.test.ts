/**
 * The outbox of task events (issue 12, stall 2): a worker that dies between its result write and
 * its task event must not stall the instance until the task message reappears (900 s). The
 * sweeper finds the finished attempt still in the leases index once its event is overdue and
 * sends the event again; a re-sent event the dispatcher already applied changes nothing.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SQSRecord } from "aws-lambda";
import { beforeAll, describe, expect, it } from "vitest";

import { Sweeper } from "../../lib/engine/sweeper.js";
import type { DispatcherMessage, TaskMessage } from "../../lib/queue/messages.js";
import type { Queues } from "../../lib/queue/queues.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { LOCAL_ACCOUNT, sqsRecordOf } from "../../lib/standalone/lambda-events.js";
import type { TaskInstanceRecord } from "../../lib/store/records.js";
import type { Store } from "../../lib/store/store.js";
import { type TestAws, useTestAws } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";
import { callApi } from "../helpers/runtime-api.js";
import { runtimeWorker } from "../helpers/runtime-worker.js";
import { deleteRecords, receiveRecords } from "../helpers/sqs.js";

describe("task event outbox", () => {
  let aws: TestAws;
  let rt: Runtime;
  let dir: string;
  const api = (method: string, path: string, body?: unknown) => callApi(rt.api, method, path, body);
  const medium = () => aws.taskUrls[2] as string;
  const sweeperAt = (now: number) =>
    new Sweeper({ ...rt.engine, now: () => now, commandResignalMs: 60_000 });

  /** A worker on the runtime with `store` and `queues` (the runtime's by default). */
  const workerOn = (id: string, store: Store = rt.engine.store, queues = rt.engine.queues) =>
    runtimeWorker(rt, dir, { store, queues, workerId: id });

  /** A worker on the runtime's store whose queues fail the first task event of `code`. */
  const workerLosing = (code: string) => {
    let failed = false;
    const queues: Queues = {
      sendTasks: (items) => rt.engine.queues.sendTasks(items),
      sendDelayedSignal: (e, s) => rt.engine.queues.sendDelayedSignal(e, s),
      extendVisibility: (u, h, s) => rt.engine.queues.extendVisibility(u, h, s),
      queueUrlFromArn: (arn) => rt.engine.queues.queueUrlFromArn(arn),
      sendToDispatcher: async (events: DispatcherMessage[]) => {
        if (!failed && events.some((e) => e.kind === "task" && e.code === code)) {
          failed = true;
          throw new Error("injected: the worker died right after its result write");
        }
        await rt.engine.queues.sendToDispatcher(events);
      },
    };
    return workerOn("doomed", rt.engine.store, queues);
  };

  /** Receives the instance's next task message (and deletes it: a lost one never reappears). */
  const nextTask = async (instanceId: string): Promise<SQSRecord> =>
    until(
      async () => {
        const r = await receiveRecords(medium(), { waitSeconds: 0 });
        await deleteRecords(medium(), r);
        return r.find((x) => (JSON.parse(x.body) as TaskMessage).instanceId === instanceId);
      },
      { what: `a task message of ${instanceId}` },
    );

  /** Hands every queued dispatcher message to the dispatcher; returns how many there were. */
  const drainEvents = async (): Promise<number> => {
    const r = await receiveRecords(aws.eventsUrl, { waitSeconds: 0 });
    if (r.length) {
      expect((await rt.dispatcher.handleBatch(r)).batchItemFailures).toEqual([]);
      await deleteRecords(aws.eventsUrl, r);
    }
    return r.length;
  };

  /** Hands one dispatcher message to the dispatcher as an SQS record. */
  const deliver = async (e: DispatcherMessage) => {
    const arn = `arn:aws:sqs:us-east-1:${LOCAL_ACCOUNT}:${aws.eventsUrl.split("/").pop()}`;
    const rec = sqsRecordOf(
      {
        MessageId: randomUUID(),
        ReceiptHandle: "rh",
        Body: JSON.stringify(e),
        Attributes: { MessageGroupId: e.instanceId },
      },
      arn,
      "us-east-1",
      0,
    );
    expect((await rt.dispatcher.handleBatch([rec])).batchItemFailures).toEqual([]);
  };

  const start = async (
    workflow: string,
    tasks: unknown[] = [
      { code: "a", type: "SHELL", command: "true" },
      { code: "b", type: "SHELL", command: "true", upstream: ["a"] },
    ],
  ): Promise<string> => {
    const put = await api("PUT", `/v1/workflows/${workflow}`, { tasks });
    expect(put.status).toBe(201);
    const run = await api("POST", `/v1/workflows/${workflow}/runs`, {});
    expect(run.status).toBe(202);
    const id = run.body.instanceId as string;
    await until(async () => (await drainEvents()) > 0, { what: "the start command" });
    return id;
  };

  beforeAll(async () => {
    aws = await useTestAws();
    dir = mkdtempSync(join(tmpdir(), "shoal-outbox-"));
    rt = createRuntime({ ...aws.config, dataDir: dir, leaseMs: 5_000, leaseRenewMs: 200 });
  });

  it("re-sends the task event of a worker that died after its result write", async () => {
    const id = await start("outbox-lost");
    const a = await nextTask(id);
    // The send fails: the message counts as failed, the attempt is SUCCESS in the store.
    const r = await workerLosing("a").handleBatch([a]);
    expect(r.batchItemFailures).toHaveLength(1);
    expect(await rt.engine.store.getTaskInstance(id, "a", 1)).toMatchObject({ state: "SUCCESS" });
    expect(await drainEvents()).toBe(0);

    // The sweeper, with its clock a minute on (the event is overdue), sends it again.
    expect((await sweeperAt(Date.now() + 60_000).sweep()).eventsResent).toBe(1);
    const b = await until(
      async () => {
        await drainEvents();
        const rec = await receiveRecords(medium(), { waitSeconds: 0 });
        await deleteRecords(medium(), rec);
        return rec.find((x) => (JSON.parse(x.body) as TaskMessage).instanceId === id);
      },
      { what: "b dispatched after the sweep" },
    );
    expect((JSON.parse(b.body) as TaskMessage).code).toBe("b");
    expect((await rt.worker.handleBatch([b])).batchItemFailures).toEqual([]);
    const done = await until(
      async () => {
        await drainEvents();
        const inst = await api("GET", `/v1/instances/${id}`);
        return inst.body.state === "SUCCESS" ? inst.body : undefined;
      },
      { what: `${id} SUCCESS` },
    );
    expect(done.tasks.map((t: { code: string; attempt: number }) => [t.code, t.attempt])).toEqual([
      ["a", 1],
      ["b", 1],
    ]);
    // Re-sent once: the attempt left the leases index, a later sweep sends nothing more.
    expect(await indexed(id)).toEqual([]);
  });

  it("changes nothing when a task event the dispatcher already applied comes again", async () => {
    const id = await start("outbox-dup");
    const a = await nextTask(id);
    expect((await rt.worker.handleBatch([a])).batchItemFailures).toEqual([]);
    await until(async () => (await drainEvents()) > 0, { what: "a's event" });
    const b = await nextTask(id);
    expect((JSON.parse(b.body) as TaskMessage).code).toBe("b");
    const before = await rt.engine.store.getInstance(id);
    expect(before?.state).toBe("RUNNING");

    // The normal path left nothing for the sweeper: a's attempt is out of the leases index.
    const overdue = await rt.engine.store.listExpiredLeases(Date.now() + 3_600_000, 100);
    expect(overdue.filter((t) => t.instanceId === id && t.code === "a")).toEqual([]);

    // a's event again, as a sweeper re-sending it would: the instance is not written, and b
    // is not dispatched a second time.
    const again: DispatcherMessage = {
      kind: "task",
      instanceId: id,
      code: "a",
      attempt: 1,
      state: "SUCCESS",
    };
    // Straight to the dispatcher: SQS would drop a copy sent within 5 minutes as a duplicate.
    await deliver(again);
    expect(await rt.engine.store.getInstance(id)).toEqual(before);
    expect(
      (await receiveRecords(medium(), { waitSeconds: 1 })).filter(
        (x) => (JSON.parse(x.body) as TaskMessage).instanceId === id,
      ),
    ).toEqual([]);

    expect((await rt.worker.handleBatch([b])).batchItemFailures).toEqual([]);
    await until(
      async () => {
        await drainEvents();
        return (await rt.engine.store.getInstance(id))?.state === "SUCCESS";
      },
      { what: `${id} SUCCESS` },
    );
    // Once the instance is over, the same event still changes nothing.
    const after = await rt.engine.store.getInstance(id);
    await deliver(again);
    expect(await rt.engine.store.getInstance(id)).toEqual(after);
  });
  /** The instance's attempts in the leases index, whatever their deadline. */
  /** The instance's attempts in the leases index: lapsed leases and the outbox of task events. */
  const indexed = async (id: string): Promise<TaskInstanceRecord[]> => {
    const later = Date.now() + 3_600_000;
    const { store } = rt.engine;
    return [
      ...(await store.listExpiredLeases(later, 100)),
      ...(await store.listOverdueTaskEvents(later, 100)),
    ].filter((t) => t.instanceId === id);
  };

  it("re-sends the OUT values of a finished attempt with its event", async () => {
    const id = await start("outbox-out", [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Shoal's parameter syntax
      { code: "a", type: "SHELL", command: "echo '${setValue(v=from-a)}'" },
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Shoal's parameter syntax
      { code: "b", type: "SHELL", command: 'echo "v=${v}"', upstream: ["a"] },
    ]);
    const a = await nextTask(id);
    expect((await workerLosing("a").handleBatch([a])).batchItemFailures).toHaveLength(1);
    expect(await rt.engine.store.getTaskInstance(id, "a", 1)).toMatchObject({
      state: "SUCCESS",
      outputs: { v: "from-a" },
    });

    expect((await sweeperAt(Date.now() + 60_000).sweep()).eventsResent).toBe(1);
    const b = await until(
      async () => {
        await drainEvents();
        const rec = await receiveRecords(medium(), { waitSeconds: 0 });
        await deleteRecords(medium(), rec);
        return rec.find((x) => (JSON.parse(x.body) as TaskMessage).instanceId === id);
      },
      { what: "b dispatched after the sweep" },
    );
    const msg = JSON.parse(b.body) as TaskMessage;
    expect(msg.code).toBe("b");
    // The dispatcher takes OUT values from the event alone: a re-send without them loses v.
    expect(msg.params.v).toBe("from-a");
  });

  it("a duplicate delivery of a finished attempt still in the index clears its entry", async () => {
    const id = await start("outbox-redelivery");
    const a = await nextTask(id);
    expect((await workerLosing("a").handleBatch([a])).batchItemFailures).toHaveLength(1);
    expect((await indexed(id)).map((t) => [t.code, t.state])).toEqual([["a", "SUCCESS"]]);

    // SQS delivers the failed message again: the worker does not run it, sends its event again
    // and takes the attempt out of the index (the sweeper has nothing left to re-send).
    expect((await rt.worker.handleBatch([a])).batchItemFailures).toEqual([]);
    expect(await indexed(id)).toEqual([]);
    expect((await sweeperAt(Date.now() + 60_000).sweep()).eventsResent).toBe(0);
    await until(
      async () => {
        await drainEvents();
        const rec = await receiveRecords(medium(), { waitSeconds: 0 });
        await deleteRecords(medium(), rec);
        return rec.some((x) => (JSON.parse(x.body) as TaskMessage).instanceId === id);
      },
      { what: "b dispatched after the redelivery" },
    );
  });

  it("one sweep fails over an expired lease and re-sends an overdue event, each once", async () => {
    // `stale`: a worker claimed a, then died (its lease runs out, nobody renews it).
    const stale = await start("outbox-mixed-stale");
    await nextTask(stale);
    const claimed = await rt.engine.store.updateTask(
      { instanceId: stale, code: "a", attempt: 1 },
      ["SUBMITTED", "DISPATCHED"],
      {
        state: "RUNNING",
        worker: "dead",
        startedAt: Date.now(),
        leaseExpiresAt: Date.now() + 5_000,
      },
    );
    expect(claimed?.state).toBe("RUNNING");
    // `done`: a finished, its event lost.
    const done = await start("outbox-mixed-done");
    const a = await nextTask(done);
    expect((await workerLosing("a").handleBatch([a])).batchItemFailures).toHaveLength(1);

    const report = await sweeperAt(Date.now() + 60_000).sweep();
    expect(report).toMatchObject({ failedOver: 1, eventsResent: 1 });
    expect(await rt.engine.store.getTaskInstance(stale, "a", 1)).toMatchObject({
      state: "NEED_FAULT_TOLERANCE",
    });
    expect(await rt.engine.store.getTaskInstance(done, "a", 1)).toMatchObject({
      state: "SUCCESS",
    });
    expect(await indexed(stale)).toEqual([]);
    expect(await indexed(done)).toEqual([]);
    await until(async () => (await drainEvents()) === 0, { what: "the events applied" });
  });
  it("counts a re-sent event once sent, a shutdown's hand-back included", async () => {
    const id = await start("outbox-handback", [
      { code: "a", type: "SHELL", command: "sleep 30" },
      { code: "b", type: "SHELL", command: "true", upstream: ["a"] },
    ]);
    const a = await nextTask(id);
    // The worker shuts down while a runs: it hands a back (NEED_FAULT_TOLERANCE), and that
    // event is lost.
    const worker = workerLosing("a");
    const handling = worker.handleBatch([a]);
    await until(
      async () => (await rt.engine.store.getTaskInstance(id, "a", 1))?.state === "RUNNING",
      { what: "a running" },
    );
    worker.shutdown();
    await handling;
    expect((await indexed(id)).map((t) => [t.code, t.state])).toEqual([
      ["a", "NEED_FAULT_TOLERANCE"],
    ]);

    // A sweep whose send fails counts nothing and says so; the entry stays for the next one.
    const logged: string[] = [];
    const failing = new Sweeper({
      ...rt.engine,
      queues: {
        ...rt.engine.queues,
        sendToDispatcher: async () => {
          throw new Error("injected: SQS out");
        },
      },
      now: () => Date.now() + 60_000,
      commandResignalMs: 60_000,
      log: (msg) => logged.push(msg),
    });
    expect(await failing.sweep()).toMatchObject({ failedOver: 0, eventsResent: 0 });
    expect(logged).toContain("sweeper: overdue task event not finished, next sweep sends it again");
    expect(logged).not.toContain("sweeper: task event re-sent");
    expect(await indexed(id)).toHaveLength(1);

    expect(await sweeperAt(Date.now() + 60_000).sweep()).toMatchObject({
      failedOver: 0,
      eventsResent: 1,
    });
    expect(await indexed(id)).toEqual([]);
    // The dispatcher heard: a's next attempt is dispatched.
    const again = await until(
      async () => {
        await drainEvents();
        const rec = await receiveRecords(medium(), { waitSeconds: 0 });
        await deleteRecords(medium(), rec);
        return rec.find((x) => (JSON.parse(x.body) as TaskMessage).instanceId === id);
      },
      { what: "a's next attempt dispatched" },
    );
    expect(JSON.parse(again.body) as TaskMessage).toMatchObject({ code: "a", attempt: 2 });
  });

  it("a shutdown while the claim is being written hands the attempt back without running it", async () => {
    const id = await start("outbox-claim-shutdown", [
      { code: "a", type: "SHELL", command: "sleep 30" },
    ]);
    const a = await nextTask(id);
    // The claim's answer is held back after it landed: the shutdown comes in between, as a
    // SIGTERM can while a slow store answers.
    let reached: () => void = () => {};
    const atClaim = new Promise<void>((r) => {
      reached = r;
    });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const store = rt.engine.store;
    const holding = new Proxy(store, {
      get(target, prop) {
        if (prop === "updateTask") {
          return async (...args: Parameters<Store["updateTask"]>) => {
            const out = await target.updateTask(...args);
            if (args[2].state === "RUNNING") {
              reached();
              await gate;
            }
            return out;
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const worker = workerOn("stopping", holding);
    const started = Date.now();
    const handling = worker.handleBatch([a]);
    await atClaim;
    worker.shutdown();
    release();
    await handling;
    // Handed back at once, not after the 30 s the task would take.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await rt.engine.store.getTaskInstance(id, "a", 1))?.state).toBe("NEED_FAULT_TOLERANCE");
  }, 20_000);

  it("re-sends an overdue event at the first sweep, behind a full page of lapsed leases", async () => {
    // 100 attempts of dead workers, whose leases lapsed a minute before the event was due.
    const ghost = `ghost-${randomUUID()}`;
    const lapsed = Date.now() - 60_000;
    for (let i = 0; i < 100; i++) {
      const key = { instanceId: ghost, code: `t${i}`, attempt: 1 };
      const claimed = await rt.engine.store.updateTask(
        key,
        ["DISPATCHED"],
        { state: "RUNNING", worker: "dead", startedAt: lapsed, leaseExpiresAt: lapsed },
        {
          createWith: {
            ...key,
            workflow: "ghost",
            type: "SHELL",
            state: "DISPATCHED",
            priority: "MEDIUM",
            workerGroup: "default",
            submittedAt: lapsed,
          },
        },
      );
      expect(claimed?.state).toBe("RUNNING");
    }
    const done = await start("outbox-behind-leases");
    const a = await nextTask(done);
    expect((await workerLosing("a").handleBatch([a])).batchItemFailures).toHaveLength(1);

    // Events go to a stub: the ghosts' instances do not exist.
    const sent: DispatcherMessage[][] = [];
    const sweeper = new Sweeper({
      ...rt.engine,
      queues: {
        ...rt.engine.queues,
        sendToDispatcher: async (events) => {
          sent.push(events);
        },
      },
      now: () => Date.now() + 60_000,
      commandResignalMs: 60_000,
    });
    const report = await sweeper.sweep();
    expect(report).toMatchObject({ failedOver: 100, eventsResent: 1 });
    expect(sent.flat().filter((e) => e.instanceId === done)).toMatchObject([
      { kind: "task", code: "a", attempt: 1, state: "SUCCESS" },
    ]);
    expect(await indexed(done)).toEqual([]);
    expect(await indexed(ghost)).toEqual([]);
    // The re-sent event itself, delivered, lets b go.
    await deliver(sent.flat().find((e) => e.instanceId === done) as DispatcherMessage);
    const b = await nextTask(done);
    expect(JSON.parse(b.body) as TaskMessage).toMatchObject({ code: "b" });
  }, 60_000);
});
