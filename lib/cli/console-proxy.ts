/**
 * The local server of `shoal console`: the built console at `/` and the API's `/v1/` paths
 * proxied to a deployed Shoal, each request authenticated by the CLI's own code (signing.ts:
 * SigV4 from the user's AWS credential chain, or a bearer token), so no credential ever reaches
 * the browser and the IAM-authorised API needs no new auth scheme.
 *
 * Because this server signs whatever reaches it, it answers its own console only: it listens on
 * 127.0.0.1, refuses a request whose Host is not its own (DNS rebinding: a page of another site
 * whose name now resolves to 127.0.0.1), an Origin that is not its own or a cross-site fetch
 * (CSRF from another page open in the browser), and forwards only what the API needs (method,
 * path, query, content-type, accept and the body), never cookies or the browser's Authorization.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { MAX_BODY_BYTES } from "../api/http.js";
import type { HostPolicy } from "../standalone/allowed-hosts.js";
import { consoleFiles } from "../standalone/console-files.js";
import { refusalOf } from "../standalone/host-gate.js";
import { CliError } from "./errors.js";
import { awsRefusal } from "./http.js";
import { type Authorization, encodeQuery } from "./signing.js";

/** How long the deployed API may take to answer one request (the CLI's own ceiling), ms. */
export const PROXY_TIMEOUT_MS = 30_000;
/** Response header naming the API the console talks to, so the page can show it. */
export const ENDPOINT_HEADER = "x-shoal-endpoint";

/** Options of {@link startConsoleProxy}. */
export interface ConsoleProxyOptions {
  /** The deployed API's base URL (its `/v1/` paths are appended), e.g. `https://abc.execute-api.eu-west-1.amazonaws.com`. */
  endpoint: string;
  /** Authenticates each forwarded request (signing.ts); none: forwarded as they are. */
  authorization?: Authorization;
  /** Port on 127.0.0.1 (0: any free port). */
  port: number;
  /** The built console (default: the one shipped with Shoal, console/dist). */
  consoleDir?: string;
  /** Per-request ceiling, ms (default {@link PROXY_TIMEOUT_MS}). */
  timeoutMs?: number;
}

/** A running proxy. */
export interface ConsoleProxy {
  /** The port it listens on (the one chosen when asked for 0). */
  port: number;
  /** The console's address, `http://127.0.0.1:<port>/`. */
  url: string;
  server: Server;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/**
 * Starts the console proxy on 127.0.0.1 (see the module comment for what it refuses).
 * @throws CliError naming the port and `--port` when the port is taken or not allowed.
 */
export async function startConsoleProxy(opts: ConsoleProxyOptions): Promise<ConsoleProxy> {
  const endpoint = opts.endpoint.replace(/\/+$/, "");
  const files = consoleFiles(opts.consoleDir);
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else sendError(res, 500, "InternalError", `console proxy: ${(err as Error).message}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refused = refusalOf(req, OWN_PAGE_ONLY);
    if (refused) return sendError(res, 403, "Forbidden", refused);
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://localhost");
    } catch {
      return sendError(res, 400, "ValidationError", "the request target is not a valid URL");
    }
    const api = url.pathname === "/v1" || url.pathname.startsWith("/v1/");
    if (!api) {
      if (files(req, res)) return;
      return sendError(res, 404, "NotFound", `no such page: ${req.method} ${url.pathname}`);
    }
    // Navigations from other sites may open console pages (a shared link); never the API.
    const site = req.headers["sec-fetch-site"];
    if (site === "cross-site" || site === "same-site") {
      return sendError(res, 403, "Forbidden", "API requests from other sites are refused");
    }
    await forward(req, res, url, {
      endpoint,
      authorization: opts.authorization,
      timeoutMs: opts.timeoutMs ?? PROXY_TIMEOUT_MS,
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => reject(listenError(err, opts.port)));
    server.listen({ port: opts.port, host: "127.0.0.1", exclusive: true }, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The port problem in the words `shoal standalone` uses (preflight.ts), with the flag to change it. */
function listenError(err: NodeJS.ErrnoException, port: number): CliError {
  const message =
    err.code === "EADDRINUSE"
      ? `port ${port} is in use: stop what listens there or pass --port`
      : err.code === "EACCES"
        ? `port ${port} needs privileges this user does not have: pass --port with a port above 1023`
        : `port ${port} cannot be listened on (${err.code ?? err.message}): pass --port`;
  return new CliError(message, { cause: err });
}

/**
 * The console's own page only, as standalone's check decides it (lib/standalone/allowed-hosts.ts):
 * a loopback Host on this port, and an Origin, when sent, of this server even on a read (what
 * this server forwards is signed with the user's credentials). No other name can be allowed.
 */
const OWN_PAGE_ONLY: HostPolicy = {
  server: "shoal console",
  allowedHosts: [],
  originOnReads: true,
};

/** The error body of docs/api.md "Errors", with its status. */
function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(body);
}

/** The body, or "too-large" past the API's own limit (known from content-length before reading). */
async function readBody(req: IncomingMessage): Promise<Buffer | "too-large"> {
  if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return "too-large";
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return "too-large";
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * The query as the signer canonicalises it (signing.ts `encodeQuery`), so that what is signed is
 * what is sent. A repeated name is joined with commas, as API Gateway hands it to the API.
 */
function signableQuery(search: URLSearchParams): string {
  const query = new Map<string, string>();
  for (const [k, v] of search) {
    const seen = query.get(k);
    query.set(k, seen === undefined ? v : `${seen},${v}`);
  }
  return encodeQuery(Object.fromEntries(query));
}

/** Response headers passed back to the browser besides content-type. */
const PASSED = ["cache-control", "content-disposition", "etag", "last-modified", "retry-after"];

interface Upstream {
  endpoint: string;
  authorization: Authorization | undefined;
  timeoutMs: number;
}

/**
 * Sends one `/v1/` request to the API, authenticated, and relays the answer: 413 for a body over
 * the API's limit (before anything is signed), 401 when there are no credentials to sign with,
 * 502 when the API cannot be reached, 504 when it does not answer in time.
 */
async function forward(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  up: Upstream,
): Promise<void> {
  const method = (req.method ?? "GET").toUpperCase();
  const body = await readBody(req);
  if (body === "too-large") {
    // The rest of the body is not read: close the connection rather than parse it.
    res.shouldKeepAlive = false;
    return sendError(
      res,
      413,
      "PayloadTooLarge",
      `the body is larger than ${MAX_BODY_BYTES} bytes`,
    );
  }
  const target = new URL(`${up.endpoint}${url.pathname}${signableQuery(url.searchParams)}`);
  const signed: Record<string, string> = {};
  let payload: string | undefined;
  if (body.length > 0 && method !== "GET" && method !== "HEAD") {
    signed["content-type"] = req.headers["content-type"] ?? "application/json";
    payload = body.toString("utf8");
  }
  let auth: Record<string, string> = {};
  try {
    if (up.authorization) {
      auth = await up.authorization.authorize({
        method,
        url: target,
        headers: signed,
        ...(payload !== undefined ? { body: payload } : {}),
      });
    }
  } catch (err) {
    const message = (err as Error).message.replace(/\n\s*/g, "; ");
    // No credentials (or an expired SSO session): the CLI's own message says what to run.
    if (err instanceof CliError) return sendError(res, 401, "NoCredentials", message);
    return sendError(res, 500, "InternalError", `cannot sign the request: ${message}`);
  }
  const headers = { accept: req.headers.accept ?? "application/json", ...signed, ...auth };
  // The browser went away (a log it stopped following): stop waiting for the API too.
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  let answer: Response;
  try {
    answer = await fetch(target, {
      method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
      // A redirect would be followed with the signature of another URL: relay it instead.
      redirect: "manual",
      signal: AbortSignal.any([gone.signal, AbortSignal.timeout(up.timeoutMs)]),
    });
  } catch (err) {
    if (gone.signal.aborted) return;
    if (err instanceof Error && err.name === "TimeoutError") {
      return sendError(
        res,
        504,
        "GatewayTimeout",
        `Shoal at ${up.endpoint} did not answer ${method} ${url.pathname} within ${up.timeoutMs / 1000}s`,
      );
    }
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return sendError(
      res,
      502,
      "BadGateway",
      `cannot reach Shoal at ${up.endpoint} (${cause?.code ?? cause?.message ?? (err as Error).message}): check the network and the endpoint (\`shoal config show\` says where it comes from)`,
    );
  }
  await relay(answer, res, up);
}

/**
 * Writes the API's answer back: a success streamed as it comes (a long log page is never held
 * whole), the API's error JSON unchanged, and an error that is not the API's (AWS refusing the
 * signature, a gateway's own `{"message": …}` or HTML) turned into the API's error shape so the
 * console shows what happened.
 */
async function relay(answer: Response, res: ServerResponse, up: Upstream): Promise<void> {
  const headers: Record<string, string> = { [ENDPOINT_HEADER]: up.endpoint };
  const type = answer.headers.get("content-type");
  if (type) headers["content-type"] = type;
  for (const name of PASSED) {
    const value = answer.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  if (answer.status >= 400) {
    const text = await answer.text();
    const parsed = parseJson(text);
    if (isRecord(parsed) && isRecord(parsed.error)) {
      res.writeHead(answer.status, headers);
      res.end(text);
      return;
    }
    const refused = awsRefusal(answer, parsed, up);
    if (refused) return sendError(res, answer.status, refused.code, refused.message);
    const said = isRecord(parsed) ? (parsed.message ?? parsed.Message) : undefined;
    const what =
      typeof said === "string" ? said : text.trim().slice(0, 200) || answer.statusText || "";
    return sendError(
      res,
      answer.status,
      `HTTP${answer.status}`,
      `${up.endpoint} answered HTTP ${answer.status}${what ? `: ${what}` : ""}`,
    );
  }
  res.writeHead(answer.status, headers);
  if (!answer.body) {
    res.end();
    return;
  }
  try {
    await pipeline(Readable.fromWeb(answer.body as NodeReadableStream<Uint8Array>), res);
  } catch {
    // The API or the browser went away mid-answer: nothing can be said any more.
    res.destroy();
  }
}

function parseJson(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
