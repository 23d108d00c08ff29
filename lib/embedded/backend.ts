/**
 * The embedded backend of `shoal standalone` (the default; `--backend emulators` keeps dynalite
 * and fauxqs): DynamoDB and SQS implemented in-process on two SQLite files under
 * `<dataDir>/embedded` (lib/embedded/dynamodb-*.ts, sqs-*.ts). Every process of one standalone
 * (the main one, its worker and sweeper children, `shoal worker`s started from its
 * endpoints.env) opens the same files, with SQLite's locking between them; an HTTP endpoint
 * speaking the AWS protocol serves everything else (http-front.ts).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedDynamoDBClient } from "./dynamodb-client.js";
import { type HttpFront, type HttpFrontGate, startHttpFront } from "./http-front.js";
import { EmbeddedSQSClient } from "./sqs-client.js";

/** The SQLite files of an embedded data directory. */
export function embeddedFiles(dir: string): { dynamodb: string; sqs: string } {
  return { dynamodb: join(dir, "dynamodb.sqlite"), sqs: join(dir, "sqs.sqlite") };
}

/**
 * New clients on the files of `dir` (created when missing), for this process.
 * @param dir the embedded data directory (`<dataDir>/embedded`).
 * @param urlBase what SQS queue URLs start with (the HTTP endpoint, so URLs work over HTTP too).
 */
export function openEmbeddedClients(
  dir: string,
  region: string,
  urlBase?: string,
): { dynamo: EmbeddedDynamoDBClient; sqs: EmbeddedSQSClient } {
  mkdirSync(dir, { recursive: true });
  const files = embeddedFiles(dir);
  return {
    dynamo: new EmbeddedDynamoDBClient({ file: files.dynamodb, region }),
    sqs: new EmbeddedSQSClient({ file: files.sqs, region, ...(urlBase ? { urlBase } : {}) }),
  };
}

/** A running embedded backend: the same shape as the emulators' (lib/standalone/emulators.ts). */
export interface EmbeddedBackend {
  /** The AWS-protocol endpoint of both services. */
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  /** Where the SQLite files are (SHOAL_EMBEDDED_DIR of the processes that join). */
  dir: string;
  stop(): Promise<void>;
}

/**
 * Opens the files of `dir` and serves them over HTTP on `port` of 127.0.0.1 (0: a free one),
 * behind `gate` when one is given (http-front.ts).
 * @throws the listen error (EADDRINUSE) or SQLite's (a file that is not a database).
 */
export async function startEmbeddedBackend(opts: {
  dir: string;
  region?: string;
  port?: number;
  gate?: HttpFrontGate;
}): Promise<EmbeddedBackend> {
  const region = opts.region ?? "us-east-1";
  const clients = openEmbeddedClients(opts.dir, region);
  let front: HttpFront;
  try {
    front = await startHttpFront(clients, opts.port ?? 0, opts.gate);
  } catch (e) {
    clients.dynamo.destroy();
    clients.sqs.destroy();
    throw e;
  }
  return {
    dynamodbEndpoint: front.endpoint,
    sqsEndpoint: front.endpoint,
    dir: opts.dir,
    async stop() {
      await front.stop();
      clients.dynamo.destroy();
      clients.sqs.destroy();
    },
  };
}
