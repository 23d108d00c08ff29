/**
 * Errors the API maps onto HTTP statuses (docs/api.md "Errors"). Anything else is a 500 and a bug.
 */

/** One problem with the input: `path` points into the body (`tasks[1].upstream[0]`). */
export interface ErrorDetail {
  path: string;
  message: string;
}

export type ErrorCode =
  | "ValidationError"
  | "NotFound"
  | "Conflict"
  | "PayloadTooLarge"
  | "UnsupportedMediaType";

const STATUS: Record<ErrorCode, number> = {
  ValidationError: 400,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
};

/** An error the client caused; carries the HTTP status and the contract's error code. */
export class ShoalError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[];

  constructor(code: ErrorCode, message: string, details: ErrorDetail[] = []) {
    super(message);
    this.name = code;
    this.code = code;
    this.status = STATUS[code];
    this.details = details;
  }
}

/** 400 with the problems listed; the message names the first one. */
export function validationError(details: ErrorDetail[], summary?: string): ShoalError {
  const first = details[0];
  const message =
    summary ?? (first ? `${first.path || "body"}: ${first.message}` : "the request is not valid");
  return new ShoalError("ValidationError", message, details);
}

export function notFound(message: string): ShoalError {
  return new ShoalError("NotFound", message);
}

export function conflict(message: string): ShoalError {
  return new ShoalError("Conflict", message);
}

/** Thrown by the state machines: a transition the tables do not allow (a bug or a stale message). */
export class IllegalTransitionError extends Error {
  constructor(kind: string, from: string, to: string) {
    super(`illegal ${kind} transition ${from} -> ${to}`);
    this.name = "IllegalTransitionError";
  }
}
