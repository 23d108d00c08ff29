/**
 * Waiting for a workflow instance to finish, with the live progress line: the one loop behind
 * `run --wait`, `rerun|recover-failed|resume --wait` and `shoal wait`. Exit codes: 0 only when the
 * instance ends SUCCESS, 1 for FAILURE or STOPPED and when the wait times out.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Command } from "commander";
import { TERMINAL_INSTANCE_STATES } from "./api-states.js";
import type { Instance } from "./api-types.js";
import { type CliContext, POLL_INTERVAL_MS } from "./context.js";
import { CliError, EXIT } from "./errors.js";
import { durationBetween, formatDuration } from "./format.js";
import { seg } from "./http.js";
import { positiveSeconds } from "./options.js";
import { ProgressWriter, progressLine } from "./progress.js";

/** Adds `-w, --wait` and `--timeout <seconds>` (implies --wait) to a verb that starts a run. */
export function addWaitOptions(cmd: Command): Command {
  return cmd
    .option(
      "-w, --wait",
      "wait for the instance to finish, showing progress; exit 0 only on SUCCESS",
    )
    .option(
      "--timeout <seconds>",
      "give up waiting after this long (implies --wait)",
      positiveSeconds,
    );
}

/** Options of {@link waitForInstance}. */
export interface WaitOptions {
  /** Give up after this many seconds (a CliError, exit 1); the instance keeps running. */
  timeoutSeconds?: number;
  /**
   * The instance's `runs` (API: 1, then +1 per rerun or recover-failed) read before a rerun or
   * recover-failed was sent. Until the dispatcher starts the new round the instance still shows
   * the last round's final state, which must not end the wait: it ends only on a final state
   * with more runs than this.
   */
  runsBefore?: number;
}

/**
 * Polls `GET /v1/instances/{id}` every POLL_INTERVAL_MS, showing `STATE  done/total done, N
 * active, N failed` (the API's `progress`) as it changes, until the instance is SUCCESS, FAILURE
 * or STOPPED. A PAUSED instance may be resumed, so the wait goes on: it says so once each time
 * the instance is paused ("PAUSED: waiting until `shoal resume ID`"). Then prints `STATE in
 * <duration>`, the instance's own error (a workflow timeout) and, when tasks failed, their codes.
 * @returns the exit code: 0 only for SUCCESS.
 * @throws CliError when `timeoutSeconds` pass first (worded by the state the instance is in), or
 * the API fails (ApiError, e.g. 404).
 */
export async function waitForInstance(
  ctx: CliContext,
  id: string,
  opts: WaitOptions = {},
): Promise<number> {
  const api = ctx.api();
  const t0 = Date.now();
  const deadline =
    opts.timeoutSeconds === undefined ? Number.POSITIVE_INFINITY : t0 + opts.timeoutSeconds * 1000;
  const progress = new ProgressWriter(ctx.io.stdout);
  let paused = false;
  for (;;) {
    const inst = await api.get<Instance>(`/v1/instances/${seg(id)}`);
    const previousRound =
      opts.runsBefore !== undefined &&
      (inst.runs ?? 1) <= opts.runsBefore &&
      TERMINAL_INSTANCE_STATES.has(inst.state);
    // The last round's counts would only mislead: nothing is shown until the new round starts.
    if (!previousRound) progress.update(progressLine(inst.state, inst.progress));
    if (!previousRound && TERMINAL_INSTANCE_STATES.has(inst.state)) {
      progress.finish();
      finalLines(ctx, inst, t0);
      return inst.state === "SUCCESS" ? EXIT.ok : EXIT.error;
    }
    // Nothing moves until someone resumes it: say so once, not on every poll.
    if (inst.state === "PAUSED" && !paused) {
      progress.finish();
      ctx.out(`PAUSED: waiting until \`shoal resume ${id}\``);
    }
    paused = inst.state === "PAUSED";
    const left = deadline - Date.now();
    if (left <= 0) {
      progress.finish();
      throw new CliError(
        `timed out after ${opts.timeoutSeconds}s waiting for instance ${id} ` +
          timeoutTail(id, inst.state, previousRound),
      );
    }
    await sleep(Math.min(POLL_INTERVAL_MS, left));
  }
}

/**
 * What a timed-out wait leaves behind, by the instance's state: `(state RUNNING); it keeps
 * running (stop it with: shoal stop ID)`, `(state PAUSED); it stays paused (resume it with: …)`.
 */
function timeoutTail(id: string, state: string, previousRound: boolean): string {
  if (previousRound) {
    return `(state ${state}, the new run not started yet); it starts when the dispatcher takes it (stop it with: shoal stop ${id})`;
  }
  switch (state) {
    case "PAUSED":
      return `(state PAUSED); it stays paused (resume it with: shoal resume ${id}, or stop it with: shoal stop ${id})`;
    case "PAUSING":
      return `(state PAUSING); its running tasks finish, then it stays paused (resume it with: shoal resume ${id})`;
    case "STOPPING":
      return `(state STOPPING); its running tasks are being killed`;
    default:
      return `(state ${state}); it keeps running (stop it with: shoal stop ${id})`;
  }
}

/**
 * `SUCCESS in 12.3s`, the instance's own error (`reason: the workflow timed out after 2s`),
 * then the failed tasks (or, in a SUCCESS, the failures CONDITIONS handled).
 */
function finalLines(ctx: CliContext, inst: Instance, t0: number): void {
  // Prefer the server's clock; fall back to ours if it has no times yet.
  const took = inst.endedAt ? durationBetween(inst.startedAt ?? inst.createdAt, inst.endedAt) : "-";
  ctx.out(`${inst.state} in ${took === "-" ? formatDuration(Date.now() - t0) : took}`);
  if (inst.error) ctx.out(`reason: ${inst.error}`);
  const failed = (inst.tasks ?? []).filter((t) => t.state === "FAILURE" || t.state === "KILLED");
  if (failed.length === 0) return;
  const codes = failed.map((t) => t.code).join(", ");
  // In a SUCCESS instance a failed task's failure was handled (a CONDITIONS task took its
  // failedNext branch): name it as such, not as the reason of a failure.
  const label = inst.state === "SUCCESS" ? "failures handled by CONDITIONS" : "failed tasks";
  ctx.out(`${label}: ${codes} (see: shoal logs ${inst.instanceId} <task>)`);
}
