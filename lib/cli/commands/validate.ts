/**
 * `shoal validate -f FILE [-f FILE…]`: checks workflow files offline, with the validators the
 * API runs on `PUT /v1/workflows/{name}` (lib/core/validate.ts) and their messages, so a file
 * can be checked in CI or an editor hook before `shoal apply`. No endpoint, no credentials: the
 * command never asks for the API client (nor reads the CLI config). Files are read as `apply`
 * reads them (lib/cli/documents.ts). Beyond each document's own rules it checks what the files
 * say together: names used twice, a SUB_WORKFLOW task running its own workflow, sub-workflow
 * cycles among the files' workflows. What needs the server is skipped (docs/workflow-schema.md):
 * whether a SUB_WORKFLOW target outside the files exists, and cycles through stored workflows.
 * One exception, when a valid document has alert rules: it asks the Shoal the CLI points at
 * (`GET /v1/alert-channels`, within a few seconds) which channels it configures, and warns as
 * `apply` would about a rule naming another; without an answer (none reachable, an older
 * Shoal, `--offline`) it says in one note that channels were not checked.
 */
import type { Command } from "commander";
import { unconfiguredChannels } from "../../core/alert-rules.js";
import { type ErrorDetail, RequestError } from "../../core/errors.js";
import type { WorkflowDefinition } from "../../core/model.js";
import { unresolvedParamReferences } from "../../core/param-references.js";
import { subWorkflowTargets } from "../../core/sub-workflow-cycle.js";
import { NAME_PATTERN, parseWorkflowDefinition } from "../../core/validate.js";
import type { AlertChannels } from "../api-types.js";
import type { CliContext } from "../context.js";
import { loadWorkflowDocuments, type WorkflowDocument, type WorkflowFile } from "../documents.js";
import { CliError, EXIT, UsageError } from "../errors.js";
import { ApiError } from "../http.js";
import { childrenFirst } from "./apply.js";

/** One document of one file, with where to say it is. */
interface Located {
  doc: WorkflowDocument;
  /** `FILE` or `FILE (document N)`, as `apply` names a document (documents.ts). */
  where: string;
}

/** Registers `validate`. */
export function registerValidate(program: Command, ctx: CliContext): void {
  program
    .command("validate")
    .description("check workflow definition files offline, as the API would (no endpoint needed)")
    // Files as arguments too, so a shell glob works: `shoal validate -f imported/*.yaml`.
    .argument("[files...]", "more definition files")
    .option(
      "-f, --file <file>",
      "definition file (YAML documents separated by ---, or JSON; - for stdin); repeat for more",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option("--offline", "never ask a Shoal which alert channels it has")
    .addHelpText(
      "after",
      "\nEach problem is printed as `FILE (document N): path: message`, the API's own message.\n" +
        "Not checked (they need the server): SUB_WORKFLOW targets that are not in the files\n" +
        "exist, and sub-workflow cycles through workflows stored on the server.\n" +
        "Alert rules: when a Shoal answers at the endpoint (--endpoint, SHOAL_ENDPOINT, the\n" +
        "config file) within 5 s, a channel it does not configure is a warning, as in apply.\n" +
        "Exit 0 when every document is valid, 1 otherwise.",
    )
    .action(async (args: string[], opts: { file?: string[]; offline?: boolean }) => {
      const files = [...(opts.file ?? []), ...args];
      if (files.length === 0) {
        throw new UsageError("name at least one file: shoal validate -f FILE [FILE…]");
      }
      const problems: string[] = [];
      const invalid = new Set<Located>();
      const fail = (at: Located, detail: ErrorDetail) => {
        problems.push(`${at.where}: ${detailLine(detail)}`);
        invalid.add(at);
      };
      const warnings: string[] = [];
      const valid = new Map<string, { at: Located; def: WorkflowDefinition }>();
      const firstByName = new Map<string, Located>();
      let count = 0;
      let unreadable = 0;
      // File by file, document by document: problems print in that order.
      for (const file of files) {
        let read: WorkflowFile;
        try {
          read = await loadWorkflowDocuments(file);
        } catch (err) {
          // A file that cannot be read (or holds nothing): said, and the other files still checked.
          if (!(err instanceof CliError)) throw err;
          problems.push(err.message);
          count++;
          unreadable++;
          continue;
        }
        count += read.count;
        unreadable += read.problems.length;
        const label = file === "-" ? "stdin" : file;
        const byPosition = [
          ...read.problems.map((p) => ({ position: p.position, problem: p.message })),
          ...read.documents.map((doc) => ({ position: doc.position, doc })),
        ].sort((a, b) => a.position - b.position);
        for (const entry of byPosition) {
          if ("problem" in entry) {
            problems.push(entry.problem);
            continue;
          }
          const doc = entry.doc;
          const at = { doc, where: read.count > 1 ? `${label} (document ${doc.position})` : label };
          const first = firstByName.get(doc.name);
          if (first) {
            fail(at, { path: "name", message: `'${doc.name}' is also the name of ${first.where}` });
            continue;
          }
          firstByName.set(doc.name, at);
          const def = checkDocument(at, fail);
          if (!def) continue;
          valid.set(doc.name, { at, def });
          for (const w of unresolvedParamReferences(def)) {
            warnings.push(`${at.where}: ${detailLine(w)}`);
          }
        }
      }
      // Sub-workflow cycles among the files' workflows (the API would refuse the last PUT).
      const children = new Map(
        [...valid].map(([name, { def }]) => [
          name,
          subWorkflowTargets(def.tasks).filter((t) => valid.has(t) && t !== name),
        ]),
      );
      const { cycle } = childrenFirst([...valid.keys()], children);
      if (cycle) {
        const at = (valid.get(cycle[0] as string) as { at: Located }).at;
        fail(at, { path: "", message: `sub-workflow cycle in these files: ${cycle.join(" -> ")}` });
      }
      const alerting = [...valid.values()].filter(({ def }) => (def.alerts?.length ?? 0) > 0);
      if (alerting.length > 0) {
        const known = opts.offline ? { why: "--offline" } : await configuredChannels(ctx);
        if ("why" in known) ctx.io.stderr.write(`note: alert channels not checked: ${known.why}\n`);
        else {
          for (const { at, def } of alerting) {
            for (const w of unconfiguredChannels(def.alerts, known.names, known.where)) {
              warnings.push(`${at.where}: ${detailLine(w)}`);
            }
          }
        }
      }
      for (const w of warnings) ctx.io.stderr.write(`warning: ${w}\n`);
      for (const p of problems) ctx.err(p);
      const bad = unreadable + invalid.size;
      const noun = count === 1 ? "workflow" : "workflows";
      if (bad > 0) {
        ctx.err(`${bad} of ${count} ${noun} invalid`);
        ctx.exitCode = EXIT.error;
        return;
      }
      ctx.out(`${count} ${noun} valid`);
    });
}

/** `path: message`, or the message alone for a detail about the whole document (the API's form). */
function detailLine(d: ErrorDetail): string {
  return d.path ? `${d.path}: ${d.message}` : d.message;
}

/**
 * The checks of `PUT /v1/workflows/{name}` that need no server (lib/api/workflows.ts
 * putWorkflow): the name, the definition (lib/core/validate.ts), a SUB_WORKFLOW task naming its
 * own workflow. @returns the definition with defaults, or undefined after reporting each problem.
 */
function checkDocument(
  at: Located,
  fail: (at: Located, detail: ErrorDetail) => void,
): WorkflowDefinition | undefined {
  let ok = true;
  if (!NAME_PATTERN.test(at.doc.name)) {
    fail(at, { path: "name", message: "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$" });
    ok = false;
  }
  let def: WorkflowDefinition;
  try {
    def = parseWorkflowDefinition(at.doc.body);
  } catch (err) {
    if (!(err instanceof RequestError)) throw err;
    const details = err.details.length > 0 ? err.details : [{ path: "", message: err.message }];
    for (const d of details) fail(at, d);
    return undefined;
  }
  for (const [i, task] of def.tasks.entries()) {
    if (task.type !== "SUB_WORKFLOW" || task.workflow !== at.doc.name) continue;
    fail(at, {
      path: `tasks[${i}].workflow`,
      message: "a workflow cannot run itself as a sub-workflow",
    });
    ok = false;
  }
  return ok ? def : undefined;
}

/** How long `validate` waits for a Shoal's channel list, ms (an unreachable one must not stall CI). */
const CHANNELS_DEADLINE_MS = 5_000;

/**
 * The alert channels of the Shoal the CLI points at (`GET /v1/alert-channels`), or why they are
 * not known: no endpoint that works (a bad config is no reason to fail an offline check), no
 * answer within {@link CHANNELS_DEADLINE_MS}, an error answer (404: a Shoal older than the route,
 * or an API deployed without its channel list).
 */
async function configuredChannels(
  ctx: CliContext,
): Promise<{ names: string[]; where: string } | { why: string }> {
  let endpoint = "the endpoint";
  const deadline = AbortSignal.timeout(CHANNELS_DEADLINE_MS);
  try {
    const api = ctx.api();
    endpoint = api.endpoint;
    // The race also bounds what the signal does not reach (finding AWS credentials to sign with).
    const answer = await Promise.race([
      api.get<AlertChannels>("/v1/alert-channels", undefined, deadline),
      new Promise<never>((_, reject) =>
        deadline.addEventListener("abort", () => reject(deadline.reason), { once: true }),
      ),
    ]);
    return { names: answer.items.map((c) => c.name), where: `the Shoal at ${endpoint}` };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      return { why: `the Shoal at ${endpoint} does not list its channels (${err.message})` };
    }
    if (err instanceof CliError) return { why: err.message };
    if (deadline.aborted) {
      return {
        why: `the Shoal at ${endpoint} did not answer within ${CHANNELS_DEADLINE_MS / 1000} s`,
      };
    }
    throw err;
  }
}
