/**
 * Admission control of the standalone HTTP front (lib/standalone/admission.ts): bounds on reads
 * and writes in flight, and the 503 `Overloaded` answer with `Retry-After` over them.
 */
import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { Admission, isRead } from "../../lib/standalone/admission.js";
import { startHttpServer } from "../../lib/standalone/http-server.js";

let server: Server | undefined;

afterEach(async () => {
  const s = server;
  server = undefined;
  if (!s) return;
  s.closeAllConnections();
  await new Promise<void>((r) => s.close(() => r()));
});

describe("Admission", () => {
  it("admits up to each bound, separately for reads and writes, and frees a place once", () => {
    const a = new Admission({ maxWrites: 2, maxReads: 3 });
    const w1 = a.enter("POST");
    const w2 = a.enter("PUT");
    expect(w1).toBeTypeOf("function");
    expect(w2).toBeTypeOf("function");
    expect(a.enter("DELETE")).toBeUndefined();
    // Writes at their bound do not take reads' places.
    const reads = [a.enter("GET"), a.enter("HEAD"), a.enter(undefined)];
    expect(reads.every((r) => typeof r === "function")).toBe(true);
    expect(a.enter("GET")).toBeUndefined();
    w1?.();
    w1?.(); // a second call must not free a second place
    expect(a.stats()).toEqual({
      readsInFlight: 3,
      writesInFlight: 1,
      eventsInFlight: 0,
      refusedReads: 1,
      refusedWrites: 1,
      refusedEvents: 0,
    });
    expect(a.enter("POST")).toBeTypeOf("function");
    expect(a.enter("POST")).toBeUndefined();
  });

  it("gives POST /v1/events its own small bound: a flood of events leaves the writes' places alone", () => {
    const a = new Admission({ maxWrites: 2, maxEvents: 2 });
    expect(a.enter("POST", "/v1/events")).toBeTypeOf("function");
    expect(a.enter("POST", "/v1/events?x=1")).toBeTypeOf("function");
    expect(a.enter("POST", "/v1/events")).toBeUndefined();
    expect(a.enter("POST", "/v1/workflows/w/runs")).toBeTypeOf("function");
    expect(a.enter("DELETE", "/v1/triggers/t")).toBeTypeOf("function");
    expect(a.enter("GET", "/v1/events/recent")).toBeTypeOf("function");
    expect(a.stats()).toMatchObject({ eventsInFlight: 2, writesInFlight: 2, refusedEvents: 1 });
  });

  it("classifies methods and refuses bounds that are not whole numbers ≥ 1", () => {
    expect(isRead("get")).toBe(true);
    expect(isRead("OPTIONS")).toBe(true);
    expect(isRead("PATCH")).toBe(false);
    expect(() => new Admission({ maxWrites: 0 })).toThrow(RangeError);
    expect(() => new Admission({ maxReads: 1.5 })).toThrow(RangeError);
    expect(() => new Admission({ retryAfterSeconds: -1 })).toThrow(RangeError);
  });
});

describe("standalone HTTP server under admission control", () => {
  it("answers writes over the bound 503 Overloaded with Retry-After, and still serves reads", async () => {
    const gates: Array<() => void> = [];
    const started = await startHttpServer(
      0,
      async (event) => {
        // Writes wait until the test lets them go: they hold their places meanwhile.
        if (event.requestContext.http.method === "POST")
          await new Promise<void>((r) => gates.push(r));
        return { statusCode: 202, body: "{}" };
      },
      { admission: new Admission({ maxWrites: 2, maxReads: 8, retryAfterSeconds: 2 }) },
    );
    server = started.server;
    const base = `http://127.0.0.1:${started.port}`;
    const post = () =>
      fetch(`${base}/v1/workflows/w/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
    const held = [post(), post()];
    await expect.poll(() => gates.length).toBe(2);

    const refused = await post();
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("2");
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("Overloaded");
    expect(body.error.message).toMatch(/retry after 2 s/);

    const read = await fetch(`${base}/v1/health`);
    expect(read.status).toBe(202);

    for (const g of gates) g();
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([202, 202]);
    // Their places are free again.
    const again = post();
    await expect.poll(() => gates.length).toBe(3);
    gates[2]?.();
    expect((await again).status).toBe(202);
  });
});
