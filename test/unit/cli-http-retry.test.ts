/**
 * The CLI sends a request again after a 429 or 503, waiting its `Retry-After`, when doing so
 * cannot do a thing twice: a read or a PUT, a request refused before any work (`Overloaded`), or
 * a run carrying an idempotency key. Anything else is reported at once.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient, ApiError } from "../../lib/cli/http.js";

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A server answering the n-th request (from 0) with `answers[n]` (the last one after that). */
async function serve(
  answers: Array<[number, unknown]>,
): Promise<{ url: string; seen: () => number }> {
  let n = 0;
  server = createServer((req, res) => {
    req.resume();
    const [status, body] = answers[Math.min(n++, answers.length - 1)] as [number, unknown];
    res.writeHead(status, {
      "content-type": "application/json",
      ...(status === 429 || status === 503 ? { "retry-after": "1" } : {}),
    });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, seen: () => n };
}

/** The ApiError a request fails with (fails the test when it succeeds). */
async function failure(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ApiError);
  return e as ApiError;
}

const overloaded = [
  503,
  { error: { code: "Overloaded", message: "too many requests in flight" } },
] as [number, unknown];
const unavailable = [
  503,
  { error: { code: "ServiceUnavailable", message: "standalone's dynamodb is restarting" } },
] as [number, unknown];

describe("the CLI's retries", () => {
  it("sends a run refused as Overloaded again after Retry-After", async () => {
    const s = await serve([overloaded, [202, { instanceId: "i-1" }]]);
    const started = performance.now();
    const res = await new ApiClient(s.url).post<{ instanceId: string }>("/v1/workflows/w/runs", {});
    expect(res).toEqual({ status: 202, body: { instanceId: "i-1" } });
    expect(s.seen()).toBe(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("does not send a run without an idempotency key again after a 503 that may have done part of it", async () => {
    const s = await serve([unavailable, [202, { instanceId: "i-1" }]]);
    const err = await failure(new ApiClient(s.url).post("/v1/workflows/w/runs", {}));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(503);
    expect(err.message).toContain("restarting");
    expect(s.seen()).toBe(1);
  });

  it("sends a keyed run and a read again after a 503", async () => {
    const s = await serve([unavailable, [202, { instanceId: "i-1" }]]);
    const api = new ApiClient(s.url);
    expect((await api.post("/v1/workflows/w/runs", { idempotencyKey: "k" })).status).toBe(202);
    expect(s.seen()).toBe(2);
  });

  it("gives up after 4 attempts", async () => {
    const s = await serve([[429, { error: { code: "TooManyRequests", message: "slow down" } }]]);
    const err = await failure(new ApiClient(s.url).get("/v1/instances"));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(429);
    expect(s.seen()).toBe(4);
  }, 15_000);
});
