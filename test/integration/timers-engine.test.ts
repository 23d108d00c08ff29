/**
 * Sweeper timers against the emulators: a retry whose interval exceeds SQS's 15-minute delay
 * waits on a timer and is sent when it falls due; a workflow-timeout timer becomes a `timeout`
 * event for the dispatcher. The clock is an argument, so hours pass in milliseconds.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { Sweeper } from "../../lib/engine/sweeper.js";
import { sendPending } from "../../lib/engine/task-dispatch.js";
import { RELEASE_TASK_TIMER } from "../../lib/engine/timers.js";
import type { TaskMessage } from "../../lib/queue/messages.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { type TestAws, useTestAws } from "../helpers/aws-env.js";
import { deleteRecords, receiveRecords } from "../helpers/sqs.js";

describe("sweeper timers", () => {
  let aws: TestAws;
  let rt: Runtime;
  beforeAll(async () => {
    aws = await useTestAws();
    rt = createRuntime({ ...aws.config, dataDir: mkdtempSync(join(tmpdir(), "shoal-timers-")) });
  });

  const message = (code: string): TaskMessage => ({
    instanceId: "long-retry",
    workflow: "w",
    version: 1,
    code,
    attempt: 2,
    instancePriority: "MEDIUM",
    dryRun: false,
    submittedAt: 0,
    task: {
      code,
      type: "SHELL",
      command: "true",
      upstream: [],
      priority: "MEDIUM",
      retries: 1,
      retryIntervalSeconds: 3600,
      retryBackoff: "FIXED",
      timeoutStrategy: "FAIL",
      workerGroup: "default",
      params: {},
      taskGroupPriority: 0,
    },
    params: {},
  });

  it("holds a retry due in an hour on a timer, and sends it when it falls due", async () => {
    const t0 = Date.now();
    const engine = { ...rt.engine, now: () => t0 };
    await sendPending(engine, {
      message: message("hourly"),
      workerGroup: "default",
      releaseAt: t0 + 3_600_000,
    });
    const medium = aws.taskUrls[2] as string;
    expect(await receiveRecords(medium, { waitSeconds: 0 })).toEqual([]);
    const [timer] = await rt.engine.timers.listDueTimers(t0 + 3_600_000, 10);
    expect(timer).toMatchObject({ kind: RELEASE_TASK_TIMER, dueAt: t0 + 2_700_000 });
    // Not due yet: nothing happens.
    const early = new Sweeper({ ...rt.engine, now: () => t0 + 60_000, commandResignalMs: 60_000 });
    expect((await early.sweep()).timersFired).toBe(0);
    // An hour later the sweeper sends it (no delay left) and removes the timer.
    const later = new Sweeper({
      ...rt.engine,
      now: () => t0 + 3_600_001,
      commandResignalMs: 60_000,
    });
    expect((await later.sweep()).timersFired).toBe(1);
    const got = await receiveRecords(medium, { waitSeconds: 2 });
    expect(got.map((r) => (JSON.parse(r.body) as TaskMessage).code)).toEqual(["hourly"]);
    await deleteRecords(medium, got);
    expect(await rt.engine.timers.listDueTimers(t0 + 3_600_001, 10)).toEqual([]);
  });
});
