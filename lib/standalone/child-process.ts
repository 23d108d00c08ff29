/**
 * Children of standalone (emulators, the built-in worker): TypeScript entry points forked with
 * tsx, ready when they send their first message, stopped with a "stop" message. Each child
 * also exits when its IPC channel closes, so it never outlives standalone.
 */
import { type ChildProcess, fork } from "node:child_process";
import { FROM_SOURCES } from "../package-root.js";

/**
 * From the sources (the repository), children run their TypeScript through tsx's loader, resolved
 * from this file: `--import tsx` would be resolved from the current directory, where it need not
 * exist. The installed package runs compiled JavaScript and has no tsx.
 */
const LOADER = FROM_SOURCES ? ["--import", import.meta.resolve("tsx")] : [];

export interface Child<T> {
  ready: T;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Forks `main` and waits for its first message.
 * @param check turns that message into the ready value, or throws to reject (the child is killed).
 * @param env the child's environment (default: this process's).
 */
export function forkChild<T>(
  main: string,
  args: string[],
  what: string,
  check: (message: unknown) => T,
  env?: NodeJS.ProcessEnv,
): Promise<Child<T>> {
  return new Promise((resolve, reject) => {
    const child = fork(main, args, {
      ...(env ? { env } : {}),
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      execArgv: [
        ...process.execArgv.filter((a) => !a.startsWith("--cpu-prof")),
        ...LOADER,
        "--no-warnings",
      ],
    });
    const onExit = (code: number | null) =>
      reject(new Error(`the ${what} process exited (${code}) before it was ready`));
    child.once("exit", onExit);
    child.once("message", (m) => {
      child.off("exit", onExit);
      let ready: T;
      try {
        ready = check(m);
      } catch (e) {
        // Rejected once it is gone: what it held (a port, a database lock) is free for the
        // next start.
        if (child.exitCode === null && child.signalCode === null) {
          child.once("exit", () => reject(e));
          child.kill("SIGKILL");
        } else reject(e);
        return;
      }
      resolve({
        ready,
        process: child,
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
