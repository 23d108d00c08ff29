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

  it("an instance's directory: kept while it runs, gone when it succeeded, kept a while after a failure", () => {
    const o = { now: T, keepMs: 60 * MIN, keptLeft: false, dirChangedAt: T };
    expect(instanceDirFate({ state: "RUNNING" }, o)).toBe("keep");
    expect(instanceDirFate({ state: "PAUSED" }, o)).toBe("keep");
    expect(instanceDirFate({ state: "SUCCESS", endedAt: T }, o)).toBe("remove");
    // A failed attempt before the success is still kept for debugging.
    expect(instanceDirFate({ state: "SUCCESS", endedAt: T }, { ...o, keptLeft: true })).toBe(
      "prune",
    );
    expect(instanceDirFate({ state: "FAILURE", endedAt: T - 59 * MIN }, o)).toBe("keep");
    expect(instanceDirFate({ state: "STOPPED", endedAt: T - 60 * MIN }, o)).toBe("remove");
    expect(instanceDirFate({ state: "FAILURE", endedAt: T }, { ...o, keepMs: 0 })).toBe("remove");
    // Not in the store (deleted by retention): gone once the directory is that old.
    expect(instanceDirFate(undefined, { ...o, dirChangedAt: T - MIN })).toBe("keep");
    expect(instanceDirFate(undefined, { ...o, dirChangedAt: T - 60 * MIN })).toBe("remove");
  });

  it("sweeps every half keep time, between 1 s and 5 minutes", () => {
    expect(workSweepPeriodMs(60 * MIN)).toBe(5 * MIN);
    expect(workSweepPeriodMs(4 * MIN)).toBe(2 * MIN);
    expect(workSweepPeriodMs(0)).toBe(1_000);
  });
});

describe("the work directory sweep", () => {
  function setup(instances: Record<string, Partial<InstanceRecord>>, running: string[] = []) {
    const dataDir = mkdtempSync(join(tmpdir(), "shoal-work-"));
    let now = T;
    const dirs = new WorkDirs({
      dataDir,
      keepMs: 10 * MIN,
      store: {
        getInstance: async (id) => instances[id] as InstanceRecord | undefined,
      },
      now: () => now,
      running: async () => new Set(running),
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

  it("keeps a failed instance's directory for the keep time after it ended", async () => {
    const { dirs, attempt, at } = setup({ i3: { state: "FAILURE", endedAt: T } });
    const d = await attempt("i3", "a", 1, true);
    at(T + 10 * MIN - 1);
    await dirs.sweep();
    expect(existsSync(d.shared)).toBe(true);
    at(T + 10 * MIN);
    expect(await dirs.sweep()).toBe(1);
    expect(existsSync(d.instance)).toBe(false);
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
