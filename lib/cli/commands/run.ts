/** `shoal run NAME`: start a workflow instance, optionally waiting for it with live progress. */
import type { Command } from "commander";
import { FAILURE_STRATEGIES, PRIORITIES, TASK_SCOPES } from "../../core/model.js";
import {
  type Instance,
  type RunStarted,
  TERMINAL_INSTANCE_STATES,
  type WorkflowDetail,
} from "../api-types.js";
import { type CliContext, POLL_INTERVAL_MS, sleep } from "../context.js";
import { CliError, EXIT } from "../errors.js";
import { durationBetween, formatDuration } from "../format.js";
import { seg } from "../http.js";
import { keyValue, list, oneOf, positiveSeconds } from "../options.js";
import { countTasks, ProgressWriter, progressLine } from "../progress.js";

interface RunOptions {
  param?: Record<string, string>;
  priority?: string;
  startTask?: string[];
  scope?: string;
  failureStrategy?: string;
  dryRun?: boolean;
  idempotencyKey?: string;
  wait?: boolean;
  timeout?: number;
}

/** Registers `run`. */
export function registerRun(program: Command, ctx: CliContext): void {
  program
    .command("run")
    .description("start a workflow instance and print its id")
    .argument("<name>", "workflow name")
    .option("-p, --param <key=value>", "run parameter (repeatable)", keyValue)
    .option(
      "--priority <priority>",
      `instance priority: ${PRIORITIES.join(", ")}`,
      oneOf(PRIORITIES),
    )
    .option("--start-task <code>", "start from this task (repeatable or comma-separated)", list)
    .option(
      "--scope <scope>",
      `tasks covered with --start-task: ${TASK_SCOPES.join(", ")}`,
      oneOf(TASK_SCOPES),
    )
    .option(
      "--failure-strategy <strategy>",
      `after a task fails for good: ${FAILURE_STRATEGIES.join(", ")}`,
      oneOf(FAILURE_STRATEGIES),
    )
    .option("--dry-run", "walk the DAG without running task commands")
    .option(
      "--idempotency-key <key>",
      "the same key returns the same instance instead of starting another",
    )
    .option(
      "-w, --wait",
      "wait for the instance to finish, showing progress; exit 0 only on SUCCESS",
    )
    .option(
      "--timeout <seconds>",
      "give up waiting after this long (implies --wait)",
      positiveSeconds,
    )
    .action(async (name: string, opts: RunOptions) => {
      const body: Record<string, unknown> = {};
      if (opts.param) body.params = opts.param;
      if (opts.priority) body.priority = opts.priority;
      if (opts.startTask) body.startTasks = opts.startTask;
      if (opts.scope) body.taskScope = opts.scope;
      if (opts.failureStrategy) body.failureStrategy = opts.failureStrategy;
      if (opts.dryRun) body.dryRun = true;
      if (opts.idempotencyKey !== undefined) body.idempotencyKey = opts.idempotencyKey;

      const res = await ctx.api().post<RunStarted>(`/v1/workflows/${seg(name)}/runs`, body);
      // The id comes first even with --wait, so it can be used with `shoal logs` meanwhile.
      ctx.out(res.body.instanceId);
      if (opts.wait || opts.timeout !== undefined) {
        ctx.exitCode = await waitForInstance(ctx, res.body, opts.timeout);
      }
    });
}

/** Polls the instance until it ends; returns the exit code (0 only for SUCCESS). */
async function waitForInstance(
  ctx: CliContext,
  started: RunStarted,
  timeoutSeconds: number | undefined,
): Promise<number> {
  const api = ctx.api();
  const id = started.instanceId;
  const def = await api.get<WorkflowDetail>(`/v1/workflows/${seg(started.workflow)}`, {
    version: started.version,
  });
  const total = Array.isArray(def.tasks) ? def.tasks.length : 0;
  const t0 = Date.now();
  const deadline =
    timeoutSeconds === undefined ? Number.POSITIVE_INFINITY : t0 + timeoutSeconds * 1000;
  const progress = new ProgressWriter(ctx.io.stdout);
  for (;;) {
    const inst = await api.get<Instance>(`/v1/instances/${seg(id)}`);
    const tasks = inst.tasks ?? [];
    progress.update(progressLine(inst.state, countTasks(tasks), total));
    if (TERMINAL_INSTANCE_STATES.has(inst.state)) {
      progress.finish();
      // Prefer the server's clock; fall back to ours if it has no times yet.
      const took = inst.endedAt
        ? durationBetween(inst.startedAt ?? inst.createdAt, inst.endedAt)
        : formatDuration(Date.now() - t0);
      ctx.out(`${inst.state} in ${took === "-" ? formatDuration(Date.now() - t0) : took}`);
      const failed = tasks.filter((t) => t.state === "FAILURE" || t.state === "KILLED");
      if (failed.length > 0) {
        const codes = failed.map((t) => t.code).join(", ");
        // In a SUCCESS instance a failed task's failure was handled (a CONDITIONS task took
        // its failedNext branch): name it as such, not as the reason of a failure.
        const label = inst.state === "SUCCESS" ? "failures handled by CONDITIONS" : "failed tasks";
        ctx.out(`${label}: ${codes} (see: shoal logs ${id} <task>)`);
      }
      return inst.state === "SUCCESS" ? EXIT.ok : EXIT.error;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      progress.finish();
      throw new CliError(
        `timed out after ${timeoutSeconds}s waiting for instance ${id} (state ${inst.state}); ` +
          `it keeps running (stop it with: shoal stop ${id})`,
      );
    }
    await sleep(Math.min(POLL_INTERVAL_MS, left));
  }
}
