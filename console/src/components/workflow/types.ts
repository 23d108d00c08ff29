/** The API's answers the workflow pages read, from the generated OpenAPI types (never copied). */
export type {
  InstanceSummary,
  RunRequest,
  RunStarted,
  Schedule,
  TaskDefinition,
  Trigger,
  WorkflowDetail,
  WorkflowListItem,
} from "../../../../lib/cli/api-types.generated";
