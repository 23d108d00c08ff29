/** What an instance's end moves on besides its parent: its serial schedule and its backfill. */
import type { InstanceRecord } from "../store/records.js";
import { advanceBackfill } from "./backfill-progress.js";
import { startNextQueued } from "./schedule-runs.js";
import type { RunDeps } from "./scheduling-deps.js";

/** The dispatcher's hook when an instance ends: serial schedules and backfills move on. */
export async function onRunFinished(deps: RunDeps, inst: InstanceRecord): Promise<void> {
  if (inst.scheduleId) {
    const s = await deps.schedules.getSchedule(inst.scheduleId);
    if (s && s.activeInstanceId === inst.instanceId) await startNextQueued(deps, s);
  }
  if (inst.backfillId) await advanceBackfill(deps, inst.backfillId);
}
