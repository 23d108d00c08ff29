/**
 * Schemas of task definitions, one per task type (zod 4), and the fields of each type (for the
 * hints of field-hints.ts); the graph rules of logic tasks are in logic-task-rules.ts. Types and
 * defaults follow the API contract (docs/api.md "WorkflowDefinition"); DolphinScheduler's task
 * settings are the reference for fields the contract does not name.
 */
import { z } from "zod";
import { DEPENDENT_DATE_VALUES } from "./dependent.js";
import { taskTypeHint } from "./field-hints.js";
import { checkJsonPath } from "./json-path.js";
import { TASK_TYPES, type TaskType, TIMEOUT_STRATEGIES } from "./model.js";
import { OUT_LIMITS } from "./out-params.js";
import { RETRY_BACKOFFS } from "./retry.js";
import { PARSE_OPTIONS } from "./schema-messages.js";
import {
  bytes,
  displayName,
  LIMITS,
  name,
  paramName,
  params,
  priority,
  processText,
  seconds,
  TOO_LARGE,
  taskCode,
  taskCodeRef,
  WORKER_GROUP_PATTERN,
} from "./schema-parts.js";
import {
  MAX_SECRET_ENV,
  SECRET_NAME_RULE,
  secretEnvNameProblem,
  secretNameProblem,
  secretReferenceIssues,
} from "./secret-references.js";
import { checkSwitchExpression } from "./switch-expression.js";

const taskBase = {
  code: taskCode,
  upstream: z.array(taskCodeRef).max(LIMITS.upstream).default([]),
  priority: priority.default("MEDIUM"),
  retries: z
    .number()
    .int({ error: "must be a whole number" })
    .min(0, { error: "must be >= 0" })
    .max(LIMITS.retries, { error: `must be <= ${LIMITS.retries}` })
    .default(0),
  retryIntervalSeconds: seconds(LIMITS.retryIntervalSeconds).default(0),
  retryBackoff: z.enum(RETRY_BACKOFFS, { error: "must be FIXED or EXPONENTIAL" }).default("FIXED"),
  maxRetryIntervalSeconds: seconds(LIMITS.retryIntervalSeconds).optional(),
  timeoutSeconds: seconds(LIMITS.timeoutSeconds).min(1, { error: "must be >= 1" }).optional(),
  timeoutStrategy: z.enum(TIMEOUT_STRATEGIES, { error: "must be WARN or FAIL" }).default("FAIL"),
  workerGroup: z
    .string()
    .regex(WORKER_GROUP_PATTERN, {
      error: "must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$ (it names SQS queues)",
    })
    .default("default"),
  params: params.default({}),
  taskGroup: name.optional(),
  taskGroupPriority: z
    .number()
    .int({ error: "must be a whole number" })
    .min(0, { error: "must be >= 0" })
    .max(100, { error: "must be <= 100" })
    .default(0),
  displayName: displayName.optional(),
  description: z.string().max(LIMITS.descriptionChars).optional(),
};

/** A SHELL task's `secrets`: environment variable → secret name (lib/core/secret-references.ts). */
const secretsField = z
  .record(
    z.string().superRefine((key, ctx) => {
      const problem = secretEnvNameProblem(key);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
    z.string().superRefine((value, ctx) => {
      if (secretNameProblem(value)) ctx.addIssue({ code: "custom", message: SECRET_NAME_RULE });
    }),
  )
  .refine((s) => Object.keys(s).length <= MAX_SECRET_ENV, {
    error: `at most ${MAX_SECRET_ENV} secrets`,
  });

const shellTask = z.strictObject({
  ...taskBase,
  type: z.literal("SHELL"),
  command: processText(LIMITS.commandBytes).refine((s) => s.trim().length > 0, {
    error: "must not be empty",
  }),
  secrets: secretsField.optional(),
});

/** OUT parameters taken from a JSON document by JSON path (HTTP, LAMBDA, STEP_FUNCTIONS). */
const outputs = z
  .record(
    paramName,
    z
      .string()
      .max(256, { error: "must be at most 256 characters" })
      .superRefine((path, ctx) => {
        const problem = checkJsonPath(path);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
  )
  .refine((o) => Object.keys(o).length <= OUT_LIMITS.count, {
    error: `at most ${OUT_LIMITS.count} outputs`,
  })
  .default({});

const statusCode = z.number().int().min(100).max(599);
const httpTask = z.strictObject({
  ...taskBase,
  type: z.literal("HTTP"),
  url: z
    .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
    .max(LIMITS.urlChars, { error: `must be at most ${LIMITS.urlChars} characters` }),
  method: z
    .enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"], {
      error: "must be an HTTP method (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS)",
    })
    .default("GET"),
  headers: z
    .record(
      z
        .string()
        .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: "header names must be HTTP tokens" }),
      z.string().regex(/^[^\r\n\0]*$/, { error: "header values must not contain CR, LF or NUL" }),
    )
    .refine(
      (h) =>
        Object.entries(h).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v), 0) <=
        LIMITS.headerBytes,
      { error: `headers must add up to at most ${LIMITS.headerBytes} bytes`, ...TOO_LARGE },
    )
    .default({}),
  body: bytes(LIMITS.httpBodyBytes).optional(),
  expectStatus: z
    .tuple([statusCode, statusCode])
    .refine(([lo, hi]) => lo <= hi, { error: "must be [low, high] with low <= high" })
    .default([200, 299]),
  outputs,
});

/**
 * Largest LAMBDA payload or STEP_FUNCTIONS input as written, UTF-8 bytes: the definition travels
 * in every task message (SQS takes 256 KiB in all), like an HTTP body.
 */
export const JSON_TEMPLATE_BYTES = 64 * 1024;
/**
 * Largest LAMBDA payload or STEP_FUNCTIONS input after parameter substitution, UTF-8 bytes:
 * Step Functions' limit for an execution's input ("Quotas related to state machine
 * executions": 256 KiB); Shoal holds Lambda payloads to it as well. Checked by the plugins.
 */
export const AWS_JSON_MAX_BYTES = 256 * 1024;

/** A `${name}` or `$[…]` reference, as params.ts finds them. */
const PARAM_REFERENCE = /\$\{[A-Za-z_][A-Za-z0-9_.]*\}|\$\[[^\]\n]*\]/;

/**
 * Why `text` is not JSON: the parser's complaint (at most 200 characters; "empty text" for ""),
 * or undefined when it parses.
 */
export function jsonTextProblem(text: string): string | undefined {
  if (text.trim() === "") return "empty text";
  try {
    JSON.parse(text);
    return undefined;
  } catch (e) {
    return (e as Error).message.slice(0, 200);
  }
}

/**
 * A JSON text with parameter references: only a text without references can be checked here,
 * since a reference outside a JSON string may stand for any JSON (`{"n": ${count}}`).
 */
const jsonTemplate = bytes(JSON_TEMPLATE_BYTES).superRefine((text, ctx) => {
  if (Buffer.byteLength(text) > JSON_TEMPLATE_BYTES || PARAM_REFERENCE.test(text)) return;
  const problem = jsonTextProblem(text);
  if (problem) ctx.addIssue({ code: "custom", message: `must be JSON (${problem})` });
});

/**
 * AWS Lambda's `FunctionName` pattern (Lambda API reference, "Invoke"): a name, `name:alias`,
 * `account:function:name` or a full ARN, optionally ending in `:version` or `:alias`.
 */
const FUNCTION_NAME =
  /^(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?$/;

const lambdaTask = z.strictObject({
  ...taskBase,
  type: z.literal("LAMBDA"),
  functionName: z
    .string()
    .min(1, { error: "must not be empty", abort: true })
    .max(170, { error: "must be at most 170 characters", abort: true })
    .regex(FUNCTION_NAME, {
      error:
        "must be a Lambda function name, name:alias, or function ARN (AWS's FunctionName pattern)",
    }),
  payload: jsonTemplate,
  qualifier: z
    .string()
    .regex(/^[a-zA-Z0-9$_-]{1,128}$/, {
      error: "must be a version or alias: 1 to 128 characters of [a-zA-Z0-9$_-]",
    })
    .optional(),
  outputs,
});

/**
 * Characters AWS forbids in an execution name (Step Functions API reference, "StartExecution"):
 * whitespace, brackets, wildcards, `" # % \ ^ | ~ \` $ & , ; : /`, control characters.
 */
const EXECUTION_NAME_FORBIDDEN = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\p{Cc}\uFFFE\uFFFF]/u;

/**
 * Why `name` cannot name a Step Functions execution (1..80 characters, none of the forbidden
 * ones), as a phrase, or undefined when it can.
 */
export function executionNameProblem(name: string): string | undefined {
  if (name.length < 1 || name.length > 80) return "must be 1 to 80 characters";
  const bad = EXECUTION_NAME_FORBIDDEN.exec(name);
  if (bad) {
    return `must not contain ${JSON.stringify(bad[0])} (AWS forbids whitespace, brackets, wildcards, control characters and " # % \\ ^ | ~ \` $ & , ; : /)`;
  }
  return undefined;
}

/** `arn:<partition>:states:<region>:<account>:stateMachine:<name>[:<version or alias>]`. */
const STATE_MACHINE_ARN =
  /^arn:aws[a-zA-Z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[^\s<>{}[\]?*"#%\\^|~`$&,;:/]{1,80}(:[A-Za-z0-9_-]{1,80})?$/;

const stepFunctionsTask = z.strictObject({
  ...taskBase,
  type: z.literal("STEP_FUNCTIONS"),
  stateMachineArn: z
    .string()
    .max(256, { error: "must be at most 256 characters", abort: true })
    .regex(STATE_MACHINE_ARN, {
      error:
        "must be a state machine ARN (arn:aws:states:<region>:<account>:stateMachine:<name>[:<version or alias>])",
    }),
  input: jsonTemplate.optional(),
  executionName: z
    .string()
    .max(256, { error: "must be at most 256 characters", abort: true })
    .superRefine((text, ctx) => {
      // References are replaced at run time, where the result is checked again.
      const problem = PARAM_REFERENCE.test(text)
        ? executionNameProblem(text.replace(new RegExp(PARAM_REFERENCE, "g"), "x").slice(0, 80))
        : executionNameProblem(text);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional(),
  outputs,
  pollIntervalSeconds: seconds(300).min(1, { error: "must be >= 1" }).default(5),
});

const DEPENDENT_CYCLES = ["hour", "day", "week", "month"] as const;

const codeList = z.array(taskCode).max(LIMITS.upstream).default([]);

const conditionsTask = z.strictObject({
  ...taskBase,
  type: z.literal("CONDITIONS"),
  successNext: codeList,
  failedNext: codeList,
});

const switchTask = z.strictObject({
  ...taskBase,
  type: z.literal("SWITCH"),
  cases: z
    .array(
      z.strictObject({
        condition: z.string().superRefine((expr, ctx) => {
          const problem = checkSwitchExpression(expr);
          if (problem) ctx.addIssue({ code: "custom", message: problem });
        }),
        next: taskCode,
      }),
    )
    .min(1, { error: "a SWITCH task needs at least one case" })
    .max(100, { error: "at most 100 cases" }),
  defaultNext: taskCode.optional(),
});

const subWorkflowTask = z.strictObject({
  ...taskBase,
  type: z.literal("SUB_WORKFLOW"),
  workflow: name,
});

const dependentItem = z
  .strictObject({
    workflow: name,
    task: taskCode.optional(),
    cycle: z.enum(DEPENDENT_CYCLES, { error: `must be one of ${DEPENDENT_CYCLES.join(", ")}` }),
    dateValue: z.string(),
  })
  .superRefine((item, ctx) => {
    const allowed: readonly string[] = DEPENDENT_DATE_VALUES[item.cycle] ?? [];
    if (!allowed.includes(item.dateValue)) {
      ctx.addIssue({
        code: "custom",
        path: ["dateValue"],
        message: `must be one of ${allowed.join(", ")} for cycle '${item.cycle}'`,
      });
    }
  });
const relation = z.enum(["AND", "OR"], { error: "must be AND or OR" }).default("AND");

const dependentTask = z.strictObject({
  ...taskBase,
  type: z.literal("DEPENDENT"),
  dependence: z.strictObject({
    relation,
    groups: z
      .array(
        z.strictObject({
          relation,
          items: z
            .array(dependentItem)
            .min(1, { error: "a group needs at least one item" })
            .max(50, { error: "at most 50 items" }),
        }),
      )
      .min(1, { error: "a dependence needs at least one group" })
      .max(50, { error: "at most 50 groups" }),
  }),
  checkIntervalSeconds: seconds(3600).min(1, { error: "must be >= 1" }).default(10),
});

/** "SHELL, HTTP, …, SUB_WORKFLOW or DEPENDENT": every type, in TASK_TYPES order. */
const TYPE_LIST = `${TASK_TYPES.slice(0, -1).join(", ")} or ${TASK_TYPES.at(-1)}`;

/**
 * The message of a task the union cannot take: "must be an object" when it is not one (`null`,
 * a string), else the rule of `type` with a hint when the value is close to a type ("did you
 * mean SHELL?" for `SHEL` or `shell`) or is a DolphinScheduler type (field-hints.ts).
 */
function taskUnionMessage(issue: { code?: string; input?: unknown }): string {
  if (issue.code === "invalid_type") return "must be an object";
  const type = (issue.input as { type?: unknown } | undefined)?.type;
  const hint = taskTypeHint(type, TASK_TYPES);
  return `type must be ${TYPE_LIST}${hint ? ` (${hint})` : ""}`;
}

/** The fields of each task type, as its schema accepts them (for the hints of field-hints.ts). */
export const TASK_TYPE_FIELDS: Readonly<Record<TaskType, readonly string[]>> = {
  SHELL: Object.keys(shellTask.shape),
  HTTP: Object.keys(httpTask.shape),
  LAMBDA: Object.keys(lambdaTask.shape),
  STEP_FUNCTIONS: Object.keys(stepFunctionsTask.shape),
  CONDITIONS: Object.keys(conditionsTask.shape),
  SWITCH: Object.keys(switchTask.shape),
  SUB_WORKFLOW: Object.keys(subWorkflowTask.shape),
  DEPENDENT: Object.keys(dependentTask.shape),
};

/** Fields some task type has but not every one: `url` → [HTTP], `outputs` → [HTTP, LAMBDA, …]. */
const TYPE_ONLY_FIELDS: ReadonlyMap<string, readonly TaskType[]> = (() => {
  const owners = new Map<string, TaskType[]>();
  for (const t of TASK_TYPES) {
    for (const field of TASK_TYPE_FIELDS[t]) {
      if (field in taskBase || field === "type") continue;
      owners.set(field, [...(owners.get(field) ?? []), t]);
    }
  }
  return owners;
})();

/**
 * The fields a task of type `type` lacks that other types have, each with those types (for
 * "only HTTP tasks have it"); every such field when `type` is not a task type.
 */
export function fieldsOfOtherTypes(type: string): ReadonlyMap<string, readonly TaskType[]> {
  const mine = (TASK_TYPE_FIELDS as Record<string, readonly string[] | undefined>)[type];
  if (!mine) return TYPE_ONLY_FIELDS;
  return new Map([...TYPE_ONLY_FIELDS].filter(([field]) => !mine.includes(field)));
}

/**
 * A task whose `type` is missing or unknown, checked as far as it can be: the fields every task
 * has, by their rules, and fields that no task type has, refused. Fields of any task type pass,
 * since the intended type is not known.
 */
const untypedTask = z.strictObject({
  ...taskBase,
  type: z.unknown().optional(),
  ...Object.fromEntries(
    [...TYPE_ONLY_FIELDS.keys()].map((field) => [field, z.unknown().optional()]),
  ),
});

function isUntypedTask(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const type = (value as { type?: unknown }).type;
  return typeof type !== "string" || !(TASK_TYPES as readonly string[]).includes(type);
}

/**
 * Schema of a task definition (discriminated by `type`). When the type is missing or unknown,
 * the union reports only that; the refinement adds every other problem it can see (each
 * unknown field, each bad common field), so one wrong `type` does not hide the rest.
 */
export const taskSchema = z
  .discriminatedUnion(
    "type",
    [
      shellTask,
      httpTask,
      lambdaTask,
      stepFunctionsTask,
      conditionsTask,
      switchTask,
      subWorkflowTask,
      dependentTask,
    ],
    { error: taskUnionMessage },
  )
  .superRefine(
    (value, ctx) => {
      const parsed = untypedTask.safeParse(value, PARSE_OPTIONS);
      for (const issue of parsed.error?.issues ?? []) ctx.addIssue({ ...issue });
    },
    { when: (payload) => isUntypedTask(payload.value) },
  )
  .superRefine((task, ctx) => {
    for (const issue of secretReferenceIssues(task)) ctx.addIssue({ code: "custom", ...issue });
  });
