/**
 * A task's processes die with the worker that started them: the supervisor (lib/tasks/
 * supervisor.ts) kills the task's process group when its pipe to the worker closes, whether the
 * worker closed it or died (`kill -9`); a task that ends by itself keeps its exit status and
 * output. The records of running tasks (lib/tasks/task-processes.ts) let a later worker kill what
 * a dead one left, never a process that merely reuses a recorded pid. Linux (/proc).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { releaseSupervisor, spawnSupervised } from "../../lib/tasks/supervisor.js";
import { isRunning, processStartTime, TaskProcesses } from "../../lib/tasks/task-processes.js";
import { until } from "../helpers/poll.js";

const SUPERVISOR_MODULE = fileURLToPath(new URL("../../lib/tasks/supervisor.ts", import.meta.url));

/** Alive and not a zombie (a killed orphan may wait a moment for init to reap it). */
const alive = (pid: number) => processStartTime(pid) !== undefined;

const started: ChildProcess[] = [];
/** Process groups a test made, killed afterwards whatever happened. */
const groups: number[] = [];
afterEach(() => {
  for (const g of groups.splice(0)) {
    try {
      process.kill(-g, "SIGKILL");
    } catch {}
  }
  for (const c of started.splice(0)) {
    try {
      if (c.pid !== undefined) process.kill(-c.pid, "SIGKILL");
    } catch {}
    try {
      c.kill("SIGKILL");
    } catch {}
  }
});

/** Waits for a file's content to be a pid. */
const pidIn = (file: string) =>
  until(() => existsSync(file) && Number(readFileSync(file, "utf8")), { what: file });

/**
 * A stand-in worker: a Node process that starts `command` under a supervisor and idles (writing
 * the supervisor's pid, i.e. the task's process group, to `groupFile` when given).
 */
function startWorker(command: string, cwd: string, groupFile?: string): ChildProcess {
  const writeGroup = groupFile
    ? `(await import("node:fs")).writeFileSync(${JSON.stringify(groupFile)}, String(c.pid));`
    : "";
  const worker = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `import { spawnSupervised } from ${JSON.stringify(SUPERVISOR_MODULE)};
       const c = spawnSupervised(${JSON.stringify(command)}, { cwd: ${JSON.stringify(cwd)}, env: process.env });
       ${writeGroup}
       setInterval(() => {}, 1000);`,
    ],
    { stdio: "ignore" },
  );
  started.push(worker);
  return worker;
}

describe.skipIf(process.platform !== "linux")("the supervisor of a SHELL task", () => {
  it("passes the command's output and exit status through, and leaves its background processes alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-sup-"));
    const pidFile = join(dir, "bg.pid");
    const child = spawnSupervised(
      `sleep 30 >/dev/null 2>&1 & echo $! > ${pidFile}; echo "out $0"; echo err >&2; exit 3`,
      { cwd: dir, env: process.env },
    );
    started.push(child);
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    const [code] = await new Promise<[number | null]>((r) => child.once("exit", (c) => r([c])));
    releaseSupervisor(child);
    expect(code).toBe(3);
    await until(() => out.includes("err"), { what: "the output" });
    expect(out).toContain("out /bin/sh");
    // The task is over, not its worker: what it started in the background runs on.
    const bg = await pidIn(pidFile);
    await new Promise<void>((r) => child.stdin.once("close", () => r()));
    expect(alive(bg)).toBe(true);
  });

  /** Runs `command` supervised to its end: exit code, signal, output. */
  async function runToEnd(
    command: string,
    onStart?: (child: ReturnType<typeof spawnSupervised>) => void,
  ) {
    const dir = mkdtempSync(join(tmpdir(), "shoal-sup-"));
    const child = spawnSupervised(command, { cwd: dir, env: process.env });
    started.push(child);
    let out = "";
    const ended = Promise.all(
      [child.stdout, child.stderr].map(
        (s) =>
          new Promise<void>((r) => {
            s.on("data", (d) => {
              out += d;
            });
            s.once("end", () => r());
          }),
      ),
    );
    onStart?.(child);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) =>
      child.once("exit", (c, sig) => r([c, sig])),
    );
    releaseSupervisor(child);
    await ended;
    return { code, signal, out, output: () => out };
  }

  it("starts the command with no signal ignored: it can trap INT", async () => {
    // Run as an asynchronous list of a non-interactive shell, the command would start with INT
    // and QUIT ignored (SigIgn 6) and could not trap them.
    const r = await runToEnd(
      `grep SigIgn /proc/self/status; trap 'echo caught INT; exit 7' INT; kill -INT $$; echo not caught; exit 1`,
    );
    expect(r.out).toMatch(/^SigIgn:\s+0+$/m);
    expect(r.out).toContain("caught INT");
    expect(r.out).not.toContain("not caught");
    expect(r.code).toBe(7);
  });

  it("gives a command that traps TERM its grace: the supervisor exits with its status once it ends", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-sup-"));
    const ready = join(dir, "ready");
    const r = await runToEnd(
      `trap 'echo cleaning up; exit 5' TERM; touch ${ready}; while :; do sleep 0.1; done`,
      (child) => {
        void until(() => existsSync(ready), { what: "the command to start" }).then(() =>
          process.kill(-(child.pid as number), "SIGTERM"),
        );
      },
    );
    expect(r.out).toContain("cleaning up");
    expect(r).toMatchObject({ code: 5, signal: null });
  });

  it("still kills a task that traps TERM when its worker dies during the grace period", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-sup-"));
    const pidFile = join(dir, "task.pid");
    const groupFile = join(dir, "group.pid");
    const worker = startWorker(
      `trap '' TERM; echo $$ > ${pidFile}; while :; do sleep 0.1; done`,
      dir,
      groupFile,
    );
    const task = await pidIn(pidFile);
    const group = await pidIn(groupFile);
    groups.push(group);
    // The worker's stop: TERM to the group, which the task ignores...
    process.kill(-group, "SIGTERM");
    // ...and the worker dies before its KILL: the watcher, still there, kills the group.
    worker.kill("SIGKILL");
    await until(() => !alive(task), { what: "the task to die with its worker" });
  });

  it("kills the task's whole process group when its pipe closes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-sup-"));
    const pidFile = join(dir, "sleep.pid");
    // The sleep runs in a grandchild: only a process-group kill reaches it.
    const child = spawnSupervised(`sleep 60 & echo $! > ${pidFile}; wait`, {
      cwd: dir,
      env: process.env,
    });
    started.push(child);
    const sleeper = await pidIn(pidFile);
    expect(alive(sleeper)).toBe(true);
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once("exit", (_c, s) => r(s)));
    child.stdin.destroy(); // closed without a word, as the kernel does when the worker dies
    expect(await exited).toBe("SIGKILL");
    await until(() => !alive(sleeper), { what: "the grandchild to be killed" });
  });

  it("kills the task when the worker process is killed with SIGKILL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-sup-"));
    const pidFile = join(dir, "sleep.pid");
    const marker = join(dir, "marker");
    const worker = startWorker(`sleep 60 & echo $! > ${pidFile}; wait; touch ${marker}`, dir);
    const sleeper = await pidIn(pidFile);
    worker.kill("SIGKILL");
    await until(() => !alive(sleeper), { what: "the task to die with its worker" });
    expect(existsSync(marker)).toBe(false);
  });
});

describe.skipIf(process.platform !== "linux")("records of running tasks", () => {
  /** A detached `sleep` (its own process group) and its start time. */
  async function group(): Promise<{ pid: number; startTime: string }> {
    const c = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
    started.push(c);
    const pid = c.pid as number;
    const startTime = await until(() => processStartTime(pid), { what: "the process" });
    return { pid, startTime };
  }

  it("a worker's sweep kills the groups a dead worker left, and nothing else", async () => {
    const run = mkdtempSync(join(tmpdir(), "shoal-run-"));
    const record = (workerDir: string, name: string, pgid: number, startTime: string) => {
      mkdirSync(join(run, workerDir), { recursive: true });
      writeFileSync(
        join(run, workerDir, name),
        JSON.stringify({ workflow: "w", instanceId: "i", code: "c", attempt: 1, pgid, startTime }),
      );
    };
    // A dead worker (its pid no longer runs with that start time) left two task groups: one
    // still running, one whose pid now belongs to another process (a different start time).
    const orphan = await group();
    const reused = await group();
    record(`${process.pid}-1`, "1.json", orphan.pid, orphan.startTime);
    record(`${process.pid}-1`, "2.json", reused.pid, "1");
    // A live worker's task: untouched.
    const liveWorker = await group();
    const liveTask = await group();
    record(`${liveWorker.pid}-${liveWorker.startTime}`, "1.json", liveTask.pid, liveTask.startTime);

    const sweeper = new TaskProcesses(run);
    expect(isRunning({ pid: process.pid, startTime: "1" })).toBe(false);
    expect(await sweeper.sweepOrphans()).toBe(1);
    await until(() => !alive(orphan.pid), { what: "the orphan to be killed" });
    expect(alive(reused.pid)).toBe(true);
    expect(alive(liveTask.pid)).toBe(true);
    expect(existsSync(join(run, `${process.pid}-1`))).toBe(false);
    // The live worker's instance counts as running here; the dead one's records are gone.
    expect([...(await sweeper.runningInstances())]).toEqual(["i"]);
  });

  it("records an attempt and its process group while it runs", async () => {
    const run = mkdtempSync(join(tmpdir(), "shoal-run-"));
    const tp = new TaskProcesses(run);
    const h = tp.begin({ workflow: "w", instanceId: "inst", code: "c", attempt: 2 });
    const g = await group();
    h.processGroup.started(g.pid); // written in the background
    const file = join(run, `${process.pid}-${tp.self.startTime}`, "1.json");
    const record = await until(
      () => {
        const r = existsSync(file) && JSON.parse(readFileSync(file, "utf8"));
        return r?.pgid !== undefined ? r : undefined;
      },
      { what: "the record" },
    );
    expect(record).toEqual({
      workflow: "w",
      instanceId: "inst",
      code: "c",
      attempt: 2,
      pgid: g.pid,
      startTime: g.startTime,
    });
    expect(await tp.runningInstances()).toEqual(new Set(["inst"]));
    h.processGroup.ended(g.pid);
    await h.end(); // after every write before it
    expect(existsSync(file)).toBe(false);
    expect(await tp.runningInstances()).toEqual(new Set());
  });
});
