/**
 * Building blocks of the request schemas (zod 4): names, priorities, parameter maps, sizes.
 * Shared by validate.ts (workflow and run bodies) and validate-tasks.ts (task definitions).
 */
import { z } from "zod";
import { PRIORITIES } from "./model.js";

/** Names of workflows and codes of tasks (docs/api.md "Conventions"). */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
/** Worker groups name SQS queues (80 characters of [A-Za-z0-9_-] with Shoal's prefix and suffix). */
export const WORKER_GROUP_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
/** Limits chosen so that a definition always fits the stores and messages behind it. */
export const LIMITS = {
  tasks: 10_000,
  upstream: 1_000,
  commandBytes: 64 * 1024,
  httpBodyBytes: 64 * 1024,
  paramCount: 100,
  paramValueBytes: 4 * 1024,
  urlChars: 2_048,
  /** All start task codes of one run (they are stored with its command). */
  startTasksBytes: 64 * 1024,
  headerBytes: 8 * 1024,
  /** All names and values of one parameter map together (fits an item and a message). */
  paramsTotalBytes: 32 * 1024,
  descriptionChars: 1_024,
  /** A display name: any text (a DolphinScheduler name, Chinese included), characters. */
  displayNameChars: 200,
  idempotencyKeyChars: 128,
  retries: 100,
  /** Up to SQS's 900 s DelaySeconds a retry waits in the queue; longer ones wait on a sweeper timer. */
  retryIntervalSeconds: 7 * 24 * 3600,
  timeoutSeconds: 7 * 24 * 3600,
} as const;

/**
 * The name people read (any text, Chinese included), beside the ASCII name or code that
 * identifies the workflow or task: `shoal import dolphinscheduler` keeps the original name here.
 */
export const displayName = z
  .string()
  .min(1, { error: "must not be empty" })
  .max(LIMITS.displayNameChars, { error: `at most ${LIMITS.displayNameChars} characters` })
  .refine((s) => !/\p{Cc}/u.test(s), {
    error: "must not contain control characters (line breaks included)",
  });

export const name = z.string().regex(NAME_PATTERN, {
  error: "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$",
});
/**
 * A number where a task code (or a reference to one) is expected: DolphinScheduler's task codes
 * are numbers, Shoal's are names. Other type problems keep the plain wording (schema-messages.ts).
 */
const numericCode = (issue: { input?: unknown }) =>
  typeof issue.input === "number"
    ? "must be a string (DolphinScheduler's numeric task codes: use the task's name)"
    : undefined;
/** A task's `code`, or a reference to one (`upstream`, branch targets): a {@link name}. */
export const taskCode = z.string({ error: numericCode }).regex(NAME_PATTERN, {
  error: "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$",
});
/** A reference to a task code checked against the definition later (`upstream`). */
export const taskCodeRef = z.string({ error: numericCode });
export const priority = z.enum(PRIORITIES, { error: `must be one of ${PRIORITIES.join(", ")}` });
export const paramName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]{0,127}$/, {
  error: "parameter names must match ^[A-Za-z_][A-Za-z0-9_.]{0,127}$",
});
/** Marks an issue as "too large": the API answers 413 when every problem is one of these. */
export const TOO_LARGE = { params: { tooLarge: true } } as const;
export const bytes = (max: number) =>
  z.string().refine((s) => Buffer.byteLength(s) <= max, {
    error: `must be at most ${max} bytes`,
    ...TOO_LARGE,
  });
/**
 * NUL, or a UTF-16 surrogate without its other half (`"\ud800"` in JSON): neither survives the
 * way to a process (arguments, environment, UTF-8 files), so a value holding one fails every run.
 */
const UNSAFE_CHARACTER =
  /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** The rule of {@link processText}. */
export const PROCESS_TEXT_MESSAGE = "must not contain NUL or unpaired surrogate characters";
/** Whether `s` can reach a process as it is: no NUL, no unpaired surrogate. */
export function isProcessText(s: string): boolean {
  return !UNSAFE_CHARACTER.test(s);
}
/**
 * A string that reaches a task's process (a command, a parameter value), at most `max` UTF-8
 * bytes: refused with {@link PROCESS_TEXT_MESSAGE} when it holds NUL or an unpaired surrogate.
 */
export const processText = (max: number) =>
  bytes(max).refine(isProcessText, { error: PROCESS_TEXT_MESSAGE });
export const params = z
  .record(
    paramName,
    z
      .string({ error: "parameter values must be strings" })
      .pipe(processText(LIMITS.paramValueBytes)),
    {
      // Other inputs get the plain "must be a map of name: value" (schema-messages.ts).
      error: (issue) =>
        Array.isArray(issue.input)
          ? "must be a map of name: value (DolphinScheduler's localParams list of {prop, value} becomes {prop: value})"
          : undefined,
    },
  )
  .refine((p) => Object.keys(p).length <= LIMITS.paramCount, {
    error: `at most ${LIMITS.paramCount} parameters`,
    ...TOO_LARGE,
  })
  .refine(
    (p) =>
      Object.entries(p).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v), 0) <=
      LIMITS.paramsTotalBytes,
    { error: `parameters must add up to at most ${LIMITS.paramsTotalBytes} bytes`, ...TOO_LARGE },
  );
export const seconds = (max: number) =>
  z
    .number({ error: "must be a number of seconds" })
    .int({ error: "must be a whole number of seconds" })
    .min(0, { error: "must be >= 0" })
    .max(max, { error: `must be <= ${max}` });
