/**
 * `shoal logs INSTANCE TASK`: print (and follow) a task log. Logic and skipped tasks have a log
 * of what the dispatcher decided (the API makes it). While a followed task has not started, what
 * it waits for (`shoal explain`'s sentence) goes to stderr, once and again when it changes.
 */
import type { Command } from "commander";
import type { LogPage, TaskExplanation } from "../api-types.js";
import { type CliContext, POLL_INTERVAL_MS, sleep } from "../context.js";
import { seg } from "../http.js";
import { intIn } from "../options.js";

/** How often a followed task that has not started is explained again, ms. */
export const EXPLAIN_INTERVAL_MS = 2_000;

/** Reasons a follower does not announce: the log itself shows them. */
const SILENT = new Set(["RUNNING", "FINISHED"]);

/** Registers `logs`. */
export function registerLogs(program: Command, ctx: CliContext): void {
  program
    .command("logs")
    .description("print the log of one task of an instance")
    .argument("<instance>", "instance id")
    .argument("<task>", "task code")
    .option("--attempt <n>", "attempt number (default: the latest)", intIn(1, 1000))
    .option(
      "-f, --follow",
      "keep printing new lines until the task finishes; while it waits, say why on stderr",
    )
    .action(async (id: string, task: string, opts: { attempt?: number; follow?: boolean }) => {
      const path = `/v1/instances/${seg(id)}/tasks/${seg(task)}/log`;
      const waiting = new WaitNotice(ctx, id, task);
      let nextToken: string | undefined;
      for (;;) {
        const page = await ctx.api().get<LogPage>(path, { attempt: opts.attempt, nextToken });
        const lines = page.lines ?? [];
        for (const line of lines) ctx.out(`${line.timestamp} ${line.message}`);
        if (lines.length > 0) waiting.started();
        // No token: the task has finished and this was the end of its log.
        if (!page.nextToken) return;
        nextToken = page.nextToken;
        if (lines.length === 0) {
          // Caught up with a running task: stop here, or wait for more when following.
          if (!opts.follow) return;
          await waiting.check();
          await sleep(POLL_INTERVAL_MS);
        }
      }
    });
}

/**
 * Says on stderr what a followed task waits for, until its log has lines: asks the explain
 * endpoint at most every EXPLAIN_INTERVAL_MS and prints its sentence when it changes. An API
 * without the endpoint (older server) or a failed request leaves the follow quiet, as before.
 */
class WaitNotice {
  private last: string | undefined;
  private askedAt = Number.NEGATIVE_INFINITY;
  private done = false;

  constructor(
    private readonly ctx: CliContext,
    private readonly id: string,
    private readonly task: string,
  ) {}

  /** Log lines came: the task runs, nothing more to announce. */
  started(): void {
    this.done = true;
  }

  async check(): Promise<void> {
    const now = Date.now();
    if (this.done || now - this.askedAt < EXPLAIN_INTERVAL_MS) return;
    this.askedAt = now;
    let e: TaskExplanation;
    try {
      e = await this.ctx
        .api()
        .get<TaskExplanation>(`/v1/instances/${seg(this.id)}/tasks/${seg(this.task)}/explain`);
    } catch {
      return;
    }
    if (SILENT.has(e.reason) || e.message === this.last) return;
    this.last = e.message;
    this.ctx.io.stderr.write(`waiting: ${e.message}\n`);
  }
}
