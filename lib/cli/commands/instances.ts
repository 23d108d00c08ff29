/**
 * `shoal instances`, the instance actions (`stop`, `pause`, `resume`, `rerun`,
 * `recover-failed`; the last three with `--wait`) and the per-task ones (`force-success`,
 * `attempts`).
 */
import type { Command } from "commander";
import { INSTANCE_STATES } from "../../core/model.js";
import { RUN_TYPES } from "../../core/run-type.js";
import { ACTIVE_TASK_STATES } from "../api-states.js";
import type { Instance, InstanceActionResult, Page, TaskInstance } from "../api-types.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../errors.js";
import { durationBetween, formatTime, oneLine, table, toJson } from "../format.js";
import { seg } from "../http.js";
import { fetchInstances, INSTANCE_HEADERS, instanceCells } from "../instance-list.js";
import { choiceOption, intIn, outputOption, positiveSeconds, TABLE_OR_JSON } from "../options.js";
import { addWaitOptions, waitForInstance } from "../wait.js";
import { watchInstances } from "../watch.js";

/** Seconds between redraws of `instances --watch`. */
const DEFAULT_WATCH_INTERVAL = 2;

interface InstancesOptions {
  workflow?: string;
  state?: string;
  type?: string;
  limit: number;
  output: string;
  watch?: boolean;
  interval?: number;
}

/**
 * The instance actions. `waits`: the verb starts work worth waiting for (`--wait`, as `run
 * --wait`); `newRound`: it starts a new run of a finished instance, whose old final state must
 * not end the wait.
 */
const ACTIONS: ReadonlyArray<{
  verb: string;
  description: string;
  waits?: boolean;
  newRound?: boolean;
}> = [
  { verb: "stop", description: "stop a running instance (its running tasks are killed)" },
  { verb: "pause", description: "pause an instance: running tasks finish, no new ones start" },
  { verb: "resume", description: "resume a paused instance", waits: true },
  {
    verb: "rerun",
    description: "run a finished instance again from the start",
    waits: true,
    newRound: true,
  },
  {
    verb: "recover-failed",
    description: "re-run the failed tasks of a failed instance",
    waits: true,
    newRound: true,
  },
];

/** Registers `instances`, one command per instance action, `force-success` and `attempts`. */
export function registerInstances(program: Command, ctx: CliContext): void {
  program
    .command("instances")
    .description("list workflow instances, newest first")
    .option("--workflow <name>", "only instances of this workflow")
    .addOption(choiceOption("--state <state>", "only instances in this state", INSTANCE_STATES))
    .addOption(
      choiceOption("--type <type>", "only instances started this way (TYPE column)", RUN_TYPES),
    )
    .option("--limit <n>", "at most this many instances", intIn(1, 100_000), 50)
    .addOption(outputOption(TABLE_OR_JSON))
    .option("-w, --watch", "redraw the table, with task progress, every interval until Ctrl-C")
    .option(
      "--interval <seconds>",
      `seconds between redraws with --watch (default ${DEFAULT_WATCH_INTERVAL}; implies --watch)`,
      positiveSeconds,
    )
    .action(async (opts: InstancesOptions) => {
      const filter = {
        workflow: opts.workflow,
        state: opts.state,
        runType: opts.type,
        limit: opts.limit,
      };
      if (opts.watch || opts.interval !== undefined) {
        if (opts.output === "JSON")
          throw new UsageError("--watch draws a table: drop --output json");
        await watchInstances(ctx, filter, opts.interval ?? DEFAULT_WATCH_INTERVAL);
        return;
      }
      const { items, nextToken } = await fetchInstances(ctx.api(), filter);
      if (opts.output === "JSON") {
        ctx.out(toJson(nextToken ? { items, nextToken } : { items }));
        return;
      }
      if (items.length === 0) {
        ctx.io.stderr.write("no instances\n");
        return;
      }
      const now = Date.now();
      ctx.out(
        table(
          INSTANCE_HEADERS,
          items.map((i) => instanceCells(i, now)),
        ),
      );
    });

  for (const { verb, description, waits, newRound } of ACTIONS) {
    const cmd = program
      .command(verb)
      .description(description)
      .argument("<instance>", "instance id");
    if (waits) addWaitOptions(cmd);
    cmd.action(async (id: string, opts: { wait?: boolean; timeout?: number }) => {
      const wait = opts.wait === true || opts.timeout !== undefined;
      // The round it finished before, so the wait does not end on that round's final state.
      const runsBefore =
        wait && newRound
          ? ((await ctx.api().get<Instance>(`/v1/instances/${seg(id)}`)).runs ?? 1)
          : undefined;
      const res = await ctx.api().post<InstanceActionResult>(`/v1/instances/${seg(id)}/${verb}`);
      ctx.out(`${res.body.instanceId} ${res.body.state}`);
      if (!wait) return;
      ctx.exitCode = await waitForInstance(ctx, res.body.instanceId, {
        ...(opts.timeout !== undefined ? { timeoutSeconds: opts.timeout } : {}),
        ...(runsBefore !== undefined ? { runsBefore } : {}),
      });
    });
  }

  program
    .command("force-success")
    // DolphinScheduler's "forced success"; recover-failed then runs what follows the task.
    .description("mark a task's failed or killed latest attempt FORCED_SUCCESS (finished instance)")
    .argument("<instance>", "instance id")
    .argument("<task>", "task code")
    .action(async (id: string, task: string) => {
      const res = await ctx
        .api()
        .post<TaskInstance>(`/v1/instances/${seg(id)}/tasks/${seg(task)}/force-success`);
      const t = res.body;
      ctx.out(`${t.code} attempt ${t.attempt ?? "?"} ${t.state}`);
    });

  program
    .command("attempts")
    .description("list every attempt of one task of an instance, oldest first")
    .argument("<instance>", "instance id")
    .argument("<task>", "task code")
    .addOption(outputOption(TABLE_OR_JSON))
    .action(async (id: string, task: string, opts: { output: string }) => {
      const page = await ctx
        .api()
        .get<Page<TaskInstance>>(`/v1/instances/${seg(id)}/tasks/${seg(task)}/attempts`);
      const items = page.items ?? [];
      if (opts.output === "JSON") {
        ctx.out(toJson({ items }));
        return;
      }
      if (items.length === 0) {
        ctx.io.stderr.write(`no attempts: task ${task} has not started in instance ${id}\n`);
        return;
      }
      const now = Date.now();
      ctx.out(
        table(
          ATTEMPT_HEADERS,
          items.map((t) => attemptCells(t, now)),
        ),
      );
    });
}

/** Column headers of `shoal attempts`. */
const ATTEMPT_HEADERS = ["ATTEMPT", "STATE", "WORKER", "STARTED", "DURATION", "EXIT", "ERROR"];

/** Longest error (plus warning) shown in the ERROR column; `-o json` has it whole. */
const MAX_ERROR_CHARS = 100;

/** One row of `shoal attempts`, matching {@link ATTEMPT_HEADERS}. */
function attemptCells(t: TaskInstance, now: number): string[] {
  // A paused or skipped attempt without an end is not running: no duration counting up.
  const timed = t.endedAt !== undefined || ACTIVE_TASK_STATES.has(t.state);
  const notes = [t.error, t.warning === undefined ? undefined : `warning: ${t.warning}`].filter(
    (n): n is string => n !== undefined && n !== "",
  );
  return [
    t.attempt === undefined ? "-" : String(t.attempt),
    t.state,
    t.worker ?? "-",
    formatTime(t.startedAt),
    timed ? durationBetween(t.startedAt, t.endedAt, now) : "-",
    t.exitCode === undefined ? "-" : String(t.exitCode),
    notes.length === 0 ? "-" : oneLine(notes.join("; "), MAX_ERROR_CHARS),
  ];
}
