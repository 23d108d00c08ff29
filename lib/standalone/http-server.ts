/**
 * The standalone API server: turns each HTTP request into the API Gateway HTTP API (payload 2.0)
 * event the API Lambda receives, and the handler's result back into a response.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { MAX_BODY_BYTES } from "../api/http.js";
import { httpApiEvent } from "./lambda-events.js";

async function readBody(req: IncomingMessage): Promise<Buffer | "too-large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return "too-large";
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Builds the v2 event for a request (headers lowercased, repeated query values comma-joined). */
export function toHttpApiEvent(req: IncomingMessage, body: Buffer): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? "/", "http://localhost");
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(",") : v;
  }
  return httpApiEvent({
    method: (req.method ?? "GET").toUpperCase(),
    path: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(body.length ? { body: body.toString("utf8") } : {}),
    sourceIp: req.socket.remoteAddress ?? "",
    protocol: `HTTP/${req.httpVersion}`,
    requestId: randomUUID(),
    timeEpoch: Date.now(),
  });
}

/** Response headers of a result (API Gateway sends numbers and booleans as text). */
function headersOf(result: APIGatewayProxyStructuredResultV2): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) out[k] = String(v);
  return out;
}

/** Starts the server. @throws when the port cannot be bound (EADDRINUSE …). */
export async function startHttpServer(
  port: number,
  handler: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>,
): Promise<{ server: Server; port: number }> {
  const server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      if (body === "too-large") {
        res.writeHead(413, { "content-type": "application/json", connection: "close" });
        res.end(
          JSON.stringify({
            error: {
              code: "PayloadTooLarge",
              message: `the body is larger than ${MAX_BODY_BYTES} bytes`,
            },
          }),
        );
        return;
      }
      const result = await handler(toHttpApiEvent(req, body));
      // API Gateway answers 200 for a result without a status code.
      res.writeHead(result.statusCode ?? 200, headersOf(result));
      res.end(
        result.body && result.isBase64Encoded
          ? Buffer.from(result.body, "base64")
          : (result.body ?? ""),
      );
    } catch {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "InternalError", message: "internal error" } }));
    }
  });
  // Longer than clients' idle keep-alive, so the server is never the side that closes a reused socket.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  return { server, port: typeof address === "object" && address ? address.port : port };
}
