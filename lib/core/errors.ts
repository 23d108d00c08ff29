/**
 * The errors Shoal throws on purpose, and their common base. Each layer that has errors of its
 * own extends {@link ShoalError} (engine `RetryLater`, tasks `AbortedError`, standalone
 * `NoConfigurationError`, the CLI's `CliError`); what a caller decides on is a field, never a
 * parsed message. HTTP statuses are not here: the API assigns them from {@link RequestError}'s
 * `code` (lib/api/http.ts `statusOf`). Anything else thrown is a fault (a 500, a bug).
 * docs/architecture.md "Errors" has the whole model.
 */

/** What a {@link ShoalError} is built with, besides its message. */
export interface ShoalErrorOptions {
  /** The error this one reports or wraps (ES2022 `Error.cause`); undefined: none. */
  cause?: unknown;
  /** Whether the same call, unchanged, may succeed later. Default false. */
  retryable?: boolean;
}

/**
 * Base of every error Shoal throws on purpose (as Powertools' per-package errors and Temporal's
 * `TemporalFailure`): `name` is the class name, `cause` the wrapped error, `retryable` what a
 * caller that could try again decides on. Not thrown itself.
 */
export abstract class ShoalError extends Error {
  /** Whether the same call, unchanged, may succeed later (e.g. `RetryLater`). */
  readonly retryable: boolean;

  constructor(message: string, options: ShoalErrorOptions = {}) {
    // No own `cause` property unless there is one (`cause: undefined` would show in inspect).
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    // Set once here for every subclass. A minified bundle must keep class names (esbuild keepNames).
    this.name = new.target.name;
    this.retryable = options.retryable ?? false;
  }
}

/** One problem with the input: `path` points into the body (`tasks[1].upstream[0]`). */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** The contract's error codes of a {@link RequestError} (docs/api.md "Errors"). */
export type ErrorCode =
  | "ValidationError"
  | "NotFound"
  | "Conflict"
  | "PayloadTooLarge"
  | "UnsupportedMediaType";

/**
 * An error the client caused (its input, or what it names): the contract's `code` and the
 * problems in `details`. Never retryable as it is. The API answers it with the status of its
 * code (lib/api/http.ts `statusOf`); the CLI reports its details against the file it read.
 */
export class RequestError extends ShoalError {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];

  constructor(
    code: ErrorCode,
    message: string,
    details: ErrorDetail[] = [],
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.code = code;
    this.details = details;
  }
}

/**
 * ValidationError with the problems listed; the message is `summary`, else names the first one.
 * `options.cause`: the parser's error, when one is wrapped.
 */
export function validationError(
  details: ErrorDetail[],
  summary?: string,
  options: { cause?: unknown } = {},
): RequestError {
  const first = details[0];
  const message =
    summary ?? (first ? `${first.path || "body"}: ${first.message}` : "the request is not valid");
  return new RequestError("ValidationError", message, details, options);
}

export function notFound(message: string): RequestError {
  return new RequestError("NotFound", message);
}

export function conflict(message: string): RequestError {
  return new RequestError("Conflict", message);
}

/** Thrown by the state machines: a transition the tables do not allow (a bug or a stale message). */
export class IllegalTransitionError extends ShoalError {
  constructor(kind: string, from: string, to: string) {
    super(`illegal ${kind} transition ${from} -> ${to}`);
  }
}
