/**
 * The `shoal` command line: a commander program over the HTTP API v1, plus the local
 * `standalone` and `worker` processes. `main()` never exits the process, so tests run it
 * in-process; `runCli()` is the process entry point (bin/shoal.js or `tsx lib/cli/main.ts`).
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { DEFAULT_ENDPOINT } from "../standalone/defaults.js";
import { VERSION } from "../version.js";
import {
  AUTH_MODES,
  type CliSettings,
  configFilePath,
  type Env,
  type GlobalFlags,
  loadConfigFile,
  resolveSettings,
  type Setting,
} from "./cli-config.js";
import { registerApply } from "./commands/apply.js";
import { registerBackfills } from "./commands/backfills.js";
import { registerConfig } from "./commands/config.js";
import { registerConsole } from "./commands/console.js";
import { registerExplain } from "./commands/explain.js";
import { registerImport } from "./commands/import.js";
import { registerInstances } from "./commands/instances.js";
import { registerLogs } from "./commands/logs.js";
import { registerRender } from "./commands/render.js";
import { registerRun } from "./commands/run.js";
import { registerSchedules } from "./commands/schedules.js";
import { registerServers } from "./commands/server.js";
import { registerTaskGroups } from "./commands/task-groups.js";
import { registerTriggers } from "./commands/triggers.js";
import { registerValidate } from "./commands/validate.js";
import { registerWait } from "./commands/wait.js";
import { registerWorkflows } from "./commands/workflows.js";
import type { CliContext, CliIo } from "./context.js";
import { CliError, EXIT, UsageError } from "./errors.js";
import { ApiClient } from "./http.js";
import { defaultCredentials, iamAuthorization, jwtAuthorization } from "./signing.js";

/**
 * Runs the CLI with `argv` (the arguments after `shoal`) and returns the exit code:
 * 0 ok, 1 API or runtime error, 2 usage error. Output goes to `io` (default: the process's).
 * The environment is process.env as it is at the call (the AWS credential chain reads it too).
 */
export async function main(argv: string[], io?: CliIo): Promise<number> {
  const streams: CliIo = io ?? { stdout: process.stdout, stderr: process.stderr };
  const env: Env = process.env;
  let client: ApiClient | undefined;
  let settings: CliSettings | undefined;
  let leaf: Command | undefined;
  const program = new Command("shoal");
  const flags = (): GlobalFlags => {
    const mine = leaf?.opts<GlobalFlags>() ?? {};
    const global = program.opts<GlobalFlags>();
    return {
      endpoint: mine.endpoint ?? global.endpoint,
      region: mine.region ?? global.region,
      auth: mine.auth ?? global.auth,
      profile: mine.profile ?? global.profile,
    };
  };
  const ctx: CliContext = {
    io: streams,
    env,
    exitCode: EXIT.ok,
    out: (line) => streams.stdout.write(`${line}\n`),
    err: (message) => streams.stderr.write(`error: ${message}\n`),
    flags,
    settings: () => {
      if (!settings) {
        const path = configFilePath(env);
        const config = loadConfigFile(path);
        settings = resolveSettings(flags(), env, { path, ...(config ? { config } : {}) });
      }
      return settings;
    },
    api: () => {
      client ??= connect(ctx.settings(), streams);
      return client;
    },
  };

  program
    .description(
      "Shoal: a serverless DAG workflow scheduler (DolphinScheduler on DynamoDB, SQS and Lambda)",
    )
    .version(VERSION, "-V, --version", "print the version")
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

  for (const opt of globalOptions()) program.addOption(opt);
  registerServers(program, ctx);
  registerApply(program, ctx);
  registerValidate(program, ctx);
  registerRun(program, ctx);
  registerWorkflows(program, ctx);
  registerInstances(program, ctx);
  registerWait(program, ctx);
  registerLogs(program, ctx);
  registerRender(program, ctx);
  registerExplain(program, ctx);
  registerTaskGroups(program, ctx);
  registerSchedules(program, ctx);
  registerBackfills(program, ctx);
  registerTriggers(program, ctx);
  registerImport(program, ctx);
  registerConfig(program, ctx);
  registerConsole(program, ctx);
  acceptGlobalsAnywhere(program);

  try {
    await program.parseAsync(argv, { from: "user" });
    return ctx.exitCode;
  } catch (err) {
    return report(err, streams);
  }
}

const ENDPOINT_HELP = `Shoal API endpoint (env SHOAL_ENDPOINT, then the config file; default ${DEFAULT_ENDPOINT})`;
const AUTH_HELP =
  "request auth: iam|jwt|none: iam (SigV4), jwt (bearer token from env SHOAL_TOKEN) or none (env SHOAL_AUTH; default: iam for AWS endpoints, else none)";
const REGION_HELP =
  "AWS region for signing (default: from an AWS endpoint's host, then env AWS_REGION, AWS_DEFAULT_REGION)";
const PROFILE_HELP = "AWS profile for credentials (env AWS_PROFILE)";

/** The options every command takes: where the API is and how to authenticate. */
function globalOptions(): Option[] {
  return [
    new Option("--endpoint <url>", ENDPOINT_HELP),
    // Not commander's .choices(): help shows the values as typed, like every other option.
    new Option("--auth <mode>", AUTH_HELP).argParser((value) => {
      const mode = AUTH_MODES.find((m) => m === value.toLowerCase());
      if (!mode) throw new InvalidArgumentError(`must be one of ${AUTH_MODES.join("|")}.`);
      return mode;
    }),
    new Option("--region <region>", REGION_HELP),
    new Option("--profile <name>", PROFILE_HELP),
  ];
}

/**
 * Positional options stop the program from reading global options after the subcommand, so
 * every leaf command accepts them too (hidden: help shows the global ones), unless it has its
 * own (`config from-stack --region`).
 */
function acceptGlobalsAnywhere(cmd: Command): void {
  for (const sub of cmd.commands) {
    if (sub.commands.length > 0) {
      acceptGlobalsAnywhere(sub);
      continue;
    }
    for (const opt of globalOptions()) {
      if (!sub.options.some((o) => o.long === opt.long)) sub.addOption(opt.hideHelp());
    }
  }
}

/**
 * The API client for `settings`: plain for auth none; SHOAL_TOKEN as a bearer token for jwt;
 * SigV4 with the default credential chain (asked once per run, on the first request) for iam.
 * @throws UsageError for an invalid endpoint, jwt without SHOAL_TOKEN, or iam without a region.
 */
function connect(settings: CliSettings, io: CliIo): ApiClient {
  const endpoint = checkEndpoint(settings.endpoint);
  switch (settings.auth.value) {
    case "none":
      return new ApiClient(endpoint);
    case "jwt": {
      if (!settings.token) {
        throw new UsageError(
          `auth jwt (${describe(settings.auth)}) needs a token: set SHOAL_TOKEN (there is no flag, so tokens stay out of shell history)`,
        );
      }
      return new ApiClient(endpoint, { authorization: jwtAuthorization(settings.token) });
    }
    case "iam": {
      if (!settings.region) {
        throw new UsageError(
          `no AWS region for signing requests to ${endpoint}: pass --region or set AWS_REGION`,
        );
      }
      const credentials = defaultCredentials({
        endpoint,
        ...(settings.profile ? { profile: settings.profile.value } : {}),
        warn: io.stderr,
      });
      return new ApiClient(endpoint, {
        authorization: iamAuthorization({
          service: settings.service.value,
          region: settings.region.value,
          credentials,
        }),
      });
    }
  }
}

function describe(setting: Setting<unknown>): string {
  return setting.source === "default" ? "inferred from the endpoint" : `from ${setting.origin}`;
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

/** The endpoint if it is an http(s) URL; the error names where it came from. */
function checkEndpoint(setting: Setting<string>): string {
  const endpoint = setting.value;
  const what =
    setting.source === "file"
      ? `endpoint '${endpoint}' in config file ${setting.origin}`
      : `${setting.origin} '${endpoint}'`;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new UsageError(`invalid ${what}: expected a URL like ${DEFAULT_ENDPOINT}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`invalid ${what}: only http and https are supported`);
  }
  return endpoint;
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
