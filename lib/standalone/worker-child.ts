/**
 * Standalone's built-in worker runs in a child process: task processes are forked from a small
 * process rather than from the one serving the API and the dispatcher, and the worker's AWS
 * calls get a core of their own. It is given standalone's environment (endpoints, names: what
 * endpoints.env holds) and exits when standalone goes, however it goes. It is supervised for
 * its whole life (supervisor.ts): one that dies is started again, with backoff, for as long as
 * standalone runs; the tasks it ran fail over through their leases.
 */

import { siblingEntry } from "../package-root.js";
import { forkChild } from "./child-process.js";
import { ChildSupervisor, type PartState } from "./supervisor.js";

const MAIN = siblingEntry(import.meta.url, "./worker-main");

export interface WorkerChild {
  /** The running child's pid (undefined while it is being restarted). */
  readonly pid: number | undefined;
  /** `ok`, or `restarting` after it died. */
  readonly state: PartState;
  stop(): Promise<void>;
}

/**
 * Starts the worker with `slots` task slots and environment `env` (its configuration, and what
 * its task processes inherit); resolves once it polls, and restarts it whenever it dies
 * (0.5 s, 1 s, 2 s … 30 s apart; the delay resets once it stayed up a minute).
 * @param log where a death and a restart are told.
 * @param stopping true once standalone is stopping: the worker's exit is then expected.
 * @throws when the first start fails.
 */
export async function startWorkerChild(
  slots: number,
  env: NodeJS.ProcessEnv,
  log: (msg: string, fields?: Record<string, unknown>) => void = () => {},
  stopping: () => boolean = () => false,
): Promise<WorkerChild> {
  const supervisor = new ChildSupervisor<true>({
    name: "worker",
    start: () => forkChild(MAIN, [String(slots)], "worker", () => true as const, env),
    log,
    stopping,
  });
  await supervisor.start();
  return {
    get pid() {
      return supervisor.pid;
    },
    get state() {
      return supervisor.state;
    },
    stop: () => supervisor.stop(),
  };
}
