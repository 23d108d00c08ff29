/** `shoal workflows`, `shoal get workflow` and `shoal get instance`. */
import type { Command } from "commander";
import type { Page, WorkflowSummary } from "../api-types.js";
import type { CliContext } from "../context.js";
import { table, toJson } from "../format.js";
import { seg } from "../http.js";
import { intIn, oneOf } from "../options.js";

/** Registers `workflows` and `get workflow|instance`. */
export function registerWorkflows(program: Command, ctx: CliContext): void {
  program
    .command("workflows")
    .description("list workflow definitions (latest version of each)")
    .option("-o, --output <format>", "table or json", oneOf(["TABLE", "JSON"] as const), "TABLE")
    .action(async (opts: { output: string }) => {
      const items: WorkflowSummary[] = [];
      let nextToken: string | undefined;
      do {
        const page = await ctx
          .api()
          .get<Page<WorkflowSummary>>("/v1/workflows", { limit: 200, nextToken });
        items.push(...(page.items ?? []));
        nextToken = page.nextToken;
      } while (nextToken);

      if (opts.output === "JSON") {
        ctx.out(toJson({ items }));
        return;
      }
      if (items.length === 0) {
        ctx.io.stderr.write("no workflows (create one with: shoal apply -f FILE)\n");
        return;
      }
      const rows = items.map((w) => [
        w.name,
        String(w.version),
        w.releaseState,
        oneLine(w.description ?? ""),
      ]);
      ctx.out(table(["NAME", "VERSION", "RELEASE", "DESCRIPTION"], rows));
    });

  const get = program.command("get").description("print one resource as JSON");
  get
    .command("workflow")
    .description("print a workflow definition (latest version unless --version)")
    .argument("<name>", "workflow name")
    .option("--version <n>", "an older version", intIn(1, Number.MAX_SAFE_INTEGER))
    .action(async (name: string, opts: { version?: number }) => {
      const wf = await ctx.api().get(`/v1/workflows/${seg(name)}`, { version: opts.version });
      ctx.out(toJson(wf));
    });
  get
    .command("instance")
    .description("print a workflow instance with the latest attempt of every task")
    .argument("<id>", "instance id")
    .action(async (id: string) => {
      ctx.out(toJson(await ctx.api().get(`/v1/instances/${seg(id)}`)));
    });
}

/** Keeps a table row on one line and its width sane. */
function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
