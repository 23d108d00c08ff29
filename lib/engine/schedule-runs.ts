/**
 * The runs a schedule starts: their deterministic ids and run requests, and the serial overlap
 * queue (SERIAL_WAIT, SERIAL_PRIORITY) that starts a queued nominal time when the running one
 * ends. The fire loop that decides the fires is lib/engine/schedule-sweeper.ts.
 */
import { nextQueued } from "../core/fire-decisions.js";
import { deterministicId } from "../core/ids.js";
import { isFinalInstanceState, type RunRequest } from "../core/model.js";
import type { ScheduleRecord } from "../store/schedules.js";
import { getStartCommand, submitRun } from "./commands.js";
import type { RunDeps } from "./scheduling-deps.js";

/** The instance id of a schedule's nominal time (the same fire always names the same run). */
export function scheduledInstanceId(scheduleId: string, nominalTime: number): string {
  return deterministicId(`schedule\u0000${scheduleId}\u0000${nominalTime}`);
}

/** A schedule's run request for one nominal time. */
export function scheduleRun(s: ScheduleRecord): RunRequest {
  return {
    params: s.params,
    ...(s.workerGroup ? { workerGroup: s.workerGroup } : {}),
    ...(s.priority ? { priority: s.priority } : {}),
    ...(s.failureStrategy ? { failureStrategy: s.failureStrategy } : {}),
    taskScope: "DOWNSTREAM",
    dryRun: false,
  };
}

/** Whether the schedule's serial run is still unfinished. */
export async function serialBusy(deps: RunDeps, s: ScheduleRecord): Promise<boolean> {
  if (!s.activeInstanceId) return false;
  const inst = await deps.store.getInstance(s.activeInstanceId);
  if (inst) return !isFinalInstanceState(inst.state);
  // Not created yet: busy while its start command waits.
  return (await getStartCommand(deps.store, s.activeInstanceId))?.state === "PENDING";
}

/**
 * A serial schedule's running instance ended: the next queued nominal time starts
 * (SERIAL_WAIT: the oldest, SERIAL_PRIORITY: the newest). Called by the dispatcher when a
 * scheduled instance ends, and by the sweeper as a safety net.
 */
export async function startNextQueued(deps: RunDeps, s0: ScheduleRecord): Promise<void> {
  let s: ScheduleRecord | undefined = s0;
  for (let round = 0; round < 3 && s; round++) {
    if (s.overlapPolicy === "PARALLEL" || !s.queued?.length) return;
    if (await serialBusy(deps, s)) return;
    const nominal = nextQueued(s.overlapPolicy, s.queued);
    if (nominal === undefined) return;
    const instanceId = scheduledInstanceId(s.id, nominal);
    // Ledger first (QUEUED_SERIAL → FIRED), then the run, then the schedule.
    await deps.fires.updateFire(s.id, nominal, "QUEUED_SERIAL", {
      decision: "FIRED",
      instanceId,
      actualTime: deps.now(),
      latenessMs: Math.max(0, deps.now() - nominal),
    });
    const fire = await deps.fires.getFire(s.id, nominal);
    if (fire?.decision === "FIRED" && fire.instanceId === instanceId) {
      await submitRun(deps, instanceId, s.workflow, scheduleRun(s), {
        commandType: "SCHEDULED",
        scheduleTime: nominal,
        timezone: s.timezone,
        scheduleId: s.id,
      });
    }
    const next: ScheduleRecord = {
      ...s,
      queued: s.queued.filter((q) => q !== nominal),
      activeInstanceId: instanceId,
      updatedAt: deps.now(),
      rev: s.rev + 1,
    };
    if (await deps.schedules.updateSchedule(next)) return;
    s = await deps.schedules.getSchedule(s.id);
  }
}
