/**
 * The package's main entry (`import … from "shoal"`): what a program needs to write, check and
 * generate workflow definitions without a server. The CLI is the `shoal` bin; the CDK construct is
 * `shoal/cdk`; the JSON Schema of a workflow file is `shoal/schemas/workflow.json`.
 */
export type { ErrorDetail } from "./core/errors.js";
export { RequestError } from "./core/errors.js";
export type {
  FailureStrategy,
  Priority,
  ReleaseState,
  TaskDefinition,
  TaskType,
  WorkflowDefinition,
} from "./core/model.js";
export {
  LIMITS,
  NAME_PATTERN,
  parseWorkflowDefinition,
  taskSchema,
  workflowSchema,
} from "./core/validate.js";
export { VERSION } from "./version.js";
