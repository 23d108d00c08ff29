/** `shoal apply -f FILE`: create or update workflow definitions from YAML/JSON. */
import type { Command } from "commander";
import type { WorkflowWritten } from "../api-types.js";
import type { CliContext } from "../context.js";
import { loadWorkflowDocuments } from "../documents.js";
import { EXIT } from "../errors.js";
import { ApiError, seg } from "../http.js";

/** Registers `apply`. */
export function registerApply(program: Command, ctx: CliContext): void {
  program
    .command("apply")
    .description("create or update workflow definitions from a YAML or JSON file")
    .requiredOption(
      "-f, --file <file>",
      "definition file (YAML documents separated by ---, or JSON; - for stdin)",
    )
    .addHelpText(
      "after",
      "\nEach document holds a top-level `name` plus the WorkflowDefinition fields.\n" +
        "A file with one document may omit `name`: the file name is used.",
    )
    .action(async (opts: { file: string }) => {
      const docs = await loadWorkflowDocuments(opts.file);
      // Apply every document even when one fails, like `kubectl apply`: a failed PUT changes nothing.
      for (const doc of docs) {
        try {
          const res = await ctx
            .api()
            .put<WorkflowWritten>(`/v1/workflows/${seg(doc.name)}`, doc.body);
          const what = res.status === 201 ? "created" : "unchanged";
          ctx.out(`${doc.name}: version ${res.body.version} (${what})`);
        } catch (err) {
          // An unreachable endpoint fails every document alike: stop at the first.
          if (!(err instanceof ApiError)) throw err;
          ctx.err(`${doc.name}: ${err.message}`);
          ctx.exitCode = EXIT.error;
        }
      }
    });
}
