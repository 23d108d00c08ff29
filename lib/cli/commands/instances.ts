/** `shoal instances` and the instance actions (`stop`, `pause`, `resume`, `rerun`, `recover-failed`). */
import type { Command } from "commander";
import { INSTANCE_STATES } from "../../core/model.js";
import type { InstanceActionResult } from "../api-types.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../errors.js";
import { table, toJson } from "../format.js";
import { seg } from "../http.js";
import { fetchInstances, INSTANCE_HEADERS, instanceCells } from "../instance-list.js";
import { intIn, oneOf, positiveSeconds } from "../options.js";
import { watchInstances } from "../watch.js";

/** Seconds between redraws of `instances --watch`. */
const DEFAULT_WATCH_INTERVAL = 2;

interface InstancesOptions {
  workflow?: string;
  state?: string;
  limit: number;
  output: string;
  watch?: boolean;
  interval?: number;
}

const ACTIONS: ReadonlyArray<{ verb: string; description: string }> = [
  { verb: "stop", description: "stop a running instance (its running tasks are killed)" },
  { verb: "pause", description: "pause an instance: running tasks finish, no new ones start" },
  { verb: "resume", description: "resume a paused instance" },
  { verb: "rerun", description: "run a finished instance again from the start" },
  { verb: "recover-failed", description: "re-run the failed tasks of a failed instance" },
];

/** Registers `instances` and one command per instance action. */
export function registerInstances(program: Command, ctx: CliContext): void {
  program
    .command("instances")
    .description("list workflow instances, newest first")
    .option("--workflow <name>", "only instances of this workflow")
    .option(
      "--state <state>",
      `only instances in this state: ${INSTANCE_STATES.join(", ")}`,
      oneOf(INSTANCE_STATES),
    )
    .option("--limit <n>", "at most this many instances", intIn(1, 100_000), 50)
    .option("-o, --output <format>", "table or json", oneOf(["TABLE", "JSON"] as const), "TABLE")
    .option("-w, --watch", "redraw the table, with task progress, every interval until Ctrl-C")
    .option(
      "--interval <seconds>",
      `seconds between redraws with --watch (default ${DEFAULT_WATCH_INTERVAL}; implies --watch)`,
      positiveSeconds,
    )
    .action(async (opts: InstancesOptions) => {
      const filter = { workflow: opts.workflow, state: opts.state, limit: opts.limit };
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

  for (const { verb, description } of ACTIONS) {
    program
      .command(verb)
      .description(description)
      .argument("<instance>", "instance id")
      .action(async (id: string) => {
        const res = await ctx.api().post<InstanceActionResult>(`/v1/instances/${seg(id)}/${verb}`);
        ctx.out(`${res.body.instanceId} ${res.body.state}`);
      });
  }
}
