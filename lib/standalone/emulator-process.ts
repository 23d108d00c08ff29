/**
 * Runs the embedded emulators in a child process, so they use the second core instead of
 * competing with the handlers on standalone's event loop. The child exits when its parent goes
 * away, however it goes (its IPC channel closes), so a `kill -9` of standalone leaves nothing.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
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

function startOne(dataDir: string, only: "dynamodb" | "sqs"): Promise<Emulators> {
  return new Promise((resolve, reject) => {
    const child = fork(MAIN, [dataDir, only], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      execArgv: [
        ...process.execArgv.filter((a) => !a.startsWith("--cpu-prof")),
        "--import",
        "tsx",
        "--no-warnings",
      ],
    });
    const onExit = (code: number | null) =>
      reject(new Error(`the emulator process exited (${code}) before it was ready`));
    child.once("exit", onExit);
    child.once(
      "message",
      (m: { ready?: { dynamodbEndpoint: string; sqsEndpoint: string }; error?: string }) => {
        child.off("exit", onExit);
        if (m.error || !m.ready) {
          child.kill("SIGKILL");
          reject(new Error(m.error ?? "the emulator process failed"));
          return;
        }
        resolve({
          ...m.ready,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done();
              child.once("exit", () => done());
              child.send("stop");
            }),
        });
      },
    );
  });
}
