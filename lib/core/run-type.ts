/**
 * What started a workflow instance, as instance lists show it (`runType`): the names
 * DolphinScheduler and Airflow users know. DolphinScheduler's instance list has a "run type"
 * column (start process, scheduler, complement data, …) and Airflow's DagRun a `run_type`
 * (`manual`, `scheduled`, `backfill`, `asset_triggered`); a sub-workflow instance is
 * DolphinScheduler's sub-process instance. Decided once, when the instance is first written: a
 * rerun or recover-failed changes the instance's `commandType` but not what started it.
 */
import type { CommandType, ParentLink } from "./model.js";

/**
 * - `MANUAL`: `POST /v1/workflows/{name}/runs` (the CLI's `shoal run`, the console's Run button).
 * - `SCHEDULE`: fired by a schedule.
 * - `BACKFILL`: started by a backfill (DolphinScheduler's complement data).
 * - `TRIGGER`: started by an event that matched a trigger.
 * - `SUB_WORKFLOW`: started by a SUB_WORKFLOW task of a parent instance.
 */
export const RUN_TYPES = ["MANUAL", "SCHEDULE", "BACKFILL", "TRIGGER", "SUB_WORKFLOW"] as const;
export type RunType = (typeof RUN_TYPES)[number];

/** The parts of a start command (or an instance record) that say what started the run. */
export interface RunOriginRef {
  /** The command type of the start (START_WORKFLOW, SCHEDULED, BACKFILL). */
  type?: CommandType;
  scheduleId?: string;
  backfillId?: string;
  triggerId?: string;
  parent?: ParentLink;
}

/**
 * The run type of an instance started by `origin`. A parent link wins (a sub-workflow started
 * by a backfilled parent is still a sub-workflow), then the backfill, schedule and trigger ids,
 * then the command type; anything else was started by hand.
 */
export function runTypeOf(origin: RunOriginRef): RunType {
  if (origin.parent) return "SUB_WORKFLOW";
  if (origin.backfillId || origin.type === "BACKFILL") return "BACKFILL";
  if (origin.scheduleId || origin.type === "SCHEDULED") return "SCHEDULE";
  if (origin.triggerId) return "TRIGGER";
  return "MANUAL";
}
