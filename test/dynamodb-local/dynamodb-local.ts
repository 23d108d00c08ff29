/**
 * Starts Amazon's DynamoDB Local (in memory, a free port) for `npm run test:dynamodb-local`, and
 * makes sure it dies with the test run. Java runs under a small `sh` supervisor that also watches
 * this process: when Node exits in any way (even SIGKILL), the supervisor kills java within a
 * second, so no JVM is left behind.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { locateDynamoDbLocal } from "../../scripts/dynamodb-local.js";

/** A running DynamoDB Local. */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Stops java and waits for it (idempotent). */
  stop(): Promise<void>;
}

/**
 * The supervisor: java in the background, a watchdog that kills it once `$1` (this Node
 * process) is gone, and a trap that forwards TERM/INT/HUP; then it removes java's working
 * directory `$2` and exits with java's status.
 */
const SUPERVISOR = `
node_pid=$1; dir=$2; shift 2
java "$@" &
j=$!
( while kill -0 "$node_pid" 2>/dev/null; do sleep 1; done; kill "$j" 2>/dev/null ) &
w=$!
trap 'kill "$j" 2>/dev/null' TERM INT HUP
wait "$j"; st=$?
wait "$j" 2>/dev/null
kill "$w" 2>/dev/null
rm -rf -- "$dir"
exit "$st"
`;

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => resolve());
  });
  const addr = srv.address();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  if (addr === null || typeof addr === "string") throw new Error("no free port");
  return addr.port;
}

/** Resolves when the child has exited (at once if it already has). */
function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * Starts DynamoDB Local and waits until it answers ListTables (the JVM takes 2–5 s).
 * Tables are namespaced by access key and region (no `-sharedDb`, as on AWS accounts): the
 * clients must all use the same ones, as test/helpers/aws-env.ts does.
 * @param timeoutMs how long to wait for the first answer.
 * @throws Error when java is missing, exits or does not answer in time (java is stopped first).
 */
export async function startDynamoDbLocal(timeoutMs = 60_000): Promise<DynamoDbLocal> {
  const java = spawnSync("java", ["-version"], { stdio: "ignore" });
  if (java.error || java.status !== 0) {
    throw new Error("DynamoDB Local needs Java 17 or later: no working `java` on the PATH");
  }
  const { jar, libDir } = locateDynamoDbLocal();
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const args = [
    `-Djava.library.path=${libDir}`,
    "-jar",
    jar,
    "-inMemory",
    "-port",
    String(port),
    "-disableTelemetry",
  ];
  // Its own working directory (DynamoDB Local may write dynamodb-local-metadata.json there),
  // removed by the supervisor when java ends.
  const cwd = mkdtempSync(join(tmpdir(), "shoal-ddb-local-"));
  const child = spawn("sh", ["-c", SUPERVISOR, "sh", String(process.pid), cwd, ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Keep draining java's output (a full pipe would block it); keep the tail for errors.
  let tail = "";
  const keep = (b: Buffer) => {
    tail = (tail + b.toString()).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const killOnExit = () => child.kill("SIGTERM");
  process.once("exit", killOnExit);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      process.off("exit", killOnExit);
      child.kill("SIGTERM");
      const done = exited(child);
      // Unref'd: the grace timer must not hold the process open once java is gone.
      const grace = sleep(10_000, true, { ref: false });
      const late = await Promise.race([done.then(() => false), grace]);
      if (late) {
        child.kill("SIGKILL");
        await done;
      }
    })();
    return stopping;
  };

  const client = new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts: 1,
  });
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`DynamoDB Local exited (${child.exitCode ?? child.signalCode}): ${tail}`);
      }
      try {
        await client.send(new ListTablesCommand({}));
        break;
      } catch (e) {
        if (Date.now() > deadline) {
          throw new Error(`DynamoDB Local did not answer on ${endpoint}: ${String(e)}\n${tail}`);
        }
        await sleep(200);
      }
    }
  } catch (e) {
    await stop();
    throw e;
  } finally {
    client.destroy();
  }
  return { endpoint, stop };
}
