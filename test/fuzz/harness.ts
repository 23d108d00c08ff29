/**
 * The fuzzer's target: the real node HTTP server standalone uses (lib/standalone/http-server.ts,
 * with short request timeouts so truncated bodies are answered within a second) in front of
 * `handleApiRequest`, over the shared emulators with a private table prefix. Every answer is
 * also checked against the OpenAPI document (test/helpers/answer-schemas.ts); the API's and the
 * server's log lines are kept so that a failure can show them.
 */

import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { handleApiRequest } from "../../lib/api/router.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { startHttpServer } from "../../lib/standalone/http-server.js";
import { answerChecker } from "../helpers/answer-schemas.js";
import { useTestAws } from "../helpers/aws-env.js";
import { FUZZ_REQUEST_TIMEOUT_MS } from "./raw-socket.js";

/** One request as the fuzzer sends it (the path already percent-encoded). */
export interface FuzzRequest {
  method: string;
  /** Request target: path and query, percent-encoded. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** An answer: status, headers (lowercase names), body text. */
export interface FuzzAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** The running target. */
export interface FuzzServer {
  rt: Runtime;
  port: number;
  /** Sends one request on a kept-alive connection. @throws when no answer comes within 15 s. */
  send(r: FuzzRequest): Promise<FuzzAnswer>;
  /** Answers since the last call that do not match the OpenAPI document (drained). */
  takeViolations(): string[];
  /** Log lines (API and HTTP server) since the last call (drained). */
  takeLogs(): string[];
  stop(): Promise<void>;
}

/** Starts the target on a free port with its own tables, queues and data directory. */
export async function startFuzzServer(): Promise<FuzzServer> {
  const aws = await useTestAws();
  const dataDir = await mkdtemp(join(tmpdir(), "shoal-fuzz-"));
  const logs: string[] = [];
  const log = (msg: string, fields?: Record<string, unknown>) => {
    logs.push(JSON.stringify({ msg, ...fields }).slice(0, 4000));
  };
  const rt = createRuntime({ ...aws.config, dataDir }, { log });
  const check = answerChecker();
  const violations: string[] = [];
  const started = await startHttpServer(
    0,
    async (e) => {
      const result = await handleApiRequest(rt.api, e);
      const violation = check(e, result);
      if (violation) violations.push(violation);
      return result;
    },
    { log, requestTimeoutMs: FUZZ_REQUEST_TIMEOUT_MS, headersTimeoutMs: FUZZ_REQUEST_TIMEOUT_MS },
  );
  const server: Server = started.server;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (r: FuzzRequest) =>
    new Promise<FuzzAnswer>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: started.port,
          method: r.method,
          path: r.path,
          // An explicit length: Node's client sends a GET or DELETE body without one otherwise.
          headers: r.body ? { ...r.headers, "content-length": String(r.body.length) } : r.headers,
          agent,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text: Buffer.concat(chunks).toString("utf8"),
            }),
          );
        },
      );
      req.setTimeout(15_000, () => req.destroy(new Error("no answer within 15 s")));
      req.on("error", reject);
      req.end(r.body);
    });
  return {
    rt,
    port: started.port,
    send,
    takeViolations: () => violations.splice(0),
    takeLogs: () => logs.splice(0),
    stop: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rt.clients.destroy();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
