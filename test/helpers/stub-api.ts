/**
 * A stub of API v1 for CLI tests: a node:http server on port 0 that records every request and
 * answers with what the test scripts (`stub.reply`), plus `shoal()` running the CLI in-process
 * against it. `useStubApi()` registers the server's start, stop and per-test reset.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { runCli } from "./cli-run.js";

/** One request the stub received. */
export interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
  contentType: string | undefined;
}

/** What the stub answers: a status and a JSON body (none for 204). */
export interface Reply {
  status: number;
  body?: unknown;
}

function apiError(status: number, code: string, message: string, details: unknown[] = []): Reply {
  return { status, body: { error: { code, message, details } } };
}

/** 404 NotFound in the API's error shape. */
export const notFound = (message: string): Reply => apiError(404, "NotFound", message);
/** 409 Conflict in the API's error shape. */
export const conflict = (message: string): Reply => apiError(409, "Conflict", message);
/** 400 ValidationError with its details. */
export const invalid = (message: string, details: Array<{ path: string; message: string }>) =>
  apiError(400, "ValidationError", message, details);

export interface StubApi {
  requests: Seen[];
  /** Answers one request; reset to "no such route" before every test. */
  reply: (req: Seen) => Reply;
  /** Runs `shoal --endpoint <stub> ...args` in-process: exit code and captured output. */
  shoal(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** The requests as `METHOD /path`, for compact assertions. */
  calls(): string[];
  /** The JSON body of the `i`-th request. */
  sent(i?: number): unknown;
}

/** Starts the stub for this test file (beforeAll) and stops it (afterAll). */
export function useStubApi(): StubApi {
  let server: Server | undefined;
  let endpoint = "";
  const stub: StubApi = {
    requests: [],
    reply: () => notFound("no such route"),
    async shoal(args) {
      return runCli(args, { endpoint });
    },
    calls: () => stub.requests.map((r) => `${r.method} ${r.path}`),
    sent(i = 0) {
      const r = stub.requests[i];
      return r && r.body !== "" ? JSON.parse(r.body) : undefined;
    },
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://stub");
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const seen: Seen = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      body: Buffer.concat(chunks).toString("utf8"),
      contentType: req.headers["content-type"],
    };
    stub.requests.push(seen);
    const { status, body } = stub.reply(seen);
    res.writeHead(status, body === undefined ? {} : { "content-type": "application/json" });
    res.end(body === undefined ? "" : JSON.stringify(body));
  };
  beforeAll(async () => {
    const s = createServer((req, res) => {
      handle(req, res).catch((err) => {
        res.writeHead(500);
        res.end(String(err));
      });
    });
    server = s;
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    endpoint = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });
  beforeEach(() => {
    stub.requests = [];
    stub.reply = () => notFound("no such route");
  });
  return stub;
}
