/**
 * The `shoal` command line: a commander program over the HTTP API v1, plus the local
 * `standalone` and `worker` processes. `main()` never exits the process, so tests run it
 * in-process; `runCli()` is the process entry point (bin/shoal.js or `tsx lib/cli/main.ts`).
 */
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, Option } from "commander";
import { registerApply } from "./commands/apply.js";
import { registerBackfills } from "./commands/backfills.js";
import { registerImport } from "./commands/import.js";
import { registerInstances } from "./commands/instances.js";
import { registerLogs } from "./commands/logs.js";
import { registerRun } from "./commands/run.js";
import { registerSchedules } from "./commands/schedules.js";
import { registerServers } from "./commands/server.js";
import { registerTaskGroups } from "./commands/task-groups.js";
import { registerTriggers } from "./commands/triggers.js";
import { registerWorkflows } from "./commands/workflows.js";
import type { CliContext, CliIo } from "./context.js";
import { CliError, EXIT, UsageError } from "./errors.js";
import { ApiClient } from "./http.js";

const DEFAULT_ENDPOINT = "http://localhost:8080";

/**
 * Runs the CLI with `argv` (the arguments after `shoal`) and returns the exit code:
 * 0 ok, 1 API or runtime error, 2 usage error. Output goes to `io` (default: the process's).
 */
export async function main(argv: string[], io?: CliIo): Promise<number> {
  const streams: CliIo = io ?? { stdout: process.stdout, stderr: process.stderr };
  let client: ApiClient | undefined;
  let leaf: Command | undefined;
  const program = new Command("shoal");
  const ctx: CliContext = {
    io: streams,
    exitCode: EXIT.ok,
    out: (line) => streams.stdout.write(`${line}\n`),
    err: (message) => streams.stderr.write(`error: ${message}\n`),
    api: () => {
      const endpoint =
        leaf?.opts<{ endpoint?: string }>().endpoint ??
        program.opts<{ endpoint: string }>().endpoint;
      client ??= new ApiClient(checkEndpoint(endpoint));
      return client;
    },
  };

  program
    .description(
      "Shoal: a serverless DAG workflow scheduler (DolphinScheduler on DynamoDB, SQS and Lambda)",
    )
    .version(packageVersion(), "-V, --version", "print the version")
    .addOption(
      new Option("--endpoint <url>", "Shoal API endpoint")
        .env("SHOAL_ENDPOINT")
        .default(DEFAULT_ENDPOINT),
    )
    // Set before the subcommands are added: they inherit output routing and exit override.
    .configureOutput({
      writeOut: (s) => streams.stdout.write(s),
      writeErr: (s) => streams.stderr.write(s),
    })
    .exitOverride()
    .showHelpAfterError("(add --help for usage)")
    .configureHelp({ showGlobalOptions: true })
    .helpCommand(true)
    // Positional: a subcommand's own `--version` (get workflow) must not print the CLI version.
    .enablePositionalOptions()
    .hook("preAction", (_program, actionCommand) => {
      leaf = actionCommand;
    });

  registerServers(program, ctx);
  registerApply(program, ctx);
  registerRun(program, ctx);
  registerWorkflows(program, ctx);
  registerInstances(program, ctx);
  registerLogs(program, ctx);
  registerTaskGroups(program, ctx);
  registerSchedules(program, ctx);
  registerBackfills(program, ctx);
  registerTriggers(program, ctx);
  registerImport(program, ctx);
  acceptEndpointAnywhere(program);

  try {
    await program.parseAsync(argv, { from: "user" });
    return ctx.exitCode;
  } catch (err) {
    return report(err, streams);
  }
}

/**
 * Positional options stop the program from reading `--endpoint` after the subcommand, so
 * every leaf command accepts it too (hidden: help shows the global one).
 */
function acceptEndpointAnywhere(cmd: Command): void {
  for (const sub of cmd.commands) {
    if (sub.commands.length > 0) acceptEndpointAnywhere(sub);
    else sub.addOption(new Option("--endpoint <url>", "Shoal API endpoint").hideHelp());
  }
}

/** Prints an error the way the CLI promises (`error: <message>`, no stack) and picks the exit code. */
function report(err: unknown, io: CliIo): number {
  if (err instanceof CommanderError) {
    // Commander has already printed its message (or the help / version).
    if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return EXIT.ok;
    if (err.code === "commander.help" && err.exitCode === 0) return EXIT.ok;
    return EXIT.usage;
  }
  if (err instanceof CliError) {
    io.stderr.write(`error: ${err.message}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  io.stderr.write(`error: ${message}\n`);
  // Anything else is unexpected: keep the stack available without showing it by default.
  if (process.env.SHOAL_DEBUG && err instanceof Error && err.stack)
    io.stderr.write(`${err.stack}\n`);
  return EXIT.error;
}

function checkEndpoint(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new UsageError(
      `invalid --endpoint '${endpoint}': expected a URL like ${DEFAULT_ENDPOINT}`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`invalid --endpoint '${endpoint}': only http and https are supported`);
  }
  return endpoint;
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  return String(pkg.version);
}

/** Process entry point: runs `main` on `process.argv` and exits with its code. */
export async function runCli(): Promise<void> {
  // `shoal instances | head` closes the pipe early: that is not an error.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(EXIT.ok);
    throw err;
  });
  const code = await main(process.argv.slice(2));
  // Exit explicitly: idle keep-alive sockets or a stopped server's leftovers must not hold the process.
  process.exit(code);
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isEntryPoint()) await runCli();
