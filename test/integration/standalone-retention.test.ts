/**
 * Standalone's retention sweep (lib/standalone/retention.ts) against the emulators, which have no
 * DynamoDB TTL: at a given time it deletes the instances whose `expiresAt` passed with all their
 * task instances, task log files and work directories, attempts whose instance is gone, decided
 * fire-ledger entries and done commands (and halt markers) that outlived the retention; it keeps what has not
 * expired, every attempt of an instance that still exists (running, paused, recoverable), a
 * queued fire, and everything when retention is off (no attribute is written). The clock is an
 * argument.
 */

import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import type { ShoalConfig } from "../../lib/aws/config.js";
import { TTL_ATTRIBUTE } from "../../lib/aws/resources.js";
import {
  ORPHAN_FILES_AGE_MS,
  type RetentionDeps,
  sweepRetention,
} from "../../lib/standalone/retention.js";
import { DynamoExpiredItems } from "../../lib/store/dynamo-expired.js";
import { DynamoFires } from "../../lib/store/dynamo-fires.js";
import { DynamoStore } from "../../lib/store/dynamo-store.js";
import { DynamoTriggers } from "../../lib/store/dynamo-triggers.js";
import type { CommandRecord, InstanceRecord, TaskInstanceRecord } from "../../lib/store/records.js";
import { testClients, useTestAws } from "../helpers/aws-env.js";
import { instanceRecord } from "../helpers/records.js";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

const instance = (instanceId: string, fields: Partial<InstanceRecord>) =>
  instanceRecord(instanceId, { createdAt: T0 - 60_000, ...fields });

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
    store = new DynamoStore(testClients().dynamo, config.tables, { retentionDays: 7 });
    expired = new DynamoExpiredItems(testClients().dynamo, config.tables);
    dataDir = mkdtempSync(join(tmpdir(), "shoal-retention-"));
  });
  /** One sweep at `at`, with the retention of the store (7 days). */
  const sweep = (at: number, over: Partial<RetentionDeps> = {}) =>
    sweepRetention({ expired, dataDir, retentionDays: 7, now: () => at, ...over });

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
    // An attempt a late worker wrote after its instance was deleted: it goes on its own.
    await store.putTaskInstance(task("ghost", "a", { endedAt: T0 }));
    await new DynamoFires(testClients().dynamo, config.tables.fires, 7).putFire({
      scheduleId: "s",
      nominalTime: T0,
      actualTime: T0,
      latenessMs: 0,
      decision: "FIRED",
    });

    const swept = await sweep(T0 + 7.5 * DAY);
    expect(swept).toEqual({
      instances: 1,
      tasks: 1,
      fires: 1,
      commands: 0,
      triggerCounters: 0,
      orphanDirs: 0,
    });
    expect(await store.getInstance("old")).toBeUndefined();
    expect(await store.listTaskInstances("old")).toEqual([]);
    expect(existsSync(oldFiles.log)).toBe(false);
    expect(existsSync(oldFiles.work)).toBe(false);
    expect((await store.getInstance("recent"))?.state).toBe("FAILURE");
    expect(existsSync(recentFiles.log)).toBe(true);
    expect(existsSync(recentFiles.work)).toBe(true);
    expect(await store.listTaskInstances("ghost")).toEqual([]);
    // Nothing left to do: a second sweep deletes nothing.
    expect(await sweep(T0 + 7.5 * DAY)).toEqual({
      instances: 0,
      tasks: 0,
      fires: 0,
      commands: 0,
      triggerCounters: 0,
      orphanDirs: 0,
    });
  });

  it("deletes the triggers' rate and loop counters once they expired, and no trigger", async () => {
    const triggers = new DynamoTriggers(testClients().dynamo, config.tables.triggers);
    await triggers.putTrigger({
      id: "t-kept",
      workflow: "w",
      eventPattern: "{}",
      params: {},
      debounceSeconds: 0,
      createdAt: T0,
      rev: 1,
    });
    expect(await triggers.takeRateSlot("t-kept", T0, 5)).toBe(true);
    expect(await triggers.takeOriginRun("evt-old", 5, T0)).toBe(true);
    // The rate window's counter expires an hour after its minute; the origin's after a week.
    expect((await sweep(T0 + 2 * 3_600_000)).triggerCounters).toBe(1);
    expect((await sweep(T0 + 8 * DAY)).triggerCounters).toBe(1);
    expect(await triggers.getTrigger("t-kept")).toBeDefined();
    // A counter taken again starts from nothing.
    expect(await triggers.takeRateSlot("t-kept", T0, 1)).toBe(true);
    expect(await triggers.takeRateSlot("t-kept", T0, 1)).toBe(false);
  });

  it("never deletes an attempt of an instance that still exists, however long ago it ended", async () => {
    // Running (a → b: a's attempt ended long ago), paused, and failed recently (recover-failed
    // keeps its successful attempts as they are): each attempt's own expiry passed long ago.
    await store.putInstance(instance("live", {}));
    await store.putTaskInstance(task("live", "a", { endedAt: T0 - 30 * DAY }));
    await store.putTaskInstance(task("live", "b", { state: "RUNNING" }));
    await store.putInstance(instance("paused", { state: "PAUSED" }));
    await store.putTaskInstance(task("paused", "a", { endedAt: T0 - 30 * DAY }));
    await store.putInstance(instance("failed", { state: "FAILURE", endedAt: T0 + 29 * DAY }));
    await store.putTaskInstance(task("failed", "a", { endedAt: T0 - 30 * DAY }));
    await store.putTaskInstance(task("failed", "b", { state: "FAILURE", endedAt: T0 + 29 * DAY }));

    const swept = await sweep(T0 + 30 * DAY);
    expect(swept.tasks).toBe(0);
    expect((await store.listTaskInstances("live")).map((t) => t.code)).toEqual(["a", "b"]);
    expect((await store.listTaskInstances("paused")).map((t) => t.code)).toEqual(["a"]);
    expect((await store.listTaskInstances("failed")).map((t) => t.code)).toEqual(["a", "b"]);
    // Once the failed instance's own retention is over, it goes with all its attempts.
    await sweep(T0 + 36.5 * DAY);
    expect(await store.getInstance("failed")).toBeUndefined();
    expect(await store.listTaskInstances("failed")).toEqual([]);
    expect(await store.listTaskInstances("live")).toHaveLength(2);
  });

  it("deletes an instance before its files: a rerun between the scan and the delete keeps its logs and work directory", async () => {
    const done = instance("rerun-files", { state: "SUCCESS", endedAt: T0, rev: 2 });
    await store.putInstance(done);
    const f = files("rerun-files");
    const at = T0 + 8 * DAY;
    const found = await expired.expiredInstances(at, 1_000);
    expect(found.map((i) => i.instanceId)).toContain("rerun-files");
    // The rerun comes in after the scan.
    await store.updateInstance({ ...done, state: "RUNNING", endedAt: undefined, rev: 3 });
    const staleScan = Object.assign(Object.create(expired) as DynamoExpiredItems, {
      expiredInstances: async () => found,
    });
    const swept = await sweep(at, { expired: staleScan });
    expect(swept.instances).toBe(0);
    expect((await store.getInstance("rerun-files"))?.state).toBe("RUNNING");
    expect(existsSync(f.log)).toBe(true);
    expect(existsSync(f.work)).toBe(true);
  });

  it("removes the log and work directories of an instance the store no longer has, once they are old", async () => {
    const at = T0 + 40 * DAY;
    const old = (at - ORPHAN_FILES_AGE_MS) / 1000;
    const gone = files("files-gone");
    const fresh = files("files-gone-just-now");
    await store.putInstance(instance("files-live", {}));
    const live = files("files-live");
    for (const d of [gone.log, gone.work, live.log, live.work]) utimesSync(d, old, old);
    const recent = (at - ORPHAN_FILES_AGE_MS + 1_000) / 1000;
    for (const d of [fresh.log, fresh.work]) utimesSync(d, recent, recent);
    const swept = await sweep(at);
    expect(swept.orphanDirs).toBe(2);
    expect(existsSync(gone.log)).toBe(false);
    expect(existsSync(gone.work)).toBe(false);
    expect(existsSync(fresh.log)).toBe(true);
    expect(existsSync(live.log)).toBe(true);
    expect(existsSync(live.work)).toBe(true);
  });

  it("never deletes a QUEUED_SERIAL fire-ledger entry, even one written with an expiry", async () => {
    // Written before queued entries carried no expiry.
    await testClients().dynamo.send(
      new PutCommand({
        TableName: config.tables.fires,
        Item: {
          scheduleId: "s-queued",
          nominalTime: T0,
          actualTime: T0,
          latenessMs: 0,
          decision: "QUEUED_SERIAL",
          [TTL_ATTRIBUTE]: Math.floor(T0 / 1000),
        },
      }),
    );
    const fires = new DynamoFires(testClients().dynamo, config.tables.fires, 7);
    await sweep(T0 + 50 * DAY);
    expect((await fires.getFire("s-queued", T0))?.decision).toBe("QUEUED_SERIAL");
    // Decided at last: it expires retention days after that.
    await fires.updateFire("s-queued", T0, "QUEUED_SERIAL", {
      decision: "FIRED",
      instanceId: "i",
      actualTime: T0 + 50 * DAY,
    });
    await sweep(T0 + 56 * DAY);
    expect(await fires.getFire("s-queued", T0)).toBeDefined();
    await sweep(T0 + 57.5 * DAY);
    expect(await fires.getFire("s-queued", T0)).toBeUndefined();
  });

  it("deletes commands DONE for longer than the retention whose instance is gone", async () => {
    const command = (commandId: string, instanceId: string): CommandRecord => ({
      commandId,
      type: "START_WORKFLOW",
      instanceId,
      workflow: "w",
      version: 1,
      state: "PENDING",
      createdAt: T0,
    });
    const at = T0 + 70 * DAY;
    await store.putInstance(instance("cmd-live", {}));
    for (const [id, inst] of [
      ["start:cmd-gone", "cmd-gone"],
      ["start:cmd-live", "cmd-live"],
      ["start:cmd-recent", "cmd-recent"],
      ["start:cmd-pending", "cmd-pending"],
    ] as const) {
      await store.putCommand(command(id, inst));
    }
    await store.completeCommand("start:cmd-gone", at - 7 * DAY - 1);
    await store.completeCommand("start:cmd-live", at - 30 * DAY);
    await store.completeCommand("start:cmd-recent", at - 6 * DAY);
    const swept = await sweep(at);
    expect(swept.commands).toBe(1);
    expect(await store.getCommand("start:cmd-gone")).toBeUndefined();
    expect((await store.getCommand("start:cmd-live"))?.state).toBe("DONE");
    expect((await store.getCommand("start:cmd-recent"))?.state).toBe("DONE");
    expect((await store.getCommand("start:cmd-pending"))?.state).toBe("PENDING");
  });

  it("deletes a halt marker older than the retention whose instance is gone, with the commands", async () => {
    const at = T0 + 80 * DAY;
    await store.putInstance(instance("halt-live", {}));
    await store.markHalt("halt-gone", "STOP", "stop:halt-gone:3", at - 7 * DAY - 1);
    await store.markHalt("halt-live", "PAUSE", "pause:halt-live:3", at - 30 * DAY);
    await store.markHalt("halt-recent", "STOP", "stop:halt-recent:3", at - 6 * DAY);
    await sweep(at);
    expect(await store.getCommand("halt:halt-gone")).toBeUndefined();
    expect(await store.getCommand("halt:halt-live")).toBeDefined();
    expect(await store.getCommand("halt:halt-recent")).toBeDefined();
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
    const keepAll = new DynamoStore(testClients().dynamo, config.tables);
    await keepAll.putInstance(instance("kept", { state: "SUCCESS", endedAt: T0 - 365 * DAY }));
    await keepAll.putTaskInstance(task("kept", "a", { endedAt: T0 - 365 * DAY }));
    const keptFiles = files("kept");
    await sweep(T0 + 30 * DAY);
    expect((await keepAll.getInstance("kept"))?.state).toBe("SUCCESS");
    expect(await keepAll.listTaskInstances("kept")).toHaveLength(1);
    expect(existsSync(keptFiles.log)).toBe(true);
  });
});
