/**
 * The response and body shapes the task-group, trigger and event pages use: the types generated
 * from the API's OpenAPI document (lib/cli/api-types.generated.ts), never copied by hand.
 */
export type {
  PutEventsBody,
  PutEventsResult,
  RecentEvents,
  TaskGroup,
  TaskGroupBody,
  Trigger,
  TriggerBody,
  TriggerCreated,
  TriggerOutcome,
} from "../../../../lib/cli/api-types.generated";
