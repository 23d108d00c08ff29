/**
 * Task plugins: what runs a task of one type on a worker (DolphinScheduler's task plugins).
 */
import type { AwsClients } from "../aws/clients.js";
import type { WorkerTaskDefinition } from "../core/model.js";
import type { TaskLogWriter } from "../logs/task-log.js";
import type { SecretMasker } from "../secrets/mask.js";

/**
 * The AWS clients task plugins call: Lambda (LAMBDA tasks) and Step Functions (STEP_FUNCTIONS),
 * each for the region of the task's ARN (`lambdaIn`, `sfnIn`); the worker reads task secrets
 * with Secrets Manager and SSM when it has them (lib/secrets/).
 */
export type TaskClients = Pick<AwsClients, "lambda" | "sfn" | "lambdaIn" | "sfnIn"> &
  Partial<Pick<AwsClients, "secretsManager" | "ssm">>;

export interface TaskRunContext {
  /** The task with `${name}` and `$[...]` already substituted (SHELL: shell-quoted). */
  task: WorkerTaskDefinition;
  /** Parameters (resolved by the dispatcher), also exported as environment variables. */
  params: Record<string, string>;
  /** Environment for processes: identifiers of the run (SHOAL_*) and the parameters. */
  env: Record<string, string>;
  log: TaskLogWriter;
  /**
   * Aborted when the task must die (stop, END after a failure, workflow timeout, lost lease,
   * worker shutdown); the plugin ends it as KILLED with {@link killError} as its error. The
   * signal's `reason` is the sentence saying why, e.g. "killed: the instance was stopped".
   */
  signal: AbortSignal;
  /** A fresh, empty working directory for this attempt. */
  workDir: string;
  /** The worker's AWS clients (its runtime's bundle). */
  clients: TaskClients;
  /**
   * The secret values this attempt resolved (lib/secrets/mask.ts), when it uses any: a plugin
   * masks what it streams with `masker.stream()` (a value split across chunks is still caught).
   * The worker masks every log line, the error and the warnings again.
   */
  masker?: SecretMasker;
  /** Reports a warning (a WARN timeout): logged and kept on the task instance; the task goes on. */
  warn?: (message: string) => void;
  /**
   * Told the process group a plugin started (SHELL) and when it is over, so that should this
   * worker be killed outright, a later one on the machine kills it (lib/tasks/task-processes.ts).
   * Both return at once (the record is written in the background).
   */
  processGroup?: {
    started(pgid: number): void;
    ended(pgid: number): void;
  };
}

/** The error of an attempt killed through `signal` when the kill gave no reason. */
export const KILLED_ON_REQUEST = "killed on request";

/**
 * The error sentence of a task killed through `signal`: the abort's reason when it is a
 * sentence (the worker aborts with the kill's reason, lib/engine/worker.ts), else
 * "killed on request".
 */
export function killError(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  return typeof r === "string" && r.trim() !== "" ? r : KILLED_ON_REQUEST;
}

export interface TaskResult {
  state: "SUCCESS" | "FAILURE" | "KILLED";
  exitCode?: number;
  /** One sentence for the API's `error` field. */
  error?: string;
  /** OUT parameters the plugin took from its result (HTTP: JSON paths of the response). */
  outputs?: Record<string, string>;
}

export type TaskPlugin = (ctx: TaskRunContext) => Promise<TaskResult>;
