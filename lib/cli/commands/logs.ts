/**
 * `shoal logs INSTANCE TASK`: print (and follow) a task log: by default the current round's
 * attempt (after a rerun, not the previous round's). Logic and skipped tasks have a log of what
 * the dispatcher decided (the API makes it). While a followed task has not started, what it
 * waits for (`shoal explain`'s sentence) goes to stderr, once and again when it changes; when
 * there is no line to show, the sentence says why (not started, did not run, retry due).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Command } from "commander";
import type { LogPage, TaskExplanation } from "../api-types.js";
import { type CliContext, POLL_INTERVAL_MS } from "../context.js";
import { seg } from "../http.js";
import { intIn } from "../options.js";

/** How often a followed task that has not started is explained again, ms. */
export const EXPLAIN_INTERVAL_MS = 2_000;

/** Reasons a follower does not announce: the log itself shows them. */
const SILENT = new Set(["RUNNING", "FINISHED"]);

/** Reasons that are no wait: the task will not run (their sentence gets no "waiting:"). */
const NOT_WAITING = new Set([
  "UPSTREAM_FAILED",
  "FAILURE_STRATEGY_END",
  "SKIPPED_BY_BRANCH",
  "NOT_IN_SCOPE",
  "INSTANCE_ENDED",
]);

/** Registers `logs`. */
export function registerLogs(program: Command, ctx: CliContext): void {
  program
    .command("logs")
    .description("print the log of one task of an instance")
    .argument("<instance>", "instance id")
    .argument("<task>", "task code")
    .option(
      "--attempt <n>",
      "attempt number (default: the current round's attempt)",
      intIn(1, 1000),
    )
    .option(
      "-f, --follow",
      "keep printing new lines until the task finishes; while it waits, say why on stderr",
    )
    .action(async (id: string, task: string, opts: { attempt?: number; follow?: boolean }) => {
      const path = `/v1/instances/${seg(id)}/tasks/${seg(task)}/log`;
      const notice = new WaitNotice(ctx, id, task);
      let nextToken: string | undefined;
      let shown = 0;
      for (;;) {
        const page = await ctx.api().get<LogPage>(path, { attempt: opts.attempt, nextToken });
        const lines = page.lines ?? [];
        for (const line of lines) ctx.out(`${line.timestamp} ${line.message}`);
        shown += lines.length;
        if (lines.length > 0) notice.started();
        // No token: the task has finished (or will not run) and this was the end of its log.
        if (!page.nextToken) break;
        nextToken = page.nextToken;
        if (lines.length === 0) {
          // Caught up with a running task: stop here, or wait for more when following.
          if (!opts.follow) break;
          await notice.check();
          await sleep(POLL_INTERVAL_MS);
        }
      }
      // Nothing to show: say why (an explicit --attempt is another attempt than explain's).
      if (shown === 0 && opts.attempt === undefined) await notice.nothingShown();
    });
}

/**
 * Says on stderr what a task waits for: while a followed task has no lines, asking the explain
 * endpoint at most every EXPLAIN_INTERVAL_MS and printing its sentence when it changes; and once
 * when the command ends with nothing shown. An API without the endpoint (older server) or a
 * failed request leaves it quiet, as before.
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

  private async explain(): Promise<TaskExplanation | undefined> {
    try {
      return await this.ctx
        .api()
        .get<TaskExplanation>(`/v1/instances/${seg(this.id)}/tasks/${seg(this.task)}/explain`);
    } catch {
      return undefined;
    }
  }

  private say(message: string): void {
    if (message === this.last) return;
    this.last = message;
    this.ctx.io.stderr.write(`${message}\n`);
  }

  /** While following: the waiting sentence, when it changed. */
  async check(): Promise<void> {
    const now = Date.now();
    if (this.done || now - this.askedAt < EXPLAIN_INTERVAL_MS) return;
    this.askedAt = now;
    const e = await this.explain();
    if (!e || SILENT.has(e.reason)) return;
    // "waiting for upstream 'b' …" says it already, and "will not run …" is no wait.
    const plain = /^waiting\b/.test(e.message) || NOT_WAITING.has(e.reason);
    this.say(plain ? e.message : `waiting: ${e.message}`);
  }

  /**
   * The command printed no line: why ("did not run: upstream 'b' ended FAILURE", "retry due at
   * …"), and where an earlier attempt's log is when the current one is a retry.
   */
  async nothingShown(): Promise<void> {
    const e = await this.explain();
    if (!e) return;
    const n = e.attempt ?? 0;
    const earlier =
      n > 1
        ? ` (attempt ${n - 1}'s log: shoal logs ${this.id} ${this.task} --attempt ${n - 1})`
        : "";
    // After the same sentence as a waiting notice, it is not said twice.
    if (`waiting: ${e.message}` === this.last) return;
    this.say(`${e.message}${earlier}`);
  }
}
