/**
 * The AWS simulation's backend in a process of its own: the embedded backend
 * (lib/embedded/backend.ts) serving its AWS-protocol endpoint from a child, so that SQLite and
 * the endpoint's HTTP work use the second core while the simulated functions, their SDK clients
 * and the event source mappings keep the first. With both in one process the event loop
 * saturated during a wide fan-out, and the figures measured this machine's one core.
 *   node --import tsx bench/aws-sim-backend.ts <dir>   (forked by startBackendProcess)
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startEmbeddedBackend } from "../lib/embedded/backend.js";
import type { Emulators } from "../lib/standalone/emulators.js";

/** What the simulation needs of a backend (the emulators' shape, aws-sim-deploy.ts `Backend`). */
type Backend = Pick<Emulators, "dynamodbEndpoint" | "sqsEndpoint" | "stop">;

/**
 * Forks the backend child on `dir` and waits for its endpoint.
 * @throws Error when the child exits before it answers (its stderr shows why).
 */
export async function startBackendProcess(dir: string): Promise<Backend> {
  const child = fork(fileURLToPath(import.meta.url), [dir], {
    execArgv: ["--import", "tsx", "--no-warnings"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const [msg] = (await Promise.race([
    once(child, "message"),
    once(child, "exit").then(([code]) => {
      throw new Error(`the aws-sim backend process exited (${code}) before it started`);
    }),
  ])) as [{ endpoint: string }];
  return {
    dynamodbEndpoint: msg.endpoint,
    sqsEndpoint: msg.endpoint,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const backend = await startEmbeddedBackend({ dir: process.argv[2] as string });
  process.send?.({ endpoint: backend.dynamodbEndpoint });
  const stop = () => void backend.stop().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("disconnect", stop);
}
