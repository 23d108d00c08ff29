/** `shoal standalone` and `shoal worker`: long-running local processes. */
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { configFromEnv, ENV } from "../../aws/config.js";
import {
  ALLOWED_HOSTS_ENV,
  normalizeHostName,
  standaloneAllowedHosts,
} from "../../standalone/allowed-hosts.js";
import { BACKEND_KINDS, type BackendKind, DEFAULT_PORT } from "../../standalone/defaults.js";
import { DEFAULT_RETENTION_DAYS } from "../../standalone/retention.js";
import type { CliContext } from "../context.js";
import { CliError, UsageError } from "../errors.js";
import { intIn, nonNegativeNumber } from "../options.js";

/**
 * `--backend`'s default: SHOAL_BACKEND, else `embedded`.
 * @throws UsageError (exit 2) naming SHOAL_BACKEND when it holds no backend's name.
 */
function backendFromEnv(value: string | undefined): BackendKind {
  if (!value) return "embedded";
  if (!(BACKEND_KINDS as readonly string[]).includes(value))
    throw new UsageError(
      `SHOAL_BACKEND must be one of: ${BACKEND_KINDS.join(", ")} (it is '${value}')`,
    );
  return value as BackendKind;
}

/** Parser of `--backend`: one of {@link BACKEND_KINDS}. */
function backendKind(value: string): BackendKind {
  if (!(BACKEND_KINDS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`must be one of: ${BACKEND_KINDS.join(", ")}.`);
  return value as BackendKind;
}

/**
 * The retention of `shoal standalone`, in days (0: keep everything): `--keep-all`, else
 * `--retention-days`, else SHOAL_INSTANCE_RETENTION_DAYS, else 7.
 * @throws UsageError for `--keep-all` with a `--retention-days` other than 0, or a
 *   SHOAL_INSTANCE_RETENTION_DAYS that is not a number >= 0.
 */
export function standaloneRetentionDays(
  opts: { retentionDays?: number; keepAll?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): number {
  if (opts.keepAll) {
    if (opts.retentionDays) {
      throw new UsageError("--keep-all keeps everything; leave out --retention-days");
    }
    return 0;
  }
  if (opts.retentionDays !== undefined) return opts.retentionDays;
  const raw = env[ENV.instanceRetentionDays];
  if (raw === undefined || raw.trim() === "") return DEFAULT_RETENTION_DAYS;
  const days = Number(raw);
  if (!Number.isFinite(days) || days < 0) {
    throw new UsageError(
      `${ENV.instanceRetentionDays} must be a number of days >= 0, got '${raw}'`,
    );
  }
  return days;
}

/** Parser of the repeatable `--allowed-host`: one host name, normalised (allowed-hosts.ts). */
function allowedHost(value: string, previous: string[] = []): string[] {
  try {
    return [...previous, normalizeHostName(value)];
  } catch (e) {
    throw new InvalidArgumentError(`${(e as Error).message}.`);
  }
}

/** Help of `--data-dir` on `shoal worker` and `shoal sweeper`. */
const JOIN_DATA_DIR =
  "data directory of the `shoal standalone` to join: reads DIR/endpoints.env (default: the environment, else .shoal/endpoints.env)";

/**
 * Runs a `shoal worker` or `shoal sweeper` body, telling the user what to do when nothing says
 * where Shoal is.
 * @throws UsageError (exit 2) for a NoConfigurationError (lib/standalone/worker-process.ts).
 */
async function joining(run: () => Promise<void>): Promise<void> {
  const { NoConfigurationError } = await import("../../standalone/worker-process.js");
  try {
    await run();
  } catch (e) {
    if (e instanceof NoConfigurationError) throw new UsageError(e.message, { cause: e });
    throw e;
  }
}

/**
 * Checks the port and the data dir before `shoal standalone` starts anything, then takes the
 * data dir (lib/standalone/preflight.ts): a start that cannot succeed fails at once, naming the
 * problem, and writes nothing.
 * @throws CliError (exit 1) with the problem.
 */
async function preflight(port: number, dataDir: string): Promise<void> {
  const { checkDataDir, checkPort, claimDataDir } = await import("../../standalone/preflight.js");
  const problem = (await checkPort(port)) ?? (await checkDataDir(dataDir));
  if (problem) throw new CliError(problem);
  try {
    await claimDataDir(dataDir);
  } catch (e) {
    throw new CliError((e as Error).message, { cause: e });
  }
}

/**
 * The alerts file of `--alerts`, checked before anything starts.
 * @throws UsageError (exit 2) naming the file, the field and the rule.
 */
async function readAlerts(file: string) {
  const { AlertsConfigError, alertsConfigFromEnv } = await import("../../alerts/channels.js");
  try {
    return alertsConfigFromEnv({ SHOAL_ALERTS_FILE: file });
  } catch (e) {
    if (e instanceof AlertsConfigError) throw new UsageError(e.message);
    throw e;
  }
}

/** Registers `standalone`, `sweeper` and `worker`. */
export function registerServers(program: Command, _ctx: CliContext): void {
  program
    .command("standalone")
    .description(
      "run API, dispatcher, workers and sweeper in one process on embedded DynamoDB and SQS emulators",
    )
    .option(
      "--port <port>",
      "HTTP port of the API (0 = any free port)",
      intIn(0, 65535),
      DEFAULT_PORT,
    )
    .option(
      "--allowed-host <name>",
      `also answer requests addressed to NAME (a host name, no port; repeatable), e.g. behind a reverse proxy: otherwise only localhost, 127.0.0.1 and [::1] on --port, against DNS rebinding; added to $${ALLOWED_HOSTS_ENV} (comma-separated)`,
      allowedHost,
    )
    .option("--data-dir <dir>", "where the emulators keep their data", ".shoal")
    .option(
      "--workers <n>",
      "in-process worker slots (0 = none; run `shoal worker` instead)",
      intIn(0, 256),
      4,
    )
    .option(
      "--backend <kind>",
      "where state is kept: embedded (DynamoDB and SQS in-process on SQLite, fastest) or emulators (dynalite and fauxqs, the AWS protocol end to end); default $SHOAL_BACKEND, else embedded",
      backendKind,
    )
    .option("--no-examples", "do not load the example workflows")
    .option(
      "--no-scheduler",
      "do not fire schedules here (leave them to `shoal sweeper` processes)",
    )
    .option(
      "--retention-days <days>",
      `delete finished instances, their task logs and work directories this many days after they end (default ${DEFAULT_RETENTION_DAYS}, or $${ENV.instanceRetentionDays}; 0 = keep everything)`,
      nonNegativeNumber,
    )
    .option("--keep-all", "never delete finished instances (same as --retention-days 0)")
    .option(
      "--no-triggers",
      "set every event trigger OFFLINE before anything runs (to repair a bad trigger after a crash; shoal trigger online ID brings one back)",
    )
    .option(
      "--secrets-file <path>",
      "YAML/JSON map of secret name: value, read by tasks' secret references; mode 0600 (docs/secrets.md); default $SHOAL_SECRETS_FILE, else ~/.config/shoal/secrets.yaml if it exists",
    )
    .option(
      "--alerts <file>",
      "alert channels (YAML: channels: { NAME: { type: webhook|slack, url: … } }; docs/alerts.md); default $SHOAL_ALERTS_FILE",
    )
    .action(
      async (opts: {
        port: number;
        allowedHost?: string[];
        dataDir: string;
        workers: number;
        examples: boolean;
        scheduler: boolean;
        retentionDays?: number;
        keepAll?: boolean;
        triggers: boolean;
        alerts?: string;
        secretsFile?: string;
        backend?: BackendKind;
      }) => {
        const backend = opts.backend ?? backendFromEnv(process.env.SHOAL_BACKEND);
        // The environment's settings (SHOAL_TASK_EVENTS, SHOAL_LEASE_SECONDS, …) are checked
        // before anything is created.
        try {
          configFromEnv(process.env);
        } catch (e) {
          throw new UsageError((e as Error).message, { cause: e });
        }
        const retentionDays = standaloneRetentionDays(opts);
        let allowedHosts: string[];
        try {
          allowedHosts = standaloneAllowedHosts(opts.allowedHost, process.env);
        } catch (e) {
          throw new UsageError((e as Error).message, { cause: e });
        }
        // A secrets file others can read is refused before anything starts.
        const { standaloneSecretsFile } = await import("../../standalone/secrets-file.js");
        let secretsFile: string | undefined;
        try {
          secretsFile = standaloneSecretsFile(opts.secretsFile);
        } catch (e) {
          throw new CliError((e as Error).message, { cause: e });
        }
        const alerts = opts.alerts ? await readAlerts(opts.alerts) : undefined;
        await preflight(opts.port, opts.dataDir);
        // Imported on use so every other command works without the server's dependencies loaded.
        const { runStandalone } = await import("../../standalone/run-standalone.js");
        await runStandalone({
          port: opts.port,
          allowedHosts,
          dataDir: opts.dataDir,
          workers: opts.workers,
          examples: opts.examples,
          scheduler: opts.scheduler,
          triggers: opts.triggers,
          backend,
          retentionDays,
          ...(alerts ? { alerts } : {}),
          ...(secretsFile ? { secretsFile } : {}),
        });
      },
    );

  program
    .command("sweeper")
    .description(
      "run a sweeper process: fires schedules on its share of the shards, releases timers, fails over lost tasks; any number may run",
    )
    .option("--interval <ms>", "how often it sweeps, ms", intIn(100, 60_000), 1000)
    .option("--data-dir <dir>", JOIN_DATA_DIR)
    .action(async (opts: { interval: number; dataDir?: string }) => {
      const { runSweeperProcess } = await import("../../standalone/sweeper-process.js");
      await joining(() =>
        runSweeperProcess({
          intervalMs: opts.interval,
          ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
        }),
      );
    });

  program
    .command("worker")
    .description("run a worker process that polls a worker group's task queues")
    .option("--group <group>", "worker group to serve", "default")
    .option("--concurrency <n>", "tasks run at the same time", intIn(1, 256), 4)
    .option("--data-dir <dir>", JOIN_DATA_DIR)
    .action(async (opts: { group: string; concurrency: number; dataDir?: string }) => {
      const { runWorkerProcess } = await import("../../standalone/worker-process.js");
      await joining(() =>
        runWorkerProcess({
          group: opts.group,
          concurrency: opts.concurrency,
          ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
        }),
      );
    });
}
