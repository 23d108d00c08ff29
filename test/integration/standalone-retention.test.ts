/**
 * Standalone's retention sweep (lib/standalone/retention.ts) against the emulators, which have no
 * DynamoDB TTL: at a given time it deletes the instances whose `expiresAt` passed with all their
 * task instances, task log files and work directories, and attempts and fire-ledger entries that
 * expired on their own; it keeps what has not expired, what is still running, and everything when
 * retention is off (no attribute is written). The clock is an argument.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { dynamoClient } from "../../lib/aws/clients.js";
import type { ShoalConfig } from "../../lib/aws/config.js";
import { sweepRetention } from "../../lib/standalone/retention.js";
import { DynamoExpiredItems } from "../../lib/store/dynamo-expired.js";
import { DynamoFires } from "../../lib/store/dynamo-fires.js";
import { DynamoStore } from "../../lib/store/dynamo-store.js";
import type { InstanceRecord, TaskInstanceRecord } from "../../lib/store/records.js";
import { useTestAws } from "../helpers/aws-env.js";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

function instance(instanceId: string, fields: Partial<InstanceRecord>): InstanceRecord {
  return {
    instanceId,
    workflow: "w",
    version: 1,
    state: "RUNNING",
    priority: "MEDIUM",
    failureStrategy: "END",
    commandType: "START_WORKFLOW",
    params: {},
    dryRun: false,
    taskScope: "DOWNSTREAM",
    createdAt: T0 - 60_000,
    progress: { slots: "D", attempts: {} },
    rev: 1,
    ...fields,
  };
}

function task(instanceId: string, code: string, fields: Partial<TaskInstanceRecord>) {
  return {
    instanceId,
    workflow: "w",
    code,
    attempt: 1,
    type: "SHELL",
    state: "SUCCESS",
    priority: "MEDIUM",
    workerGroup: "default",
    submittedAt: T0 - 30_000,
    ...fields,
  } as TaskInstanceRecord;
}

describe("standalone's retention sweep", () => {
  let config: ShoalConfig;
  let store: DynamoStore;
  let expired: DynamoExpiredItems;
  let dataDir: string;
  beforeAll(async () => {
    config = (await useTestAws()).config;
    store = new DynamoStore(dynamoClient(), config.tables, { retentionDays: 7 });
    expired = new DynamoExpiredItems(dynamoClient(), config.tables);
    dataDir = mkdtempSync(join(tmpdir(), "shoal-retention-"));
  });

  /** Files an instance's tasks left: a log and a work directory. */
  const files = (id: string) => {
    const log = join(dataDir, "logs", "w", id, "a");
    const work = join(dataDir, "work", "w", id, "shared");
    mkdirSync(log, { recursive: true });
    mkdirSync(work, { recursive: true });
    writeFileSync(join(log, "1.log"), "line\n");
    writeFileSync(join(work, "f"), "x");
    return { log: join(dataDir, "logs", "w", id), work: join(dataDir, "work", "w", id) };
  };

  it("deletes an old finished instance, all its task instances, logs and work directories", async () => {
    // Ended at T0: expires at T0 + 7 days.
    const old = instance("old", { state: "SUCCESS", endedAt: T0, rev: 2 });
    await store.putInstance(old);
    await store.putTaskInstance(task("old", "a", { endedAt: T0 - 1_000 }));
    // An attempt that never ended carries no TTL of its own: it goes with its instance.
    await store.putTaskInstance(task("old", "b", { state: "DISPATCHED" }));
    const oldFiles = files("old");
    // Ended a day later: not expired at T0 + 7.5 days.
    await store.putInstance(instance("recent", { state: "FAILURE", endedAt: T0 + DAY }));
    const recentFiles = files("recent");
    // Still running, with an attempt from before a rerun that expired on its own.
    await store.putInstance(instance("live", {}));
    await store.putTaskInstance(task("live", "a", { endedAt: T0 }));
    await store.putTaskInstance(task("live", "a", { attempt: 2, state: "RUNNING" }));
    await new DynamoFires(dynamoClient(), config.tables.fires, 7).putFire({
      scheduleId: "s",
      nominalTime: T0,
      actualTime: T0,
      latenessMs: 0,
      decision: "FIRED",
    });

    const swept = await sweepRetention({ expired, dataDir, now: () => T0 + 7.5 * DAY });
    expect(swept).toEqual({ instances: 1, tasks: 1, fires: 1 });
    expect(await store.getInstance("old")).toBeUndefined();
    expect(await store.listTaskInstances("old")).toEqual([]);
    expect(existsSync(oldFiles.log)).toBe(false);
    expect(existsSync(oldFiles.work)).toBe(false);
    expect((await store.getInstance("recent"))?.state).toBe("FAILURE");
    expect(existsSync(recentFiles.log)).toBe(true);
    expect(existsSync(recentFiles.work)).toBe(true);
    expect((await store.getInstance("live"))?.state).toBe("RUNNING");
    expect((await store.listTaskInstances("live")).map((t) => t.attempt)).toEqual([2]);
    // Nothing left to do: a second sweep deletes nothing.
    expect(await sweepRetention({ expired, dataDir, now: () => T0 + 7.5 * DAY })).toEqual({
      instances: 0,
      tasks: 0,
      fires: 0,
    });
  });

  it("never deletes an instance that was rerun after the scan (the attribute is gone)", async () => {
    const done = instance("rerun", { state: "SUCCESS", endedAt: T0, rev: 2 });
    await store.putInstance(done);
    const found = await expired.expiredInstances(T0 + 8 * DAY, 1_000);
    expect(found.map((i) => i.instanceId)).toContain("rerun");
    await store.updateInstance({ ...done, state: "RUNNING", endedAt: undefined, rev: 3 });
    expect(await expired.deleteInstance("rerun", T0 + 8 * DAY)).toBe(false);
    expect((await store.getInstance("rerun"))?.state).toBe("RUNNING");
  });

  it("keeps everything when retention is off (--keep-all writes no expiry)", async () => {
    const keepAll = new DynamoStore(dynamoClient(), config.tables);
    await keepAll.putInstance(instance("kept", { state: "SUCCESS", endedAt: T0 - 365 * DAY }));
    await keepAll.putTaskInstance(task("kept", "a", { endedAt: T0 - 365 * DAY }));
    const keptFiles = files("kept");
    await sweepRetention({ expired, dataDir, now: () => T0 + 30 * DAY });
    expect((await keepAll.getInstance("kept"))?.state).toBe("SUCCESS");
    expect(await keepAll.listTaskInstances("kept")).toHaveLength(1);
    expect(existsSync(keptFiles.log)).toBe(true);
  });
});
