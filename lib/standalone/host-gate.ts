/**
 * The Host and Origin check of allowed-hosts.ts applied to Node's requests: on standalone's API
 * (http-server.ts), on its AWS-protocol endpoints (the embedded backend's, dynalite and fauxqs)
 * and on `shoal console`'s proxy.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { type HostPolicy, hostRefusal, standalonePolicy } from "./allowed-hosts.js";

/** Answers the requests it refuses (and says so: true); false lets the request through. */
export type RequestGate = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Why `req` is refused under `policy` ({@link hostRefusal}), or undefined. */
export function refusalOf(req: IncomingMessage, policy: HostPolicy): string | undefined {
  const origin = req.headers.origin;
  return hostRefusal(
    {
      host: req.headers.host,
      origin: Array.isArray(origin) ? origin.join(", ") : origin,
      method: req.method,
      port: req.socket.localPort ?? 0,
    },
    policy,
  );
}

/**
 * The gate of standalone's AWS-protocol endpoints: a refused request gets a 403 in the AWS JSON
 * protocol's error shape (`{"__type":"AccessDeniedException","message":…}`), which the SDKs and
 * the `aws` CLI show; its body is not read.
 */
export function awsProtocolGate(allowedHosts: readonly string[]): RequestGate {
  const policy = standalonePolicy(allowedHosts);
  return (req, res) => {
    const refused = refusalOf(req, policy);
    if (!refused) return false;
    const body = JSON.stringify({ __type: "AccessDeniedException", message: refused });
    res.writeHead(403, {
      "content-type": "application/x-amz-json-1.0",
      "content-length": Buffer.byteLength(body),
    });
    res.end(body);
    return true;
  };
}

/**
 * Puts `gate` in front of the `request` listeners `server` has (those of a server another
 * package made: dynalite's, fauxqs's Fastify): a request the gate answers reaches none of them.
 */
export function gateRequests(server: Server, gate: RequestGate): void {
  const listeners = server.listeners("request") as Array<
    (req: IncomingMessage, res: ServerResponse) => void
  >;
  server.removeAllListeners("request");
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (gate(req, res)) return;
    for (const listener of listeners) listener.call(server, req, res);
  });
}
