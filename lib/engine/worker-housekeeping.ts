/**
 * What a worker keeps track of on its machine, and cleans up: the attempts it runs (recorded
 * under `<dataDir>/run`, lib/tasks/task-processes.ts, so their processes can be killed should
 * the worker die outright) and their work directories (lib/engine/work-dirs.ts). Its periodic
 * part runs at the worker's start and then every few minutes.
 */
import { join } from "node:path";
import type { Store } from "../store/store.js";
import { TaskProcesses } from "../tasks/task-processes.js";
import { WorkDirs, workSweepPeriodMs } from "./work-dirs.js";

/** An attempt, as the housekeeping knows it. */
export interface AttemptKey {
  workflow: string;
  instanceId: string;
  code: string;
  attempt: number;
}

/** Default of SHOAL_KEEP_FAILED_WORK_MINUTES, ms. */
export const DEFAULT_KEEP_FAILED_WORK_MS = 60 * 60_000;

/**
 * A worker's housekeeping on its machine: which attempts it runs (so the work-directory sweep
 * leaves their instances alone and a later worker can kill their processes should this one die
 * outright), their work directories when they end, and the periodic sweep
 * ({@link WorkerHousekeeping.sweep}: dead workers' task processes, then work directories). The
 * sweep period comes from the keep time of failed attempts' directories
 * (SHOAL_KEEP_FAILED_WORK_MINUTES, via `keepFailedWorkMs`; {@link workSweepPeriodMs}: 30 s to
 * 5 minutes). Nothing here throws: a failed cleanup is logged and tried again next sweep.
 */
export class WorkerHousekeeping {
  /** Instance id → attempts of it this worker is working on (their directories stay). */
  private readonly busy = new Map<string, number>();
  private readonly processes: TaskProcesses;
  readonly workDirs: WorkDirs;
  private sweeping: Promise<void> | undefined;
  private nextSweepAt = 0;
  private readonly keepMs: number;

  constructor(
    private readonly deps: {
      dataDir: string;
      /** See WorkerDeps.keepFailedWorkMs. */
      keepFailedWorkMs?: number;
      store: Pick<Store, "getInstance">;
      now: () => number;
      log?: (msg: string, fields?: Record<string, unknown>) => void;
    },
  ) {
    this.keepMs = deps.keepFailedWorkMs ?? DEFAULT_KEEP_FAILED_WORK_MS;
    this.processes = new TaskProcesses(join(deps.dataDir, "run"), deps.log);
    this.workDirs = new WorkDirs({
      dataDir: deps.dataDir,
      keepMs: this.keepMs,
      store: deps.store,
      now: deps.now,
      running: async () => {
        const ids = await this.processes.runningInstances();
        for (const id of this.busy.keys()) ids.add(id);
        return ids;
      },
      ...(deps.log ? { log: deps.log } : {}),
    });
  }

  /**
   * A claimed attempt starts: it is recorded as running on this machine (its directories are
   * safe from the sweep; its process group is killed should this worker die outright).
   * @returns its directories and the record's handle, for {@link ended}.
   */
  begin(a: AttemptKey) {
    this.busy.set(a.instanceId, (this.busy.get(a.instanceId) ?? 0) + 1);
    const record = this.processes.begin({
      workflow: a.workflow,
      instanceId: a.instanceId,
      code: a.code,
      attempt: a.attempt,
    });
    return { dirs: this.workDirs.of(a), record };
  }

  /** The attempt is over: its work directory goes (or is kept for debugging), its record too. */
  async ended(
    a: AttemptKey,
    handle: ReturnType<WorkerHousekeeping["begin"]>,
    succeeded: boolean,
  ): Promise<void> {
    await this.workDirs.ended(handle.dirs, succeeded);
    await handle.record.end();
    const n = (this.busy.get(a.instanceId) ?? 1) - 1;
    if (n > 0) this.busy.set(a.instanceId, n);
    else this.busy.delete(a.instanceId);
  }

  /**
   * Kills the task processes of workers on this machine that died outright, and removes work
   * directories no longer needed. One at a time; never throws.
   */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      this.nextSweepAt = this.deps.now() + workSweepPeriodMs(this.keepMs);
      try {
        // A dead worker's attempts are failed attempts: their directories are kept a while.
        await this.processes.sweepOrphans((r) => this.workDirs.left(r));
        await this.workDirs.sweep();
      } catch (e) {
        this.deps.log?.("worker: housekeeping failed", { error: String(e) });
      }
    })().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  /** {@link sweep} when its period has passed; undefined otherwise. */
  sweepIfDue(): Promise<void> | undefined {
    return this.deps.now() >= this.nextSweepAt ? this.sweep() : undefined;
  }
}
