/**
 * The supervisor of a SHELL task: a few lines of `/bin/sh` between the worker and the task, so
 * that the task's processes die with the worker that started them, however the worker dies
 * (`kill -9`, the OOM killer, a crash). Without it a task lives on as an orphan in its own
 * process group, finishes its side effects, and its failover attempt does them again.
 *
 * The worker starts the supervisor as the leader of a new process group (`detached`) with a pipe
 * on its stdin that the worker never writes to. The supervisor starts a watcher (a subshell of
 * it in the background, output to /dev/null) that blocks reading the pipe, then runs the command
 * in the foreground, in that group. Only the worker holds the pipe's write end (Node opens pipes
 * close-on-exec), so when the worker process ends the kernel closes it, the read returns at end
 * of file, and the watcher sends KILL to the whole group: the command, everything it started,
 * the supervisor and itself. KILL rather than TERM: nobody is left to report the attempt, and
 * the failover attempt may start as soon as the lease lapses (seconds), so a task that traps TERM
 * must not overlap it. When the command ends by itself the supervisor stops the watcher first and
 * exits with the command's status (Node closes the pipe as soon as the supervisor exits); what
 * the command left running in the background is not touched, as before.
 *
 * The command runs in the foreground, not as an asynchronous list: a non-interactive shell starts
 * an asynchronous list with SIGINT and SIGQUIT ignored, and a program cannot undo an ignore it
 * inherits at the start of a shell (`trap … INT` would do nothing, Python would get no
 * KeyboardInterrupt, `timeout -s INT` would not stop its child). The command starts with no
 * signal ignored.
 *
 * The worker's own kills (stop, timeout) go to the group: TERM, then KILL after a grace period
 * (shell.ts). The watcher ignores TERM, so it still guards a task that traps TERM should the
 * worker die during the grace period. The supervisor catches TERM (a caught signal is back to its
 * default in the command) and only exits once the command did, with its status (143 when TERM
 * ended it), so the pipe stays open, and the watcher quiet, for as long as the command runs.
 *
 * Costs two more forks of `/bin/sh` per task (the command's shell and the watcher): about a
 * millisecond of start latency (1.4 → 2.5 ms for `true` on Linux, docs/workflows.md). Works wherever `/bin/sh` does; a
 * command that puts processes in a process group or session of their own (`setsid`, `set -m`)
 * takes them out of its reach.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";

/**
 * The supervisor program (`sh -c SUPERVISOR shoal-supervisor <command>`). fd 3 keeps the pipe
 * for the watcher: a background job's stdin is /dev/null unless redirected explicitly (POSIX).
 * The command's shell gets neither the pipe nor the watcher's stdin: its stdin is /dev/null.
 * The watcher ignores TERM and is stopped with KILL.
 */
export const SUPERVISOR = [
  "exec 3<&0 </dev/null",
  "(trap '' TERM; read -r _ <&3 || kill -KILL 0) >/dev/null 2>&1 &",
  "watcher=$!",
  "exec 3<&-",
  "trap : TERM",
  '/bin/sh -c "$1" /bin/sh',
  "status=$?",
  'kill -KILL "$watcher" 2>/dev/null',
  'exit "$status"',
].join("\n");

export type SupervisedProcess = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * Starts `command` under a supervisor, in a new process group whose id is the returned child's
 * pid (kill `-pid` to reach every process of the task). The child's stdin is the supervisor's
 * pipe: keep it open while the task runs and call {@link releaseSupervisor} once it exited.
 */
export function spawnSupervised(
  command: string,
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): SupervisedProcess {
  const child = spawn("/bin/sh", ["-c", SUPERVISOR, "shoal-supervisor", command], {
    cwd: opts.cwd,
    env: opts.env,
    detached: true, // own process group, led by the supervisor
    stdio: ["pipe", "pipe", "pipe"],
  });
  // Nothing is ever written; a closed pipe must not become an unhandled error.
  child.stdin.on("error", () => {});
  return child;
}

/** Closes the worker's end of the supervisor's pipe once the supervisor exited. */
export function releaseSupervisor(child: SupervisedProcess): void {
  child.stdin.destroy();
}
