/**
 * `shoal explain INSTANCE [TASK]`: why tasks are not running (waiting for an upstream task, a
 * task-group slot, a worker, a retry, a branch decision…). Endpoints:
 * `GET /v1/instances/{id}/explain` and `GET /v1/instances/{id}/tasks/{code}/explain`
 * (docs/api.md, lib/core/explain.ts).
 */
import type { Command } from "commander";
import type { InstanceExplanation, TaskExplanation } from "../api-types.js";
import type { CliContext } from "../context.js";
import { toJson } from "../format.js";
import { seg } from "../http.js";
import { outputOption, TEXT_OR_JSON } from "../options.js";

/** Registers `explain`. */
export function registerExplain(program: Command, ctx: CliContext): void {
  program
    .command("explain")
    .description(
      "say why tasks are not running: one line per waiting task, or one task with its facts",
    )
    .argument("<instance>", "instance id")
    .argument("[task]", "task code: explain this task only, with the facts behind it")
    .addOption(outputOption(TEXT_OR_JSON))
    .action(async (id: string, task: string | undefined, opts: { output: string }) => {
      if (task !== undefined) {
        const e = await ctx
          .api()
          .get<TaskExplanation>(`/v1/instances/${seg(id)}/tasks/${seg(task)}/explain`);
        if (opts.output === "JSON") ctx.out(toJson(e));
        else for (const line of describeExplanation(e)) ctx.out(line);
        return;
      }
      const x = await ctx.api().get<InstanceExplanation>(`/v1/instances/${seg(id)}/explain`);
      if (opts.output === "JSON") {
        ctx.out(toJson(x));
        return;
      }
      if (x.message) ctx.out(`instance ${x.instanceId} (${x.state}): ${x.message}`);
      const tasks = x.tasks ?? [];
      if (tasks.length === 0) {
        ctx.io.stderr.write(
          `nothing waits: every task of instance ${x.instanceId} is running or finished (${x.state})\n`,
        );
        return;
      }
      for (const t of tasks) ctx.out(explanationLine(t));
    });
}

/** `load (NOT_STARTED): waiting for upstream 'extract' (RUNNING, attempt 1)`. */
export function explanationLine(e: TaskExplanation): string {
  const attempt = e.attempt !== undefined && e.attempt > 1 ? `, attempt ${e.attempt}` : "";
  return `${e.code} (${e.state}${attempt}): ${e.message}`;
}

/** One task: its line, its reason, then one `  name: value` line per fact. */
export function describeExplanation(e: TaskExplanation): string[] {
  const lines = [explanationLine(e), `  reason: ${e.reason}`];
  for (const [name, value] of Object.entries(e.facts ?? {})) {
    if (value === undefined) continue;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    lines.push(`  ${name}: ${text}`);
  }
  return lines;
}
