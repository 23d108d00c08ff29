/**
 * The load scenario's HTTP client (bench/load.ts): node:http with a bounded keep-alive pool, a
 * per-request timeout, and every answer classified as the "Load without loss" counts
 * it — accepted (202), refused (429/503 with `Retry-After` and the error body), or a loss of one
 * kind (dropped connection, timeout, another 5xx, an unexpected status).
 */
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";

/** What one request came to. */
export type Outcome =
  | { kind: "ok"; status: number; body: string; ms: number }
  | { kind: "refused"; status: number; retryAfterS: number; code: string; ms: number }
  /** A 429/503 without Retry-After or without the error body: not a clear refusal. */
  | { kind: "unclear-refusal"; status: number; body: string; ms: number }
  | { kind: "5xx"; status: number; body: string; ms: number }
  | { kind: "unexpected"; status: number; body: string; ms: number }
  | { kind: "dropped"; error: string; ms: number }
  | { kind: "timeout"; ms: number };

/** A keep-alive pool of at most `sockets` connections to the API. */
export class LoadClient {
  readonly agent: Agent;
  private readonly base: URL;

  constructor(
    apiUrl: string,
    sockets: number,
    private readonly timeoutMs = 60_000,
  ) {
    this.base = new URL(apiUrl);
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  }

  /**
   * Sends one request; never throws. `ok` means a 2xx (the caller checks which), `refused` a
   * 429/503 that carries `Retry-After` and `{"error":{"code"}}`.
   */
  send(method: string, path: string, body?: unknown): Promise<Outcome> {
    const t0 = performance.now();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve) => {
      let settled = false;
      const done = (o: Outcome) => {
        if (settled) return;
        settled = true;
        resolve(o);
      };
      const req = request(
        {
          host: this.base.hostname === "localhost" ? "127.0.0.1" : this.base.hostname,
          port: this.base.port,
          method,
          path,
          agent: this.agent,
          headers: payload
            ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
            : {},
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", (e) => done({ kind: "dropped", error: String(e), ms: ms(t0) }));
          res.on("end", () => {
            const status = res.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString("utf8");
            const elapsed = ms(t0);
            if (status >= 200 && status < 300)
              return done({ kind: "ok", status, body: text, ms: elapsed });
            if (status === 429 || status === 503) {
              const retryAfterS = Number(res.headers["retry-after"]);
              const code = errorCode(text);
              return done(
                Number.isFinite(retryAfterS) && retryAfterS >= 0 && code
                  ? { kind: "refused", status, retryAfterS, code, ms: elapsed }
                  : { kind: "unclear-refusal", status, body: text.slice(0, 200), ms: elapsed },
              );
            }
            if (status >= 500)
              return done({ kind: "5xx", status, body: text.slice(0, 200), ms: elapsed });
            done({ kind: "unexpected", status, body: text.slice(0, 200), ms: elapsed });
          });
        },
      );
      req.setTimeout(this.timeoutMs, () => {
        done({ kind: "timeout", ms: ms(t0) });
        req.destroy();
      });
      req.on("error", (e) => done({ kind: "dropped", error: String(e), ms: ms(t0) }));
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function ms(t0: number): number {
  return performance.now() - t0;
}

function errorCode(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === "string" && code ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Counts of outcomes by kind (losses named as the issue names them). */
export interface OutcomeCounts {
  accepted: number;
  refused: number;
  /** Refusals by status and code, e.g. `503 Overloaded`. */
  refusedBy: Record<string, number>;
  dropped: number;
  timeout: number;
  other5xx: number;
  unclearRefusal: number;
  unexpected: number;
  /** A few examples of each loss, for the report. */
  examples: string[];
}

export function emptyCounts(): OutcomeCounts {
  return {
    accepted: 0,
    refused: 0,
    refusedBy: {},
    dropped: 0,
    timeout: 0,
    other5xx: 0,
    unclearRefusal: 0,
    unexpected: 0,
    examples: [],
  };
}

/** Adds one outcome of a POST …/runs (202 is the only accepted status). */
export function count(c: OutcomeCounts, o: Outcome): void {
  const example = (s: string) => {
    if (c.examples.length < 10) c.examples.push(s);
  };
  switch (o.kind) {
    case "ok":
      if (o.status === 202) c.accepted++;
      else {
        c.unexpected++;
        example(`${o.status} ${o.body.slice(0, 120)}`);
      }
      return;
    case "refused": {
      c.refused++;
      const k = `${o.status} ${o.code}`;
      c.refusedBy[k] = (c.refusedBy[k] ?? 0) + 1;
      return;
    }
    case "unclear-refusal":
      c.unclearRefusal++;
      example(`${o.status} without Retry-After or error body: ${o.body}`);
      return;
    case "5xx":
      c.other5xx++;
      example(`${o.status} ${o.body}`);
      return;
    case "unexpected":
      c.unexpected++;
      example(`${o.status} ${o.body}`);
      return;
    case "dropped":
      c.dropped++;
      example(`dropped: ${o.error}`);
      return;
    case "timeout":
      c.timeout++;
      example(`timeout after ${Math.round(o.ms)} ms`);
      return;
  }
}

/** Requests lost (anything but accepted or clearly refused). */
export function losses(c: OutcomeCounts): number {
  return c.dropped + c.timeout + c.other5xx + c.unclearRefusal + c.unexpected;
}
