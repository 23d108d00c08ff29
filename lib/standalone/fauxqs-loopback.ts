/**
 * fauxqs on 127.0.0.1 only, behind a gate (host-gate.ts).
 *
 * fauxqs 2.4.1 listens on every interface whatever its `host` option says (dist/app.js,
 * `startFauxqs`: `app.listen({ port, host: "0.0.0.0" })`; `host` only names the host of its queue
 * URLs), and offers no server factory: the SQS emulator of `--backend emulators` was open,
 * unauthenticated, to the whole network. The Node server its Fastify app creates is caught as it
 * is created (during startFauxqs's synchronous part, before the Fastify app is ready and calls
 * `listen`), its `listen` is pinned to 127.0.0.1 and its requests are gated. If fauxqs ever
 * creates its server otherwise, the start fails, saying so, rather than serve unconfined.
 */

import type * as http from "node:http";
import { createRequire } from "node:module";
import type { ListenOptions } from "node:net";
import { type FauxqsServer, startFauxqs } from "fauxqs";
import { gateRequests, type RequestGate } from "./host-gate.js";

/** The `node:http` module object that CommonJS packages (Fastify) call `createServer` on. */
const httpModule = createRequire(import.meta.url)("node:http") as typeof http;

/**
 * Starts fauxqs as `startFauxqs(options)` does, but listening on 127.0.0.1 only and with `gate`
 * in front of its requests.
 * @throws what startFauxqs throws (EADDRINUSE …), or an Error when fauxqs did not create exactly
 *   one node:http server during its synchronous start (a fauxqs version this does not know).
 */
export async function startFauxqsOnLoopback(
  options: Parameters<typeof startFauxqs>[0],
  gate: RequestGate,
): Promise<FauxqsServer> {
  const created: http.Server[] = [];
  const createServer = httpModule.createServer;
  httpModule.createServer = ((...args: unknown[]) => {
    const server = Reflect.apply(createServer, httpModule, args) as http.Server;
    created.push(server);
    return server;
  }) as typeof http.createServer;
  let starting: Promise<FauxqsServer>;
  try {
    starting = startFauxqs(options);
  } finally {
    httpModule.createServer = createServer;
  }
  const [server] = created;
  if (!server || created.length > 1) {
    // Its own error first (a data dir it cannot open), else stopped and said why.
    const started = await starting;
    await started.stop();
    throw new Error(
      `fauxqs created ${created.length} node:http servers as it started (1 expected): this version cannot be confined to 127.0.0.1`,
    );
  }
  const listen = server.listen;
  server.listen = ((...args: unknown[]) => {
    const [first, ...rest] = args;
    if (typeof first !== "object" || first === null) {
      throw new Error(
        "fauxqs's server listen was called without options: cannot pin it to 127.0.0.1",
      );
    }
    return Reflect.apply(listen, server, [
      { ...(first as ListenOptions), host: "127.0.0.1" },
      ...rest,
    ]);
  }) as typeof server.listen;
  gateRequests(server, gate);
  return starting;
}
