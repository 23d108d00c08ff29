/**
 * The standalone API server: turns each HTTP request into the API Gateway HTTP API (payload 2.0)
 * event the API Lambda receives, and the handler's result back into a response. It has no
 * authentication, so it answers only requests addressed to it by a loopback name or an allowed
 * one, and state-changing requests from no page of another origin (allowed-hosts.ts).
 */
import { randomUUID } from "node:crypto";
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from "node:http";
import type { Socket } from "node:net";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { MAX_BODY_BYTES } from "../api/http.js";
import { createLog, type Log } from "../runtime/log.js";
import { Admission, answerOverloaded, kindOf } from "./admission.js";
import { standalonePolicy } from "./allowed-hosts.js";
import type { ConsoleHandler } from "./console-files.js";
import { refusalOf } from "./host-gate.js";
import { httpApiEvent } from "./lambda-events.js";

/** How long a client may take to send a whole request (headers and body), ms. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long a client may take to send the request's headers, ms. */
export const HEADERS_TIMEOUT_MS = 10_000;

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  /** Where the server's own problems go (a bad request line, a fault); default stderr JSON lines. */
  log?: Log;
  /** Node's `server.requestTimeout`, ms (default {@link REQUEST_TIMEOUT_MS}): a slower request gets a 408 and its socket closed. */
  requestTimeoutMs?: number;
  /** Node's `server.headersTimeout`, ms (default {@link HEADERS_TIMEOUT_MS}, capped at requestTimeoutMs). */
  headersTimeoutMs?: number;
  /** Bounds on requests in flight (admission.ts; default its bounds): over them, a 503 `Overloaded`. */
  admission?: Admission;
  /** Serves the console's files outside `/v1` (console-files.ts); absent: every path is the API's. */
  console?: ConsoleHandler;
  /** Host names answered besides the loopback ones (`--allowed-host`), normalised (allowed-hosts.ts). */
  allowedHosts?: readonly string[];
}

/** The request target, or undefined when it is not a URL (`GET http://[::1/v1/health`). */
function targetOf(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? "/", "http://localhost");
  } catch {
    return undefined;
  }
}

/** Answers the error body of docs/api.md "Errors". */
function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

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
  const url = targetOf(req);
  if (!url) throw new TypeError(`the request target is not a URL: ${req.url}`);
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

/**
 * Node's answer to a request its parser refuses (`clientError`), as Node gives it but with the
 * contract's error body: 431 for headers over Node's limit (16 KiB), 413 for chunk extensions
 * over it, 400 for anything else that is not HTTP/1.1; a request over its timeout keeps Node's
 * 408 with no body. Written only on a socket with no response under way (a pipelined request's
 * answer must not be cut into), then the socket is closed.
 */
function answerClientError(
  err: Error & { code?: string; reason?: string },
  socket: Socket,
  busy: boolean,
): void {
  if (!socket.writable || busy || err.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? [408, "", ""]
      : err.code === "HPE_HEADER_OVERFLOW"
        ? [431, "PayloadTooLarge", "the request line and headers are larger than 16 KiB"]
        : err.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
          ? [413, "PayloadTooLarge", "the chunk extensions are too large"]
          : [
              400,
              "ValidationError",
              `the request is not valid HTTP/1.1 (${err.reason ?? err.code ?? "parse error"})`,
            ];
  const body = code ? JSON.stringify({ error: { code, message } }) : "";
  const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, "Connection: close"];
  if (body)
    head.push("Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`);
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}

/** Response headers of a result (API Gateway sends numbers and booleans as text). */
function headersOf(result: APIGatewayProxyStructuredResultV2): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) out[k] = String(v);
  return out;
}

/**
 * Starts the server on 127.0.0.1. A request target that is not a URL gets a 400
 * ValidationError, a fault of the handler a 500, each with one log line; a request slower than
 * its timeouts (options) gets Node's 408 and its socket closed; a request Node's parser refuses
 * gets the contract's error body (`answerClientError`: 400, 413 or 431) and its socket closed;
 * a request over the bounds on requests in flight gets a 503 `Overloaded` (admission.ts); one
 * addressed to a name not allowed, or a write from a page of another origin, a 403 `Forbidden`
 * before anything else (allowed-hosts.ts).
 * @throws when the port cannot be bound (EADDRINUSE …).
 */
export async function startHttpServer(
  port: number,
  handler: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>,
  options: HttpServerOptions = {},
): Promise<{ server: Server; port: number }> {
  const log = options.log ?? createLog({ quiet: false });
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const admission = options.admission ?? new Admission();
  const hosts = standalonePolicy(options.allowedHosts ?? []);
  const server = createServer({
    requestTimeout,
    headersTimeout: Math.min(options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS, requestTimeout),
    // Node checks both timeouts this often (default 30 s): short timeouts need a short check.
    connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(requestTimeout / 4))),
  });
  // The last response of each socket: a parse error while it is being sent closes the socket unanswered.
  const responses = new WeakMap<Socket, ServerResponse>();
  server.on("clientError", (err, socket) => {
    const res = responses.get(socket as Socket);
    answerClientError(err, socket as Socket, Boolean(res?.headersSent && !res.writableFinished));
  });
  server.on("request", async (req, res) => {
    responses.set(req.socket, res);
    // Before anything reads the request or counts it: a web page's request reaches nothing.
    const refused = refusalOf(req, hosts);
    if (refused) return sendError(res, 403, "Forbidden", refused);
    // Over its bound, a request is refused at once (503, Retry-After) rather than queued.
    const release = admission.enter(req.method, req.url);
    if (!release) return answerOverloaded(res, admission, kindOf(req.method, req.url));
    res.once("close", release);
    if (!targetOf(req)) {
      log("http: bad request target", { method: req.method, target: req.url?.slice(0, 200) });
      // The body (if any) is not read: close the connection rather than parse what follows.
      res.shouldKeepAlive = false;
      sendError(res, 400, "ValidationError", "the request target is not a valid URL");
      return;
    }
    if (options.console?.(req, res)) return;
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
    } catch (e) {
      // The client went away, or Node closed a request over its timeout (its own 408): no fault.
      if (req.socket.destroyed) return;
      log("http: request failed", { method: req.method, path: req.url, error: String(e) });
      if (res.headersSent) res.destroy();
      else sendError(res, 500, "InternalError", "internal error");
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
