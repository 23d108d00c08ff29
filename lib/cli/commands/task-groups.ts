/**
 * `shoal task-groups` and `shoal task-group put|get|delete`: task groups are named concurrency
 * limits shared by every task that names them, as in DolphinScheduler (a task waits SUBMITTED
 * until one of the group's `capacity` slots is free). Endpoints: `/v1/task-groups` (docs/api.md).
 */
import type { Command } from "commander";
import { TASK_GROUP_CAPACITY } from "../../core/task-group-limits.js";
import type { TaskGroup } from "../api-types.js";
import type { CliContext } from "../context.js";
import { formatTime, oneLine, toJson } from "../format.js";
import { type FlagMap, seg } from "../http.js";
import { printList } from "../list-output.js";
import { intIn, outputOption, TABLE_OR_JSON, TEXT_OR_JSON } from "../options.js";

/** Fields of the task group body and the flags of `task-group put` that fill them. */
const TASK_GROUP_FLAGS: FlagMap = { capacity: "--capacity", description: "--description" };

/** Registers `task-groups` (list) and `task-group put|get|delete`. */
export function registerTaskGroups(program: Command, ctx: CliContext): void {
  program
    .command("task-groups")
    .description("list task groups with their capacity, slots in use and waiting tasks")
    .addOption(outputOption(TABLE_OR_JSON))
    .action(async (opts: { output: string }) => {
      const items = await ctx.api().getAll<TaskGroup>("/v1/task-groups");
      printList(ctx, items, opts.output, {
        empty: "no task groups (create one with: shoal task-group put NAME --capacity N)",
        headers: ["NAME", "CAPACITY", "USED", "WAITING", "DESCRIPTION"],
        row: (g) => [
          g.name,
          String(g.capacity),
          String(g.used),
          String(g.waiting),
          oneLine(g.description ?? ""),
        ],
      });
    });

  const group = program
    .command("task-group")
    .description("create, change, show or delete one task group");

  group
    .command("put")
    .description(
      "create a task group or replace its settings (lowering the capacity takes no slot away)",
    )
    .argument("<name>", "task group name")
    // The API's bounds, checked here so a bad value is a usage error before any request.
    .requiredOption(
      "--capacity <n>",
      `tasks of the group that may run at once (${TASK_GROUP_CAPACITY.min}..${TASK_GROUP_CAPACITY.max})`,
      intIn(TASK_GROUP_CAPACITY.min, TASK_GROUP_CAPACITY.max),
    )
    .option("--description <text>", "free text (a put without it removes the old one)")
    .action(async (name: string, opts: { capacity: number; description?: string }) => {
      const body: { capacity: number; description?: string } = { capacity: opts.capacity };
      if (opts.description !== undefined) body.description = opts.description;
      const res = await ctx
        .api()
        .put<TaskGroup>(`/v1/task-groups/${seg(name)}`, body, TASK_GROUP_FLAGS);
      // 201 = created; 200 = changed, or already equal (the API then writes nothing).
      const how = res.status === 201 ? "created" : "updated";
      ctx.out(`${res.body.name} capacity ${res.body.capacity} (${how})`);
    });

  group
    .command("get")
    .description("show one task group")
    .argument("<name>", "task group name")
    .addOption(outputOption(TEXT_OR_JSON))
    .action(async (name: string, opts: { output: string }) => {
      const g = await ctx.api().get<TaskGroup>(`/v1/task-groups/${seg(name)}`);
      if (opts.output === "JSON") {
        ctx.out(toJson(g));
        return;
      }
      for (const line of describeTaskGroup(g)) ctx.out(line);
    });

  group
    .command("delete")
    .description("delete a task group (refused while tasks hold or wait for its slots)")
    .argument("<name>", "task group name")
    .action(async (name: string) => {
      await ctx.api().delete(`/v1/task-groups/${seg(name)}`);
      ctx.out(`${name} deleted`);
    });
}

/**
 * The text form of `shoal task-group get`: one `label: value` line per field, labels padded
 * so the values line up; the description only when there is one.
 */
export function describeTaskGroup(g: TaskGroup): string[] {
  const fields: Array<[string, string]> = [
    ["name", g.name],
    ["capacity", String(g.capacity)],
    ["used", String(g.used)],
    ["waiting", String(g.waiting)],
  ];
  if (g.description) fields.push(["description", oneLine(g.description, 200)]);
  fields.push(["created", formatTime(g.createdAt)], ["updated", formatTime(g.updatedAt)]);
  const width = Math.max(...fields.map(([label]) => label.length)) + 1;
  return fields.map(([label, value]) => `${`${label}:`.padEnd(width)} ${value}`);
}
