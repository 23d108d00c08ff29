/**
 * `shoal standalone` in the foreground: starts it, and stops it on SIGINT/SIGTERM within
 * {@link STOP_DEADLINE_MS} (README).
 */
import { type StandaloneOptions, startStandalone } from "./standalone.js";

/**
 * How long SIGINT/SIGTERM may take, ms: past it standalone exits at once (README). What was in
 * flight is then recovered at the next start, as after a crash: every write is committed or not,
 * and the children stop on their own when this process goes (child-process.ts).
 */
export const STOP_DEADLINE_MS = 4_500;

/**
 * Runs until SIGINT/SIGTERM, then stops cleanly within {@link STOP_DEADLINE_MS} (a second signal
 * exits at once).
 * @throws when a child could not be restarted (after standalone stopped): the CLI prints the
 *   message and exits non-zero.
 */
export async function runStandalone(opts: StandaloneOptions): Promise<void> {
  const s = await startStandalone(opts);
  const failure = await new Promise<Error | undefined>((resolveStop) => {
    const onSignal = (sig: string) => {
      process.stdout.write(
        `\n${sig}: stopping (running tasks are killed and handed back for failover)\n`,
      );
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      const force = (why: string) => {
        process.stdout.write(
          `${why}: exiting now (what was in flight resumes at the next start)\n`,
        );
        process.exit(1);
      };
      process.once("SIGINT", () => force("SIGINT again"));
      process.once("SIGTERM", () => force("SIGTERM again"));
      const deadline = setTimeout(
        () => force(`not stopped within ${STOP_DEADLINE_MS / 1000} s`),
        STOP_DEADLINE_MS,
      );
      deadline.unref();
      s.stop().then(
        () => resolveStop(undefined),
        () => resolveStop(undefined),
      );
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    void s.failed.then((e) => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      resolveStop(e);
    });
  });
  if (failure) throw new Error(`standalone stopped: ${failure.message}`);
}
