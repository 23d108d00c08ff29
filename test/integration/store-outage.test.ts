/**
 * The store out of reach for a while (standalone's DynamoDB emulator restarting after its disk
 * filled; chaos seed 2029, disk-full): a task that ran to its end while the store was down must
 * not run again. The worker keeps trying its result write (lib/engine/store-retry.ts), and a
 * sweeper whose own sweeps failed leaves lapsed leases to their workers for one lease period
 * once it gets through again (lib/engine/sweeper.ts), so a live worker renews or writes first.
 * And a dispatcher that claimed a command it could not execute gives the claim back once the
 * store answers, so the run starts then, not when the claim goes stale a minute later.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SQSRecord } from "aws-lambda";
import { beforeAll, describe, expect, it } from "vitest";
import { Dispatcher } from "../../lib/engine/dispatcher.js";
import { Sweeper } from "../../lib/engine/sweeper.js";
import type { WorkerDeps } from "../../lib/engine/worker.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { LOCAL_ACCOUNT, sqsRecordOf } from "../../lib/standalone/lambda-events.js";
import type { Store } from "../../lib/store/store.js";
import { type TestAws, useTestAws } from "../helpers/aws-env.js";
import { callApi } from "../helpers/runtime-api.js";
import { runtimeWorker } from "../helpers/runtime-worker.js";

const unreachable = () => new Error("connect ECONNREFUSED 127.0.0.1:4566");

/** The runtime's store, refusing what `down` says while it says so (as a dead emulator does). */
function flaky(store: Store, down: (method: string, args: unknown[]) => boolean): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) =>
        down(String(prop), args) ? Promise.reject(unreachable()) : v.apply(target, args);
    },
  });
}

/** The write of an attempt's result (it sets `endedAt`). */
const isResultWrite = (method: string, args: unknown[]) =>
  method === "updateTask" && (args[2] as { endedAt?: number } | undefined)?.endedAt !== undefined;

describe("the store out of reach", () => {
  let aws: TestAws;
  let rt: Runtime;
  let dir: string;

  beforeAll(async () => {
    aws = await useTestAws();
    dir = mkdtempSync(join(tmpdir(), "shoal-outage-"));
    rt = createRuntime({ ...aws.config, dataDir: dir, leaseMs: 5_000, leaseRenewMs: 200 });
  });

  /** A worker on `store`, as standalone configures one (5 s leases). */
  const workerOn = (store: Store, extra: Partial<WorkerDeps> = {}) =>
    runtimeWorker(rt, dir, { store, ...extra });

  /** A task message of a one-task SHELL attempt, as the dispatcher would send it. */
  const taskRecord = (instanceId: string, command: string): SQSRecord => {
    const arn = `arn:aws:sqs:us-east-1:${LOCAL_ACCOUNT}:tasks`;
    const body = {
      instanceId,
      workflow: "outage",
      version: 1,
      code: "a",
      attempt: 1,
      submittedAt: Date.now(),
      params: {},
      task: { code: "a", type: "SHELL", command, priority: "MEDIUM", workerGroup: "default" },
    };
    return sqsRecordOf(
      { MessageId: randomUUID(), ReceiptHandle: "rh", Body: JSON.stringify(body) },
      arn,
      "us-east-1",
      0,
    );
  };

  it("a result written while the store is down is written once it is back", async () => {
    const instanceId = `outage-${randomUUID()}`;
    // The store goes down as the task ends: its first three result writes fail.
    let refusals = 0;
    const logged: string[] = [];
    const worker = workerOn(
      flaky(rt.engine.store, (method, args) => {
        if (!isResultWrite(method, args) || refusals >= 3) return false;
        refusals++;
        return true;
      }),
      { log: (msg) => logged.push(msg) },
    );
    const res = await worker.handleBatch([taskRecord(instanceId, "true")]);
    expect(res.batchItemFailures).toEqual([]);
    expect(refusals).toBe(3);
    expect(await rt.engine.store.getTaskInstance(instanceId, "a", 1)).toMatchObject({
      state: "SUCCESS",
      exitCode: 0,
    });
    expect(logged).toContain("worker: result not recorded yet, trying again");
    expect(logged).toContain("worker: result recorded after the store came back");
  });

  it("gives up after its retry time: the sweeper fails the attempt over", async () => {
    const instanceId = `outage-${randomUUID()}`;
    const worker = workerOn(flaky(rt.engine.store, isResultWrite), { resultWriteRetryMs: 600 });
    const res = await worker.handleBatch([taskRecord(instanceId, "true")]);
    expect(res.batchItemFailures).toHaveLength(1);
    expect(await rt.engine.store.getTaskInstance(instanceId, "a", 1)).toMatchObject({
      state: "RUNNING",
    });
  });

  it("a sweeper that could not reach the store waits a lease period before failing over", async () => {
    // An attempt whose lease lapsed while nobody could write: its worker may be alive.
    const instanceId = `outage-${randomUUID()}`;
    const t0 = Date.now();
    const key = { instanceId, code: "a", attempt: 1 };
    await rt.engine.store.updateTask(
      key,
      ["DISPATCHED"],
      { state: "RUNNING", worker: "alive", startedAt: t0 - 20_000, leaseExpiresAt: t0 - 1_000 },
      {
        createWith: {
          ...key,
          workflow: "outage",
          type: "SHELL",
          state: "DISPATCHED",
          priority: "MEDIUM",
          workerGroup: "default",
          submittedAt: t0 - 20_000,
        },
      },
    );
    let down = true;
    let now = t0;
    const sent: unknown[] = [];
    const sweeper = new Sweeper({
      ...rt.engine,
      store: flaky(rt.engine.store, () => down),
      queues: {
        ...rt.engine.queues,
        sendToDispatcher: async (events) => {
          sent.push(...events.filter((e) => e.instanceId === instanceId));
        },
      },
      now: () => now,
      commandResignalMs: 60_000,
      failoverGraceMs: 5_000,
    });
    await expect(sweeper.sweep()).rejects.toThrow(/ECONNREFUSED/);
    down = false;
    // Back: within the lease period the attempt is its worker's to renew.
    now = t0 + 1_000;
    await sweeper.sweep();
    expect(await rt.engine.store.getTaskInstance(instanceId, "a", 1)).toMatchObject({
      state: "RUNNING",
    });
    // The worker did not renew: after the grace it is failed over as usual.
    now = t0 + 6_500;
    await sweeper.sweep();
    expect(await rt.engine.store.getTaskInstance(instanceId, "a", 1)).toMatchObject({
      state: "NEED_FAULT_TOLERANCE",
    });
    expect(sent).toMatchObject([{ kind: "task", code: "a", state: "NEED_FAULT_TOLERANCE" }]);
  });

  it("a dispatcher gives back a command's claim once the store answers again", async () => {
    const api = (method: string, path: string, body?: unknown) =>
      callApi(rt.api, method, path, body);
    expect(
      (
        await api("PUT", "/v1/workflows/outage-claim", {
          tasks: [{ code: "a", type: "SHELL", command: "true" }],
        })
      ).status,
    ).toBe(201);
    const run = await api("POST", "/v1/workflows/outage-claim/runs", {});
    expect(run.status).toBe(202);
    const commandId = `start:${run.body.instanceId as string}`;
    // The claim lands; then the store dies: the run cannot start, and the claim cannot be given
    // back at once (two refusals).
    let phase: "claim" | "down" | "up" = "claim";
    let refusedReleases = 0;
    const dispatcher = new Dispatcher({
      ...rt.dispatcher.deps,
      store: flaky(rt.engine.store, (method) => {
        if (phase === "claim") {
          if (method === "claimCommand") phase = "down";
          return false;
        }
        if (phase === "up") return false;
        if (method === "releaseCommandClaim" && ++refusedReleases === 2) phase = "up";
        return true;
      }),
    });
    await expect(dispatcher.handleCommand(commandId)).rejects.toThrow(/ECONNREFUSED/);
    expect(refusedReleases).toBe(2);
    expect((await rt.engine.store.getCommand(commandId))?.claimedAt).toBeUndefined();
    // The redelivery starts the run now (was: RetryLater for 60 s).
    await expect(rt.dispatcher.handleCommand(commandId)).resolves.toBeUndefined();
    expect((await rt.engine.store.getCommand(commandId))?.state).toBe("DONE");
  });
});
