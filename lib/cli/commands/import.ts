/** `shoal import wfcommons FILE --name NAME`: turn a WfCommons trace into a workflow. */
import { writeFile } from "node:fs/promises";
import { basename } from "node:path";
import type { Command } from "commander";
import { stringify } from "yaml";
import { readWfcommonsFile } from "../../import/wfcommons-file.js";
import { yamlSchemaComment } from "../../workflow-schema-url.js";
import type { WorkflowWritten } from "../api-types.js";
import type { CliContext } from "../context.js";
import { CliError } from "../errors.js";
import { seg } from "../http.js";
import { nonNegativeNumber } from "../options.js";
import { registerImportDolphinScheduler } from "./import-dolphinscheduler.js";

interface ImportOptions {
  name: string;
  timeScale: number;
  output?: string;
}

/** Registers `import wfcommons` and `import dolphinscheduler`. */
export function registerImport(program: Command, ctx: CliContext): void {
  const imp = program.command("import").description("convert workflows from other formats");
  imp
    .command("wfcommons")
    .description(
      "import a WfCommons workflow trace (JSON) as SHELL tasks that sleep for each task's runtime",
    )
    .argument("<file>", "WfCommons JSON file")
    .requiredOption("--name <name>", "name of the Shoal workflow")
    .option(
      "--time-scale <s>",
      "multiply task runtimes by this factor (0 = no sleeping)",
      nonNegativeNumber,
      1,
    )
    .option("-o, --output <file>", "write the definition as YAML instead of creating the workflow")
    .action(async (file: string, opts: ImportOptions) => {
      const doc = await readJson(file);
      // Loaded lazily: the converter is only needed by this command.
      const { convertWfcommons } = await import("../../import/wfcommons.js");
      let result: ReturnType<typeof convertWfcommons>;
      try {
        result = convertWfcommons(doc, { timeScale: opts.timeScale, source: basename(file) });
      } catch (err) {
        throw new CliError(`${file}: ${(err as Error).message}`, { cause: err });
      }
      const summary = `${result.taskCount} tasks, critical path ${formatSeconds(result.criticalPathSeconds)} s`;
      if (opts.output !== undefined) {
        const yaml = stringify({ name: opts.name, ...result.definition }, { lineWidth: 0 });
        await writeFile(opts.output, `${yamlSchemaComment()}\n${yaml}`, "utf8");
        ctx.out(`wrote ${opts.output}: ${opts.name} — ${summary}, ${result.edgeCount} edges`);
        return;
      }
      const res = await ctx
        .api()
        .put<WorkflowWritten>(`/v1/workflows/${seg(opts.name)}`, result.definition);
      const what = res.status === 201 ? "created" : "unchanged";
      ctx.out(`${opts.name}: version ${res.body.version} (${what}) — ${summary}`);
    });
  registerImportDolphinScheduler(imp, ctx);
}

async function readJson(file: string): Promise<unknown> {
  try {
    return readWfcommonsFile(file);
  } catch (err) {
    throw new CliError((err as Error).message, { cause: err });
  }
}

/** Seconds with at most one decimal, without a trailing `.0`. */
function formatSeconds(s: number): string {
  return String(Math.round(s * 10) / 10);
}
