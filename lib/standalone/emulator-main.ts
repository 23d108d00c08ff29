/** Entry point of the emulator child process (see emulator-process.ts). */
import { ALLOWED_HOSTS_ENV, parseAllowedHosts } from "./allowed-hosts.js";
import { startEmulators } from "./emulators.js";

// The port: 0 picks a free one; a restart passes the port of the child that died (supervisor.ts).
const [dataDir, portArg, only] = process.argv.slice(2) as [
  string | undefined,
  string | undefined,
  "dynamodb" | "sqs" | undefined,
];
const port = Number(portArg ?? 0);
// A fault inside an emulator (dynalite's "Database is closed" on a full disk) is one line, not
// a stack trace: standalone's supervisor says what died and restarts it.
process.on("uncaughtException", (e) => {
  process.stderr.write(`shoal: the ${only ?? "emulator"} process failed: ${e?.message ?? e}\n`);
  process.exit(1);
});
try {
  const em = await startEmulators({
    ...(dataDir ? { dataDir } : {}),
    ...(only ? { only } : {}),
    ...(only === "sqs" ? { sqsPort: port } : { dynamodbPort: port }),
    // Standalone's names, checked there (emulator-process.ts passes them).
    allowedHosts: parseAllowedHosts(process.env[ALLOWED_HOSTS_ENV], ALLOWED_HOSTS_ENV),
    onLockWait: (path) =>
      process.stderr.write(
        `shoal: waiting for the last run's dynamodb emulator to let go of ${path}\n`,
      ),
  });
  const stop = async () => {
    await em.stop().catch(() => {});
    process.exit(0);
  };
  process.on("message", (m) => {
    if (m === "stop") void stop();
  });
  // The parent died (even by SIGKILL): its IPC channel closed.
  process.on("disconnect", () => void stop());
  // Ctrl-C, and a SIGTERM to the process group (`timeout`, systemd, `docker stop`), reach every
  // child: the parent decides when we stop, after its pollers and workers let go of us.
  process.on("SIGINT", () => {});
  process.on("SIGTERM", () => {});
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
