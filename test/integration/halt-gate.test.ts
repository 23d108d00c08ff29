/**
 * A stop or pause answered 202 is a promise, whatever happens to the dispatcher before it carries
 * the command out (lib/engine/halt-gate.ts): a worker that claims a queued attempt of the
 * instance meanwhile holds it, and the task never starts. Driven by hand: the command's signal
 * is received and kept unhandled (a dispatcher that died), the task message handed to a worker.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SQSRecord } from "aws-lambda";
import { beforeAll, describe, expect, it } from "vitest";
import type { TaskMessage } from "../../lib/queue/messages.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { type TestAws, useTestAws } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";
import { taskRecord } from "../helpers/records.js";
import { callApi } from "../helpers/runtime-api.js";
import { deleteRecords, receiveRecords } from "../helpers/sqs.js";

describe("a stop or pause accepted before a worker claims the task", () => {
  let aws: TestAws;
  let rt: Runtime;
  let dir: string;
  const api = (method: string, path: string, body?: unknown) => callApi(rt.api, method, path, body);
  const mediumQueue = () => aws.taskUrls[2] as string;

  beforeAll(async () => {
    aws = await useTestAws();
    dir = mkdtempSync(join(tmpdir(), "shoal-halt-gate-"));
    rt = createRuntime({ ...aws.config, dataDir: dir, leaseMs: 5_000, leaseRenewMs: 200 });
  });

  /** Hands every message on the events queue to the dispatcher until `done` holds. */
  async function dispatchUntil<T>(done: () => Promise<T | undefined>, what: string): Promise<T> {
    return until(
      async () => {
        const r = await receiveRecords(aws.eventsUrl, { waitSeconds: 0 });
        if (r.length) {
          await rt.dispatcher.handleBatch(r);
          await deleteRecords(aws.eventsUrl, r);
        }
        return done();
      },
      { timeoutMs: 30_000, what },
    );
  }

  /** The queued task message of the instance's task `code`, attempt `attempt`. */
  function taskMessage(id: string, attempt: number): Promise<SQSRecord> {
    return until(
      async () => {
        const r = await receiveRecords(mediumQueue(), { waitSeconds: 0 });
        await deleteRecords(mediumQueue(), r);
        return r.find((x) => {
          const m = JSON.parse(x.body) as TaskMessage;
          return m.instanceId === id && m.attempt === attempt;
        });
      },
      { what: `the task message of ${id} attempt ${attempt}` },
    );
  }

  const state = async (id: string) => (await api("GET", `/v1/instances/${id}`)).body;

  /** Dispatches until the instance is in `wanted`; returns it as the API shows it. */
  const dispatchUntilState = (id: string, wanted: string, what = `${id} to be ${wanted}`) =>
    dispatchUntil(async () => {
      const i = await state(id);
      return i.state === wanted ? i : undefined;
    }, what);

  /**
   * A one-task instance whose task is queued (DISPATCHED), then `verb` answered 202 and its
   * signal taken off the queue unhandled, then the task message handed to a worker, which
   * claims it. Returns the instance, the held signal and the worker's batch (still running).
   */
  async function heldAttempt(name: string, verb: "stop" | "pause") {
    const mark = join(dir, `${name}.ran`);
    const put = await api("PUT", `/v1/workflows/${name}`, {
      tasks: [{ code: "t", type: "SHELL", command: `touch '${mark}'` }],
    });
    expect(put.status).toBe(201);
    const run = await api("POST", `/v1/workflows/${name}/runs`, {});
    const id = run.body.instanceId as string;
    await dispatchUntilState(id, "RUNNING");
    const task = await taskMessage(id, 1);
    expect((await api("POST", `/v1/instances/${id}/${verb}`)).status).toBe(202);
    // The dispatcher that received the signal died: it stays in flight, the command PENDING.
    const signal = await until(
      async () => {
        const r = await receiveRecords(aws.eventsUrl, { waitSeconds: 0 });
        return r.length ? r : undefined;
      },
      { what: `the ${verb} signal` },
    );
    expect(signal.map((r) => JSON.parse(r.body).commandId)).toEqual([
      expect.stringMatching(new RegExp(`^${verb}:${id}:`)),
    ]);
    const batch = rt.worker.handleBatch([task]);
    // Claimed: RUNNING under the worker, and held there.
    await until(
      async () => (await rt.engine.store.getTaskInstance(id, "t", 1))?.state === "RUNNING",
      {
        what: "the claim",
      },
    );
    return { id, mark, signal, batch };
  }

  it("pause: the claimed attempt waits, ends PAUSED without running, and resume runs the task", async () => {
    const { id, mark, signal, batch } = await heldAttempt("held-pause", "pause");
    expect(existsSync(mark)).toBe(false);
    // The dispatcher comes back and carries the pause out: the held attempt is RUNNING, so it is
    // left to its worker, which ends it PAUSED without starting it.
    await rt.dispatcher.handleBatch(signal);
    await deleteRecords(aws.eventsUrl, signal);
    expect((await batch).batchItemFailures).toEqual([]);
    const attempt = await rt.engine.store.getTaskInstance(id, "t", 1);
    expect(attempt?.state).toBe("PAUSED");
    expect(attempt?.error).toBe("paused before it started");
    expect(existsSync(mark)).toBe(false);
    const paused = await dispatchUntilState(id, "PAUSED");
    expect(paused.tasks.map((t: { state: string }) => t.state)).toEqual(["PAUSED"]);

    // A later attempt of the resumed instance finds the marker's command DONE: it just runs.
    expect((await api("POST", `/v1/instances/${id}/resume`)).status).toBe(202);
    await dispatchUntilState(id, "RUNNING", "the resume");
    await rt.worker.handleBatch([await taskMessage(id, 2)]);
    const done = await dispatchUntilState(id, "SUCCESS");
    expect(existsSync(mark)).toBe(true);
    expect(done.tasks.map((t: { attempt: number }) => t.attempt)).toEqual([2]);
  });

  it("stop: the claimed attempt waits, ends KILLED without running, the instance STOPPED", async () => {
    const { id, mark, signal, batch } = await heldAttempt("held-stop", "stop");
    expect(existsSync(mark)).toBe(false);
    await rt.dispatcher.handleBatch(signal);
    await deleteRecords(aws.eventsUrl, signal);
    expect((await batch).batchItemFailures).toEqual([]);
    const attempt = await rt.engine.store.getTaskInstance(id, "t", 1);
    expect(attempt?.state).toBe("KILLED");
    expect(attempt?.error).toBe("killed: the instance was stopped");
    expect(existsSync(mark)).toBe(false);
    const stopped = await dispatchUntilState(id, "STOPPED");
    expect(stopped.tasks.map((t: { state: string }) => t.state)).toEqual(["KILLED"]);
  });

  it("signals the held attempt's command itself, so a dispatcher need not wait for the sweeper", async () => {
    const { id, signal, batch } = await heldAttempt("held-signal", "pause");
    // The API's signal is lost (as with a dispatcher Lambda that failed and a message that was
    // deleted): the worker's own signal is what brings the dispatcher to the command.
    await deleteRecords(aws.eventsUrl, signal);
    await dispatchUntilState(id, "PAUSED", `${id} to be PAUSED from the worker's signal`);
    expect((await batch).batchItemFailures).toEqual([]);
    expect((await rt.engine.store.getTaskInstance(id, "t", 1))?.state).toBe("PAUSED");
  });

  it("the sweeper sends the PAUSED event of a held attempt whose worker died before sending it", async () => {
    const store = rt.engine.store;
    const key = { instanceId: "paused-outbox", code: "t", attempt: 1 };
    await store.putTaskInstance(taskRecord(key, { state: "RUNNING", worker: "gone" }));
    // The result written as the worker writes it (the event due soon), then the worker died.
    await store.updateTask(key, ["RUNNING"], { state: "PAUSED", endedAt: 20, leaseExpiresAt: 30 });
    await rt.sweeper.sweep();
    const sent = await until(
      async () => {
        const r = await receiveRecords(aws.eventsUrl, { waitSeconds: 0 });
        await deleteRecords(aws.eventsUrl, r);
        return r.map((x) => JSON.parse(x.body)).find((m) => m.instanceId === key.instanceId);
      },
      { what: "the PAUSED event" },
    );
    expect(sent).toMatchObject({ kind: "task", ...key, state: "PAUSED" });
    expect((await store.getTaskInstance(key.instanceId, "t", 1))?.leaseExpiresAt).toBeUndefined();
  });
});
