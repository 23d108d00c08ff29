/**
 * A local HTTP receiver for alert tests: records every request's path, headers and JSON body, and
 * answers what the test says (200 with an empty body by default). Listens on 127.0.0.1 and a free
 * port.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the receiver got. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read the JSON they received loosely
  body: any;
}

/** A running receiver. */
export interface Receiver {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  url: string;
  /** Every request so far, in arrival order. */
  got: Received[];
  close(): Promise<void>;
}

/**
 * Starts a receiver.
 * @param answer what to answer each request (after it was recorded): status and body.
 */
export async function startReceiver(
  answer: (r: Received) => { status: number; body?: string } = () => ({ status: 200 }),
): Promise<Receiver> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (d) => {
      text += d;
    });
    req.on("end", () => {
      const r: Received = { path: req.url ?? "", headers: req.headers, body: JSON.parse(text) };
      got.push(r);
      const a = answer(r);
      res.writeHead(a.status).end(a.body ?? "");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
