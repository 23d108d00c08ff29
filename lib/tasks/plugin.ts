/**
 * Task plugins: what runs a task of one type on a worker (DolphinScheduler's task plugins).
 */
import type { TaskDefinition } from "../core/model.js";
import type { TaskLogWriter } from "../logs/task-log.js";

export interface TaskRunContext {
  task: TaskDefinition;
  /** Parameters (global, local, startup merged), also exported as environment variables. */
  params: Record<string, string>;
  /** Environment for processes: identifiers of the run (SHOAL_*) and the parameters. */
  env: Record<string, string>;
  log: TaskLogWriter;
  /** Aborted when the task must die (stop, lost lease); the plugin ends it as KILLED. */
  signal: AbortSignal;
  /** A fresh, empty working directory for this attempt. */
  workDir: string;
}

export interface TaskResult {
  state: "SUCCESS" | "FAILURE" | "KILLED";
  exitCode?: number;
  /** One sentence for the API's `error` field. */
  error?: string;
}

export type TaskPlugin = (ctx: TaskRunContext) => Promise<TaskResult>;
