/**
 * Standalone's built-in worker runs in a child process: task processes are forked from a small
 * process rather than from the one serving the API and the dispatcher, and the worker's AWS
 * calls get a core of their own. It takes the environment standalone set up (endpoints, names)
 * and exits when standalone goes, however it goes.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("./worker-main.ts", import.meta.url));

export interface WorkerChild {
  pid: number;
  stop(): Promise<void>;
}

/** Starts the worker with `slots` task slots; resolves once it polls. */
export function startWorkerChild(slots: number): Promise<WorkerChild> {
  return new Promise((resolve, reject) => {
    const child = fork(MAIN, [String(slots)], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      execArgv: [
        ...process.execArgv.filter((a) => !a.startsWith("--cpu-prof")),
        "--import",
        "tsx",
        "--no-warnings",
      ],
    });
    const onExit = (code: number | null) =>
      reject(new Error(`the worker process exited (${code}) before it was ready`));
    child.once("exit", onExit);
    child.once("message", () => {
      child.off("exit", onExit);
      resolve({
        pid: child.pid ?? 0,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once("exit", () => done());
            child.send("stop");
          }),
      });
    });
  });
}
