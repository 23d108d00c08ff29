/**
 * Hints for unknown fields of a workflow definition: the Shoal field a DolphinScheduler or
 * Airflow field stands for (`failRetryTimes` → `retries`, `bash_command` → `command`), the task
 * type a field belongs to, or the Shoal field a misspelt one is closest to (`retrys` →
 * `retries`). Pure; validate.ts appends the hint to "unknown field 'x'".
 *
 * Where the foreign names come from:
 * - DolphinScheduler 2.x/3.x task definitions: the `TaskDefinition` entity
 *   (dolphinscheduler-dao/.../dao/entity/TaskDefinition.java: `name`, `taskType`, `taskParams`,
 *   `taskPriority`, `workerGroup`, `environmentCode`, `failRetryTimes`, `failRetryInterval`,
 *   `timeoutFlag`, `timeoutNotifyStrategy`, `timeout` "unit: minute", `delayTime`,
 *   `taskGroupId`, `taskGroupPriority`, `version`, `isCache`, `cpuQuota`, `memoryMax`,
 *   `taskExecuteType`, `projectCode`); `taskParams` holds `rawScript`, `localParams`,
 *   `resourceList`. Units: docs/docs/en/guide/task/appendix.md and the task pages ("Failed
 *   retry interval: … (unit minute)", "Delayed execution time … in minutes").
 * - DolphinScheduler workflow (process) definitions: `ProcessDefinitionController`
 *   create/update parameters (`name`, `description`, `globalParams`, `locations`, `timeout`,
 *   `tenantCode`, `taskRelationJson`, `taskDefinitionJson`, `executionType`) and the
 *   `ProcessDefinition` entity (`projectCode`, `version`). Task types: the `TaskType` names
 *   (SUB_PROCESS, renamed SUB_WORKFLOW in 3.3 by pull request #16544; PYTHON).
 * - DolphinScheduler 1.x process JSON (docs "task-structure"): `tasks[].preTasks`,
 *   `maxRetryTimes`, `retryInterval` (minutes), `taskInstancePriority`, `runFlag`, `params`
 *   with `rawScript`, `conditionResult`.
 * - Airflow: `BaseOperator` parameters (airflow.models.baseoperator: `task_id`, `retries`,
 *   `retry_delay`, `retry_exponential_backoff`, `max_retry_delay`, `execution_timeout`, `pool`,
 *   `priority_weight`, `queue`, `trigger_rule`, `depends_on_past`, `doc_md`), `BashOperator`
 *   (`bash_command`, `env`), `PythonOperator` (`python_callable`), and `DAG` (`dag_id`,
 *   `default_args`, `schedule_interval`, `schedule`, `start_date`, `catchup`, `dagrun_timeout`).
 *   YAML DAG generators (dag-factory) name a task's operator class `operator` and its upstream
 *   tasks `dependencies`; `depends_on` is how hand-written conversions (and docker-compose
 *   habits) spell the same list.
 */
import { closestName } from "./closest-name.js";

/** Where in a workflow definition an unknown field stands. */
export type FieldLevel = "workflow" | "task";

/** What is known about the place of an unknown field. */
export interface FieldContext {
  level: FieldLevel;
  /** Shoal's fields at this place (for a task: those of its type, or of every type). */
  fields: readonly string[];
  /** The task's type, when it is a known one. */
  type?: string;
  /** For a task of a known type: field → the other task types that have it. */
  fieldTypes?: ReadonlyMap<string, readonly string[]>;
}

type Origin = "DolphinScheduler" | "Airflow";

/**
 * A foreign field: the Shoal field it maps to (if any) and what to say about it. Without `from`,
 * a field of Shoal's answers that a body cannot set.
 */
interface ForeignField {
  from?: Origin;
  shoal?: string;
  note?: string;
}

const DS = "DolphinScheduler" as const;
const AF = "Airflow" as const;
const MINUTES = (name: string) => `DolphinScheduler's ${name} is in minutes, Shoal's in seconds`;
const PARAM_LIST = "a map of name to string value, not DolphinScheduler's list of {prop, value}";
const NAME_IN_PATH =
  "has no Shoal field: the workflow's name is in the path (PUT /v1/workflows/{name}), or a top-level `name` for shoal apply";
const SCHEDULES =
  "has no Shoal field: schedules are separate (POST /v1/schedules, shoal schedule create)";
const NUMBERED =
  "each change of a workflow is a new version of the whole definition, numbered by the API; GET /v1/workflows/{name}?version=N reads one";
const VERSIONS = `has no Shoal field: ${NUMBERED}`;
const RESOURCES =
  "has no Shoal equivalent: a task has the resources of the worker that runs it; pick workers with 'workerGroup'";
const PROJECTS = "has no Shoal equivalent: Shoal has no projects, workflow names are global";
/** dag-factory's `dependencies`, and `depends_on`: a task's list of the tasks before it. */
const UPSTREAM_LIST: ForeignField = {
  from: AF,
  shoal: "upstream",
  note: "the codes of the tasks that run first",
};

/** Foreign task fields (see the module comment for the sources). */
const TASK_FIELDS: Record<string, ForeignField> = {
  // DolphinScheduler
  taskType: { from: DS, shoal: "type" },
  name: { from: DS, shoal: "code" },
  rawScript: { from: DS, shoal: "command" },
  taskParams: {
    from: DS,
    note: "has no Shoal field: its fields go on the task itself (rawScript → command, localParams → params)",
  },
  localParams: { from: DS, shoal: "params", note: PARAM_LIST },
  failRetryTimes: { from: DS, shoal: "retries" },
  maxRetryTimes: { from: DS, shoal: "retries" },
  failRetryInterval: {
    from: DS,
    shoal: "retryIntervalSeconds",
    note: MINUTES("failRetryInterval"),
  },
  retryInterval: { from: DS, shoal: "retryIntervalSeconds", note: MINUTES("retryInterval") },
  preTasks: { from: DS, shoal: "upstream" },
  taskPriority: { from: DS, shoal: "priority" },
  taskInstancePriority: { from: DS, shoal: "priority" },
  timeout: { from: DS, shoal: "timeoutSeconds", note: MINUTES("timeout") },
  timeoutFlag: {
    from: DS,
    note: "has no Shoal field: setting 'timeoutSeconds' turns the timeout on",
  },
  timeoutNotifyStrategy: { from: DS, shoal: "timeoutStrategy", note: "WARN or FAIL" },
  taskGroupId: { from: DS, shoal: "taskGroup", note: "a task group's name, not an id" },
  delayTime: { from: DS, note: "(a delay before the task starts) has no Shoal equivalent" },
  environmentCode: {
    from: DS,
    note: "has no Shoal equivalent: set environment variables with 'params' (a SHELL task's environment holds them)",
  },
  runFlag: { from: DS, note: "has no Shoal equivalent: leave the task out instead" },
  flag: { from: DS, note: "has no Shoal equivalent: leave the task out instead" },
  conditionResult: {
    from: DS,
    shoal: "successNext",
    note: "and 'failedNext', on a CONDITIONS task",
  },
  switchResult: { from: DS, shoal: "cases", note: "and 'defaultNext', on a SWITCH task" },
  processDefinitionCode: {
    from: DS,
    shoal: "workflow",
    note: "a workflow's name, on a SUB_WORKFLOW task",
  },
  // DolphinScheduler 3.3's name of processDefinitionCode (pull request #16544).
  workflowDefinitionCode: {
    from: DS,
    shoal: "workflow",
    note: "a workflow's name, on a SUB_WORKFLOW task",
  },
  version: { from: DS, note: VERSIONS },
  isCache: {
    from: DS,
    note: "has no Shoal equivalent: a task runs on every run of its workflow; a SWITCH or CONDITIONS task can skip it",
  },
  cpuQuota: { from: DS, note: RESOURCES },
  memoryMax: { from: DS, note: RESOURCES },
  taskExecuteType: {
    from: DS,
    note: "(BATCH or STREAM) has no Shoal equivalent: every task is a batch task that ends",
  },
  projectCode: { from: DS, note: PROJECTS },
  // Airflow
  task_id: { from: AF, shoal: "code" },
  bash_command: { from: AF, shoal: "command" },
  retry_delay: { from: AF, shoal: "retryIntervalSeconds", note: "in seconds" },
  retry_exponential_backoff: { from: AF, shoal: "retryBackoff", note: "FIXED or EXPONENTIAL" },
  max_retry_delay: { from: AF, shoal: "maxRetryIntervalSeconds", note: "in seconds" },
  execution_timeout: { from: AF, shoal: "timeoutSeconds", note: "in seconds" },
  pool: {
    from: AF,
    shoal: "taskGroup",
    note: "a task group limits how many tasks run at once, like a pool",
  },
  priority_weight: { from: AF, shoal: "priority", note: "HIGHEST, HIGH, MEDIUM, LOW or LOWEST" },
  queue: { from: AF, shoal: "workerGroup" },
  trigger_rule: {
    from: AF,
    note: "has no Shoal equivalent: a task runs once all its upstream tasks succeed; branch with a CONDITIONS task",
  },
  depends_on_past: {
    from: AF,
    note: "has no Shoal field: a DEPENDENT task waits for another workflow's (or its own) earlier runs",
  },
  doc_md: { from: AF, shoal: "description" },
  env: { from: AF, shoal: "params", note: "a SHELL task's environment holds them" },
  upstream_task_ids: { from: AF, shoal: "upstream" },
  dependencies: UPSTREAM_LIST,
  depends_on: UPSTREAM_LIST,
  operator: {
    from: AF,
    shoal: "type",
    note: "SHELL for a BashOperator, HTTP for an HttpOperator, LAMBDA for a LambdaInvokeFunctionOperator",
  },
  python_callable: {
    from: AF,
    shoal: "command",
    note: "of a SHELL task that runs the Python code as a script (python3 job.py): Shoal has no Python task type and calls no function",
  },
};

/** Foreign workflow fields (see the module comment for the sources). */
const WORKFLOW_FIELDS: Record<string, ForeignField> = {
  // DolphinScheduler
  name: { from: DS, note: NAME_IN_PATH },
  globalParams: { from: DS, shoal: "params", note: PARAM_LIST },
  timeout: { from: DS, shoal: "timeoutSeconds", note: MINUTES("timeout") },
  executionType: {
    from: DS,
    note: "is a schedule's 'overlapPolicy' in Shoal: PARALLEL, SERIAL_WAIT, SERIAL_DISCARD or SERIAL_PRIORITY",
  },
  taskRelationJson: {
    from: DS,
    note: "has no Shoal field: list each task's predecessors in its 'upstream'",
  },
  taskDefinitionJson: { from: DS, shoal: "tasks" },
  tenantCode: { from: DS, note: "has no Shoal equivalent: tasks run as the worker's user" },
  locations: { from: DS, note: "(the canvas layout) has no Shoal equivalent" },
  projectCode: { from: DS, note: PROJECTS },
  // Shoal's own (GET /v1/workflows/{name} answers them), and DolphinScheduler's `version`.
  version: { note: `is read-only: ${NUMBERED}` },
  createdAt: { note: "is read-only: the API sets it when it stores a version" },
  // Airflow
  dag_id: { from: AF, note: NAME_IN_PATH },
  default_args: { from: AF, note: "has no Shoal equivalent: set the fields on each task" },
  schedule_interval: { from: AF, note: SCHEDULES },
  schedule: { from: AF, note: SCHEDULES },
  start_date: { from: AF, note: SCHEDULES },
  catchup: { from: AF, note: SCHEDULES },
  dagrun_timeout: { from: AF, shoal: "timeoutSeconds", note: "in seconds" },
};

/** "HTTP", "HTTP and LAMBDA", "HTTP, LAMBDA and STEP_FUNCTIONS". */
function listTypes(types: readonly string[]): string {
  return types.length <= 1
    ? (types[0] ?? "")
    : `${types.slice(0, -1).join(", ")} and ${types.at(-1)}`;
}

function foreignHint(key: string, level: FieldLevel): string | undefined {
  const table = level === "task" ? TASK_FIELDS : WORKFLOW_FIELDS;
  if (!Object.hasOwn(table, key)) return undefined;
  const f = table[key] as ForeignField;
  if (f.shoal === undefined) {
    const note = f.note ?? "has no Shoal equivalent";
    return f.from ? `${f.from}'s ${key} ${note}` : `${key} ${note}`;
  }
  return `did you mean '${f.shoal}'?${f.note ? ` ${f.note}` : ""}`;
}

/**
 * The hint for an unknown field, or undefined when there is none. In order: a field of
 * another task type ("only HTTP tasks have it; this task is SHELL"), a DolphinScheduler or
 * Airflow field ("did you mean 'retries'?", with the unit when it differs), the Shoal field
 * the name is closest to (closest-name.ts).
 */
export function unknownFieldHint(key: string, ctx: FieldContext): string | undefined {
  const owners = ctx.fieldTypes?.get(key);
  if (owners && ctx.type) {
    return `only ${listTypes(owners)} tasks have it; this task is ${ctx.type}`;
  }
  const foreign = foreignHint(key, ctx.level);
  if (foreign) return foreign;
  const close = closestName(key, ctx.fields);
  if (close) return `did you mean '${close}'?`;
  const elsewhere = ctx.fieldTypes ? closestName(key, ctx.fieldTypes.keys()) : undefined;
  if (elsewhere) {
    return `did you mean '${elsewhere}'? only ${listTypes(ctx.fieldTypes?.get(elsewhere) ?? [])} tasks have it`;
  }
  return undefined;
}

/**
 * DolphinScheduler task types whose Shoal type has another name, or none (DolphinScheduler's
 * `TaskType`: SUB_PROCESS was renamed SUB_WORKFLOW in 3.3).
 */
const FOREIGN_TYPES: Record<string, string> = {
  SUB_PROCESS: "did you mean SUB_WORKFLOW? DolphinScheduler's SUB_PROCESS",
  PYTHON:
    "DolphinScheduler's PYTHON has no Shoal type: run the script from a SHELL task, e.g. python3 script.py",
};

/**
 * The hint for a task `type` that is not one of `types`: the type it is closest to ("did you mean
 * SHELL?" for `SHEL` or `shell`, closest-name.ts) or what a DolphinScheduler type is in Shoal;
 * undefined when `value` is missing, not a string, or like nothing.
 */
export function taskTypeHint(value: unknown, types: readonly string[]): string | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  const upper = value.toUpperCase();
  if (Object.hasOwn(FOREIGN_TYPES, upper)) return FOREIGN_TYPES[upper];
  const close = closestName(value, types);
  return close ? `did you mean ${close}?` : undefined;
}

/** "unknown field 'k'", with its hint in parentheses when there is one. */
export function unknownFieldMessage(key: string, ctx?: FieldContext): string {
  const hint = ctx ? unknownFieldHint(key, ctx) : undefined;
  return `unknown field '${key}'${hint ? ` (${hint})` : ""}`;
}
