/**
 * Schemas of the trigger and event endpoints (lib/api/triggers.ts, events.ts): request bodies
 * from their zod validators; answers as triggerView, putEvents and recentEvents build them.
 */
import { eventsSchema, triggerSchema } from "../triggers.js";
import { described, fieldsOf, iso, type JsonSchema, object, ref, schemaOf, str } from "./common.js";

const trigger = (): JsonSchema =>
  object(
    {
      id: str,
      ...fieldsOf(triggerSchema),
      createdAt: iso,
      lastFiredAt: described(iso, "when a matching event last started a run"),
    },
    ["id", "workflow", "eventPattern", "params", "debounceSeconds", "createdAt"],
    { description: "events matching eventPattern start a run of workflow" },
  );

/** Component schemas of the trigger and event endpoints, by name. */
export function eventSchemas(): Record<string, JsonSchema> {
  return {
    TriggerBody: schemaOf(triggerSchema),
    Trigger: trigger(),
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
