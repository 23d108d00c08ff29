/**
 * Runs the embedded emulators in a child process, so they use the second core instead of
 * competing with the handlers on standalone's event loop. The child exits when its parent goes
 * away, however it goes (its IPC channel closes), so a `kill -9` of standalone leaves nothing.
 */
import { fileURLToPath } from "node:url";
import { forkChild } from "./child-process.js";
import type { Emulators } from "./emulators.js";

const MAIN = fileURLToPath(new URL("./emulator-main.ts", import.meta.url));

/**
 * Starts dynalite and fauxqs, each in a child process of its own (three busy event loops on
 * two cores beat one), with data under `dataDir`.
 */
export async function startEmulatorProcess(dataDir: string): Promise<Emulators> {
  const [ddb, sqs] = await Promise.allSettled([
    startOne(dataDir, "dynamodb"),
    startOne(dataDir, "sqs"),
  ]);
  if (ddb.status === "rejected" || sqs.status === "rejected") {
    if (ddb.status === "fulfilled") await ddb.value.stop();
    if (sqs.status === "fulfilled") await sqs.value.stop();
    throw ddb.status === "rejected" ? ddb.reason : (sqs as PromiseRejectedResult).reason;
  }
  return {
    dynamodbEndpoint: ddb.value.dynamodbEndpoint,
    sqsEndpoint: sqs.value.sqsEndpoint,
    stop: async () => {
      await Promise.all([ddb.value.stop(), sqs.value.stop()]);
    },
  };
}

async function startOne(dataDir: string, only: "dynamodb" | "sqs"): Promise<Emulators> {
  const child = await forkChild(MAIN, [dataDir, only], "emulator", (m) => {
    const msg = m as { ready?: { dynamodbEndpoint: string; sqsEndpoint: string }; error?: string };
    if (msg.error || !msg.ready) throw new Error(msg.error ?? "the emulator process failed");
    return msg.ready;
  });
  return { ...child.ready, stop: child.stop };
}
