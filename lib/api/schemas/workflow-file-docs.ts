// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} in plain strings is Shoal's parameter syntax, described here
/**
 * The words an editor shows on hover and in completion for each field of a workflow file
 * (workflow-file.ts puts them into the JSON Schema). They summarise docs/api.md
 * "WorkflowDefinition" and docs/workflows.md; limits and patterns are in the schema itself, so
 * the words say what a field does. Keys: `workflow.<path>` for the file's top level,
 * `task.<path>` for every task type, `<TYPE>.<path>` for one type (wins over `task.`); `[]`
 * stands for the items of a list (`cases[].next`).
 */
import type { TaskType } from "../../core/model.js";

/** Description of each task type, shown for the task as a whole. */
export const TASK_TYPE_DOCS: Readonly<Record<TaskType, string>> = {
  SHELL:
    "Runs `command` with /bin/sh -c on a worker, in a fresh empty directory; exit 0 is success.",
  HTTP: "Sends one HTTP request from a worker; a status within `expectStatus` is success.",
  LAMBDA:
    "Invokes an AWS Lambda function from a worker (the worker's role needs lambda:InvokeFunction).",
  STEP_FUNCTIONS:
    "Starts an AWS Step Functions execution (standard workflows) and waits for it to finish.",
  CONDITIONS:
    "Logic task: after its upstream tasks finish, takes `successNext` when all succeeded, else `failedNext`; the other branch is SKIPPED.",
  SWITCH:
    "Logic task: takes the `next` of the first case whose CEL condition is true, else `defaultNext`; the other branches are SKIPPED.",
  SUB_WORKFLOW:
    "Logic task: runs the latest version of another workflow as a child instance and ends as it ends.",
  DEPENDENT:
    "Logic task: waits until instances of other workflows (or their tasks) succeeded in a period, like DolphinScheduler's DEPENDENT.",
};

const PRIORITY =
  "HIGHEST, HIGH, MEDIUM, LOW or LOWEST (DolphinScheduler's priorities). Default MEDIUM.";
const OUTPUTS =
  "OUT parameters taken from the JSON result: parameter name → JSONPath (`orderId: $.data.id`). Later tasks read them as `${name}`.";
const JSON_TEXT =
  "JSON text (a YAML block string is easiest). `${name}` and `$[…]` are replaced; inside a JSON string the value is JSON-escaped.";

/** Field descriptions by key (see the module comment). */
export const FIELD_DOCS: Readonly<Record<string, string>> = {
  "workflow.name":
    "The workflow's name: letters, digits, `_`, `.`, `-` (128 at most). May be left out in a file with one document: the file name is used.",
  "workflow.version":
    "Read-only: printed by `shoal get workflow`; `shoal apply` and `shoal validate` ignore it.",
  "workflow.createdAt":
    "Read-only: printed by `shoal get workflow`; `shoal apply` and `shoal validate` ignore it.",
  "workflow.displayName":
    "The name people read: any text (a DolphinScheduler name, Chinese included), shown by the console and CLI beside `name`.",
  "workflow.description": "Free text shown with the workflow.",
  "workflow.releaseState":
    "ONLINE (schedules and triggers start runs) or OFFLINE. Kept on the workflow, not the version; a new workflow is ONLINE.",
  "workflow.priority": `Instance priority: chooses the task queue tier. ${PRIORITY}`,
  "workflow.failureStrategy":
    "After a task fails for good: END stops starting tasks and kills running ones; CONTINUE lets independent branches go on. The instance ends FAILURE either way.",
  "workflow.timeoutSeconds":
    "Bounds each round of an instance (start, rerun, recover-failed): at the deadline active tasks are killed and the instance ends FAILURE.",
  "workflow.timezone":
    "IANA zone (`Europe/Berlin`) or UTC: zone of the time parameters `$[…]`, DEPENDENT periods, and the default zone of the workflow's schedules. Default UTC.",
  "workflow.params":
    "Global parameters, name → string value, read as `${name}`. Run parameters, task parameters and upstream OUT parameters win over them.",
  "workflow.tasks":
    "The tasks of the DAG: codes unique, `upstream` naming tasks of this list, no cycles.",
  "workflow.alerts":
    "Alert rules: each sends the events it is `on` to its `channels`, channels the deployment's alert configuration names (docs/alerts.md).",
  "workflow.alerts[].on":
    "SUCCESS, FAILURE or STOPPED (an instance ended so), TIMEOUT (the workflow's timeout ran out), TASK_RETRY_EXHAUSTED (a task failed with no retry left), SCHEDULE_MISFIRE (a schedule's fire started no run).",
  "workflow.alerts[].channels":
    "Names of alert channels (webhook, Slack, SNS e-mail) in the deployment's alert configuration.",

  "task.code":
    "The task's name, unique in the workflow: letters, digits, `_`, `.`, `-`. Other tasks name it in `upstream` and branches.",
  "task.type":
    "SHELL, HTTP, LAMBDA, STEP_FUNCTIONS (run by a worker) or CONDITIONS, SWITCH, SUB_WORKFLOW, DEPENDENT (logic tasks).",
  "task.upstream":
    "Codes of the tasks that must finish successfully (or be skipped) before this one starts.",
  "task.priority": `Order among the instance's ready tasks; also ranks task-group waiters. ${PRIORITY}`,
  "task.retries":
    "Further attempts after a failure (0 = none). Logic tasks are retried at once, without the interval.",
  "task.retryIntervalSeconds":
    "Seconds before every retry (FIXED) or before the first (EXPONENTIAL).",
  "task.retryBackoff":
    "FIXED waits `retryIntervalSeconds` before each retry; EXPONENTIAL doubles it with each retry.",
  "task.maxRetryIntervalSeconds": "Caps an EXPONENTIAL retry interval, seconds.",
  "task.timeoutSeconds":
    "Seconds one attempt may take (SHELL: the command; HTTP: the request, 60 s when unset; DEPENDENT: how long it waits).",
  "task.timeoutStrategy":
    "At the timeout: FAIL kills the attempt and fails it (it may retry); WARN lets it run on and marks the attempt with a warning.",
  "task.workerGroup":
    "Worker group whose queues the task goes to. Standalone's built-in worker serves `default`.",
  "task.params":
    "Local parameters, name → string value; they win over the workflow's `params` and upstream OUT parameters.",
  "task.taskGroup":
    "Task group (a concurrency limit shared across workflows) whose slot each attempt needs; created with `shoal task-groups put`.",
  "task.taskGroupPriority": "0..100: higher gets a task-group slot first.",
  "task.displayName": "The name people read: any text, shown by the console and CLI beside `code`.",
  "task.description": "Free text shown with the task.",

  "SHELL.type": TASK_TYPE_DOCS.SHELL,
  "SHELL.command":
    "Shell script run with /bin/sh -c. `${name}` and `$[…]` are replaced (quoted for their place); parameters are also environment variables. A line `${setValue(name=value)}` sets an OUT parameter; `${secret:NAME}` is a secret the worker resolves.",
  "SHELL.secrets":
    "Environment variables the worker sets from secrets at run time: variable → secret name (`prod/db#password`, `ssm:/prod/db/pw`, a Secrets Manager ARN). Values never reach the store, the API or the logs.",

  "HTTP.type": TASK_TYPE_DOCS.HTTP,
  "HTTP.url": "http(s) URL; `${name}`, `$[…]` and `${secret:NAME}` are replaced.",
  "HTTP.method": "GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS. Default GET.",
  "HTTP.headers": "Request headers, name → value; `${name}` in values is replaced.",
  "HTTP.body": "Request body (not sent with GET or HEAD); `${name}` and `$[…]` are replaced.",
  "HTTP.expectStatus": "Inclusive [low, high] range of statuses that count as success.",
  "HTTP.outputs": OUTPUTS,

  "LAMBDA.type": TASK_TYPE_DOCS.LAMBDA,
  "LAMBDA.functionName": "Function name, `name:alias`, or function ARN.",
  "LAMBDA.payload": `The event sent to the function. ${JSON_TEXT}`,
  "LAMBDA.qualifier": "Version or alias to invoke.",
  "LAMBDA.outputs": OUTPUTS,

  "STEP_FUNCTIONS.type": TASK_TYPE_DOCS.STEP_FUNCTIONS,
  "STEP_FUNCTIONS.stateMachineArn": "ARN of a standard state machine (a version or alias ARN too).",
  "STEP_FUNCTIONS.input": `The execution's input. ${JSON_TEXT}`,
  "STEP_FUNCTIONS.executionName":
    "Execution name (after substitution, AWS's name rules). Default shoal-<instanceId>-<code>-<attempt>.",
  "STEP_FUNCTIONS.outputs": OUTPUTS,
  "STEP_FUNCTIONS.pollIntervalSeconds":
    "Longest wait between status checks, seconds: polling starts at 1 s and doubles up to it.",

  "CONDITIONS.type": TASK_TYPE_DOCS.CONDITIONS,
  "CONDITIONS.successNext":
    "Codes taken when every upstream task succeeded (or was skipped). Each must list this task in its `upstream`.",
  "CONDITIONS.failedNext":
    "Codes taken otherwise. Each must list this task in its `upstream`; no code in both lists.",

  "SWITCH.type": TASK_TYPE_DOCS.SWITCH,
  "SWITCH.cases": "Tried in order: the first whose condition is true gives the branch.",
  "SWITCH.cases[].condition":
    "CEL expression over the task's parameters, all strings (`int(rows) > 1000`, `region == 'eu'`).",
  "SWITCH.cases[].next":
    "Code of the task taken when the condition is true; it must list this task in its `upstream`.",
  "SWITCH.defaultNext": "Code taken when no condition is true; without it, that fails the task.",

  "SUB_WORKFLOW.type": TASK_TYPE_DOCS.SUB_WORKFLOW,
  "SUB_WORKFLOW.workflow":
    "Name of another workflow; it must exist when this one is applied and be ONLINE when the task starts. The task's `params` become its startup parameters.",

  "DEPENDENT.type": TASK_TYPE_DOCS.DEPENDENT,
  "DEPENDENT.dependence": "What to wait for: groups of items, combined by `relation`.",
  "DEPENDENT.dependence.relation": "How the groups combine: AND (all) or OR (any). Default AND.",
  "DEPENDENT.dependence.groups": "Groups of items.",
  "DEPENDENT.dependence.groups[].relation":
    "How the items of the group combine: AND (all) or OR (any). Default AND.",
  "DEPENDENT.dependence.groups[].items":
    "Each item: an instance of `workflow` (or its `task`) that succeeded in the period.",
  "DEPENDENT.dependence.groups[].items[].workflow": "Name of the workflow depended on.",
  "DEPENDENT.dependence.groups[].items[].task":
    "Code of one of its tasks; without it, the whole instance must have succeeded.",
  "DEPENDENT.dependence.groups[].items[].cycle": "Unit of the period: hour, day, week or month.",
  "DEPENDENT.dependence.groups[].items[].dateValue":
    "The period, relative to the run's business time (`today`, `last1Days`, `lastWeek`, `thisMonth`, …); the values depend on `cycle`.",
  "DEPENDENT.checkIntervalSeconds": "Seconds between checks of a dependence that is not met yet.",
};
