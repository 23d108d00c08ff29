/**
 * The embedded AWS emulators of `shoal standalone` and the tests: dynalite (DynamoDB API, data in
 * LevelDB when a path is given) and fauxqs (SQS API, data in SQLite when a dataDir is given),
 * both on loopback.
 */
import { mkdirSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import dynalite from "dynalite";
import { startFauxqs } from "fauxqs";
import { makeDynaliteWritesAtomic } from "./dynalite-atomic-writes.js";
import { boundDynaliteMemory } from "./dynalite-memory.js";

export interface Emulators {
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  stop(): Promise<void>;
}

/**
 * Starts both emulators.
 * @param dataDir keep data on disk under `<dataDir>/dynamodb` and `<dataDir>/sqs`; in memory when omitted.
 * @param ports 0 (the default) picks free ports.
 */
export async function startEmulators(
  opts: {
    dataDir?: string;
    dynamodbPort?: number;
    sqsPort?: number;
    only?: "dynamodb" | "sqs";
  } = {},
): Promise<Emulators> {
  let dynamoPath: string | undefined;
  let sqsDir: string | undefined;
  if (opts.dataDir) {
    dynamoPath = join(opts.dataDir, "dynamodb");
    sqsDir = join(opts.dataDir, "sqs");
    mkdirSync(dynamoPath, { recursive: true });
    mkdirSync(sqsDir, { recursive: true });
  }
  if (opts.only === "sqs") return startSqsOnly(sqsDir, opts.sqsPort);
  // An item and its index entries in one LevelDB write, as DynamoDB's item writes are atomic.
  makeDynaliteWritesAtomic();
  // Every Query and Scan closes its LevelDB iterators (dynalite leaked them: 3.5 GiB under load).
  boundDynaliteMemory();
  const ddb = dynalite({
    ...(dynamoPath ? { path: dynamoPath } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  await new Promise<void>((resolve, reject) => {
    ddb.once("error", reject);
    ddb.listen(opts.dynamodbPort ?? 0, "127.0.0.1", () => resolve());
  });
  const dynamoPort = (ddb.address() as AddressInfo).port;
  if (opts.only === "dynamodb") {
    return {
      dynamodbEndpoint: `http://127.0.0.1:${dynamoPort}`,
      sqsEndpoint: "",
      stop: () => new Promise<void>((resolve) => ddb.close(() => resolve())),
    };
  }
  const sqs = await startFauxqs({
    port: opts.sqsPort ?? 0,
    host: "localhost",
    logger: false,
    ...(sqsDir ? { dataDir: sqsDir } : {}),
  });
  return {
    dynamodbEndpoint: `http://127.0.0.1:${dynamoPort}`,
    sqsEndpoint: `http://127.0.0.1:${sqs.port}`,
    async stop() {
      await sqs.stop();
      await new Promise<void>((resolve) => ddb.close(() => resolve()));
    },
  };
}

async function startSqsOnly(dataDir: string | undefined, port = 0): Promise<Emulators> {
  const sqs = await startFauxqs({
    port,
    host: "localhost",
    logger: false,
    ...(dataDir ? { dataDir } : {}),
  });
  return {
    dynamodbEndpoint: "",
    sqsEndpoint: `http://127.0.0.1:${sqs.port}`,
    stop: () => sqs.stop(),
  };
}
