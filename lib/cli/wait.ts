/**
 * Waiting for a workflow instance to finish, with the live progress line: the one loop behind
 * `run --wait`, `rerun|recover-failed|resume --wait` and `shoal wait`. Exit codes: 0 only when the
 * instance ends SUCCESS, 1 for FAILURE or STOPPED and when the wait times out.
 */
import { type Instance, TERMINAL_INSTANCE_STATES } from "./api-types.js";
import { type CliContext, POLL_INTERVAL_MS, sleep } from "./context.js";
import { CliError, EXIT } from "./errors.js";
import { durationBetween, formatDuration } from "./format.js";
import { seg } from "./http.js";
import { ProgressWriter, progressLine } from "./progress.js";

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
 * or STOPPED (a PAUSED instance may be resumed, so the wait goes on). Then prints `STATE in
 * <duration>` and, when tasks failed, their codes.
 * @returns the exit code: 0 only for SUCCESS.
 * @throws CliError when `timeoutSeconds` pass first, or the API fails (ApiError, e.g. 404).
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
    const left = deadline - Date.now();
    if (left <= 0) {
      progress.finish();
      const state = previousRound ? `${inst.state}, the new run not started yet` : inst.state;
      throw new CliError(
        `timed out after ${opts.timeoutSeconds}s waiting for instance ${id} (state ${state}); ` +
          `it keeps running (stop it with: shoal stop ${id})`,
      );
    }
    await sleep(Math.min(POLL_INTERVAL_MS, left));
  }
}

/** `SUCCESS in 12.3s`, then the failed tasks (or, in a SUCCESS, the failures CONDITIONS handled). */
function finalLines(ctx: CliContext, inst: Instance, t0: number): void {
  // Prefer the server's clock; fall back to ours if it has no times yet.
  const took = inst.endedAt ? durationBetween(inst.startedAt ?? inst.createdAt, inst.endedAt) : "-";
  ctx.out(`${inst.state} in ${took === "-" ? formatDuration(Date.now() - t0) : took}`);
  const failed = (inst.tasks ?? []).filter((t) => t.state === "FAILURE" || t.state === "KILLED");
  if (failed.length === 0) return;
  const codes = failed.map((t) => t.code).join(", ");
  // In a SUCCESS instance a failed task's failure was handled (a CONDITIONS task took its
  // failedNext branch): name it as such, not as the reason of a failure.
  const label = inst.state === "SUCCESS" ? "failures handled by CONDITIONS" : "failed tasks";
  ctx.out(`${label}: ${codes} (see: shoal logs ${inst.instanceId} <task>)`);
}
