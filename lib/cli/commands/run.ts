/** `shoal run NAME`: start a workflow instance, optionally waiting for it with live progress. */
import { randomUUID } from "node:crypto";
import type { Command } from "commander";
import { FAILURE_STRATEGIES, PRIORITIES, TASK_SCOPES } from "../../core/model.js";
import type { RunStarted } from "../api-types.js";
import type { CliContext } from "../context.js";
import { type FlagMap, seg } from "../http.js";
import { choiceOption, keyValue, list } from "../options.js";
import { addWaitOptions, waitForInstance } from "../wait.js";

interface RunOptions {
  param?: Record<string, string>;
  priority?: string;
  startTask?: string[];
  scope?: string;
  failureStrategy?: string;
  workerGroup?: string;
  dryRun?: boolean;
  idempotencyKey?: string;
  wait?: boolean;
  timeout?: number;
}

/** Fields of the run request (docs/api.md RunRequest) and the flags that fill them. */
export const RUN_FLAGS: FlagMap = {
  params: "--param",
  priority: "--priority",
  startTasks: "--start-task",
  taskScope: "--scope",
  failureStrategy: "--failure-strategy",
  workerGroup: "--worker-group",
  dryRun: "--dry-run",
  idempotencyKey: "--idempotency-key",
};

/** Registers `run`. */
export function registerRun(program: Command, ctx: CliContext): void {
  const run = program
    .command("run")
    .description("start a workflow instance and print its id")
    .argument("<name>", "workflow name")
    .option("-p, --param <key=value>", "run parameter (repeatable)", keyValue)
    .addOption(choiceOption("--priority <priority>", "instance priority", PRIORITIES))
    .option("--start-task <code>", "start from this task (repeatable or comma-separated)", list)
    .addOption(choiceOption("--scope <scope>", "tasks covered with --start-task", TASK_SCOPES))
    .addOption(
      choiceOption(
        "--failure-strategy <strategy>",
        "after a task fails for good",
        FAILURE_STRATEGIES,
      ),
    )
    .option(
      "--worker-group <group>",
      "worker group of the tasks that use the default one (e.g. gpu)",
    )
    .option("--dry-run", "walk the DAG without running task commands")
    .option(
      "--idempotency-key <key>",
      "the same key returns the same instance instead of starting another",
    );
  addWaitOptions(run).action(async (name: string, opts: RunOptions) => {
    const body: Record<string, unknown> = {};
    if (opts.param) body.params = opts.param;
    if (opts.priority) body.priority = opts.priority;
    if (opts.startTask) body.startTasks = opts.startTask;
    if (opts.scope) body.taskScope = opts.scope;
    if (opts.failureStrategy) body.failureStrategy = opts.failureStrategy;
    if (opts.workerGroup !== undefined) body.workerGroup = opts.workerGroup;
    if (opts.dryRun) body.dryRun = true;
    // A key of this invocation's own when none is given: the client may then send the run again
    // after a 503 without ever starting a second instance (lib/cli/http.ts).
    body.idempotencyKey = opts.idempotencyKey ?? randomUUID();

    const res = await ctx
      .api()
      .post<RunStarted>(`/v1/workflows/${seg(name)}/runs`, body, RUN_FLAGS);
    // The id comes first even with --wait, so it can be used with `shoal logs` meanwhile.
    ctx.out(res.body.instanceId);
    if (opts.wait || opts.timeout !== undefined) {
      ctx.exitCode = await waitForInstance(ctx, res.body.instanceId, {
        ...(opts.timeout !== undefined ? { timeoutSeconds: opts.timeout } : {}),
      });
    }
  });
}
