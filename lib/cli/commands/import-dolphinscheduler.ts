/**
 * `shoal import dolphinscheduler EXPORT.json|DIR… [--project P] (--output DIR | --apply)
 * [--placeholder] [--server-timezone ZONE]`: converts DolphinScheduler 3.x workflow exports
 * (lib/import/dolphinscheduler/) and either writes reviewable files or creates the workflows
 * and schedules through the API, children first, as `shoal apply` does. Several files (or a
 * directory's `*.json`) are converted together, so that references between them resolve.
 */
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import type { Command } from "commander";
import { isTimeZone, timeZoneProblem } from "../../core/time-zones.js";
import type {
  ConvertedWorkflow,
  DsConversion,
  DsExportFile,
} from "../../import/dolphinscheduler/convert.js";
import type { Schedule, WorkflowWritten } from "../api-types.js";
import type { CliContext } from "../context.js";
import { CliError, EXIT, UsageError } from "../errors.js";
import { ApiError, seg } from "../http.js";
import { childrenFirst } from "./apply.js";

interface DsOptions {
  project?: string;
  output?: string;
  apply?: boolean;
  placeholder?: boolean;
  serverTimezone?: string;
}

/** Registers `import dolphinscheduler` on the `import` command group. */
export function registerImportDolphinScheduler(imp: Command, ctx: CliContext): void {
  imp
    .command("dolphinscheduler")
    .description(
      "import a DolphinScheduler 3.x workflow export (JSON) as Shoal workflows and schedules",
    )
    .argument(
      "<files...>",
      'the JSON files DolphinScheduler\'s "export" wrote, or directories of them (their *.json, not recursing)',
    )
    .option(
      "--project <code-or-name>",
      "only the workflows of this project (its code, or its name)",
    )
    .option(
      "--output <dir>",
      "write one YAML per workflow, schedules.sh and import-report.md into DIR",
    )
    .option("--apply", "create the workflows and schedules through the API")
    .option(
      "--placeholder",
      "import unsupported task types as SHELL tasks that fail saying what to replace",
    )
    .option(
      "--server-timezone <zone>",
      "zone of the DolphinScheduler server, in which schedule start/end times are written (default: each schedule's zone)",
    )
    .addHelpText(
      "after",
      "\nSeveral files are converted together: a DEPENDENT or SUB_PROCESS task on a workflow of any\n" +
        "of them gets that workflow's Shoal name; only references to none of them are reported.\n" +
        "Without --placeholder, a task type Shoal does not have (SQL, SPARK, …) stops the import:\n" +
        "each is listed and nothing is written. docs/import-dolphinscheduler.md has the mapping.",
    )
    .action(async (paths: string[], opts: DsOptions) => {
      if ((opts.output === undefined) === (opts.apply !== true)) {
        throw new UsageError(
          "give either --output DIR (write files to review) or --apply (create through the API)",
        );
      }
      if (opts.serverTimezone !== undefined && !isTimeZone(opts.serverTimezone)) {
        throw new UsageError(
          `--server-timezone: ${timeZoneProblem(opts.serverTimezone) ?? "not a time zone"}`,
        );
      }
      const files = await exportFiles(paths);
      const inputs: DsExportFile[] = [];
      for (const file of files) inputs.push({ source: file, doc: await readExportFile(file) });
      const { convertDolphinSchedulerFiles } = await import(
        "../../import/dolphinscheduler/convert.js"
      );
      const { DsImportError } = await import("../../import/dolphinscheduler/errors.js");
      let result: DsConversion;
      try {
        result = convertDolphinSchedulerFiles(inputs, {
          ...(opts.project !== undefined ? { project: opts.project } : {}),
          placeholder: opts.placeholder === true,
          ...(opts.serverTimezone !== undefined ? { serverTimezone: opts.serverTimezone } : {}),
        });
      } catch (err) {
        // With several files the converter's message names the file(s) itself.
        if (err instanceof DsImportError)
          throw new CliError(files.length === 1 ? `${files[0]}: ${err.message}` : err.message, {
            cause: err,
          });
        throw err;
      }
      const source = files.length === 1 ? basename(files[0] as string) : files.join(", ");
      if (opts.output !== undefined) await writeOutput(ctx, result, source, opts.output);
      else await applyAll(ctx, result);
    });
}

/**
 * The export files of the command's arguments, in order: a file as given, a directory as its
 * `*.json` files sorted by name (not recursing into subdirectories); each file once.
 * @throws CliError for a path that does not exist, or a directory without a `*.json` file.
 */
async function exportFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  const add = (file: string) => {
    if (seen.has(resolve(file))) return;
    seen.add(resolve(file));
    files.push(file);
  };
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined);
    if (!info?.isDirectory()) {
      add(path); // readExportFile says why a path that is not a file cannot be read
      continue;
    }
    const entries = await readdir(path, { withFileTypes: true });
    const json = entries
      .filter((e) => e.isFile() && e.name.toLowerCase().endsWith(".json"))
      .map((e) => e.name)
      .sort();
    if (json.length === 0)
      throw new CliError(`${path}: no *.json file in this directory (subdirectories are not read)`);
    for (const name of json) add(join(path, name));
  }
  return files;
}

/** The parsed export. @throws CliError when it cannot be read or is not JSON. */
async function readExportFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : code;
    throw new CliError(`cannot read ${file}: ${why ?? String(err)}`, { cause: err });
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (err) {
    throw new CliError(
      `${file}: not JSON (${(err as Error).message}); expected a DolphinScheduler workflow export`,
      {
        cause: err,
      },
    );
  }
}

async function writeOutput(
  ctx: CliContext,
  c: DsConversion,
  source: string,
  dir: string,
): Promise<void> {
  const { fileNames, outputFiles } = await import("../../import/dolphinscheduler/report.js");
  const files = outputFiles(c, source);
  const names = fileNames(c.workflows);
  try {
    await mkdir(dir, { recursive: true });
    for (const f of files) await writeFile(join(dir, f.path), f.content, "utf8");
  } catch (err) {
    throw new CliError(
      `cannot write to ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      { cause: err },
    );
  }
  for (const w of c.workflows)
    ctx.out(
      `${join(dir, names.get(w.name) as string)}: ${w.dsName}${w.source ? ` (from ${w.source})` : ""}${w.schedule ? " (schedule in schedules.sh)" : ""}`,
    );
  ctx.out(`${join(dir, "import-report.md")}: ${summary(c)}`);
}

function summary(c: DsConversion): string {
  const count = (k: string) => c.notes.filter((n) => n.kind === k).length;
  return `${c.workflows.length} workflow${c.workflows.length === 1 ? "" : "s"}; ${count("approximated")} approximated, ${count("not-converted")} not converted, ${count("external")} external references, ${c.unsupported.length} placeholders`;
}

/**
 * Creates the workflows (children first; a SUB_WORKFLOW target outside the file must already
 * exist, checked before anything is written) and then their schedules, skipping a schedule
 * the workflow already has with the same cron and zone (so a second import changes nothing).
 */
async function applyAll(ctx: CliContext, c: DsConversion): Promise<void> {
  const byName = new Map(c.workflows.map((w) => [w.name, w]));
  const children = new Map<string, string[]>();
  const missing: string[] = [];
  for (const w of c.workflows) {
    const mine: string[] = [];
    for (const t of w.definition.tasks as Array<{
      code: string;
      type: string;
      workflow?: string;
    }>) {
      if (t.type !== "SUB_WORKFLOW" || t.workflow === undefined) continue;
      if (byName.has(t.workflow)) mine.push(t.workflow);
      else if (!(await exists(ctx, t.workflow)))
        missing.push(
          `${w.name} / ${t.code}: sub-workflow '${t.workflow}' is not in the ${c.sources ? "files" : "file"} nor on the server`,
        );
    }
    children.set(w.name, mine);
  }
  if (missing.length > 0) {
    for (const m of missing) ctx.err(m);
    throw new CliError(
      "nothing applied: import or create those workflows first (or use --output and edit the files)",
    );
  }
  const { order, cycle } = childrenFirst([...byName.keys()], children);
  if (cycle) throw new CliError(`nothing applied: sub-workflow cycle ${cycle.join(" -> ")}`);
  for (const name of order) {
    const w = byName.get(name) as ConvertedWorkflow;
    let res: { status: number; body: WorkflowWritten };
    try {
      res = await ctx.api().put<WorkflowWritten>(`/v1/workflows/${seg(name)}`, w.definition);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      ctx.err(`${name}: ${err.message}`);
      ctx.exitCode = EXIT.error;
      return;
    }
    const change = (
      res.body.change ?? (res.status === 201 ? "CREATED" : "UNCHANGED")
    ).toLowerCase();
    ctx.out(`${name}: version ${res.body.version} (${change}) — ${w.dsName}`);
    // Plain-text credentials were written as they are (so the workflow runs): say so each time.
    for (const n of c.notes.filter((x) => x.credential && x.workflow === name)) {
      ctx.io.stderr.write(
        `warning: ${name}${n.task ? ` / ${n.task}` : ""}: plain-text credential: ${n.message}\n`,
      );
    }
    for (const warning of res.body.warnings ?? []) {
      ctx.io.stderr.write(
        `warning: ${name}: ${warning.path ? `${warning.path}: ` : ""}${warning.message}\n`,
      );
    }
  }
  for (const name of order) {
    const s = byName.get(name)?.schedule;
    if (s) await applySchedule(ctx, name, s);
  }
  for (const g of c.alertGroups)
    ctx.out(
      `alert channel to configure: ${g.channel} (DolphinScheduler alert group ${g.id}; docs/alerts.md)`,
    );
  ctx.out(`${summary(c)} (the report: the same command with --output DIR)`);
}

async function applySchedule(
  ctx: CliContext,
  name: string,
  body: Record<string, unknown>,
): Promise<void> {
  const existing = await ctx.api().getAll<Schedule>("/v1/schedules", { workflow: name });
  const same = existing.find(
    (s) => s.cron === body.cron && (body.timezone === undefined || s.timezone === body.timezone),
  );
  if (same) {
    // An existing schedule is the user's now: a different set of alert rules is said, not overwritten.
    const alerts = JSON.stringify(body.alerts ?? []);
    if (JSON.stringify(same.alerts ?? []) === alerts) {
      ctx.out(`${name}: schedule ${same.id} (unchanged, ${same.state})`);
      return;
    }
    const { shellWord } = await import("../../import/dolphinscheduler/report.js");
    ctx.out(
      `${name}: schedule ${same.id} (exists, ${same.state}; its alerts differ from the export's: shoal schedule update ${same.id} --alerts ${shellWord(alerts)})`,
    );
    return;
  }
  try {
    const res = await ctx.api().post<Schedule>("/v1/schedules", body);
    ctx.out(
      `${name}: schedule ${res.body.id} (created, ${res.body.state}; cron ${String(body.cron)} ${res.body.timezone})`,
    );
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    ctx.err(`${name}: schedule: ${err.message}`);
    ctx.exitCode = EXIT.error;
  }
}

async function exists(ctx: CliContext, name: string): Promise<boolean> {
  try {
    await ctx.api().get(`/v1/workflows/${seg(name)}`);
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return false;
    throw err;
  }
}
