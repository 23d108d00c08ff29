/** `shoal workflows`, `shoal get workflow` and `shoal get instance`. */
import type { Command } from "commander";
import type { Instance, WorkflowDetail, WorkflowSummary, WorkflowTaskRef } from "../api-types.js";
import type { CliContext } from "../context.js";
import { oneLine, toJson } from "../format.js";
import { ApiError, seg } from "../http.js";
import { printList } from "../list-output.js";
import { intIn, oneOf } from "../options.js";
import { renderInstanceTree } from "../tree.js";

/** Registers `workflows` and `get workflow|instance`. */
export function registerWorkflows(program: Command, ctx: CliContext): void {
  program
    .command("workflows")
    .description("list workflow definitions (latest version of each)")
    .option("-o, --output <format>", "table or json", oneOf(["TABLE", "JSON"] as const), "TABLE")
    .action(async (opts: { output: string }) => {
      const items = await ctx.api().getAll<WorkflowSummary>("/v1/workflows");
      printList(ctx, items, opts.output, {
        empty: "no workflows (create one with: shoal apply -f FILE)",
        headers: ["NAME", "VERSION", "RELEASE", "DESCRIPTION"],
        row: (w) => [w.name, String(w.version), w.releaseState, oneLine(w.description ?? "")],
      });
    });

  const get = program.command("get").description("show one workflow or instance");
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
    .description("draw a workflow instance's task tree (or print it as JSON with -o json)")
    .argument("<id>", "instance id")
    .option("-o, --output <format>", "tree or json", oneOf(["TREE", "JSON"] as const), "TREE")
    .action(async (id: string, opts: { output: string }) => {
      const inst = await ctx.api().get<Instance>(`/v1/instances/${seg(id)}`);
      if (opts.output === "JSON") {
        ctx.out(toJson(inst));
        return;
      }
      const definition = await workflowTasks(ctx, inst);
      for (const line of renderInstanceTree(inst, definition)) ctx.out(line);
    });
}

/**
 * The task definitions (codes and upstreams) of the version `inst` runs. When that version
 * cannot be read (its workflow was deleted), says so and returns undefined: the tree is then
 * drawn flat from the instance's own tasks.
 */
async function workflowTasks(
  ctx: CliContext,
  inst: Instance,
): Promise<WorkflowTaskRef[] | undefined> {
  try {
    const wf = await ctx
      .api()
      .get<WorkflowDetail>(`/v1/workflows/${seg(inst.workflow)}`, { version: inst.version });
    return Array.isArray(wf.tasks) ? wf.tasks : [];
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 404) throw err;
    ctx.io.stderr.write(
      `note: ${inst.workflow}:${inst.version} is gone (${err.message}); tasks shown without their DAG\n`,
    );
    return undefined;
  }
}
