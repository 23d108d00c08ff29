/**
 * One HTTP request with exactly the headers given (Host, Origin, Sec-Fetch-Site, cookies…), as a
 * browser or a hostile page would send it: `fetch` sets some of them itself.
 */
import { type IncomingHttpHeaders, request } from "node:http";

/** The answer: status, headers, text, and the text parsed as JSON (undefined when it is not). */
export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
  json: any;
}

/** `method path` to 127.0.0.1:`port`; Host defaults to `127.0.0.1:<port>`. */
export function rawRequest(
  port: number,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        headers: { host: `127.0.0.1:${port}`, ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}
