/**
 * Admission control of the standalone HTTP front (lib/standalone/http-server.ts): a bound on the
 * requests in flight, so that a burst (10,000 `POST …/runs` at once) is answered at once with a
 * clear 503 `Overloaded` and a `Retry-After` rather than queued until clients time out or drop
 * their sockets. Reads (GET, HEAD) have their own, larger bound: a flood of writes never keeps
 * `GET /v1/health` or an instance's status waiting behind it (docs/api.md "Errors").
 *
 * `POST /v1/events` has a small bound of its own: each event is matched against every trigger and
 * may start runs, so a flood of events (a script looping `shoal events put`) is refused early and
 * never takes the places of other writes.
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
/** Default bound on `POST /v1/events` requests in flight (trigger work: its own, small bound). */
export const DEFAULT_MAX_EVENTS_IN_FLIGHT = 8;
/** Seconds a refused client is told to wait (`Retry-After`, whole seconds as HTTP requires). */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** Bounds of an {@link Admission}; each must be a whole number ≥ 1. */
export interface AdmissionLimits {
  /** Writes in flight at most (default {@link DEFAULT_MAX_WRITES_IN_FLIGHT}). */
  maxWrites?: number;
  /** Reads in flight at most (default {@link DEFAULT_MAX_READS_IN_FLIGHT}). */
  maxReads?: number;
  /** `POST /v1/events` in flight at most (default {@link DEFAULT_MAX_EVENTS_IN_FLIGHT}). */
  maxEvents?: number;
  /** `Retry-After` of a refusal, seconds (default {@link DEFAULT_RETRY_AFTER_SECONDS}). */
  retryAfterSeconds?: number;
}

/** Counts of an {@link Admission} since it was made (for logs and the bench). */
export interface AdmissionStats {
  readsInFlight: number;
  writesInFlight: number;
  eventsInFlight: number;
  /** Requests refused so far, by kind. */
  refusedReads: number;
  refusedWrites: number;
  refusedEvents: number;
}

/** The bound a request counts against. */
export type RequestKind = "read" | "write" | "events";

/** Whether a method only reads (its own bound). */
export function isRead(method: string | undefined): boolean {
  const m = (method ?? "GET").toUpperCase();
  return m === "GET" || m === "HEAD" || m === "OPTIONS";
}

/** Which bound a request of `method` to `target` (the request line's path and query) counts against. */
export function kindOf(method: string | undefined, target?: string): RequestKind {
  if (isRead(method)) return "read";
  const path = (target ?? "").split("?")[0];
  return path === "/v1/events" ? "events" : "write";
}

/**
 * Three counting bounds: reads, writes, and `POST /v1/events`. `enter` admits a request (and
 * returns the function that releases its place, idempotent) or refuses it (`undefined`): no queue.
 */
export class Admission {
  readonly maxWrites: number;
  readonly maxReads: number;
  readonly maxEvents: number;
  readonly retryAfterSeconds: number;
  private readonly inFlight: Record<RequestKind, number> = { read: 0, write: 0, events: 0 };
  private readonly refused: Record<RequestKind, number> = { read: 0, write: 0, events: 0 };

  /** @throws RangeError when a bound is not a whole number ≥ 1. */
  constructor(limits: AdmissionLimits = {}) {
    this.maxWrites = whole(limits.maxWrites ?? DEFAULT_MAX_WRITES_IN_FLIGHT, "maxWrites");
    this.maxReads = whole(limits.maxReads ?? DEFAULT_MAX_READS_IN_FLIGHT, "maxReads");
    this.maxEvents = whole(limits.maxEvents ?? DEFAULT_MAX_EVENTS_IN_FLIGHT, "maxEvents");
    this.retryAfterSeconds = whole(
      limits.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS,
      "retryAfterSeconds",
    );
  }

  /** The bound of `kind`. */
  limitOf(kind: RequestKind): number {
    return kind === "read" ? this.maxReads : kind === "write" ? this.maxWrites : this.maxEvents;
  }

  /**
   * Admits a request of `method` (to `target`, the request line's path) if its kind is under its
   * bound.
   * @returns the release function (call it once the response is sent or the request failed;
   *   later calls do nothing), or undefined when refused.
   */
  enter(method: string | undefined, target?: string): (() => void) | undefined {
    const kind = kindOf(method, target);
    if (this.inFlight[kind] >= this.limitOf(kind)) {
      this.refused[kind]++;
      return undefined;
    }
    this.inFlight[kind]++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight[kind]--;
    };
  }

  /** The current counts. */
  stats(): AdmissionStats {
    return {
      readsInFlight: this.inFlight.read,
      writesInFlight: this.inFlight.write,
      eventsInFlight: this.inFlight.events,
      refusedReads: this.refused.read,
      refusedWrites: this.refused.write,
      refusedEvents: this.refused.events,
    };
  }
}

/**
 * Answers a refused request: 503 with the error body of docs/api.md "Errors"
 * (`{"error":{"code":"Overloaded","message":…}}`) and `Retry-After`. The request's body is not
 * read: Node discards it before reusing the socket.
 */
export function answerOverloaded(
  res: ServerResponse,
  admission: Admission,
  kind: RequestKind,
): void {
  const what = { read: "reads", write: "writes", events: "POST /v1/events requests" }[kind];
  const body = JSON.stringify({
    error: {
      code: "Overloaded",
      message: `standalone is serving ${admission.limitOf(kind)} ${what} already: retry after ${admission.retryAfterSeconds} s`,
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
