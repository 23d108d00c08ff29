/**
 * Admission control of the standalone HTTP front (lib/standalone/http-server.ts): a bound on the
 * requests in flight, so that a burst (10,000 `POST …/runs` at once) is answered at once with a
 * clear 503 `Overloaded` and a `Retry-After` rather than queued until clients time out or drop
 * their sockets. Reads (GET, HEAD) have their own, larger bound: a flood of writes never keeps
 * `GET /v1/health` or an instance's status waiting behind it (docs/api.md "Errors").
 *
 * Why a count and not a queue: the handler's cost is the emulators' (one process each, serving
 * in turn); past a few dozen requests in flight, admitting more only lengthens every request's
 * latency, and a refused client retries after `Retry-After` (the AWS SDKs and the CLI treat a
 * 503 as retryable).
 */
import type { ServerResponse } from "node:http";

/** Default bound on writes (any method but GET, HEAD, OPTIONS) in flight. */
export const DEFAULT_MAX_WRITES_IN_FLIGHT = 64;
/** Default bound on reads (GET, HEAD, OPTIONS) in flight: larger, so that reads stay prompt. */
export const DEFAULT_MAX_READS_IN_FLIGHT = 256;
/** Seconds a refused client is told to wait (`Retry-After`, whole seconds as HTTP requires). */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** Bounds of an {@link Admission}; each must be a whole number ≥ 1. */
export interface AdmissionLimits {
  /** Writes in flight at most (default {@link DEFAULT_MAX_WRITES_IN_FLIGHT}). */
  maxWrites?: number;
  /** Reads in flight at most (default {@link DEFAULT_MAX_READS_IN_FLIGHT}). */
  maxReads?: number;
  /** `Retry-After` of a refusal, seconds (default {@link DEFAULT_RETRY_AFTER_SECONDS}). */
  retryAfterSeconds?: number;
}

/** Counts of an {@link Admission} since it was made (for logs and the bench). */
export interface AdmissionStats {
  readsInFlight: number;
  writesInFlight: number;
  /** Requests refused so far, by kind. */
  refusedReads: number;
  refusedWrites: number;
}

/** Whether a method only reads (its own bound). */
export function isRead(method: string | undefined): boolean {
  const m = (method ?? "GET").toUpperCase();
  return m === "GET" || m === "HEAD" || m === "OPTIONS";
}

/**
 * Two counting bounds, one for reads and one for writes. `enter` admits a request (and returns
 * the function that releases its place, idempotent) or refuses it (`undefined`): no queue.
 */
export class Admission {
  readonly maxWrites: number;
  readonly maxReads: number;
  readonly retryAfterSeconds: number;
  private reads = 0;
  private writes = 0;
  private refusedReads = 0;
  private refusedWrites = 0;

  /** @throws RangeError when a bound is not a whole number ≥ 1. */
  constructor(limits: AdmissionLimits = {}) {
    this.maxWrites = whole(limits.maxWrites ?? DEFAULT_MAX_WRITES_IN_FLIGHT, "maxWrites");
    this.maxReads = whole(limits.maxReads ?? DEFAULT_MAX_READS_IN_FLIGHT, "maxReads");
    this.retryAfterSeconds = whole(
      limits.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS,
      "retryAfterSeconds",
    );
  }

  /**
   * Admits a request of `method` if its kind is under its bound.
   * @returns the release function (call it once the response is sent or the request failed;
   *   later calls do nothing), or undefined when refused.
   */
  enter(method: string | undefined): (() => void) | undefined {
    const read = isRead(method);
    if (read ? this.reads >= this.maxReads : this.writes >= this.maxWrites) {
      if (read) this.refusedReads++;
      else this.refusedWrites++;
      return undefined;
    }
    if (read) this.reads++;
    else this.writes++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (read) this.reads--;
      else this.writes--;
    };
  }

  /** The current counts. */
  stats(): AdmissionStats {
    return {
      readsInFlight: this.reads,
      writesInFlight: this.writes,
      refusedReads: this.refusedReads,
      refusedWrites: this.refusedWrites,
    };
  }
}

/**
 * Answers a refused request: 503 with the error body of docs/api.md "Errors"
 * (`{"error":{"code":"Overloaded","message":…}}`) and `Retry-After`. The request's body is not
 * read: Node discards it before reusing the socket.
 */
export function answerOverloaded(res: ServerResponse, admission: Admission, read: boolean): void {
  const limit = read ? admission.maxReads : admission.maxWrites;
  const body = JSON.stringify({
    error: {
      code: "Overloaded",
      message: `standalone is serving ${limit} ${read ? "reads" : "writes"} already: retry after ${admission.retryAfterSeconds} s`,
    },
  });
  res.writeHead(503, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "retry-after": String(admission.retryAfterSeconds),
  });
  res.end(body);
}

function whole(n: number, name: string): number {
  if (!Number.isInteger(n) || n < 1)
    throw new RangeError(`${name} must be a whole number ≥ 1: ${n}`);
  return n;
}
