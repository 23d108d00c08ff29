/**
 * Standalone's built-in worker runs in a child process: task processes are forked from a small
 * process rather than from the one serving the API and the dispatcher, and the worker's AWS
 * calls get a core of their own. It takes the environment standalone set up (endpoints, names)
 * and exits when standalone goes, however it goes.
 */

import { fileURLToPath } from "node:url";
import { forkChild } from "./child-process.js";

const MAIN = fileURLToPath(new URL("./worker-main.ts", import.meta.url));

export interface WorkerChild {
  pid: number;
  stop(): Promise<void>;
}

/** Starts the worker with `slots` task slots; resolves once it polls. */
export async function startWorkerChild(slots: number): Promise<WorkerChild> {
  const child = await forkChild(MAIN, [String(slots)], "worker", () => true);
  return { pid: child.process.pid ?? 0, stop: child.stop };
}
