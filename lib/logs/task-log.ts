/**
 * Task logs: one log per task attempt, written by the worker while the task runs and read back
 * through the API in pages: files in standalone (file-task-log.ts), CloudWatch Logs on AWS
 * (cloudwatch-task-log.ts), named `<workflow>/<instanceId>/<taskCode>/<attempt>` (`logName`).
 */

/** Identifies one attempt's log. */
export interface TaskLogKey {
  workflow: string;
  instanceId: string;
  code: string;
  attempt: number;
}

/** One line: ISO-8601 UTC timestamp with milliseconds, and the text (no trailing newline). */
export interface LogLine {
  timestamp: string;
  message: string;
}

export interface LogPage {
  lines: LogLine[];
  /** Where the next read starts; absent when the log has nothing more. */
  nextToken?: string;
}

/** Appends lines in order; `close` flushes. Writing never throws into the task. */
export interface TaskLogWriter {
  write(message: string, at?: number): void;
  close(): Promise<void>;
}

export interface TaskLogs {
  open(key: TaskLogKey): TaskLogWriter;
  /**
   * Reads up to `limit` lines after `nextToken`.
   * @throws RequestError ValidationError for a token this store did not hand out.
   */
  read(key: TaskLogKey, opts: { nextToken?: string; limit: number }): Promise<LogPage>;
  /**
   * The last `limit` complete lines of the log, oldest first: the log's true end, however long
   * the log (read backwards; a line still being written is left out). Fewer when the log has
   * fewer, or when an adapter's bound on one read is reached (then the lines nearest the end);
   * [] for a log not written yet. Alerts quote it (lib/alerts/content.ts).
   * @throws the store's read errors (access, throttling past the SDK's retries).
   */
  tail(key: TaskLogKey, limit: number): Promise<LogLine[]>;
  /** A link to read the log outside Shoal (the CloudWatch console), where there is one. */
  url?(key: TaskLogKey): string;
}

/** `<workflow>/<instanceId>/<taskCode>/<attempt>`: the log's name (file path, log stream). */
export function logName(key: TaskLogKey): string {
  return `${key.workflow}/${key.instanceId}/${key.code}/${key.attempt}`;
}
