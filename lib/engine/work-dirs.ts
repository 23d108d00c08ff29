/**
 * A worker's directories and their cleanup. Each attempt runs in
 * `<dataDir>/work/<workflow>/<instanceId>/<code>/<attempt>` and the tasks of an instance share
 * `<dataDir>/work/<workflow>/<instanceId>/shared` (`SHOAL_INSTANCE_DIR`). Left alone they pile up
 * until the disk is full (Lambda's /tmp holds 512 MB by default and a warm worker keeps it), so:
 *
 * - an attempt's directory goes when the attempt ends, unless it did not succeed: then it is kept
 *   for `keepMs` (SHOAL_KEEP_FAILED_WORK_MINUTES, 60 by default) for debugging, marked by a file
 *   `<attempt>.kept-until` next to it holding the epoch ms it may go at;
 * - a sweep the worker runs itself (at start and then every {@link workSweepPeriodMs}) removes
 *   kept directories whose time is up, and the directory of every instance that succeeded. A
 *   failed or stopped instance keeps its directory (the `shared` one holds what its successful
 *   tasks wrote, which `recover-failed` reruns the others on) for as long as it exists: once the
 *   store no longer has it (deleted by retention) the directory goes `keepMs` after it last
 *   changed. It reads each instance from the store, a few at a time, and never touches an
 *   instance a worker on this machine is running a task of (lib/tasks/task-processes.ts records
 *   them), checked again right before anything is removed, nor an instance directory holding an
 *   attempt directory without a marker (an attempt that is still running: a rerun's first task
 *   may start before the store says the instance runs again);
 * - an attempt a worker that died outright left (its record, lib/tasks/task-processes.ts) is
 *   marked kept like a failed attempt by the next sweep on the machine ({@link WorkDirs.left}).
 *
 * Only a worker can do this: the files live where its tasks ran (each Lambda sandbox has its own
 * /tmp; ECS and standalone workers share the data directory of their machine). The decisions are
 * pure functions of the time, below; `WorkDirs` does the file system part.
 */
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pLimit from "p-limit";
import type { InstanceState } from "../core/model.js";
import type { Store } from "../store/store.js";

/** Name of the directory shared by an instance's tasks, next to the task codes' directories. */
export const SHARED_DIR = "shared";
/** Suffix of the marker next to a kept attempt directory (content: epoch ms it may go at). */
export const KEPT_SUFFIX = ".kept-until";

/** The directories of one attempt. */
export interface AttemptDirs {
  /** `<dataDir>/work/<workflow>/<instanceId>` */
  instance: string;
  /** The instance's shared directory (`SHOAL_INSTANCE_DIR`). */
  shared: string;
  /** The attempt's own working directory. */
  attempt: string;
  /** The marker saying until when a kept attempt directory stays. */
  keptMarker: string;
}

/** The directories of attempt `attempt` of task `code` of an instance. */
export function attemptDirs(
  dataDir: string,
  key: { workflow: string; instanceId: string; code: string; attempt: number },
): AttemptDirs {
  const instance = join(dataDir, "work", key.workflow, key.instanceId);
  const attempt = join(instance, key.code, String(key.attempt));
  return {
    instance,
    shared: join(instance, SHARED_DIR),
    attempt,
    keptMarker: `${attempt}${KEPT_SUFFIX}`,
  };
}

/**
 * When the directory of an attempt that ended at `endedAt` (epoch ms) goes: "now" when it
 * succeeded or nothing is kept (`keepMs` 0), else the epoch ms it is kept until.
 */
export function attemptDirExpiry(
  succeeded: boolean,
  endedAt: number,
  keepMs: number,
): "now" | number {
  return succeeded || keepMs <= 0 ? "now" : endedAt + keepMs;
}

/**
 * What the sweep does with the directory of an instance no local worker runs a task of:
 * "keep" it; "remove" it whole; or "prune" it: remove its shared directory but keep the attempt
 * directories still kept for debugging (an instance that succeeded after a failed attempt).
 * Only a SUCCESS instance's directory goes while the store has the instance: a FAILURE or
 * STOPPED one may still be recovered (`recover-failed` reruns its failed tasks on what the
 * successful ones left in `shared`), so it stays until retention deletes the instance.
 * @param inst the instance as stored; undefined when it is not in the store (deleted by
 *   retention): then the directory goes once it is `keepMs` old (`dirChangedAt`, epoch ms).
 * @param opts.keptLeft whether kept attempt directories whose time is not up remain.
 * @param opts.unmarked whether it holds an attempt directory without a `kept-until` marker: an
 *   attempt that is still running (or whose worker died just now), so nothing goes.
 */
export function instanceDirFate(
  inst: { state: InstanceState; endedAt?: number } | undefined,
  opts: { now: number; keepMs: number; keptLeft: boolean; unmarked: boolean; dirChangedAt: number },
): "keep" | "remove" | "prune" {
  if (!inst) return opts.now - opts.dirChangedAt >= opts.keepMs ? "remove" : "keep";
  if (inst.state !== "SUCCESS" || opts.unmarked) return "keep";
  return opts.keptLeft ? "prune" : "remove";
}

/** Shortest period of the work directory sweep, ms (each sweep reads the store). */
export const MIN_WORK_SWEEP_MS = 30_000;

/**
 * How often a worker sweeps its work directories, ms: half the keep time, between
 * {@link MIN_WORK_SWEEP_MS} (30 s) and 5 minutes (a succeeded instance's shared directory, or a
 * kept attempt directory whose time is up, outlives it by at most that much).
 */
export function workSweepPeriodMs(keepMs: number): number {
  return Math.min(5 * 60_000, Math.max(MIN_WORK_SWEEP_MS, Math.floor(keepMs / 2)));
}

export interface WorkDirsDeps {
  dataDir: string;
  /** How long the directory of an attempt that did not succeed is kept, ms (0: not kept). */
  keepMs: number;
  store: Pick<Store, "getInstance">;
  now: () => number;
  /** Instance ids a worker on this machine is running a task of: never swept. */
  running: () => Promise<Set<string>>;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** Instances whose directories one sweep looks at, at most (the rest wait for the next one). */
const SWEEP_BATCH = 500;
/** Store reads under way at once during a sweep. */
const SWEEP_READS = 8;

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

/** The file-system side; see the module comment. */
export class WorkDirs {
  constructor(private readonly deps: WorkDirsDeps) {}

  /** The directories of an attempt. */
  of(key: { workflow: string; instanceId: string; code: string; attempt: number }): AttemptDirs {
    return attemptDirs(this.deps.dataDir, key);
  }

  /** Makes a fresh, empty attempt directory and the instance's shared directory. */
  async prepare(d: AttemptDirs): Promise<void> {
    // Asynchronous: other tasks' results keep flowing while the file system works.
    await Promise.all([
      rm(d.attempt, { recursive: true, force: true }),
      rm(d.keptMarker, { force: true }),
    ]);
    await Promise.all([
      mkdir(d.attempt, { recursive: true }),
      mkdir(d.shared, { recursive: true }),
    ]);
  }

  /**
   * An attempt a worker that died outright left on this machine (its record): its directory is
   * kept like a failed attempt's, from now, unless it is marked already. Never throws.
   */
  async left(key: { workflow: string; instanceId: string; code: string; attempt: number }) {
    const d = this.of(key);
    const marked = await stat(d.keptMarker).then(
      () => true,
      () => false,
    );
    if (!marked) await this.ended(d, false);
  }

  /** After an attempt ended: removes its directory, or marks it kept (never throws). */
  async ended(d: AttemptDirs, succeeded: boolean): Promise<void> {
    const expiry = attemptDirExpiry(succeeded, this.deps.now(), this.deps.keepMs);
    try {
      if (expiry === "now") {
        await rm(d.attempt, { recursive: true, force: true });
        return;
      }
      const exists = await stat(d.attempt).then(
        () => true,
        () => false,
      );
      if (exists) await writeFile(d.keptMarker, String(expiry));
    } catch (e) {
      this.deps.log?.("worker: work directory not cleaned up", {
        dir: d.attempt,
        error: String(e),
      });
    }
  }

  /**
   * Removes kept attempt directories whose time is up and the directories of instances that are
   * over (see {@link instanceDirFate}). Never throws.
   * @returns how many instance directories were removed whole.
   */
  async sweep(): Promise<number> {
    const root = join(this.deps.dataDir, "work");
    const running = await this.deps.running();
    const candidates: Array<{ instanceId: string; path: string }> = [];
    for (const workflow of await names(root)) {
      for (const instanceId of await names(join(root, workflow))) {
        if (running.has(instanceId)) continue;
        candidates.push({ instanceId, path: join(root, workflow, instanceId) });
        if (candidates.length >= SWEEP_BATCH) break;
      }
      if (candidates.length >= SWEEP_BATCH) break;
    }
    let removed = 0;
    await pLimit(SWEEP_READS).map(candidates, async (c) => {
      try {
        if (await this.sweepInstance(c.instanceId, c.path)) removed++;
      } catch (e) {
        this.deps.log?.("worker: work directory sweep failed", {
          dir: c.path,
          error: String(e),
        });
      }
    });
    return removed;
  }

  /** @returns whether the instance's directory was removed whole. */
  private async sweepInstance(instanceId: string, path: string): Promise<boolean> {
    const now = this.deps.now();
    // Kept attempt directories whose time is up go first, whatever the instance's state (a
    // new attempt never reuses an attempt number, and makes its directory afresh anyway).
    const kept: string[] = [];
    let unmarked = false;
    for (const code of await names(path)) {
      if (code === SHARED_DIR) continue;
      const codeDir = join(path, code);
      const entries = await names(codeDir);
      for (const e of entries) {
        if (!e.endsWith(KEPT_SUFFIX)) {
          if (!entries.includes(`${e}${KEPT_SUFFIX}`)) unmarked = true;
          continue;
        }
        const marker = join(codeDir, e);
        const until = Number(await readFile(marker, "utf8").catch(() => "0"));
        if (now >= until) {
          await rm(marker.slice(0, -KEPT_SUFFIX.length), { recursive: true, force: true });
          await rm(marker, { force: true });
        } else kept.push(marker);
      }
    }
    // The record is read after the directories were listed, and whether a task of it runs
    // here is asked again right before removing: a rerun's first attempt may have started
    // since the sweep began (the dispatcher sends it before the instance write commits).
    const inst = await this.deps.store.getInstance(instanceId);
    const dirChangedAt = inst
      ? 0
      : await stat(path).then(
          (s) => s.mtimeMs,
          () => now,
        );
    const fate = instanceDirFate(inst, {
      now,
      keepMs: this.deps.keepMs,
      keptLeft: kept.length > 0,
      unmarked,
      dirChangedAt,
    });
    if (fate === "keep") return false;
    if ((await this.deps.running()).has(instanceId)) return false;
    if (fate === "remove") {
      await rm(path, { recursive: true, force: true });
      return true;
    }
    await rm(join(path, SHARED_DIR), { recursive: true, force: true });
    return false;
  }
}
