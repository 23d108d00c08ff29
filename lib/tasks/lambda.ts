/**
 * LAMBDA tasks: one synchronous invocation (`InvocationType: "RequestResponse"`) of an AWS Lambda
 * function with the substituted JSON payload (AWS Lambda API reference, "Invoke"). The attempt
 * succeeds unless the response carries `FunctionError` (the function threw or timed out: its
 * payload holds `errorType` and `errorMessage`) or the call fails. `LogType: "Tail"` returns the
 * last 4 KB of the function's log, which goes to the task log.
 *
 * A function named by full ARN is invoked in the ARN's region (aws-arn.ts), whatever the
 * worker's AWS_REGION; a name, `name:alias` or partial ARN in the worker's region.
 *
 * `timeoutSeconds` with strategy FAIL aborts the request (no limit when unset: the function's own
 * timeout, at most 900 s, bounds it); WARN only warns. Neither stops the function itself: Lambda
 * has no way to cancel a running invocation. A kill (stop, lost lease) aborts the request too and
 * ends the attempt KILLED.
 *
 * Also the helpers STEP_FUNCTIONS shares: AWS error sentences, abortable waits, JSON outputs.
 */
import { setTimeout as delay } from "node:timers/promises";
import { InvokeCommand } from "@aws-sdk/client-lambda";
import { ShoalError } from "../core/errors.js";
import { extractJsonPath } from "../core/json-path.js";
import { AWS_JSON_MAX_BYTES, jsonTextProblem } from "../core/validate-tasks.js";
import type { TaskLogWriter } from "../logs/task-log.js";
import { callRegion } from "./aws-arn.js";
import { killError, type TaskPlugin, type TaskResult } from "./plugin.js";

/** Characters of a response (or cause) copied to the task log. */
const LOGGED_CHARS = 4_096;
/** Longest `error` sentence a task instance gets from an AWS answer. */
const ERROR_CHARS = 1_000;

/** Error codes AWS uses for throttling (Lambda, Step Functions and the SDK's generic one). */
const THROTTLING = new Set([
  "TooManyRequestsException",
  "ThrottlingException",
  "Throttling",
  "RequestLimitExceeded",
  "ExecutionLimitExceeded",
]);

/**
 * One sentence about a failed AWS call, naming its error code (`err.name` in SDK v3) and saying
 * "throttled" for throttling, so that a task's `retries` read as the remedy.
 * @param call what was called, `"Lambda Invoke"`.
 */
export function awsErrorSentence(call: string, e: unknown): string {
  const err = e as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const code = err?.name ?? "Error";
  const throttled = THROTTLING.has(code) || err?.$metadata?.httpStatusCode === 429;
  const message = (err?.message ?? String(e)).replace(/\s+/g, " ").trim();
  const sentence = throttled
    ? `${call} was throttled by AWS (${code}): ${message}; the task's retries try again later`
    : `${call} failed with ${code}: ${message}`;
  return sentence.slice(0, ERROR_CHARS);
}

/**
 * Raised by `untilAborted` and `sleep` when their signal fires; `reason` is the signal's. Not
 * retryable: whoever fired the signal (a stop, a timeout, the worker shutting down) decides.
 */
export class AbortedError extends ShoalError {
  constructor(readonly reason: unknown) {
    super("aborted", { cause: reason });
  }
}

/**
 * `promise`, or an AbortedError as soon as `signal` fires, whichever comes first. The SDK gets
 * the signal too (`abortSignal`), but this does not depend on it: an SDK retry pause, or a client
 * (or mock) that ignores the signal, still ends the wait at once.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(new AbortedError(signal.reason));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbortedError(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** Waits `ms`; rejects with AbortedError when `signal` fires first. */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch (e) {
    throw signal.aborted ? new AbortedError(signal.reason) : e;
  }
}

/** Writes `text` to the log line by line, at most LOGGED_CHARS of it. */
export function logText(log: TaskLogWriter, text: string): void {
  for (const line of text.slice(0, LOGGED_CHARS).split("\n")) log.write(line);
  if (text.length > LOGGED_CHARS) {
    log.write(`shoal: … ${text.length - LOGGED_CHARS} more characters`);
  }
}

/**
 * OUT parameters from a JSON document by JSON path (lib/core/json-path.ts), as HTTP tasks take
 * them: SUCCESS with `outputs`, or FAILURE when the text is not JSON or a path matches nothing.
 * @param what the document, for error sentences ("the function's response").
 */
export function outputsResult(
  outputs: Record<string, string>,
  text: string | undefined,
  what: string,
): TaskResult {
  const names = Object.keys(outputs);
  if (names.length === 0) return { state: "SUCCESS" };
  let doc: unknown;
  try {
    doc = JSON.parse(text ?? "");
  } catch {
    return { state: "FAILURE", error: `outputs need JSON, and ${what} is not JSON` };
  }
  const values: Record<string, string> = {};
  for (const name of names) {
    const path = outputs[name] as string;
    const value = extractJsonPath(doc, path);
    if (value === undefined) {
      return { state: "FAILURE", error: `output '${name}': ${path} matched nothing in ${what}` };
    }
    values[name] = value;
  }
  return { state: "SUCCESS", outputs: values };
}

/**
 * A FAILURE result for a JSON text that is too large or not JSON (checked before any request),
 * or undefined when it is fine.
 * @param field the field, for the sentence ("payload").
 */
export function jsonFieldFailure(field: string, text: string): TaskResult | undefined {
  const size = Buffer.byteLength(text);
  if (size > AWS_JSON_MAX_BYTES) {
    return {
      state: "FAILURE",
      error: `the ${field} is ${size} bytes after parameter substitution, more than the ${AWS_JSON_MAX_BYTES} allowed`,
    };
  }
  const problem = jsonTextProblem(text);
  return problem ? { state: "FAILURE", error: `the ${field} is not JSON: ${problem}` } : undefined;
}

/** The `errorType: errorMessage` of a function error payload, else the payload's start. */
function functionErrorText(body: string): string {
  try {
    const e = JSON.parse(body) as { errorType?: unknown; errorMessage?: unknown };
    const type = typeof e.errorType === "string" ? e.errorType : undefined;
    const message = typeof e.errorMessage === "string" ? e.errorMessage : undefined;
    if (type || message) return [type, message].filter(Boolean).join(": ");
  } catch {}
  return body.slice(0, 200) || "no details";
}

/**
 * Runs a LAMBDA task (see the file comment): SUCCESS (with `outputs` when asked), FAILURE with
 * one sentence (function error, AWS error code, throttling, timeout, payload too large or not
 * JSON: the last two before any request), or KILLED when `ctx.signal` fires. Never throws for
 * AWS errors.
 */
export const runLambda: TaskPlugin = async (ctx) => {
  if (ctx.task.type !== "LAMBDA") throw new Error("runLambda needs a LAMBDA task");
  const { task, log } = ctx;
  const invalid = jsonFieldFailure("payload", task.payload);
  if (invalid) {
    log.write(`shoal: ${invalid.error}; not invoked`);
    return invalid;
  }
  const timeoutS = task.timeoutSeconds;
  const warnOnly = task.timeoutStrategy === "WARN";
  const signal =
    timeoutS === undefined || warnOnly
      ? ctx.signal
      : AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutS * 1000)]);
  const warnTimer =
    timeoutS !== undefined && warnOnly
      ? setTimeout(() => {
          const message = `invocation still running after its timeout of ${timeoutS}s`;
          log.write(`shoal: WARNING ${message}`);
          ctx.warn?.(message);
        }, timeoutS * 1000)
      : undefined;
  const target = task.qualifier
    ? `${task.functionName} (qualifier ${task.qualifier})`
    : task.functionName;
  const payload = new TextEncoder().encode(task.payload);
  const region = callRegion(task.functionName);
  log.write(
    `shoal: invoking Lambda function ${target}${region ? ` in ${region}` : ""}, payload ${payload.length} bytes`,
  );
  const started = Date.now();
  try {
    const res = await untilAborted(
      ctx.clients.lambdaIn(region).send(
        new InvokeCommand({
          FunctionName: task.functionName,
          InvocationType: "RequestResponse",
          LogType: "Tail",
          Payload: payload,
          ...(task.qualifier ? { Qualifier: task.qualifier } : {}),
        }),
        { abortSignal: signal },
      ),
      signal,
    );
    const body = res.Payload ? new TextDecoder().decode(res.Payload) : "";
    log.write(
      `shoal: Lambda status ${res.StatusCode ?? "?"}, executed version ${res.ExecutedVersion ?? "?"}, ${Date.now() - started} ms, response ${Buffer.byteLength(body)} bytes${res.FunctionError ? `, function error ${res.FunctionError}` : ""}`,
    );
    if (res.LogResult) {
      log.write("shoal: function log (tail):");
      for (const line of Buffer.from(res.LogResult, "base64").toString("utf8").split("\n")) {
        if (line) log.write(line);
      }
    }
    log.write("shoal: response:");
    logText(log, body);
    if (res.FunctionError) {
      const error = `function error (${res.FunctionError}): ${functionErrorText(body)}`.slice(
        0,
        ERROR_CHARS,
      );
      log.write(`shoal: ${error}`);
      return { state: "FAILURE", error };
    }
    const result = outputsResult(task.outputs, body, "the function's response");
    if (result.error) log.write(`shoal: ${result.error}`);
    return result;
  } catch (e) {
    if (ctx.signal.aborted) {
      log.write("shoal: killed; the request was aborted (the invocation itself may run on)");
      return { state: "KILLED", error: killError(ctx.signal) };
    }
    const msg = signal.aborted
      ? `no answer within ${timeoutS}s (the invocation itself may run on)`
      : awsErrorSentence("Lambda Invoke", e);
    log.write(`shoal: ${msg}`);
    return { state: "FAILURE", error: msg };
  } finally {
    clearTimeout(warnTimer);
  }
};
