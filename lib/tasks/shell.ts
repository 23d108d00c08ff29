/**
 * SHELL tasks: `/bin/sh -c <command>` in its own process group (so a kill reaches every process
 * it started) under a supervisor that kills that group if the worker dies (supervisor.ts), in a
 * fresh working directory, stdout and stderr streamed line by line to the task log. `timeoutSeconds` with strategy FAIL kills the group (TERM, then KILL after a grace period)
 * and fails the attempt; WARN only logs a warning (DolphinScheduler's timeout strategies).
 */
import type { Readable } from "node:stream";
import type { StreamMasker } from "../secrets/mask.js";
import { killError, type TaskPlugin, type TaskResult } from "./plugin.js";
import { releaseSupervisor, spawnSupervised } from "./supervisor.js";

/** Seconds between TERM and KILL. */
const KILL_GRACE_MS = 3_000;

/**
 * Streams `stream` line by line to `write`; with `masker`, secret values are masked in the raw
 * text first, so a value split across chunks or spanning lines is masked too (lib/secrets/mask.ts).
 */
function pipeLines(
  stream: Readable,
  write: (line: string) => void,
  masker?: StreamMasker,
): Promise<void> {
  return new Promise((resolve) => {
    let carry = "";
    stream.setEncoding("utf8");
    stream.on("data", (raw: string) => {
      const chunk = masker ? masker.push(raw) : raw;
      const parts = (carry + chunk).split("\n");
      carry = parts.pop() ?? "";
      for (const p of parts) write(p);
      // A line without newline still shows up once it gets long.
      if (carry.length > 16_384) {
        write(carry);
        carry = "";
      }
    });
    stream.on("end", () => {
      if (masker) {
        const parts = (carry + masker.end()).split("\n");
        carry = parts.pop() ?? "";
        for (const p of parts) write(p);
      }
      if (carry) write(carry);
      resolve();
    });
    stream.on("error", () => resolve());
  });
}

/**
 * The worker's environment minus its own static AWS credentials and Shoal's settings: a task
 * gets its own permissions (an instance or task role reaches it through the SDK's usual
 * providers), never the scheduler's keys. On ECS that role is the worker's own
 * (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI stays): a task can read every secret of the stack's
 * `taskSecrets` itself, and in standalone it can read the secrets file and the worker's
 * /proc/<pid>/environ. Dropping SHOAL_* keeps values out of what a task prints by accident; it
 * isolates nothing (docs/secrets.md, "What a task can read").
 */
let baseEnv: NodeJS.ProcessEnv | undefined;

function taskBaseEnv(): NodeJS.ProcessEnv {
  // The worker's environment does not change while it runs: filter it once.
  if (baseEnv) return baseEnv;
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (
      k === "AWS_ACCESS_KEY_ID" ||
      k === "AWS_SECRET_ACCESS_KEY" ||
      k === "AWS_SESSION_TOKEN" ||
      k.startsWith("SHOAL_")
    ) {
      delete env[k];
    }
  }
  baseEnv = env;
  return env;
}

export const runShell: TaskPlugin = async (ctx) => {
  if (ctx.task.type !== "SHELL") throw new Error("runShell needs a SHELL task");
  const { task, log } = ctx;
  const child = spawnSupervised(task.command, {
    cwd: ctx.workDir,
    env: { ...taskBaseEnv(), ...ctx.env },
  });
  const pgid = child.pid;
  if (pgid !== undefined) ctx.processGroup?.started(pgid);
  let reason: "timeout" | "killed" | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  // TERM reaches the command and what it started; the supervisor waits for the command and the
  // watcher ignores TERM, so should this worker die during the grace period the pipe still
  // closes on a watcher that KILLs the group (supervisor.ts).
  const killGroup = () => {
    if (child.pid === undefined || child.exitCode !== null) return;
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {}
    killTimer = setTimeout(() => {
      try {
        process.kill(-(child.pid as number), "SIGKILL");
      } catch {}
    }, KILL_GRACE_MS);
    killTimer.unref();
  };
  const onAbort = () => {
    reason ??= "killed";
    log.write(`shoal: ${killError(ctx.signal)}; terminating the process group`);
    killGroup();
  };
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  if (ctx.signal.aborted) onAbort();
  let timeout: NodeJS.Timeout | undefined;
  if (task.timeoutSeconds) {
    timeout = setTimeout(() => {
      if (task.timeoutStrategy === "WARN") {
        const message = `task is still running after its timeout of ${task.timeoutSeconds}s`;
        log.write(`shoal: WARNING ${message}`);
        ctx.warn?.(message);
        return;
      }
      reason ??= "timeout";
      log.write(`shoal: timeout of ${task.timeoutSeconds}s reached, terminating the process group`);
      killGroup();
    }, task.timeoutSeconds * 1000);
  }
  const out = pipeLines(child.stdout, (l) => log.write(l), ctx.masker?.stream());
  const err = pipeLines(child.stderr, (l) => log.write(l), ctx.masker?.stream());
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.once("error", (e) => {
      log.write(`shoal: could not start /bin/sh: ${e.message}`);
      resolve([127, null]);
    });
    child.once("exit", (c, s) => resolve([c, s]));
  });
  releaseSupervisor(child);
  await Promise.all([out, err]);
  if (pgid !== undefined) ctx.processGroup?.ended(pgid);
  clearTimeout(timeout);
  clearTimeout(killTimer);
  ctx.signal.removeEventListener("abort", onAbort);
  const exitCode =
    code ??
    128 +
      (signal
        ? (({ SIGTERM: 15, SIGKILL: 9, SIGINT: 2 } as Record<string, number>)[signal] ?? 0)
        : 0);
  log.write(`shoal: exit code ${exitCode}${signal ? ` (signal ${signal})` : ""}`);
  let result: TaskResult;
  if (reason === "killed") result = { state: "KILLED", exitCode, error: killError(ctx.signal) };
  else if (reason === "timeout") {
    result = { state: "FAILURE", exitCode, error: `timed out after ${task.timeoutSeconds}s` };
  } else if (exitCode === 0) result = { state: "SUCCESS", exitCode };
  else result = { state: "FAILURE", exitCode, error: `command exited with code ${exitCode}` };
  return result;
};
