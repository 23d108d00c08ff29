/**
 * Backfills (DolphinScheduler's complement data) move on here: runs of their nominal times start
 * up to the parallelism, ended runs are counted, and the backfill ends when every nominal time
 * ran. Moved on when one of its runs ends (lib/engine/finished-runs.ts), by the API after a
 * change, and by the schedule sweeper as a safety net.
 */
import { deterministicId } from "../core/ids.js";
import { isFinalInstanceState, type Priority, type RunRequest } from "../core/model.js";
import type { BackfillRecord } from "../store/backfills.js";
import { submitRun } from "./commands.js";
import type { RunDeps } from "./scheduling-deps.js";

/** LOW: backfills yield to live runs (DolphinScheduler gives complement data no priority boost). */
export const DEFAULT_BACKFILL_PRIORITY: Priority = "LOW";

/** The instance id of one nominal time of a backfill. */
export function backfillInstanceId(backfillId: string, nominalTime: number): string {
  return deterministicId(`backfill\u0000${backfillId}\u0000${nominalTime}`);
}

/** A backfill's run request for one nominal time. */
function backfillRun(b: BackfillRecord): RunRequest {
  return {
    params: b.params,
    priority: b.priority,
    ...(b.failureStrategy ? { failureStrategy: b.failureStrategy } : {}),
    taskScope: "DOWNSTREAM",
    dryRun: false,
  };
}

/**
 * Moves one backfill on: counts the runs that ended, starts the next nominal times up to its
 * parallelism (SERIAL: one at a time), and ends it when every nominal time ran. Each nominal
 * time's run has a deterministic id, so a repeated step starts nothing twice.
 */
export async function advanceBackfill(deps: RunDeps, id: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const b = await deps.backfills.getBackfill(id);
    if (!b || (b.state !== "RUNNING" && b.state !== "PAUSED" && b.state !== "CANCELLED")) return;
    let { done, failed } = b;
    const running: string[] = [];
    for (const instanceId of b.running) {
      const inst = await deps.store.getInstance(instanceId);
      if (inst && isFinalInstanceState(inst.state)) {
        if (inst.state === "SUCCESS") done++;
        else failed++;
      } else running.push(instanceId);
    }
    let next = b.next;
    const started: Array<[string, number]> = [];
    if (b.state === "RUNNING") {
      const limit = b.mode === "SERIAL" ? 1 : Math.max(1, b.parallelism);
      while (running.length + started.length < limit && next < b.nominalTimes.length) {
        const nominal = b.nominalTimes[next] as number;
        started.push([backfillInstanceId(b.id, nominal), nominal]);
        next++;
      }
    }
    const nowRunning = [...running, ...started.map(([i]) => i)];
    let state: BackfillRecord["state"] = b.state;
    if (nowRunning.length === 0 && (next >= b.nominalTimes.length || b.state === "CANCELLED")) {
      if (b.state !== "CANCELLED") state = failed > 0 ? "FAILURE" : "SUCCESS";
    }
    const unchanged =
      state === b.state &&
      next === b.next &&
      done === b.done &&
      failed === b.failed &&
      nowRunning.length === b.running.length;
    if (unchanged) return;
    // Runs first (idempotent), then the record that counts them. A run that cannot start (the
    // workflow went OFFLINE or was deleted) counts as failed instead of waiting for ever.
    for (const [instanceId, nominal] of started) {
      const r = await submitRun(deps, instanceId, b.workflow, backfillRun(b), {
        commandType: "BACKFILL",
        scheduleTime: nominal,
        ...(b.timezone ? { timezone: b.timezone } : {}),
        backfillId: b.id,
      });
      if (r !== "started") {
        nowRunning.splice(nowRunning.indexOf(instanceId), 1);
        failed++;
      }
    }
    if (nowRunning.length === 0 && next >= b.nominalTimes.length && state === "RUNNING") {
      state = failed > 0 ? "FAILURE" : "SUCCESS";
    }
    const updated: BackfillRecord = {
      ...b,
      state,
      next,
      done,
      failed,
      running: nowRunning,
      updatedAt: deps.now(),
      rev: b.rev + 1,
    };
    if (await deps.backfills.updateBackfill(updated)) return;
  }
}

/** Moves every active backfill on (the sweeper's safety net; instance ends do it at once). */
export async function advanceBackfills(deps: RunDeps): Promise<void> {
  const active = await deps.backfills.listActiveBackfills(100);
  for (const b of active) {
    try {
      await advanceBackfill(deps, b.id);
    } catch (e) {
      deps.log?.("sweeper: backfill not advanced", { backfillId: b.id, error: String(e) });
    }
  }
}
