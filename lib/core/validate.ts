/**
 * Validation of API bodies: shape (zod schemas, which also give the OpenAPI/JSON Schema), then the
 * rules a schema cannot say (unique codes, known upstreams, no cycles). Every problem is reported
 * with a path into the body, as docs/api.md ("Errors") requires.
 */
import { z } from "zod";
import { alertRulesSchema } from "./alert-rules.js";
import { findCycle } from "./dag.js";
import { type ErrorDetail, RequestError, validationError } from "./errors.js";
import { type FieldContext, unknownFieldMessage } from "./field-hints.js";
import { checkLogicTasks } from "./logic-task-rules.js";
import {
  FAILURE_STRATEGIES,
  RELEASE_STATES,
  type RunRequest,
  TASK_SCOPES,
  type TaskDefinition,
  type WorkflowDefinition,
} from "./model.js";
import { PARSE_OPTIONS } from "./schema-messages.js";
import {
  displayName,
  LIMITS,
  NAME_PATTERN,
  params,
  priority,
  seconds,
  TOO_LARGE,
  taskCode,
  WORKER_GROUP_PATTERN,
} from "./schema-parts.js";
import { PARAM_VALUE_RULE, paramSecretIssues, RUN_PARAM_VALUE_RULE } from "./secret-references.js";
import { isTimeZone, timeZoneProblem } from "./time-zones.js";
import { fieldsOfOtherTypes, TASK_TYPE_FIELDS, taskSchema } from "./validate-tasks.js";

export { LIMITS, NAME_PATTERN, WORKER_GROUP_PATTERN } from "./schema-parts.js";
export { taskSchema } from "./validate-tasks.js";

/**
 * A refinement of a `params` map refusing `${secret:…}` in its values (never resolved there:
 * docs/secrets.md), one issue per value at the parameter's name.
 */
function refuseSecrets(why: string) {
  return (value: Record<string, string>, ctx: z.RefinementCtx) => {
    for (const issue of paramSecretIssues(value, [], why)) {
      ctx.addIssue({ code: "custom", ...issue });
    }
  };
}

/**
 * The `params` of what starts runs (a run, a schedule, a backfill): a parameter map whose values
 * may not hold `${secret:…}`, which only a task definition's command, URL, headers and body
 * resolve.
 */
export const runParams = params.superRefine(refuseSecrets(RUN_PARAM_VALUE_RULE));

/** Schema of the WorkflowDefinition body of `PUT /v1/workflows/{name}`. */
export const workflowSchema = z.strictObject({
  displayName: displayName.optional(),
  description: z.string().max(LIMITS.descriptionChars).optional(),
  releaseState: z.enum(RELEASE_STATES, { error: "must be ONLINE or OFFLINE" }).optional(),
  priority: priority.default("MEDIUM"),
  failureStrategy: z.enum(FAILURE_STRATEGIES, { error: "must be END or CONTINUE" }).default("END"),
  timeoutSeconds: seconds(LIMITS.timeoutSeconds).min(1, { error: "must be >= 1" }).optional(),
  timezone: z
    .string()
    .max(64)
    .refine(isTimeZone, { error: (iss) => timeZoneProblem(String(iss.input)) })
    .optional(),
  params: params.superRefine(refuseSecrets(PARAM_VALUE_RULE)).default({}),
  tasks: z
    .array(taskSchema)
    .min(1, { error: "a workflow needs at least one task" })
    .max(LIMITS.tasks, { error: `at most ${LIMITS.tasks} tasks` }),
  alerts: alertRulesSchema.optional(),
});

/** Schema of the body of `POST /v1/workflows/{name}/runs`. */
export const runSchema = z.strictObject({
  params: runParams.default({}),
  priority: priority.optional(),
  startTasks: z
    .array(taskCode)
    .min(1, { error: "must name at least one task" })
    .max(LIMITS.tasks, { error: `at most ${LIMITS.tasks} start tasks`, ...TOO_LARGE })
    .refine((codes) => codes.reduce((n, c) => n + c.length + 3, 0) <= LIMITS.startTasksBytes, {
      error: `start task codes must add up to at most ${LIMITS.startTasksBytes} bytes`,
      ...TOO_LARGE,
    })
    .optional(),
  taskScope: z
    .enum(TASK_SCOPES, { error: "must be DOWNSTREAM, ONLY or UPSTREAM" })
    .default("DOWNSTREAM"),
  failureStrategy: z.enum(FAILURE_STRATEGIES, { error: "must be END or CONTINUE" }).optional(),
  dryRun: z.boolean({ error: "must be true or false" }).default(false),
  idempotencyKey: z.string().min(1).max(LIMITS.idempotencyKeyChars).optional(),
  workerGroup: z
    .string()
    .regex(WORKER_GROUP_PATTERN, {
      error: "must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$ (it names SQS queues)",
    })
    .optional(),
});

/** `a.b[2].c` from a zod issue path. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/**
 * The message for an unknown field `key` of the object at `path`; a parser that knows the body
 * adds a hint (field-hints.ts).
 */
type UnknownFieldMessage = (path: ReadonlyArray<PropertyKey>, key: string) => string;

function zodDetails(
  error: z.ZodError,
  unknownField: UnknownFieldMessage = (_path, key) => unknownFieldMessage(key),
): ErrorDetail[] {
  return error.issues.flatMap((issue): ErrorDetail[] => {
    if (issue.code === "unrecognized_keys") {
      // One detail per field, at the field's own path.
      return issue.keys.map((k) => ({
        path: formatPath([...issue.path, k]),
        message: unknownField(issue.path, k),
      }));
    }
    if (issue.code === "invalid_key") {
      // zod reports the key rule's own message one level down.
      return [{ path: formatPath(issue.path), message: issue.issues[0]?.message ?? issue.message }];
    }
    return [{ path: formatPath(issue.path), message: issue.message }];
  });
}

/**
 * 413 when every problem is a size limit (docs/api.md "Errors" and "Limits"), else 400.
 * @param more problems found besides the schema's (the graph rules of a definition), listed after.
 */
function schemaError(
  error: z.ZodError,
  unknownField?: UnknownFieldMessage,
  more: readonly ErrorDetail[] = [],
): RequestError {
  const details = [...zodDetails(error, unknownField), ...more];
  const tooLarge =
    more.length === 0 &&
    error.issues.every(
      (i) =>
        (i.code === "too_big" && (i.origin === "string" || i.origin === "array")) ||
        (i.code === "custom" && (i.params as { tooLarge?: boolean } | undefined)?.tooLarge),
    );
  if (!tooLarge) return validationError(details);
  const first = details[0];
  return new RequestError(
    "PayloadTooLarge",
    first ? `${first.path || "body"}: ${first.message}` : "too large",
    details,
  );
}

/**
 * Parses a body with a zod schema, in plain words (schema-messages.ts: "is required", "must be
 * a string").
 * @throws RequestError 400 listing every problem at its path, or 413 when all are size limits.
 */
export function parseWithSchema<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body, PARSE_OPTIONS);
  if (!parsed.success) throw schemaError(parsed.error);
  return parsed.data;
}

/**
 * Parses and checks a workflow definition body.
 * @returns the definition with defaults applied.
 * @throws RequestError ValidationError listing every problem (path + rule).
 */
export function parseWorkflowDefinition(body: unknown): WorkflowDefinition {
  const parsed = workflowSchema.safeParse(body, PARSE_OPTIONS);
  if (!parsed.success) {
    // The graph rules a body of the wrong shape can still be checked by: every problem in one
    // answer, not duplicate codes only once the fields are right.
    throw schemaError(
      parsed.error,
      (path, key) => unknownFieldMessage(key, definitionFieldContext(body, path)),
      checkBodyGraph(body),
    );
  }
  const def = parsed.data as WorkflowDefinition;
  const details = checkGraph(def.tasks);
  if (details.length > 0) throw validationError(details);
  return def;
}

/** Every field some task type has. */
const ANY_TASK_FIELDS = [...new Set(Object.values(TASK_TYPE_FIELDS).flat())];

/**
 * What the hints of an unknown field may use: the workflow's fields at the top level; a task's
 * own type's fields (or every task field, when its type is missing or unknown) in a task.
 * Elsewhere (nested objects) there is no hint.
 */
function definitionFieldContext(
  body: unknown,
  path: ReadonlyArray<PropertyKey>,
): FieldContext | undefined {
  if (path.length === 0) return { level: "workflow", fields: Object.keys(workflowSchema.shape) };
  const [list, index] = path;
  if (path.length !== 2 || list !== "tasks" || typeof index !== "number") return undefined;
  const task = (body as { tasks: unknown[] }).tasks[index] as { type?: unknown };
  const type = typeof task.type === "string" ? task.type : "";
  const fields = (TASK_TYPE_FIELDS as Record<string, readonly string[] | undefined>)[type];
  if (!fields) return { level: "task", fields: ANY_TASK_FIELDS };
  return { level: "task", fields, type, fieldTypes: fieldsOfOtherTypes(type) };
}

/**
 * Graph rules: unique codes, known upstreams, no self-loops, no cycles; then the branch rules of
 * logic tasks (logic-task-rules.ts).
 */
export function checkGraph(tasks: readonly TaskDefinition[]): ErrorDetail[] {
  const details = checkCodes(tasks);
  if (details.length > 0) return details;
  const index = codeIndex(tasks);
  return [...checkLogicTasks(tasks, index), ...checkCycle(tasks, index)];
}

/**
 * The part of a task a body of any shape yields for the graph rules: its `code` when it is a
 * string, and its `upstream` when it is a list (an entry that is not a string is left to the
 * schema's message).
 */
interface CodeRefs {
  code?: unknown;
  upstream?: unknown;
}

/** The tasks of a body that failed the schema, as far as the graph rules can read them. */
function codesOfBody(body: unknown): CodeRefs[] {
  const tasks = (body as { tasks?: unknown } | null | undefined)?.tasks;
  if (!Array.isArray(tasks)) return [];
  return tasks.map((t): CodeRefs => (typeof t === "object" && t !== null ? (t as CodeRefs) : {}));
}

/** Task code → position of its first task (codes that are not strings are left out). */
function codeIndex(tasks: readonly CodeRefs[]): Map<string, number> {
  const seen = new Map<string, number>();
  tasks.forEach((task, i) => {
    if (typeof task.code === "string" && !seen.has(task.code)) seen.set(task.code, i);
  });
  return seen;
}

/** The graph rules of a body that failed the schema: {@link checkCodes}, then no cycles. */
function checkBodyGraph(body: unknown): ErrorDetail[] {
  const tasks = codesOfBody(body);
  const details = checkCodes(tasks);
  return details.length > 0 ? details : checkCycle(tasks, codeIndex(tasks));
}

/**
 * Unique codes, known upstreams, no self-loops, over tasks of any shape (a valid definition's,
 * or what {@link codesOfBody} read from an invalid body): never throws on a body that is broken
 * in other ways too.
 */
function checkCodes(tasks: readonly CodeRefs[]): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const seen = codeIndex(tasks);
  tasks.forEach((task, i) => {
    const first = typeof task.code === "string" ? seen.get(task.code) : undefined;
    if (first !== undefined && first !== i) {
      details.push({
        path: `tasks[${i}].code`,
        message: `duplicate task code '${task.code}' (also tasks[${first}])`,
      });
    }
  });
  tasks.forEach((task, i) => {
    const ups = new Set<string>();
    const upstream = Array.isArray(task.upstream) ? (task.upstream as unknown[]) : [];
    upstream.forEach((up, j) => {
      if (typeof up !== "string") return;
      const path = `tasks[${i}].upstream[${j}]`;
      if (!seen.has(up)) details.push({ path, message: `unknown task code '${up}'` });
      else if (up === task.code) details.push({ path, message: "a task cannot depend on itself" });
      else if (ups.has(up)) details.push({ path, message: `'${up}' is listed twice` });
      ups.add(up);
    });
  });
  return details;
}

/**
 * A cycle among tasks whose codes are unique and whose upstreams are known ({@link checkCodes}
 * found nothing), as one detail at the first task of the cycle.
 */
function checkCycle(tasks: readonly CodeRefs[], index: ReadonlyMap<string, number>): ErrorDetail[] {
  const graph = tasks.flatMap((t) =>
    typeof t.code === "string"
      ? [{ code: t.code, upstream: Array.isArray(t.upstream) ? t.upstream.filter(isString) : [] }]
      : [],
  );
  const cycle = findCycle(graph);
  if (!cycle) return [];
  const i = index.get(cycle[0] ?? "") ?? 0;
  return [{ path: `tasks[${i}].upstream`, message: `cycle: ${cycle.join(" -> ")}` }];
}

const isString = (v: unknown): v is string => typeof v === "string";

/**
 * Parses a run request against the definition it starts.
 * @throws RequestError ValidationError (unknown start task, bad field).
 */
export function parseRunRequest(body: unknown, def: WorkflowDefinition): RunRequest {
  const parsed = runSchema.safeParse(body ?? {}, PARSE_OPTIONS);
  if (!parsed.success) throw schemaError(parsed.error);
  const run = parsed.data as RunRequest;
  const codes = new Set(def.tasks.map((t) => t.code));
  const details: ErrorDetail[] = [];
  run.startTasks?.forEach((code, i) => {
    if (!codes.has(code)) {
      details.push({ path: `startTasks[${i}]`, message: `unknown task code '${code}'` });
    }
  });
  if (details.length > 0) throw validationError(details);
  return run;
}

/** Validates a path/query value against the name pattern; 400 naming `field`. */
export function checkName(value: string, field: string): string {
  if (!NAME_PATTERN.test(value)) {
    throw validationError([
      { path: field, message: "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$" },
    ]);
  }
  return value;
}
