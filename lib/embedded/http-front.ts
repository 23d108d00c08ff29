/**
 * The embedded backend's AWS-protocol endpoint: one loopback HTTP server that answers DynamoDB
 * (`X-Amz-Target: DynamoDB_20120810.<Operation>`) and SQS (`AmazonSQS.<Operation>`, the JSON
 * protocol of the current SDK) requests from the same in-process engines, so that the CLI, tests
 * and anything else speaking AWS's protocol reach the data standalone runs on. Requests are not
 * authenticated, as with the emulators: it listens on 127.0.0.1 only, and standalone gates it
 * against web pages (DNS rebinding, cross-origin writes: lib/standalone/allowed-hosts.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { EmbeddedDynamoDBClient } from "./dynamodb-client.js";
import { handleDynamoDbHttp } from "./dynamodb-http.js";
import type { EmbeddedSQSClient } from "./sqs-client.js";
import { handleSqsHttp } from "./sqs-http.js";

/** Largest request body accepted, bytes (a BatchWriteItem of 25 items of 400 KB, rounded up). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** A running endpoint. */
export interface HttpFront {
  /** `http://127.0.0.1:<port>`, for both services. */
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * Answers the requests it refuses (and returns true) before anything reads them; false lets the
 * request through.
 */
export type HttpFrontGate = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * Starts the endpoint on `port` (0: a free one) of 127.0.0.1.
 * @param gate what may be refused first (standalone's Host and Origin check); none: everything is served.
 * @throws the listen error (EADDRINUSE when `port` is taken).
 */
export async function startHttpFront(
  clients: { dynamo: EmbeddedDynamoDBClient; sqs: EmbeddedSQSClient },
  port = 0,
  gate?: HttpFrontGate,
): Promise<HttpFront> {
  const server: Server = createServer(async (req, res) => {
    if (gate?.(req, res)) return;
    try {
      const target = String(req.headers["x-amz-target"] ?? "");
      const body = await readBody(req);
      if (body === undefined) {
        res.writeHead(413, { "content-type": "application/x-amz-json-1.0" });
        res.end(JSON.stringify({ __type: "RequestEntityTooLarge", message: "request too large" }));
        return;
      }
      const answer = target.startsWith("DynamoDB_")
        ? await handleDynamoDbHttp(clients.dynamo, target, body)
        : target.startsWith("AmazonSQS.")
          ? await handleSqsHttp(clients.sqs, target, body)
          : {
              status: 400,
              headers: { "content-type": "application/x-amz-json-1.0" },
              body: JSON.stringify({
                __type: "UnknownOperationException",
                message: `unknown X-Amz-Target '${target}': this endpoint serves DynamoDB and SQS`,
              }),
            };
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    } catch (e) {
      res.writeHead(500, { "content-type": "application/x-amz-json-1.0" });
      res.end(JSON.stringify({ __type: "InternalFailure", message: String(e) }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${actual}`,
    port: actual,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
