/**
 * The standalone HTTP server's own answers on a raw socket (lib/standalone/http-server.ts): a
 * request target that is not a URL is a 400 with the contract's error body and one log line; a
 * body shorter than its Content-Length does not hold the socket past the request timeout. (Each
 * raw request names the server's own Host: any other is refused, allowed-hosts.ts.)
 */
import type { Server } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startHttpServer } from "../../lib/standalone/http-server.js";

let server: Server | undefined;

afterEach(async () => {
  const s = server;
  server = undefined;
  if (!s) return;
  s.closeAllConnections();
  await new Promise<void>((r) => s.close(() => r()));
});

/** Sends `raw` on a new socket; resolves with all it received and when the server closed it. */
function rawExchange(port: number, raw: string): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (d) => {
      text += d;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve({ text, closedAfterMs: performance.now() - started }));
    socket.write(raw);
  });
}

describe("standalone HTTP server", () => {
  it("answers 400 ValidationError, with one log line, to a request target that is not a URL", async () => {
    const lines: string[] = [];
    const started = await startHttpServer(0, async () => ({ statusCode: 200, body: "{}" }), {
      log: (msg) => lines.push(msg),
    });
    server = started.server;
    const { text } = await rawExchange(
      started.port,
      `GET http://[::1/v1/health HTTP/1.1\r\nHost: 127.0.0.1:${started.port}\r\nConnection: close\r\n\r\n`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as {
      error: { code: string; message: string };
    };
    expect(body.error.code).toBe("ValidationError");
    expect(body.error.message).toMatch(/request target/);
    expect(lines).toHaveLength(1);
  });

  it("logs a fault of the handler once and answers 500", async () => {
    const lines: string[] = [];
    const started = await startHttpServer(
      0,
      async () => {
        throw new Error("boom");
      },
      { log: (msg) => lines.push(msg) },
    );
    server = started.server;
    const res = await fetch(`http://127.0.0.1:${started.port}/v1/health`);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("InternalError");
    expect(lines).toHaveLength(1);
  });

  it("closes the socket of a body shorter than its Content-Length at the request timeout", async () => {
    const started = await startHttpServer(0, async () => ({ statusCode: 200, body: "{}" }), {
      log: () => {},
      requestTimeoutMs: 500,
      headersTimeoutMs: 300,
    });
    server = started.server;
    const { text, closedAfterMs } = await rawExchange(
      started.port,
      `POST /v1/workflows/a/runs HTTP/1.1\r\nHost: 127.0.0.1:${started.port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{}`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeLessThan(3_000);
  });
});
