/** `shoal logs INSTANCE TASK`: print (and follow) a task log. */
import type { Command } from "commander";
import type { LogPage } from "../api-types.js";
import { type CliContext, POLL_INTERVAL_MS, sleep } from "../context.js";
import { seg } from "../http.js";
import { intIn } from "../options.js";

/** Registers `logs`. */
export function registerLogs(program: Command, ctx: CliContext): void {
  program
    .command("logs")
    .description("print the log of one task of an instance")
    .argument("<instance>", "instance id")
    .argument("<task>", "task code")
    .option("--attempt <n>", "attempt number (default: the latest)", intIn(1, 1000))
    .option("-f, --follow", "keep printing new lines until the task finishes")
    .action(async (id: string, task: string, opts: { attempt?: number; follow?: boolean }) => {
      const path = `/v1/instances/${seg(id)}/tasks/${seg(task)}/log`;
      let nextToken: string | undefined;
      for (;;) {
        const page = await ctx.api().get<LogPage>(path, { attempt: opts.attempt, nextToken });
        const lines = page.lines ?? [];
        for (const line of lines) ctx.out(`${line.timestamp} ${line.message}`);
        // No token: the task has finished and this was the end of its log.
        if (!page.nextToken) return;
        nextToken = page.nextToken;
        if (lines.length === 0) {
          // Caught up with a running task: stop here, or wait for more when following.
          if (!opts.follow) return;
          await sleep(POLL_INTERVAL_MS);
        }
      }
    });
}
