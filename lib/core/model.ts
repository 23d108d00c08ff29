/**
 * Shoal's domain model: workflow definitions, instances, task instances and commands.
 * Names follow DolphinScheduler's vocabulary; docs/glossary.md defines each term.
 * Times are epoch milliseconds inside the engine and ISO-8601 UTC strings on the API.
 */
import type { AlertRule } from "./alert-rules.js";
import type { Dependence } from "./dependent.js";

export type { Dependence };

/** Priority of a workflow or task, highest first (DolphinScheduler's `Priority` enum). */
export const PRIORITIES = ["HIGHEST", "HIGH", "MEDIUM", "LOW", "LOWEST"] as const;
export type Priority = (typeof PRIORITIES)[number];

/** What happens to the rest of the DAG after a task fails for good (DolphinScheduler `FailureStrategy`). */
export const FAILURE_STRATEGIES = ["END", "CONTINUE"] as const;
export type FailureStrategy = (typeof FAILURE_STRATEGIES)[number];

/** Which tasks a run covers when `startTasks` is given (DolphinScheduler `TaskDependType`). */
export const TASK_SCOPES = ["DOWNSTREAM", "ONLY", "UPSTREAM"] as const;
export type TaskScope = (typeof TASK_SCOPES)[number];

export const TIMEOUT_STRATEGIES = ["WARN", "FAIL"] as const;
export type TimeoutStrategy = (typeof TIMEOUT_STRATEGIES)[number];

/**
 * Task types. SHELL, HTTP, LAMBDA and STEP_FUNCTIONS run on a worker; CONDITIONS, SWITCH,
 * SUB_WORKFLOW and DEPENDENT are logic tasks the dispatcher decides itself (DolphinScheduler runs
 * them in the master too).
 */
export const TASK_TYPES = [
  "SHELL",
  "HTTP",
  "LAMBDA",
  "STEP_FUNCTIONS",
  "CONDITIONS",
  "SWITCH",
  "SUB_WORKFLOW",
  "DEPENDENT",
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

/** Task types the dispatcher runs itself (no worker, no queue). */
export const LOGIC_TASK_TYPES = ["CONDITIONS", "SWITCH", "SUB_WORKFLOW", "DEPENDENT"] as const;
export type LogicTaskType = (typeof LOGIC_TASK_TYPES)[number];

/** True for CONDITIONS, SWITCH, SUB_WORKFLOW and DEPENDENT. */
export function isLogicTaskType(t: TaskType): t is LogicTaskType {
  return (LOGIC_TASK_TYPES as readonly string[]).includes(t);
}

/** Task types a worker runs: sent through the task queues of their worker group. */
export const WORKER_TASK_TYPES = ["SHELL", "HTTP", "LAMBDA", "STEP_FUNCTIONS"] as const;
export type WorkerTaskType = (typeof WORKER_TASK_TYPES)[number];

/** True for SHELL, HTTP, LAMBDA and STEP_FUNCTIONS (the complement of `isLogicTaskType`). */
export function isWorkerTaskType(t: TaskType): t is WorkerTaskType {
  return (WORKER_TASK_TYPES as readonly string[]).includes(t);
}

export const RELEASE_STATES = ["ONLINE", "OFFLINE"] as const;
export type ReleaseState = (typeof RELEASE_STATES)[number];

/** Workflow instance states (docs/api.md "States"). Terminal: STOPPED, SUCCESS, FAILURE. */
export const INSTANCE_STATES = [
  "SUBMITTED",
  "RUNNING",
  "PAUSING",
  "PAUSED",
  "STOPPING",
  "STOPPED",
  "SUCCESS",
  "FAILURE",
] as const;
export type InstanceState = (typeof INSTANCE_STATES)[number];

/** Task instance states (docs/api.md "States"). One task instance exists per attempt. */
export const TASK_STATES = [
  "SUBMITTED",
  "DISPATCHED",
  "RUNNING",
  "SUCCESS",
  "FAILURE",
  "KILLED",
  "PAUSED",
  "NEED_FAULT_TOLERANCE",
  "FORCED_SUCCESS",
  "SKIPPED",
] as const;
export type TaskState = (typeof TASK_STATES)[number];

/**
 * Command types (docs/glossary.md, "command"). START_FROM_TASK and RECOVER_FAULT_TOLERANCE are
 * never written: a run from given tasks is a START_WORKFLOW with `startTasks`, and failover is
 * decided per task attempt (docs/architecture.md §7).
 */
export const COMMAND_TYPES = [
  "START_WORKFLOW",
  "START_FROM_TASK",
  "RECOVER_FAILED",
  "RERUN",
  "PAUSE",
  "RESUME",
  "STOP",
  "BACKFILL",
  "SCHEDULED",
  "RECOVER_FAULT_TOLERANCE",
] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

interface TaskDefinitionBase {
  /** Unique within the workflow; same pattern as workflow names. */
  code: string;
  /** Codes of tasks that must finish successfully first. */
  upstream: string[];
  priority: Priority;
  /** Further attempts after a failure (0..100). */
  retries: number;
  /** Delay before a retry, seconds. */
  retryIntervalSeconds: number;
  /** FIXED (default) or EXPONENTIAL: the interval doubles with each retry. */
  retryBackoff: "FIXED" | "EXPONENTIAL";
  /** Cap of an EXPONENTIAL interval, seconds. */
  maxRetryIntervalSeconds?: number;
  /** Wall-clock limit of one attempt, seconds. */
  timeoutSeconds?: number;
  timeoutStrategy: TimeoutStrategy;
  workerGroup: string;
  /** Local parameters, string values. */
  params: Record<string, string>;
  /** Task group (concurrency limit shared across workflows) whose slot the task needs to run. */
  taskGroup?: string;
  /** Order among tasks waiting for the same task group, 0..100, higher first (DolphinScheduler). */
  taskGroupPriority: number;
  /** The name people read (any text), beside `code`; ≤ 200 characters, one line. */
  displayName?: string;
  description?: string;
}

/** A SHELL task: `command` runs under `/bin/sh -c` in a fresh working directory. */
export interface ShellTaskDefinition extends TaskDefinitionBase {
  type: "SHELL";
  command: string;
  /**
   * Secrets exposed to the command as environment variables: variable name → secret name
   * (lib/core/secret-references.ts). Resolved by the worker at run time; only the names are stored.
   */
  secrets?: Record<string, string>;
}

/** An HTTP task: success when the status lies in the inclusive `expectStatus` range. */
export interface HttpTaskDefinition extends TaskDefinitionBase {
  type: "HTTP";
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  expectStatus: [number, number];
  /** OUT parameters taken from the JSON response: name → JSON path (`$.data.id`). */
  outputs: Record<string, string>;
}

/**
 * A LAMBDA task: one synchronous invocation (`RequestResponse`) of an AWS Lambda function. The
 * attempt fails when the function reports `FunctionError` or the call fails (AWS Lambda API
 * reference, "Invoke"). `payload` is a JSON text once its parameters are substituted
 * (lib/tasks/substitute.ts); limits are in lib/core/validate-tasks.ts.
 */
export interface LambdaTaskDefinition extends TaskDefinitionBase {
  type: "LAMBDA";
  /** Name, `name:alias`, partial or full ARN (AWS's `FunctionName`, ≤ 170 characters). */
  functionName: string;
  /** JSON event for the function, with `${name}` and `$[…]` references. */
  payload: string;
  /** Version or alias (AWS's `Qualifier`). */
  qualifier?: string;
  /** OUT parameters taken from the function's JSON response: name → JSON path (`$.id`). */
  outputs: Record<string, string>;
}

/**
 * A STEP_FUNCTIONS task: starts an execution of a (Standard) state machine and polls it until it
 * ends; SUCCEEDED is success, FAILED, TIMED_OUT and ABORTED are failures (AWS Step Functions API
 * reference, "StartExecution", "DescribeExecution"). Stopping the task stops the execution.
 */
export interface StepFunctionsTaskDefinition extends TaskDefinitionBase {
  type: "STEP_FUNCTIONS";
  stateMachineArn: string;
  /** JSON input of the execution, with `${name}` and `$[…]` references (AWS's default: `{}`). */
  input?: string;
  /**
   * Execution name, with `${name}` and `$[…]` references. When unset, a name derived from the
   * instance, task code and attempt, so a redelivered attempt finds its own execution.
   */
  executionName?: string;
  /** OUT parameters taken from the execution's JSON output: name → JSON path. */
  outputs: Record<string, string>;
  /** Longest wait between two DescribeExecution calls, seconds (1..300). */
  pollIntervalSeconds: number;
}

/**
 * CONDITIONS: once every upstream task has finished (whatever its result), follows
 * `successNext` when all of them succeeded and `failedNext` otherwise; the branch not taken is
 * SKIPPED, and so is what only it leads to. A failure an upstream CONDITIONS task handles does
 * not fail the instance (DolphinScheduler's conditions node).
 */
export interface ConditionsTaskDefinition extends TaskDefinitionBase {
  type: "CONDITIONS";
  successNext: string[];
  failedNext: string[];
}

/** One SWITCH case: a CEL expression over the task's parameters and the task it leads to. */
export interface SwitchCase {
  condition: string;
  next: string;
}

/** SWITCH: follows the first case whose condition is true, else `defaultNext`; the rest is SKIPPED. */
export interface SwitchTaskDefinition extends TaskDefinitionBase {
  type: "SWITCH";
  cases: SwitchCase[];
  defaultNext?: string;
}

/** SUB_WORKFLOW: runs an instance of another workflow (its latest version) and mirrors its result. */
export interface SubWorkflowTaskDefinition extends TaskDefinitionBase {
  type: "SUB_WORKFLOW";
  workflow: string;
}

/** DEPENDENT: waits until other workflows' instances of the same date/hour cycle succeeded. */
export interface DependentTaskDefinition extends TaskDefinitionBase {
  type: "DEPENDENT";
  dependence: Dependence;
  /** How often the dependence is checked again while it waits, seconds. */
  checkIntervalSeconds: number;
}

export type TaskDefinition =
  | ShellTaskDefinition
  | HttpTaskDefinition
  | LambdaTaskDefinition
  | StepFunctionsTaskDefinition
  | ConditionsTaskDefinition
  | SwitchTaskDefinition
  | SubWorkflowTaskDefinition
  | DependentTaskDefinition;

/** Task definitions a worker runs. */
export type WorkerTaskDefinition =
  | ShellTaskDefinition
  | HttpTaskDefinition
  | LambdaTaskDefinition
  | StepFunctionsTaskDefinition;

/**
 * A workflow definition as stored (defaults applied). The API body it comes from is
 * docs/api.md "WorkflowDefinition".
 */
export interface WorkflowDefinition {
  /** The name people read (any text), beside the workflow's ASCII name; ≤ 200 characters, one line. */
  displayName?: string;
  description?: string;
  releaseState?: ReleaseState;
  priority: Priority;
  failureStrategy: FailureStrategy;
  /** Limit for the whole instance, seconds. */
  timeoutSeconds?: number;
  /**
   * IANA time zone of the built-in time parameters (`$[yyyyMMdd]`, `system.biz.date`) and of
   * DEPENDENT date periods in runs that no schedule or backfill started (those use their own
   * zone); absent: UTC.
   */
  timezone?: string;
  params: Record<string, string>;
  tasks: TaskDefinition[];
  /** Which ends of its instances are sent to which alert channels (lib/core/alert-rules.ts). */
  alerts?: AlertRule[];
}

/** Body of `POST /v1/workflows/{name}/runs` after defaults. */
export interface RunRequest {
  params: Record<string, string>;
  priority?: Priority;
  startTasks?: string[];
  taskScope: TaskScope;
  failureStrategy?: FailureStrategy;
  dryRun: boolean;
  idempotencyKey?: string;
  /** Worker group for the run's tasks that use "default" (DolphinScheduler's run-time worker group). */
  workerGroup?: string;
}

/** Where a sub-workflow instance reports its result: the parent's SUB_WORKFLOW task attempt. */
export interface ParentLink {
  instanceId: string;
  code: string;
  attempt: number;
}

/** True for instance states that never change again. */
export function isFinalInstanceState(state: InstanceState): boolean {
  return state === "STOPPED" || state === "SUCCESS" || state === "FAILURE";
}

/** True for task states in which an attempt is over. */
export function isFinalTaskState(state: TaskState): boolean {
  return (
    state === "SUCCESS" ||
    state === "FAILURE" ||
    state === "KILLED" ||
    state === "FORCED_SUCCESS" ||
    state === "SKIPPED" ||
    state === "NEED_FAULT_TOLERANCE"
  );
}
