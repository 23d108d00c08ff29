/**
 * Work directories (lib/engine/work-dirs.ts): the pure decisions (when an attempt's directory
 * goes, what the sweep does with an instance's), and the sweep itself on a real directory tree
 * with an injected clock and an in-memory view of the instances. Also the retention days of
 * `shoal standalone` as its flags and environment give them.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { standaloneRetentionDays } from "../../lib/cli/commands/server.js";
import {
  attemptDirExpiry,
  attemptDirs,
  instanceDirFate,
  WorkDirs,
  workSweepPeriodMs,
} from "../../lib/engine/work-dirs.js";
import type { InstanceRecord } from "../../lib/store/records.js";

const MIN = 60_000;
const T = Date.UTC(2026, 10, 21, 12, 0, 0);

describe("work directory decisions", () => {
  it("an attempt's directory goes at once when it succeeded or nothing is kept", () => {
    expect(attemptDirExpiry(true, T, 60 * MIN)).toBe("now");
    expect(attemptDirExpiry(false, T, 0)).toBe("now");
    expect(attemptDirExpiry(false, T, 60 * MIN)).toBe(T + 60 * MIN);
  });

  it("an instance's directory: kept while it runs, gone when it succeeded, kept while a failed one exists", () => {
    const o = { now: T, keepMs: 60 * MIN, keptLeft: false, unmarked: false, dirChangedAt: T };
    expect(instanceDirFate({ state: "RUNNING" }, o)).toBe("keep");
    expect(instanceDirFate({ state: "PAUSED" }, o)).toBe("keep");
    expect(instanceDirFate({ state: "SUCCESS", endedAt: T }, o)).toBe("remove");
    // A failed attempt before the success is still kept for debugging.
    expect(instanceDirFate({ state: "SUCCESS", endedAt: T }, { ...o, keptLeft: true })).toBe(
      "prune",
    );
    // recover-failed may rerun its failed tasks on what the others left in `shared`: kept for
    // as long as the instance exists, whatever the keep time.
    expect(instanceDirFate({ state: "FAILURE", endedAt: T - 59 * MIN }, o)).toBe("keep");
    expect(instanceDirFate({ state: "STOPPED", endedAt: T - 600 * MIN }, o)).toBe("keep");
    expect(instanceDirFate({ state: "FAILURE", endedAt: T - 600 * MIN }, { ...o, keepMs: 0 })).toBe(
      "keep",
    );
    // An attempt directory without a marker: an attempt runs (a rerun the record does not show
    // yet), so nothing goes.
    expect(instanceDirFate({ state: "SUCCESS", endedAt: T }, { ...o, unmarked: true })).toBe(
      "keep",
    );
    // Not in the store (deleted by retention): gone once the directory is that old.
    expect(instanceDirFate(undefined, { ...o, dirChangedAt: T - MIN })).toBe("keep");
    expect(instanceDirFate(undefined, { ...o, dirChangedAt: T - 60 * MIN })).toBe("remove");
  });

  it("sweeps every half keep time, between 30 s and 5 minutes", () => {
    expect(workSweepPeriodMs(60 * MIN)).toBe(5 * MIN);
    expect(workSweepPeriodMs(4 * MIN)).toBe(2 * MIN);
    // SHOAL_KEEP_FAILED_WORK_MINUTES=0 does not make the worker read the store every second.
    expect(workSweepPeriodMs(0)).toBe(30_000);
    expect(workSweepPeriodMs(0.05 * MIN)).toBe(30_000);
  });
});

describe("the work directory sweep", () => {
  function setup(
    instances: Record<string, Partial<InstanceRecord>>,
    running: string[] | (() => string[]) = [],
  ) {
    const dataDir = mkdtempSync(join(tmpdir(), "shoal-work-"));
    let now = T;
    const dirs = new WorkDirs({
      dataDir,
      keepMs: 10 * MIN,
      store: {
        getInstance: async (id) => instances[id] as InstanceRecord | undefined,
      },
      now: () => now,
      running: async () => new Set(typeof running === "function" ? running() : running),
    });
    const attempt = async (instanceId: string, code: string, n: number, ok: boolean) => {
      const d = attemptDirs(dataDir, { workflow: "w", instanceId, code, attempt: n });
      await dirs.prepare(d);
      writeFileSync(join(d.attempt, "out"), "x");
      writeFileSync(join(d.shared, "s"), "x");
      await dirs.ended(d, ok);
      return d;
    };
    return { dataDir, dirs, attempt, at: (t: number) => (now = t) };
  }

  it("removes a successful attempt's directory when it ends and keeps a failed one's until its time", async () => {
    const { dirs, attempt, at } = setup({ i1: { state: "RUNNING" } });
    const ok = await attempt("i1", "a", 1, true);
    expect(existsSync(ok.attempt)).toBe(false);
    const failed = await attempt("i1", "b", 1, false);
    expect(readFileSync(failed.keptMarker, "utf8")).toBe(String(T + 10 * MIN));
    at(T + 10 * MIN - 1);
    await dirs.sweep();
    expect(existsSync(join(failed.attempt, "out"))).toBe(true);
    at(T + 10 * MIN);
    await dirs.sweep();
    expect(existsSync(failed.attempt)).toBe(false);
    expect(existsSync(failed.keptMarker)).toBe(false);
    // The instance still runs: its shared directory stays.
    expect(existsSync(failed.shared)).toBe(true);
  });

  it("removes the directory of an instance that succeeded, but keeps a failed attempt's still kept", async () => {
    const { dirs, attempt } = setup({ i2: { state: "SUCCESS", endedAt: T } });
    const failed = await attempt("i2", "a", 1, false);
    await attempt("i2", "a", 2, true);
    await dirs.sweep();
    expect(existsSync(failed.shared)).toBe(false);
    expect(existsSync(join(failed.attempt, "out"))).toBe(true);
  });

  it("keeps a failed or stopped instance's shared directory while the store has it; its failed attempts' go after the keep time", async () => {
    const instances: Record<string, Partial<InstanceRecord>> = {
      i3: { state: "FAILURE", endedAt: T },
      i3s: { state: "STOPPED", endedAt: T },
    };
    const { dirs, attempt, at } = setup(instances);
    const ok = await attempt("i3", "a", 1, true);
    const failed = await attempt("i3", "b", 1, false);
    const stopped = await attempt("i3s", "a", 1, true);
    at(T + 10 * 24 * 60 * MIN);
    expect(await dirs.sweep()).toBe(0);
    // What the successful upstream wrote is there for recover-failed.
    expect(readFileSync(join(ok.shared, "s"), "utf8")).toBe("x");
    expect(existsSync(stopped.shared)).toBe(true);
    expect(existsSync(failed.attempt)).toBe(false);
    // Retention deleted the instance: the directory goes once it is the keep time old.
    delete instances.i3;
    const old = (T + 10 * 24 * 60 * MIN - 10 * MIN) / 1000;
    utimesSync(ok.instance, old, old);
    expect(await dirs.sweep()).toBe(1);
    expect(existsSync(ok.instance)).toBe(false);
    expect(existsSync(stopped.shared)).toBe(true);
  });

  it("never removes an instance directory holding an attempt directory without a marker", async () => {
    // The store still says SUCCESS while a rerun's first attempt runs here.
    const { dataDir, dirs } = setup({ i5: { state: "SUCCESS", endedAt: T } });
    const d = attemptDirs(dataDir, { workflow: "w", instanceId: "i5", code: "a", attempt: 2 });
    await dirs.prepare(d);
    writeFileSync(join(d.shared, "s"), "x");
    expect(await dirs.sweep()).toBe(0);
    expect(existsSync(d.attempt)).toBe(true);
    expect(existsSync(join(d.shared, "s"))).toBe(true);
    // Once it ended (successfully: its directory goes) the instance's directory goes too.
    await dirs.ended(d, true);
    expect(await dirs.sweep()).toBe(1);
    expect(existsSync(d.instance)).toBe(false);
  });

  it("asks again right before removing whether a task of the instance runs here", async () => {
    // Not running when the sweep starts; a task of it started by the time it would remove.
    let calls = 0;
    const { dirs, attempt } = setup({ i6: { state: "SUCCESS", endedAt: T } }, () =>
      ++calls > 1 ? ["i6"] : [],
    );
    const d = await attempt("i6", "a", 1, true);
    expect(await dirs.sweep()).toBe(0);
    expect(calls).toBe(2);
    expect(existsSync(d.shared)).toBe(true);
  });

  it("keeps the directory of an attempt a dead worker left like a failed attempt's", async () => {
    const { dataDir, dirs, at } = setup({ i7: { state: "SUCCESS", endedAt: T } });
    const key = { workflow: "w", instanceId: "i7", code: "a", attempt: 1 };
    const d = attemptDirs(dataDir, key);
    await dirs.prepare(d);
    writeFileSync(join(d.attempt, "out"), "x");
    await dirs.left(key);
    expect(readFileSync(d.keptMarker, "utf8")).toBe(String(T + 10 * MIN));
    // Marked already: left again does not extend it.
    at(T + MIN);
    await dirs.left(key);
    expect(readFileSync(d.keptMarker, "utf8")).toBe(String(T + 10 * MIN));
    await dirs.sweep();
    expect(existsSync(d.shared)).toBe(false);
    expect(existsSync(join(d.attempt, "out"))).toBe(true);
    at(T + 10 * MIN);
    await dirs.sweep();
    expect(existsSync(d.attempt)).toBe(false);
  });

  it("never touches an instance a worker on this machine runs a task of", async () => {
    const { dirs, attempt, at } = setup({ i4: { state: "SUCCESS", endedAt: T } }, ["i4"]);
    const d = await attempt("i4", "a", 1, false);
    at(T + 100 * MIN);
    await dirs.sweep();
    expect(existsSync(join(d.attempt, "out"))).toBe(true);
    expect(existsSync(d.shared)).toBe(true);
  });

  it("removes the directory of an instance the store no longer has, once it is old enough", async () => {
    const { dataDir, dirs, at } = setup({});
    const dir = join(dataDir, "work", "w", "gone", "shared");
    mkdirSync(dir, { recursive: true });
    const old = (T - 10 * MIN) / 1000;
    utimesSync(join(dataDir, "work", "w", "gone"), old, old);
    at(T);
    expect(await dirs.sweep()).toBe(1);
    expect(existsSync(join(dataDir, "work", "w", "gone"))).toBe(false);
  });
});

describe("shoal standalone's retention days", () => {
  it("is --keep-all, else --retention-days, else SHOAL_INSTANCE_RETENTION_DAYS, else 7", () => {
    expect(standaloneRetentionDays({}, {})).toBe(7);
    expect(standaloneRetentionDays({}, { SHOAL_INSTANCE_RETENTION_DAYS: "30" })).toBe(30);
    expect(
      standaloneRetentionDays({ retentionDays: 2 }, { SHOAL_INSTANCE_RETENTION_DAYS: "30" }),
    ).toBe(2);
    expect(standaloneRetentionDays({ retentionDays: 0 }, {})).toBe(0);
    expect(
      standaloneRetentionDays({ keepAll: true }, { SHOAL_INSTANCE_RETENTION_DAYS: "30" }),
    ).toBe(0);
    expect(standaloneRetentionDays({ keepAll: true, retentionDays: 0 }, {})).toBe(0);
  });

  it("is a usage error for --keep-all with --retention-days, or a bad environment value", () => {
    expect(() => standaloneRetentionDays({ keepAll: true, retentionDays: 3 }, {})).toThrow(
      /--keep-all keeps everything/,
    );
    expect(() => standaloneRetentionDays({}, { SHOAL_INSTANCE_RETENTION_DAYS: "soon" })).toThrow(
      /SHOAL_INSTANCE_RETENTION_DAYS must be a number of days >= 0, got 'soon'/,
    );
  });
});
