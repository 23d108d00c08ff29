/**
 * Schemas of the trigger and event endpoints (lib/api/triggers.ts, events.ts): request bodies
 * from their zod validators; answers as triggerView, putEvents and recentEvents build them.
 */
import { eventsSchema, triggerSchema } from "../triggers.js";
import {
  described,
  enumOf,
  fieldsOf,
  int,
  iso,
  type JsonSchema,
  object,
  ref,
  schemaOf,
  str,
} from "./common.js";

const TRIGGER_REQUIRED = [
  "id",
  "workflow",
  "eventPattern",
  "params",
  "debounceSeconds",
  "state",
  "createdAt",
  "refusedRuns",
  "loopStops",
];

const triggerFields = (): Record<string, JsonSchema> => ({
  id: str,
  ...fieldsOf(triggerSchema),
  state: enumOf(["ONLINE", "OFFLINE"], "OFFLINE: matching events start nothing"),
  createdAt: iso,
  lastFiredAt: described(iso, "when a matching event last started a run"),
  refusedRuns: described(int, "runs refused over the rate limit (runs a minute), in all"),
  lastRefusedAt: described(iso, "when a run was last refused over the rate limit"),
  loopStops: described(int, "runs not started to cut a trigger loop off, in all"),
  lastLoopStop: described(
    object(
      {
        at: iso,
        reason: enumOf(
          ["DEPTH", "RUNS_PER_EVENT"],
          "DEPTH: the run would have been deeper than the limit; RUNS_PER_EVENT: its originating event led to the most runs allowed",
        ),
        limit: int,
        depth: described(int, "how deep the run would have been"),
        eventId: described(str, "the event that would have started it"),
        originEventId: described(str, "the first event of the chain"),
        chain: described(
          { type: "array", items: str },
          "the instances whose events led here, oldest first",
        ),
      },
      ["at", "reason", "limit", "depth", "eventId", "originEventId", "chain"],
    ),
    "the last loop stop (docs/events.md)",
  ),
});

const trigger = (): JsonSchema =>
  object(triggerFields(), TRIGGER_REQUIRED, {
    description:
      "events matching eventPattern start a run of workflow; refusedRuns and loopStops count what its limits refused",
  });

/** Component schemas of the trigger and event endpoints, by name. */
export function eventSchemas(): Record<string, JsonSchema> {
  return {
    TriggerBody: schemaOf(triggerSchema),
    Trigger: trigger(),
    TriggerCreated: object(
      {
        ...triggerFields(),
        warnings: described(
          {
            type: "array",
            items: object({ path: str, message: str }, ["path", "message"]),
          },
          "the pattern can match the events of the runs this trigger starts (a loop the limits cut off)",
        ),
      },
      TRIGGER_REQUIRED,
      { description: "the Trigger created, with warnings about its pattern" },
    ),
    TriggerOutcome: object(
      {
        triggerId: str,
        instanceId: described(str, "the run the event started"),
        skipped: described(str, "why it started none"),
      },
      ["triggerId"],
      { description: "what one event did to one matching trigger: a run started, or why not" },
    ),
    PutEventsBody: schemaOf(eventsSchema),
    PutEventsResult: object(
      {
        FailedEntryCount: { type: "integer" },
        Entries: {
          type: "array",
          items: object({
            EventId: str,
            Triggers: { type: "array", items: ref("TriggerOutcome") },
            ErrorCode: str,
            ErrorMessage: str,
          }),
        },
      },
      ["FailedEntryCount", "Entries"],
      {
        description:
          "PutEvents' answer plus, per entry, the triggers it matched; a failed entry has ErrorCode and ErrorMessage instead of EventId",
      },
    ),
    RecentEvents: object(
      {
        items: {
          type: "array",
          items: {
            type: "object",
            additionalProperties: true,
            description:
              "an EventBridge envelope (id, source, detail-type, time, detail…); docs/events.md has the detail schemas",
          },
        },
      },
      ["items"],
    ),
  };
}
