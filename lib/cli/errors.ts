/**
 * Errors the CLI expects and reports without a stack trace. Anything else is a bug and
 * keeps its stack behind `SHOAL_DEBUG=1`.
 */
import { ShoalError } from "../core/errors.js";

/** Exit codes of the `shoal` CLI. */
export const EXIT = { ok: 0, error: 1, usage: 2 } as const;

/** What a {@link CliError} is built with, besides its message. */
export interface CliErrorOptions {
  /** The process's exit code (default {@link EXIT}.error). */
  exitCode?: number;
  /** The error this one reports (a file system error, `JSON.parse`'s, the fetch failure). */
  cause?: unknown;
  /** Whether running the same command again may succeed (default false). */
  retryable?: boolean;
}

/**
 * Base of the CLI's errors: a failure the user can act on, printed as `error: <message>`
 * (lib/cli/main.ts `report`); `exitCode` is what the process exits with, 1 unless told otherwise.
 */
export class CliError extends ShoalError {
  readonly exitCode: number;

  constructor(message: string, options: CliErrorOptions = {}) {
    super(message, options);
    this.exitCode = options.exitCode ?? EXIT.error;
  }
}

/** Bad command-line input that commander cannot see (e.g. a malformed `--param`): exit 2. */
export class UsageError extends CliError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, exitCode: EXIT.usage });
  }
}
