/**
 * The embedded AWS emulators of `shoal standalone` and the tests: dynalite (DynamoDB API, data in
 * LevelDB when a path is given) and fauxqs (SQS API, data in SQLite when a dataDir is given),
 * both on 127.0.0.1, answering only requests addressed to a loopback name or an allowed one
 * (allowed-hosts.ts: DNS rebinding, cross-origin writes).
 */
import { mkdirSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import dynalite from "dynalite";
import { makeDynaliteWritesAtomic } from "./dynalite-atomic-writes.js";
import { boundDynaliteMemory } from "./dynalite-memory.js";
import { startFauxqsOnLoopback } from "./fauxqs-loopback.js";
import { awsProtocolGate, gateRequests, type RequestGate } from "./host-gate.js";
import { waitForLevelDbLock } from "./leveldb-lock.js";

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
    /** Called when dynalite's database is still locked by a previous run's emulator, before waiting for it. */
    onLockWait?: (path: string) => void;
    /** Names answered besides the loopback ones (`--allowed-host`), normalised (allowed-hosts.ts). */
    allowedHosts?: readonly string[];
  } = {},
): Promise<Emulators> {
  const gate = awsProtocolGate(opts.allowedHosts ?? []);
  let dynamoPath: string | undefined;
  let sqsDir: string | undefined;
  if (opts.dataDir) {
    dynamoPath = join(opts.dataDir, "dynamodb");
    sqsDir = join(opts.dataDir, "sqs");
    mkdirSync(dynamoPath, { recursive: true });
    mkdirSync(sqsDir, { recursive: true });
  }
  if (opts.only === "sqs") return startSqsOnly(sqsDir, opts.sqsPort, gate);
  // An item and its index entries in one LevelDB write, as DynamoDB's item writes are atomic.
  makeDynaliteWritesAtomic();
  // Every Query and Scan closes its LevelDB iterators (dynalite leaked them: 3.5 GiB under load).
  boundDynaliteMemory();
  if (dynamoPath) {
    const path = dynamoPath;
    await waitForLevelDbLock(path, {
      timeoutMs: LOCK_WAIT_MS,
      ...(opts.onLockWait ? { onWait: () => opts.onLockWait?.(path) } : {}),
    });
  }
  const ddb = dynalite({
    ...(dynamoPath ? { path: dynamoPath } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  gateRequests(ddb, gate);
  await new Promise<void>((resolve, reject) => {
    ddb.once("error", reject);
    ddb.listen(opts.dynamodbPort ?? 0, "127.0.0.1", () => resolve());
  });
  const dynamoPort = (ddb.address() as AddressInfo).port;
  if (opts.only === "dynamodb") {
    return {
      dynamodbEndpoint: `http://127.0.0.1:${dynamoPort}`,
      sqsEndpoint: "",
      stop: () => closeDynalite(ddb),
    };
  }
  const sqs = await startSqsOnly(sqsDir, opts.sqsPort, gate);
  return {
    dynamodbEndpoint: `http://127.0.0.1:${dynamoPort}`,
    sqsEndpoint: sqs.sqsEndpoint,
    async stop() {
      await sqs.stop();
      await closeDynalite(ddb);
    },
  };
}

/**
 * How long a new dynalite waits for the last run's to let go of its database, ms: dynalite's
 * own graceful close gives up after 30 s.
 */
const LOCK_WAIT_MS = 30_000;

/**
 * Closes dynalite's server and database. Connections are cut, as fauxqs does
 * (`forceCloseConnections`): dynalite's close waits for every connection to end, and the
 * keep-alive connections of a `shoal worker` or `shoal sweeper` that outlive standalone never
 * end, so the process would live on holding the database's lock. A request cut short is retried
 * by the SDK, against the next run.
 */
function closeDynalite(ddb: ReturnType<typeof dynalite>): Promise<void> {
  const closed = new Promise<void>((resolve) => ddb.close(() => resolve()));
  ddb.closeAllConnections();
  return closed;
}

async function startSqsOnly(
  dataDir: string | undefined,
  port: number | undefined,
  gate: RequestGate,
): Promise<Emulators> {
  const sqs = await startFauxqsOnLoopback(
    { port: port ?? 0, host: "localhost", logger: false, ...(dataDir ? { dataDir } : {}) },
    gate,
  );
  return {
    dynamodbEndpoint: "",
    sqsEndpoint: `http://127.0.0.1:${sqs.port}`,
    stop: () => sqs.stop(),
  };
}
