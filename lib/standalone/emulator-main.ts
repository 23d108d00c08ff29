/** Entry point of the emulator child process (see emulator-process.ts). */
import { startEmulators } from "./emulators.js";

const [dataDir, only] = process.argv.slice(2) as [
  string | undefined,
  "dynamodb" | "sqs" | undefined,
];
try {
  const em = await startEmulators({ ...(dataDir ? { dataDir } : {}), ...(only ? { only } : {}) });
  const stop = async () => {
    await em.stop().catch(() => {});
    process.exit(0);
  };
  process.on("message", (m) => {
    if (m === "stop") void stop();
  });
  // The parent died (even by SIGKILL): its IPC channel closed.
  process.on("disconnect", () => void stop());
  process.on("SIGINT", () => {}); // Ctrl-C reaches the whole group: the parent decides when we stop
  process.send?.({ ready: { dynamodbEndpoint: em.dynamodbEndpoint, sqsEndpoint: em.sqsEndpoint } });
} catch (e) {
  const msg = String((e as Error)?.message ?? e);
  process.send?.({
    error: /lock/i.test(msg)
      ? `the data directory ${dataDir} is in use by another shoal standalone`
      : msg,
  });
  process.exit(1);
}
