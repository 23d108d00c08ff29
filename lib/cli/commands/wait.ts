/**
 * `shoal wait INSTANCE`: wait for any instance to finish (one started by a schedule, a trigger,
 * another terminal…) with the progress line of `run --wait`; exit 0 only on SUCCESS, so scripts
 * can chain on it.
 */
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { positiveSeconds } from "../options.js";
import { waitForInstance } from "../wait.js";

/** Registers `wait`. */
export function registerWait(program: Command, ctx: CliContext): void {
  program
    .command("wait")
    .description(
      "wait for an instance to finish, showing progress; exit 0 only on SUCCESS (1 on FAILURE, STOPPED or timeout)",
    )
    .argument("<instance>", "instance id")
    .option(
      "--timeout <seconds>",
      "give up after this long (the instance is left as it is)",
      positiveSeconds,
    )
    .action(async (id: string, opts: { timeout?: number }) => {
      ctx.exitCode = await waitForInstance(ctx, id, {
        ...(opts.timeout !== undefined ? { timeoutSeconds: opts.timeout } : {}),
      });
    });
}
