/** `shoal instances` and the instance actions (`stop`, `pause`, `resume`, `rerun`, `recover-failed`). */
import type { Command } from "commander";
import { INSTANCE_STATES } from "../../core/model.js";
import type { InstanceActionResult, InstanceSummary, Page } from "../api-types.js";
import type { CliContext } from "../context.js";
import { durationBetween, formatTime, table, toJson } from "../format.js";
import { seg } from "../http.js";
import { intIn, oneOf } from "../options.js";

/** The API's largest page; bigger `--limit`s are served by following `nextToken`. */
const MAX_PAGE = 200;

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
    .action(async (opts: { workflow?: string; state?: string; limit: number; output: string }) => {
      const items: InstanceSummary[] = [];
      let nextToken: string | undefined;
      do {
        const page = await ctx.api().get<Page<InstanceSummary>>("/v1/instances", {
          workflow: opts.workflow,
          state: opts.state,
          limit: Math.min(MAX_PAGE, opts.limit - items.length),
          nextToken,
        });
        items.push(...(page.items ?? []));
        nextToken = page.nextToken;
      } while (nextToken && items.length < opts.limit);

      if (opts.output === "JSON") {
        ctx.out(toJson(nextToken ? { items, nextToken } : { items }));
        return;
      }
      if (items.length === 0) {
        ctx.io.stderr.write("no instances\n");
        return;
      }
      const rows = items.map((i) => [
        i.instanceId,
        `${i.workflow}:${i.version}`,
        i.state,
        formatTime(i.createdAt),
        durationBetween(i.startedAt, i.endedAt),
      ]);
      ctx.out(table(["INSTANCE", "WORKFLOW", "STATE", "CREATED", "DURATION"], rows));
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
