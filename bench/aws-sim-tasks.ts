/**
 * Task stand-ins of the AWS simulation (its default; `--real-tasks` spawns): a SHELL task whose command is
 * `true` or `sleep <seconds>` (every task of aws-sim's DAGs and of converted WfCommons traces)
 * waits a modelled process start and then its sleep on a timer, instead of spawning a process.
 * On AWS each worker sandbox runs its tasks on its own CPU; here every simulated sandbox shares
 * two cores, where one `/bin/sh` spawn from Node costs 1.5 ms (docs/performance.md) to 7.5 ms
 * (this machine on 2026-12-02) of CPU: a 10,000-task fan-out would measure this machine's
 * spawns, not Shoal on AWS. Any other command runs as the worker would run it.
 */
import { setTimeout as delay } from "node:timers/promises";
import { killError, type TaskPlugin } from "../lib/tasks/plugin.js";
import { runShell } from "../lib/tasks/shell.js";

/**
 * A process start of `/bin/sh -c …` in a sandbox, ms: the 1.5 ms measured for a spawn from Node
 * on the reference machine (docs/performance.md "Where a task's CPU goes").
 */
export const PROCESS_START_MS = 1.5;

const SLEEP = /^sleep\s+(\d+(?:\.\d+)?)$/;

/** The SHELL stand-in (see the file comment). */
export const standInShell: TaskPlugin = async (ctx) => {
  const command = "command" in ctx.task ? String(ctx.task.command ?? "").trim() : "";
  const sleep = command === "true" ? 0 : Number(SLEEP.exec(command)?.[1] ?? Number.NaN);
  if (!Number.isFinite(sleep)) return runShell(ctx);
  try {
    await delay(PROCESS_START_MS + sleep * 1000, undefined, { signal: ctx.signal });
  } catch {
    return { state: "KILLED", error: killError(ctx.signal) };
  }
  return { state: "SUCCESS", exitCode: 0 };
};
