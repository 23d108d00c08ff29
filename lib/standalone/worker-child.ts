/**
 * Standalone's built-in worker runs in a child process: task processes are forked from a small
 * process rather than from the one serving the API and the dispatcher, and the worker's AWS
 * calls get a core of their own. It is given standalone's environment (endpoints, names: what
 * endpoints.env holds) and exits when standalone goes, however it goes.
 */

import { fileURLToPath } from "node:url";
import { forkChild } from "./child-process.js";

const MAIN = fileURLToPath(new URL("./worker-main.ts", import.meta.url));

export interface WorkerChild {
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the worker with `slots` task slots and environment `env` (its configuration, and what
 * its task processes inherit); resolves once it polls.
 */
export async function startWorkerChild(
  slots: number,
  env: NodeJS.ProcessEnv,
): Promise<WorkerChild> {
  const child = await forkChild(MAIN, [String(slots)], "worker", () => true, env);
  return { pid: child.process.pid ?? 0, stop: child.stop };
}
