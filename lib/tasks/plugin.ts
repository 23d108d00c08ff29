/**
 * Task plugins: what runs a task of one type on a worker (DolphinScheduler's task plugins).
 */
import type { WorkerTaskDefinition } from "../core/model.js";
import type { TaskLogWriter } from "../logs/task-log.js";

export interface TaskRunContext {
  /** The task with `${name}` and `$[...]` already substituted (SHELL: shell-quoted). */
  task: WorkerTaskDefinition;
  /** Parameters (resolved by the dispatcher), also exported as environment variables. */
  params: Record<string, string>;
  /** Environment for processes: identifiers of the run (SHOAL_*) and the parameters. */
  env: Record<string, string>;
  log: TaskLogWriter;
  /** Aborted when the task must die (stop, lost lease); the plugin ends it as KILLED. */
  signal: AbortSignal;
  /** A fresh, empty working directory for this attempt. */
  workDir: string;
  /** Reports a warning (a WARN timeout): logged and kept on the task instance; the task goes on. */
  warn?: (message: string) => void;
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
