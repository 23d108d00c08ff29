/**
 * `shoal workflows`, `shoal get workflow` and `shoal get instance`, `shoal release` and
 * `shoal delete workflow`.
 */
import type { Command } from "commander";
import { stringify } from "yaml";
import { RELEASE_STATES } from "../../core/model.js";
import type { Instance, WorkflowDetail, WorkflowSummary, WorkflowTaskRef } from "../api-types.js";
import type { CliContext } from "../context.js";
import { oneLine, toJson } from "../format.js";
import { ApiError, seg } from "../http.js";
import { printList } from "../list-output.js";
import { intIn, oneOf, outputOption, TABLE_OR_JSON } from "../options.js";
import { renderInstanceTree } from "../tree.js";

/** Registers `workflows`, `get workflow|instance`, `release` and `delete workflow`. */
export function registerWorkflows(program: Command, ctx: CliContext): void {
  program
    .command("workflows")
    .description("list workflow definitions (latest version of each)")
    .addOption(outputOption(TABLE_OR_JSON))
    .action(async (opts: { output: string }) => {
      const items = await ctx.api().getAll<WorkflowSummary>("/v1/workflows");
      printList(ctx, items, opts.output, {
        empty: "no workflows (create one with: shoal apply -f FILE)",
        headers: ["NAME", "VERSION", "RELEASE", "DESCRIPTION"],
        // An imported workflow's original name (any text) reads first.
        row: (w) => [
          w.name,
          String(w.version),
          w.releaseState,
          oneLine([w.displayName, w.description].filter(Boolean).join(" — ")),
        ],
      });
    });

  const get = program.command("get").description("show one workflow or instance");
  get
    .command("workflow")
    .description(
      "print a workflow definition (latest version unless --version); `-o yaml` prints a file `shoal apply -f` takes back (without the release state)",
    )
    .argument("<name>", "workflow name")
    .option("--version <n>", "an older version", intIn(1, Number.MAX_SAFE_INTEGER))
    .addOption(outputOption(["JSON", "YAML"]))
    .action(async (name: string, opts: { version?: number; output: string }) => {
      const wf = await ctx
        .api()
        .get<WorkflowDetail>(`/v1/workflows/${seg(name)}`, { version: opts.version });
      ctx.out(opts.output === "YAML" ? workflowYaml(wf) : toJson(wf));
    });
  get
    .command("instance")
    .description("draw a workflow instance's task tree (or print it as JSON with -o json)")
    .argument("<id>", "instance id")
    .addOption(outputOption(["TREE", "JSON"]))
    .action(async (id: string, opts: { output: string }) => {
      const inst = await ctx.api().get<Instance>(`/v1/instances/${seg(id)}`);
      if (opts.output === "JSON") {
        ctx.out(toJson(inst));
        return;
      }
      const definition = await workflowTasks(ctx, inst);
      for (const line of renderInstanceTree(inst, definition)) ctx.out(line);
    });

  program
    .command("release")
    .description(
      "take a workflow offline (new runs refused, schedules do not fire) or online again",
    )
    .argument("<workflow>", "workflow name")
    .argument("<state>", "online|offline", oneOf(RELEASE_STATES))
    .action(async (name: string, state: string) => {
      const res = await ctx
        .api()
        .post<WorkflowSummary>(`/v1/workflows/${seg(name)}/release`, { state });
      ctx.out(`${res.body.name}: ${res.body.releaseState} (version ${res.body.version})`);
    });

  const del = program.command("delete").description("delete a workflow");
  del
    .command("workflow")
    .description(
      "delete a workflow definition, every version (refused while an instance of it is unfinished)",
    )
    .argument("<name>", "workflow name")
    .action(async (name: string) => {
      // Read first, to say what was deleted; a 404 here is the same answer DELETE would give.
      const wf = await ctx.api().get<WorkflowDetail>(`/v1/workflows/${seg(name)}`);
      await ctx.api().delete(`/v1/workflows/${seg(name)}`);
      ctx.out(`${name} deleted (latest version ${wf.version})`);
    });
}

/**
 * A workflow as `get workflow` shows it, in YAML with `name` first: `shoal apply -f` takes it
 * back as it is (documents.ts drops `version` and `createdAt`), so it can be edited and applied.
 * `releaseState` is left out: it is the workflow's state now (`shoal release`), not part of the
 * version, and a file that kept it would take the workflow back ONLINE (or OFFLINE) whenever it
 * is applied. Strings that would read as another type (`"007"`, `"true"`) stay quoted; long
 * lines are not folded.
 */
export function workflowYaml(wf: WorkflowDetail): string {
  const { name, releaseState: _state, ...rest } = wf;
  return stringify({ name, ...rest }, { lineWidth: 0 }).trimEnd();
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
