import { mkdirSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { resolve } from "node:path";
import { Alerts } from "../alerts/alerts.js";
import { type AlertsConfig, alertsConfigFromEnv, channelTypes } from "../alerts/channels.js";
import { DynamoExpiredDeliveries } from "../alerts/dynamo-expired-deliveries.js";
import { handleApiRequest } from "../api/router.js";
import { createAwsClients } from "../aws/clients.js";
import { ENV } from "../aws/config.js";
import { LocalEventBus } from "../events/local-event-bus.js";
import { createLog, type Log } from "../runtime/log.js";
import { createRuntime, type Runtime } from "../runtime/runtime.js";
import { SECRETS_ENV, secretSourceFromEnv } from "../secrets/sources.js";
import { DynamoExpiredItems } from "../store/dynamo-expired.js";
import { ALLOWED_HOSTS_ENV, normalizeHostName, parseAllowedHosts } from "./allowed-hosts.js";
import { banner } from "./banner.js";
import { consoleFiles } from "./console-files.js";
import type { BackendKind } from "./defaults.js";
import { portOf, previousPorts } from "./emulator-process.js";
import { ENDPOINTS_FILE, formatEnvFile } from "./env-file.js";
import { loadExamples } from "./examples.js";
import { holdingSignals } from "./held-signals.js";
import { startHttpServer } from "./http-server.js";
import { QueuePoller } from "./poller.js";
import {
  autoCreatedQueues,
  ensureEventsQueue,
  ensureSignalsQueue,
  ensureTables,
  ensureTaskQueues,
} from "./provision.js";
import { DEFAULT_RETENTION_DAYS, startRetention } from "./retention.js";
import { standaloneSecretsFile } from "./secrets-file.js";
import { REGION, standaloneConfig, standaloneEnv } from "./standalone-env.js";
import { allTriggersOffline, deliverBusToTriggers, relayTokenOf } from "./standalone-triggers.js";
import { dataOfOtherBackend, type StorageBackend, startStorageBackend } from "./storage-backend.js";
import { startSweepLoop } from "./sweep-loop.js";
import { startWorkerChild, type WorkerChild } from "./worker-child.js";

export interface StandaloneOptions {
  port: number;
  /**
   * Host names the API and the AWS-protocol endpoints answer besides localhost, 127.0.0.1 and
   * [::1] (`--allowed-host`; allowed-hosts.ts normalises them); absent: SHOAL_ALLOWED_HOSTS.
   */
  allowedHosts?: readonly string[];
  dataDir: string;
  /** Concurrent task slots of the built-in worker (0: only external `shoal worker`s run tasks). */
  workers: number;
  examples: boolean;
  /** Print the banner and logs (default true). */
  quiet?: boolean;
  /** Sweeper period, ms (default 1000). */
  sweepMs?: number;
  /** Run the built-in schedule sweeper (default true); false leaves schedules to `shoal sweeper`. */
  scheduler?: boolean;
  /**
   * Days finished instances, their task instances, task logs and work directories are kept
   * before standalone deletes them (lib/standalone/retention.ts); fractions allowed; 0 keeps
   * everything. Default {@link DEFAULT_RETENTION_DAYS}.
   */
  retentionDays?: number;
  /**
   * The secrets file tasks read `${secret:NAME}` from (mode 0600 or stricter); default
   * SHOAL_SECRETS_FILE, else `~/.config/shoal/secrets.yaml` when it exists (secrets-file.ts).
   */
  secretsFile?: string;
  /** Alert channels (`--alerts FILE`); absent: SHOAL_ALERTS / SHOAL_ALERTS_FILE, else none. */
  alerts?: AlertsConfig;
  /**
   * Where state is kept (`--backend`): `embedded` (default: DynamoDB and SQS in-process on
   * SQLite, lib/embedded/) or `emulators` (dynalite and fauxqs child processes).
   */
  backend?: BackendKind;
  /**
   * false (`--no-triggers`): every trigger is set OFFLINE before anything runs, so that a bad
   * trigger can be repaired after a crash (`shoal trigger online ID` brings one back). Default true.
   */
  triggers?: boolean;
}

export interface Standalone {
  apiUrl: string;
  dataDir: string;
  envFile: string;
  runtime: Runtime;
  /** The backend state is kept in, and its AWS-protocol endpoints. */
  emulators: StorageBackend;
  /**
   * Resolves (never rejects) if a child could not be restarted (supervisor.ts): standalone has
   * stopped itself by then, rather than serve while broken; the error says which and why.
   */
  failed: Promise<Error>;
  stop(): Promise<void>;
}

/** Fires due within this are fired one sweep early and delayed by SQS (1 s locally; docs/scheduling.md "Look-ahead, delayed signals and `notBefore`"). */
export const LOOKAHEAD_MS = 1_000;

/** Starts everything; resolves once the API answers. */
export async function startStandalone(opts: StandaloneOptions): Promise<Standalone> {
  // The environment, read once: what standalone sets goes over it, never into it.
  const inherited = process.env;
  const prefix = inherited[ENV.prefix] || "shoal";
  const dataDir = resolve(opts.dataDir);
  const retentionDays = opts.retentionDays ?? DEFAULT_RETENTION_DAYS;
  // Refused before anything starts when it is too open.
  const secretsFile = standaloneSecretsFile(opts.secretsFile, inherited);
  mkdirSync(dataDir, { recursive: true });
  // The log exists once the configuration does; the children's supervisors tell through it.
  let log: Log = () => {};
  const tell: Log = (msg, fields) => log(msg, fields);
  let giveUp: (e: Error) => void = () => {};
  const gaveUp = new Promise<Error>((r) => {
    giveUp = r;
  });
  // Set as stop begins: the children's exits are expected from then on.
  let stopped = false;
  const stopping = () => stopped;
  // The same endpoints as the last run: workers and sweepers that outlived it follow.
  const preferredPorts = previousPorts(dataDir);
  // Pollers in this process, told when an emulator is back (their backed-off messages go again).
  const pollers: QueuePoller[] = [];
  const kind = opts.backend ?? "embedded";
  const allowedHosts =
    opts.allowedHosts?.map(normalizeHostName) ??
    parseAllowedHosts(inherited[ALLOWED_HOSTS_ENV], ALLOWED_HOSTS_ENV);
  // Checked before the backend creates its files.
  const otherBackend = dataOfOtherBackend(kind, dataDir);
  const em: StorageBackend = await startStorageBackend(kind, dataDir, {
    log: tell,
    onGiveUp: giveUp,
    onRestarted: () => {
      for (const p of pollers) p.retryBackedOff();
    },
    stopping,
    preferredPorts,
    allowedHosts,
  });
  const cleanup: Array<() => Promise<void>> = [() => em.stop()];
  try {
    // The configuration without the events queue's URL first: the queue is created with it.
    const config0 = standaloneConfig(
      inherited,
      standaloneEnv(prefix, em, dataDir, "", retentionDays),
    );
    const clients = createAwsClients(config0.aws);
    cleanup.unshift(async () => clients.destroy());
    await ensureTables(clients.dynamo, config0.tables);
    const eventsUrl = await ensureEventsQueue(clients.sqs, config0.prefix);
    const signalsUrl = await ensureSignalsQueue(clients.sqs, config0.prefix);
    await ensureTaskQueues(clients.sqs, config0.prefix, "default");
    const env = {
      ...standaloneEnv(prefix, em, dataDir, eventsUrl, retentionDays),
      // The one way events with source `shoal` enter POST /v1/events: `shoal sweeper`s started
      // next to this standalone relay their misfires with it (kept across restarts).
      [ENV.eventsRelayToken]: relayTokenOf(dataDir),
      // Workers read secrets from their SHOAL_SECRET_* variables and the file (lib/secrets/).
      [SECRETS_ENV.sources]: "env,file",
      [SECRETS_ENV.file]: secretsFile ?? "",
    };
    const quiet = config0.quiet || opts.quiet === true;
    const config = { ...standaloneConfig(inherited, env), quiet };
    // The worker child loads its modules while this process sets up the rest (a shorter start);
    // it is awaited below, and stopped with the rest if the start fails before that.
    const workerStart =
      opts.workers > 0
        ? startWorkerChild(
            opts.workers,
            // Standalone's environment: its task processes see the endpoints.
            { ...inherited, ...env, ...(quiet ? { [ENV.quiet]: "true" } : {}) },
            tell,
            stopping,
          )
        : undefined;
    workerStart?.catch(() => {});
    let workerAwaited = false;
    cleanup.unshift(async () => {
      if (!workerAwaited) await (await workerStart?.catch(() => undefined))?.stop();
    });
    const envFile = resolve(dataDir, ENDPOINTS_FILE);
    const writeEnvFile = (extra: Record<string, string> = {}) =>
      writeFileSync(envFile, formatEnvFile({ ...env, ...extra }));
    writeEnvFile();
    // Shoal's state-change events and POST /v1/events meet on one in-process bus, which
    // delivers them to the triggers as EventBridge does on AWS.
    log = createLog({ quiet });
    for (const which of em.kind === "emulators" ? (["dynamodb", "sqs"] as const) : []) {
      const port = preferredPorts[which];
      if (port && port !== portOf(em, which)) {
        log(
          `standalone: port ${port} of the ${which} emulator's last run is taken, so it listens on another: restart the shoal workers and sweepers that joined the last run`,
          { part: which, port, now: portOf(em, which) },
        );
      }
    }
    const bus = new LocalEventBus({ region: REGION, now: () => Date.now(), log });
    const runtime = createRuntime(config, {
      clients,
      stateChanges: bus,
      log,
      ...autoCreatedQueues(config, clients.sqs),
    });
    runtime.api.bus = bus;
    const stopTriggers = deliverBusToTriggers(bus, runtime, log);
    cleanup.unshift(async () => {
      await stopTriggers();
      await bus.drain();
    });
    const triggersOffline =
      opts.triggers === false ? await allTriggersOffline(runtime, log) : undefined;
    // Alert rules see the same events (docs/alerts.md); their own loop sends, so a slow
    // receiver never holds up the sweeper.
    const alertsConfig = opts.alerts ?? alertsConfigFromEnv(inherited);
    const alerts = new Alerts({
      dynamo: clients.dynamo,
      timersTable: config.tables.timers,
      store: runtime.api.store,
      definitions: runtime.api.definitions,
      schedules: runtime.scheduling.schedules,
      logs: runtime.api.logs,
      now: () => Date.now(),
      log,
      ...(alertsConfig ? { config: alertsConfig } : {}),
      // Channel secrets come from where the workers' do: SHOAL_SECRET_<NAME>, the secrets file.
      secrets: () => secretSourceFromEnv({ ...inherited, ...env }),
      retentionDays,
    });
    bus.subscribe((event) => alerts.onEvent(event));
    // A PUT warns about rules naming other channels; `GET /v1/alert-channels` lists these.
    runtime.api.alertChannels = channelTypes(alerts.config);
    const alertLoop = startSweepLoop({
      intervalMs: Math.min(opts.sweepMs ?? 1000, 1000),
      sweep: async () => {
        await alerts.deliverDue();
      },
      log,
      name: "alerts",
    });
    cleanup.unshift(() => alertLoop.stop());
    const onError = (e: unknown) => log("standalone: poller error", { error: String(e) });

    const dispatcherPoller = new QueuePoller({
      sqs: clients.sqs,
      queueUrls: [eventsUrl],
      slots: 40,
      batchSize: 10,
      waitSeconds: 20,
      region: REGION,
      handler: holdingSignals(
        config.holdCommands ?? [],
        (event) => runtime.dispatcher.handleBatch(event.Records),
        log,
      ),
      fifo: true,
      deliverTwice: config.deliverTwice,
      onError,
    });
    dispatcherPoller.start();
    // The pollers and the worker child stop together: each lets its long polls answer for up to
    // 2 s, and one after the other that made Ctrl-C take 7.5 s.
    const consumers: Array<() => Promise<void>> = [() => dispatcherPoller.stop()];
    cleanup.unshift(async () => {
      await Promise.all(consumers.map((c) => c().catch(() => {})));
    });
    // Delayed signals (fires within the schedule look-ahead) reach the same dispatcher.
    const signalsPoller = new QueuePoller({
      sqs: clients.sqs,
      queueUrls: [signalsUrl],
      slots: 10,
      batchSize: 10,
      waitSeconds: 20,
      region: REGION,
      handler: (event) => runtime.dispatcher.handleBatch(event.Records),
      onError,
    });
    signalsPoller.start();
    consumers.push(() => signalsPoller.stop());
    pollers.push(dispatcherPoller, signalsPoller);

    let worker: WorkerChild | undefined;
    if (workerStart) {
      const started = await workerStart;
      workerAwaited = true;
      worker = started;
      consumers.push(() => started.stop());
    }
    // `/v1/health` reports each child's state (503 unless all are ok).
    runtime.api.parts = () => ({ ...em.parts(), ...(worker ? { worker: worker.state } : {}) });

    if (retentionDays > 0) {
      const stopRetention = startRetention(
        {
          expired: new DynamoExpiredItems(clients.dynamo, runtime.config.tables),
          deliveries: new DynamoExpiredDeliveries(clients.dynamo, config.tables.timers),
          dataDir,
          retentionDays,
          now: () => Date.now(),
          log,
        },
        config.retentionSweepMs,
      );
      cleanup.unshift(stopRetention);
    }

    const sweepMs = opts.sweepMs ?? 1000;
    // The built-in schedule sweeper shares the shards with any `shoal sweeper` processes.
    const scheduler =
      opts.scheduler === false
        ? undefined
        : runtime.scheduleSweeper(`standalone:${process.pid}`, sweepMs, LOOKAHEAD_MS);
    const sweeps = startSweepLoop({
      intervalMs: sweepMs,
      sweep: async () => {
        await runtime.sweeper.sweep();
        await scheduler?.sweep();
      },
      log,
      name: "standalone",
    });
    cleanup.unshift(async () => {
      await sweeps.stop();
      await scheduler?.stop().catch(() => {});
    });

    let server: Server;
    let port: number;
    try {
      ({ server, port } = await startHttpServer(
        opts.port,
        (event) => handleApiRequest(runtime.api, event),
        // SHOAL_CONSOLE_DIR serves another build of the console (a development convenience).
        { log, console: consoleFiles(process.env.SHOAL_CONSOLE_DIR || undefined), allowedHosts },
      ));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EADDRINUSE") {
        throw new Error(`port ${opts.port} is in use: stop what listens there or pass --port`);
      }
      throw e;
    }
    cleanup.unshift(
      () =>
        new Promise<void>((r) => {
          server.close(() => r());
          server.closeAllConnections();
        }),
    );
    const apiUrl = `http://localhost:${port}`;
    alerts.setConsoleUrl(apiUrl);
    // Now that the port is known: `shoal sweeper`s started next to this one send their misfire
    // events to its bus (lib/events/http-publisher.ts).
    writeEnvFile({ [ENV.standaloneUrl]: apiUrl });

    let examples: string[] = [];
    if (opts.examples) {
      const res = await loadExamples(runtime.api);
      examples = res.loaded;
      for (const e of res.errors) log("standalone: example not loaded", { error: e });
    }
    if (!opts.quiet) {
      process.stdout.write(
        banner({
          apiUrl,
          dataDir,
          envFile,
          workers: opts.workers,
          scheduler: opts.scheduler !== false,
          retentionDays,
          examples,
          backend: em.kind,
          ...(otherBackend ? { otherBackend } : {}),
          cwd: process.cwd(),
          ...(secretsFile ? { secretsFile } : {}),
          ...(triggersOffline !== undefined ? { triggersOffline } : {}),
        }),
      );
    }
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      for (const c of cleanup) await c().catch(() => {});
    };
    // A child given up: stop everything, then tell.
    const failed = gaveUp.then(async (e) => {
      await stop();
      return e;
    });
    return { apiUrl, dataDir, envFile, runtime, emulators: em, failed, stop };
  } catch (e) {
    for (const c of cleanup) await c().catch(() => {});
    throw e;
  }
}

export { banner } from "./banner.js";
