/**
 * STEP_FUNCTIONS tasks: StartExecution of a Standard state machine, then DescribeExecution until
 * the execution ends (AWS Step Functions API reference). SUCCEEDED is SUCCESS with OUT parameters
 * from its `output`; FAILED, TIMED_OUT and ABORTED are FAILURE with the execution's `error` and
 * `cause`. Express state machines cannot be described, so they fail at the first poll.
 *
 * The execution name is deterministic (`defaultExecutionName`), so a redelivered attempt finds
 * its own execution: StartExecution answers a repeat with the same name and input while the
 * execution runs, and `ExecutionAlreadyExists` once it ended; then the plugin describes that
 * execution and follows it instead of failing.
 *
 * Every call goes to the state machine ARN's region (aws-arn.ts), whatever the worker's
 * AWS_REGION: Step Functions serves a state machine from its own region's endpoint only.
 *
 * A kill (stop, lost lease) and a FAIL timeout stop the execution (StopExecution with a cause)
 * and end the attempt KILLED and FAILURE; a WARN timeout only warns. The worker renews the lease
 * while this polls.
 */
import { createHash } from "node:crypto";
import {
  DescribeExecutionCommand,
  type DescribeExecutionCommandOutput,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from "@aws-sdk/client-sfn";
import type { TaskLogWriter } from "../logs/task-log.js";
import { callRegion } from "./aws-arn.js";
import {
  AbortedError,
  awsErrorSentence,
  jsonFieldFailure,
  logText,
  outputsResult,
  sleep,
  untilAborted,
} from "./lambda.js";
import { killError, type TaskPlugin, type TaskResult } from "./plugin.js";

/** Execution names: at most 80 characters; Shoal's own use only these (CloudWatch-safe). */
const NAME_CHARS = 80;
/** DescribeExecution failures in a row (each already retried by the SDK) before giving up. */
const MAX_DESCRIBE_FAILURES = 5;
/** Longest wait for StopExecution, ms: the attempt must end even when AWS does not answer. */
const STOP_TIMEOUT_MS = 15_000;
/** Longest `error` sentence of a failed execution. */
const ERROR_CHARS = 1_000;

/**
 * The execution name of an attempt when the task sets none: `shoal-<instanceId>-<code>-<attempt>`.
 * When that is longer than 80 characters or holds characters outside [A-Za-z0-9_-], those are
 * replaced by `-`, the text is cut, and a hash of the exact instance id and code goes before the
 * attempt, so two tasks never share a name and every attempt has its own.
 */
export function defaultExecutionName(
  instanceId: string,
  code: string,
  attempt: number | string,
): string {
  const plain = `shoal-${instanceId}-${code}-${attempt}`;
  if (plain.length <= NAME_CHARS && /^[A-Za-z0-9_-]+$/.test(plain)) return plain;
  const hash = createHash("sha256").update(`${instanceId}\u0000${code}`).digest("hex").slice(0, 12);
  const suffix = `-${hash}-${String(attempt).replace(/[^A-Za-z0-9_-]/g, "-")}`;
  const head = `shoal-${instanceId}-${code}`.replace(/[^A-Za-z0-9_-]/g, "-");
  return head.slice(0, Math.max(0, NAME_CHARS - suffix.length)) + suffix;
}

/**
 * The ARN of execution `name` of a state machine (`…:stateMachine:<sm>[:<version or alias>]` →
 * `…:execution:<sm>:<name>`; executions of versions and aliases are named after the machine).
 * @throws Error for a text that is not a state machine ARN.
 */
export function executionArnFor(stateMachineArn: string, name: string): string {
  const m = /^(arn:[^:]+:states:[^:]*:[^:]*:)stateMachine:([^:]+)(?::[^:]+)?$/.exec(
    stateMachineArn,
  );
  if (!m) throw new Error(`not a state machine ARN: ${stateMachineArn}`);
  return `${m[1]}execution:${m[2]}:${name}`;
}

/**
 * Wait before DescribeExecution number `poll` (0 first), ms: 1 s, doubling, at most
 * `pollIntervalSeconds`.
 */
export function pollDelayMs(poll: number, pollIntervalSeconds: number): number {
  return Math.min(1000 * 2 ** Math.min(poll, 20), pollIntervalSeconds * 1000);
}

/** Executions' final states and the attempt state each one gives. */
const FINAL: Record<string, TaskResult["state"]> = {
  SUCCEEDED: "SUCCESS",
  FAILED: "FAILURE",
  TIMED_OUT: "FAILURE",
  ABORTED: "FAILURE",
};

/** JSON with object keys sorted, to compare two inputs whatever their formatting. */
function canonical(text: string | undefined): string | undefined {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v === null || typeof v !== "object") return v;
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, sort(o[k])]),
    );
  };
  try {
    return JSON.stringify(sort(JSON.parse(text ?? "{}")));
  } catch {
    return undefined;
  }
}

/** True for failures that may pass: throttling, AWS server errors, no answer at all. */
function transient(e: unknown): boolean {
  const err = e as { name?: string; $fault?: string; $metadata?: { httpStatusCode?: number } };
  const status = err?.$metadata?.httpStatusCode;
  return (
    err?.$fault === "server" ||
    status === undefined ||
    status === 429 ||
    status >= 500 ||
    /Throttl|TooManyRequests/.test(err?.name ?? "")
  );
}

async function stopExecution(
  client: SFNClient,
  log: TaskLogWriter,
  executionArn: string,
  error: string,
  cause: string,
): Promise<void> {
  const signal = AbortSignal.timeout(STOP_TIMEOUT_MS);
  try {
    await untilAborted(
      client.send(new StopExecutionCommand({ executionArn, error, cause }), {
        abortSignal: signal,
      }),
      signal,
    );
    log.write(`shoal: execution stopped (${cause})`);
  } catch (e) {
    const why =
      e instanceof AbortedError
        ? `no answer within ${STOP_TIMEOUT_MS / 1000}s`
        : awsErrorSentence("StopExecution", e);
    log.write(`shoal: could not stop the execution: ${why}`);
  }
}

/** The attempt's result for an execution in a final state. */
function finalResult(
  d: DescribeExecutionCommandOutput,
  outputs: Record<string, string>,
  log: TaskLogWriter,
): TaskResult {
  if (d.status === "SUCCEEDED") {
    if (d.output !== undefined) {
      log.write("shoal: output:");
      logText(log, d.output);
    }
    const result = outputsResult(outputs, d.output, "the execution's output");
    if (result.error) log.write(`shoal: ${result.error}`);
    return result;
  }
  if (d.cause) {
    log.write("shoal: cause:");
    logText(log, d.cause);
  }
  const error =
    `execution ${d.status}${d.error ? `: ${d.error}` : ""}${d.cause ? ` (${d.cause.replace(/\s+/g, " ")})` : ""}`.slice(
      0,
      ERROR_CHARS,
    );
  log.write(`shoal: ${error}`);
  return { state: "FAILURE", error };
}

/**
 * Runs a STEP_FUNCTIONS task (see the file comment): polls every `pollDelayMs` until the
 * execution ends; SUCCESS (with `outputs` when asked), FAILURE with one sentence, or KILLED when
 * `ctx.signal` fires (the execution is stopped first). Never throws for AWS errors.
 */
export const runStepFunctions: TaskPlugin = async (ctx) => {
  if (ctx.task.type !== "STEP_FUNCTIONS") {
    throw new Error("runStepFunctions needs a STEP_FUNCTIONS task");
  }
  const { task, log } = ctx;
  if (task.input !== undefined) {
    const invalid = jsonFieldFailure("input", task.input);
    if (invalid) {
      log.write(`shoal: ${invalid.error}; no execution started`);
      return invalid;
    }
  }
  const name =
    task.executionName ??
    defaultExecutionName(
      ctx.env.SHOAL_INSTANCE_ID ?? "instance",
      ctx.env.SHOAL_TASK_CODE ?? "task",
      ctx.env.SHOAL_ATTEMPT ?? "1",
    );
  // Known before StartExecution answers: a kill during the call can still stop the execution.
  let executionArn = executionArnFor(task.stateMachineArn, name);
  const region = callRegion(task.stateMachineArn);
  const client = ctx.clients.sfnIn(region);
  const timeoutS = task.timeoutSeconds;
  const warnOnly = task.timeoutStrategy === "WARN";
  const timedOut = new AbortController();
  const timer =
    timeoutS === undefined
      ? undefined
      : setTimeout(() => {
          if (!warnOnly) {
            timedOut.abort();
            return;
          }
          const message = `execution still running after its timeout of ${timeoutS}s`;
          log.write(`shoal: WARNING ${message}`);
          ctx.warn?.(message);
        }, timeoutS * 1000);
  const signal = AbortSignal.any([ctx.signal, timedOut.signal]);
  // False while following an execution whose input was not yet found to be this attempt's:
  // an execution that is someone else's is never stopped.
  let ours = true;
  const stop = async (error: string, cause: string) => {
    if (ours) await stopExecution(client, log, executionArn, error, cause);
    else log.write("shoal: the execution was not found to be this attempt's; not stopping it");
  };
  try {
    let following = false;
    log.write(
      `shoal: starting execution ${name} of ${task.stateMachineArn}${region ? ` (Step Functions in ${region})` : ""}`,
    );
    try {
      const started = await untilAborted(
        client.send(
          new StartExecutionCommand({
            stateMachineArn: task.stateMachineArn,
            name,
            ...(task.input !== undefined ? { input: task.input } : {}),
          }),
          { abortSignal: signal },
        ),
        signal,
      );
      executionArn = started.executionArn ?? executionArn;
      log.write(`shoal: execution ${executionArn} started`);
    } catch (e) {
      if (e instanceof AbortedError) throw e;
      if ((e as { name?: string })?.name !== "ExecutionAlreadyExists") {
        const error = awsErrorSentence("Step Functions StartExecution", e);
        log.write(`shoal: ${error}`);
        return { state: "FAILURE", error };
      }
      following = true;
      ours = false;
      log.write(`shoal: execution ${executionArn} exists already (a redelivery?): following it`);
    }
    let last: string | undefined;
    let failures = 0;
    // A followed execution is described at once, and its input checked at the first answer.
    let describeNow = following;
    for (let poll = 0; ; ) {
      if (!describeNow) await sleep(pollDelayMs(poll++, task.pollIntervalSeconds), signal);
      describeNow = false;
      let d: DescribeExecutionCommandOutput;
      try {
        d = await untilAborted(
          client.send(new DescribeExecutionCommand({ executionArn }), { abortSignal: signal }),
          signal,
        );
        failures = 0;
      } catch (e) {
        if (e instanceof AbortedError) throw e;
        const error = awsErrorSentence("Step Functions DescribeExecution", e);
        log.write(`shoal: ${error}`);
        if (transient(e) && ++failures < MAX_DESCRIBE_FAILURES) continue;
        // Failing the attempt while the execution runs on would let a retry run it twice.
        await stop("Shoal.Failed", `Shoal cannot follow it: ${error}`);
        return { state: "FAILURE", error };
      }
      if (following) {
        following = false;
        // Not this attempt's execution: someone else's, or an old one of a fixed executionName.
        if (d.input !== undefined && canonical(d.input) !== canonical(task.input)) {
          const error = `an execution named ${name} exists already with a different input; give the task another executionName`;
          log.write(`shoal: ${error}`);
          return { state: "FAILURE", error };
        }
        ours = true;
      }
      if (d.status !== last) {
        last = d.status;
        const redrives = d.redriveCount ? `, redriven ${d.redriveCount} times` : "";
        log.write(`shoal: execution ${d.status ?? "(no status)"}${redrives}`);
      }
      if (d.status && FINAL[d.status]) return finalResult(d, task.outputs, log);
    }
  } catch (e) {
    if (!(e instanceof AbortedError)) throw e;
    const killed = ctx.signal.aborted;
    const cause = killed
      ? `Shoal task '${ctx.env.SHOAL_TASK_CODE ?? name}' was ${killError(ctx.signal)}`
      : `Shoal task '${ctx.env.SHOAL_TASK_CODE ?? name}' timed out after ${timeoutS}s`;
    log.write(
      `shoal: ${killed ? "killed" : `timed out after ${timeoutS}s`}; stopping the execution`,
    );
    await stop(killed ? "Shoal.Killed" : "Shoal.Timeout", cause);
    return killed
      ? { state: "KILLED", error: killError(ctx.signal) }
      : { state: "FAILURE", error: `timed out after ${timeoutS}s; the execution was stopped` };
  } finally {
    clearTimeout(timer);
  }
};
