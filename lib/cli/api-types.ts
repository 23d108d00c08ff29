/**
 * The API's bodies under the names the CLI uses: aliases of the types generated from
 * docs/openapi.json (api-types.generated.ts, `npm run openapi`), never written by hand. The
 * generated types name the fields the document lists; the CLI prints what it does not
 * interpret, so fields a newer server adds pass through untouched.
 */
import type {
  Explanation,
  Fire,
  InstanceAction,
  TaskDefinition,
  WorkflowVersion,
} from "./api-types.generated.js";

export type {
  AlertChannels,
  Backfill,
  BackfillDryRun,
  Instance,
  InstanceExplanation,
  InstanceProgress,
  InstanceSummary,
  LogPage,
  PutEventsResult,
  RunStarted,
  Schedule,
  SchedulePreview,
  ScheduleWritten,
  TaskGroup,
  TaskInstance,
  Trigger,
  TriggerCreated,
  TriggerOutcome,
  WorkflowDetail,
  WorkflowSummary,
} from "./api-types.generated.js";

/**
 * A list answer: `items` and, when more exist, `nextToken` (every `page(…)` answer of
 * lib/api/routes; generic here because JSON Schema has no generics).
 */
export interface Page<T> {
  items: T[];
  nextToken?: string;
}

/** Answer of `PUT /v1/workflows/{name}`. */
export type WorkflowWritten = WorkflowVersion;
/** The part of a task definition the CLI reads: its code and the tasks it waits for. */
export type WorkflowTaskRef = Pick<TaskDefinition, "code" | "upstream">;
/** Answer of `POST /v1/instances/{id}/stop` and the other instance actions. */
export type InstanceActionResult = InstanceAction;
/** Why a task is not running (`GET /v1/instances/{id}/tasks/{code}/explain`). */
export type TaskExplanation = Explanation;
/** Item of `GET /v1/schedules/{id}/fires`: what the sweeper decided for one nominal time. */
export type ScheduleFire = Fire;
