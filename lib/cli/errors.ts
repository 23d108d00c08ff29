/**
 * Errors the CLI expects and reports without a stack trace. Anything else is a bug and
 * keeps its stack behind `SHOAL_DEBUG=1`.
 */

/** Exit codes of the `shoal` CLI. */
export const EXIT = { ok: 0, error: 1, usage: 2 } as const;

/** A failure the user can act on: printed as `error: <message>`, exit 1 unless told otherwise. */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number = EXIT.error) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

/** Bad command-line input that commander cannot see (e.g. a malformed `--param`): exit 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
    this.name = "UsageError";
  }
}
