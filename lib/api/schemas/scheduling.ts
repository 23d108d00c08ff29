/**
 * Schemas of the schedule and backfill endpoints (lib/api/schedules.ts, backfills.ts): request
 * bodies from their zod validators; answers as scheduleView, fireView and backfillView build
 * them, reusing the body's field schemas where an answer echoes them.
 */

import type { FireDecision } from "../../core/fire-decisions.js";
import { PRIORITIES } from "../../core/model.js";
import { BACKFILL_STATES, backfillSchema } from "../backfills.js";
import { scheduleSchema } from "../schedules.js";
import {
  described,
  enumOf,
  fieldsOf,
  int,
  iso,
  type JsonSchema,
  object,
  schemaOf,
  str,
} from "./common.js";

const FIRE_DECISIONS = [
  "FIRED",
  "SKIPPED_MISFIRE",
  "DISCARDED_OVERLAP",
  "QUEUED_SERIAL",
] as const satisfies readonly FireDecision[];

const times: JsonSchema = { type: "array", items: iso };

const schedule = (more: Record<string, JsonSchema> = {}): JsonSchema =>
  object(
    {
      id: str,
      // The body's fields, the times and the state (a default there) overridden in place.
      ...fieldsOf(scheduleSchema),
      at: described(iso, "a one-time schedule's fire time"),
      startTime: iso,
      endTime: iso,
      state: enumOf(["ONLINE", "OFFLINE"]),
      nextFireTime: described(iso, "absent while OFFLINE or once the timing has no further fire"),
      queued: described(times, "SERIAL_*: nominal times waiting for the running instance"),
      createdAt: iso,
      updatedAt: iso,
      ...more,
    },
    [
      "id",
      "workflow",
      "timezone",
      "params",
      "misfirePolicy",
      "misfireThresholdSeconds",
      "maxCatchup",
      "overlapPolicy",
      "state",
      "createdAt",
      "updatedAt",
    ],
    { description: "the body's fields (exactly one of cron, rate, at) and the schedule's state" },
  );

const Backfill = object(
  {
    id: str,
    workflow: str,
    state: enumOf(BACKFILL_STATES),
    mode: enumOf(["SERIAL", "PARALLEL"]),
    parallelism: described(int, "runs at once (1 for SERIAL)"),
    priority: enumOf(PRIORITIES),
    total: described(int, "nominal times"),
    done: int,
    running: int,
    failed: int,
    pending: described(int, "not started yet"),
    timezone: described(
      str,
      "zone of its runs' time parameters (its cron's, or the timezone given with dates); absent: the workflow's",
    ),
    firstTime: described(iso, "the first nominal time, in run order"),
    lastTime: described(iso, "the last nominal time, in run order"),
    createdAt: iso,
    updatedAt: iso,
  },
  [
    "id",
    "workflow",
    "state",
    "mode",
    "parallelism",
    "priority",
    "total",
    "done",
    "running",
    "failed",
    "pending",
    "createdAt",
    "updatedAt",
  ],
  { description: "a backfill's progress; counts are of nominal times" },
);

/** Component schemas of the schedule and backfill endpoints, by name. */
export function schedulingSchemas(): Record<string, JsonSchema> {
  return {
    ScheduleBody: schemaOf(scheduleSchema),
    Schedule: schedule(),
    ScheduleWritten: schedule({
      warnings: described(
        { type: "array", items: object({ path: str, message: str }, ["path", "message"]) },
        "present when an alert rule names a channel the deployment does not configure (stored all the same)",
      ),
    }),
    SchedulePreview: object({ items: described(times, "the next nominal fire times") }, ["items"]),
    Fire: object(
      {
        nominalTime: iso,
        actualTime: iso,
        latenessMs: described(int, "actualTime - nominalTime, ms"),
        decision: enumOf(FIRE_DECISIONS),
        instanceId: described(str, "FIRED: the instance started"),
      },
      ["nominalTime", "actualTime", "latenessMs", "decision"],
    ),
    BackfillBody: schemaOf(backfillSchema),
    Backfill,
    BackfillDryRun: object(
      { nominalTimes: described(times, "the nominal times it would run, in run order") },
      ["nominalTimes"],
    ),
  };
}
