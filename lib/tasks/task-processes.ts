/**
 * What runs on this machine, written down so that it can be cleaned up after a worker that was
 * killed outright: one small JSON file per running attempt under
 * `<dataDir>/run/<worker pid>-<worker start time>/`, holding the attempt and, once a SHELL task
 * started, its process group and the group leader's start time.
 *
 * The supervisor (supervisor.ts) already kills a task's processes the moment its worker dies.
 * These records are the second line: a worker starting on the same data directory kills the
 * process groups recorded by workers that are gone (should a supervisor have died too), and the
 * work-directory sweep (lib/engine/work-dirs.ts) never removes the directory of an instance that
 * a live worker on this machine is running a task of.
 *
 * A process is identified by its pid **and** its start time (field 22 of `/proc/<pid>/stat`,
 * clock ticks since boot), so a pid the kernel handed to another process since is never taken
 * for the one recorded. That needs Linux's /proc: elsewhere records are still written (the
 * sweep's check uses them) but no orphan is ever killed.
 */
import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** A process: its pid and, on Linux, its start time (clock ticks after boot). */
export interface ProcessId {
  pid: number;
  startTime?: string;
}

/** One running attempt, as recorded. */
export interface AttemptRecord {
  workflow: string;
  instanceId: string;
  code: string;
  attempt: number;
  /** The task's process group (SHELL): the supervisor's pid, and its start time. */
  pgid?: number;
  startTime?: string;
}

/** `/proc/<pid>/stat` fields after the command name: state is index 0, starttime index 19. */
function statFields(pid: number | "self"): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may itself hold spaces or parentheses.
    return stat
      .slice(stat.lastIndexOf(")") + 2)
      .trim()
      .split(" ");
  } catch {
    return undefined;
  }
}

/**
 * Start time of a live process (undefined when it is gone, a zombie, or there is no /proc).
 * A zombie has exited already: it counts as gone.
 */
export function processStartTime(pid: number | "self"): string | undefined {
  const f = statFields(pid);
  if (!f || f[0] === "Z") return undefined;
  return f[19];
}

/** Whether `p` still runs: same pid and, when known, the same start time. */
export function isRunning(p: ProcessId): boolean {
  if (p.startTime !== undefined) return processStartTime(p.pid) === p.startTime;
  try {
    process.kill(p.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Kills a recorded process group with KILL, unless its number now belongs to someone else.
 * Linux never hands out a number still used as a process group id, so: the leader still running
 * with the recorded start time means the group is ours; the leader's pid running with another
 * start time means the pid was reused, hence our group was empty by then; no process with that
 * pid means whatever still has that group id is ours. @returns whether a signal was sent.
 */
export function killRecordedGroup(pgid: number, startTime: string): boolean {
  const now = processStartTime(pgid);
  if (now !== undefined && now !== startTime) return false;
  try {
    process.kill(-pgid, "SIGKILL");
    return true;
  } catch {
    return false; // ESRCH: nothing left in the group
  }
}

/** The records of one worker process; see the module comment. */
export class TaskProcesses {
  /** This process, as its record directory names it. */
  readonly self: ProcessId;
  private readonly mine: string;
  private seq = 0;
  private made: Promise<unknown> | undefined;

  /** @param dir `<dataDir>/run` */
  constructor(
    private readonly dir: string,
    private readonly log?: (msg: string, fields?: Record<string, unknown>) => void,
  ) {
    const startTime = processStartTime("self");
    this.self = { pid: process.pid, ...(startTime !== undefined ? { startTime } : {}) };
    this.mine = join(dir, `${process.pid}-${startTime ?? "0"}`);
  }

  /**
   * Records a running attempt. The writes happen in the background, one after the other, so
   * nothing here delays the task; a failed write is logged (the supervisor still protects it).
   * @returns the record's handle: `processGroup` for the plugin, `end` to remove the record.
   */
  begin(a: AttemptRecord): {
    processGroup: { started(pgid: number): void; ended(pgid: number): void };
    end(): Promise<void>;
  } {
    const file = join(this.mine, `${++this.seq}.json`);
    this.made ??= mkdir(this.mine, { recursive: true });
    let chain: Promise<unknown> = this.made;
    const then = (step: () => Promise<unknown>) => {
      chain = chain.then(step).catch((e) => {
        this.log?.("worker: task record not written", { error: String(e) });
      });
      return chain;
    };
    const write = (r: AttemptRecord) => then(() => writeFile(file, JSON.stringify(r)));
    write(a);
    return {
      processGroup: {
        started: (pgid) => {
          const startTime = processStartTime(pgid);
          if (startTime !== undefined) write({ ...a, pgid, startTime }); // else over, or no /proc
        },
        // The group is over: a sweep must not kill what the task left in the background.
        ended: () => write(a),
      },
      end: async () => {
        await then(() => rm(file, { force: true }));
      },
    };
  }

  /** Worker directories under `dir`, with the process each names. */
  private async workers(): Promise<Array<{ path: string; proc: ProcessId; mine: boolean }>> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    const out: Array<{ path: string; proc: ProcessId; mine: boolean }> = [];
    for (const name of names) {
      const m = /^(\d+)-(\d+)$/.exec(name);
      if (!m) continue;
      const path = join(this.dir, name);
      const startTime = m[2] === "0" ? undefined : m[2];
      out.push({
        path,
        proc: { pid: Number(m[1]), ...(startTime !== undefined ? { startTime } : {}) },
        mine: path === this.mine,
      });
    }
    return out;
  }

  private async records(path: string): Promise<AttemptRecord[]> {
    let files: string[];
    try {
      files = await readdir(path);
    } catch {
      return [];
    }
    const out: AttemptRecord[] = [];
    for (const f of files) {
      try {
        out.push(JSON.parse(await readFile(join(path, f), "utf8")) as AttemptRecord);
      } catch {
        // Half written, or removed meanwhile: nothing to act on.
      }
    }
    return out;
  }

  /**
   * Kills the process groups recorded by worker processes that are gone (Linux; elsewhere only
   * their records go) and removes their records.
   * @param onLeft called with each attempt such a worker left (after its group was killed),
   *   before the record goes: the work-directory sweep marks the attempt's directory kept.
   * @returns how many process groups were sent KILL.
   */
  async sweepOrphans(onLeft?: (r: AttemptRecord) => Promise<void>): Promise<number> {
    let killed = 0;
    for (const w of await this.workers()) {
      if (w.mine || isRunning(w.proc)) continue;
      for (const r of await this.records(w.path)) {
        if (
          r.pgid !== undefined &&
          r.startTime !== undefined &&
          killRecordedGroup(r.pgid, r.startTime)
        ) {
          killed++;
          this.log?.("worker: killed the processes of a task a dead worker left running", {
            instanceId: r.instanceId,
            code: r.code,
            attempt: r.attempt,
            pgid: r.pgid,
            worker: w.proc.pid,
          });
        }
        await onLeft?.(r).catch((e) =>
          this.log?.("worker: a dead worker's attempt not handled", { error: String(e) }),
        );
      }
      await rm(w.path, { recursive: true, force: true }).catch(() => {});
    }
    return killed;
  }

  /** Instance ids with an attempt running in a live worker process on this machine. */
  async runningInstances(): Promise<Set<string>> {
    const ids = new Set<string>();
    for (const w of await this.workers()) {
      if (!w.mine && !isRunning(w.proc)) continue;
      for (const r of await this.records(w.path)) ids.add(r.instanceId);
    }
    return ids;
  }
}
