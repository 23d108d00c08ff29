/**
 * `shoal sweeper`: a sweeper as its own long-running process. Any number may run against one
 * store: they share the schedule shards through leases (no leader; a dead one's shards are taken
 * over once its leases expire) and every fire is recorded at most once in the fire ledger. Like
 * `shoal worker`, it takes its configuration from the environment, `--data-dir DIR`'s
 * `endpoints.env` or `.shoal/endpoints.env` (lib/standalone/worker-process.ts loadEndpointsFile).
 */
// A process that joins a standalone on the embedded backend opens its files (SHOAL_EMBEDDED_DIR).
import "../embedded/register.js";
import { hostname } from "node:os";
import { createAwsClients } from "../aws/clients.js";
import { configFromEnv } from "../aws/config.js";
import { HttpStateChangePublisher } from "../events/http-publisher.js";
import { createLog } from "../runtime/log.js";
import { createRuntime } from "../runtime/runtime.js";
import { autoCreatedQueues } from "./provision.js";
import { startSweepLoop } from "./sweep-loop.js";
import { loadEndpointsFile } from "./worker-process.js";

/**
 * Sweeps every `intervalMs` until SIGINT/SIGTERM; a clean stop hands its shards over at once.
 * @throws NoConfigurationError when nothing says where Shoal is.
 */
export async function runSweeperProcess(opts: {
  intervalMs: number;
  quiet?: boolean;
  /** A standalone's data directory: its `endpoints.env` configures this sweeper. */
  dataDir?: string;
}): Promise<void> {
  const file = loadEndpointsFile(opts.dataDir);
  const config = configFromEnv(process.env);
  const clients = createAwsClients(config.aws);
  const log = createLog({ quiet: config.quiet });
  // Next to a standalone (and no EventBridge bus): misfire events go to its bus over HTTP.
  const standalone = config.standaloneUrl;
  const runtime = createRuntime(config, {
    clients,
    log,
    ...(standalone && !config.eventBus
      ? {
          stateChanges: new HttpStateChangePublisher({
            url: standalone,
            log,
            ...(config.eventsRelayToken ? { relayToken: config.eventsRelayToken } : {}),
          }),
        }
      : {}),
    ...autoCreatedQueues(config, clients.sqs),
  });
  const owner = `${hostname()}:${process.pid}`;
  // Fires due within the look-ahead are signalled now with an SQS delay (1 s, as standalone).
  const scheduler = runtime.scheduleSweeper(owner, opts.intervalMs, 1_000);
  const loop = startSweepLoop({
    intervalMs: opts.intervalMs,
    sweep: async () => {
      await runtime.sweeper.sweep();
      await scheduler.sweep();
    },
    log,
    name: "sweeper",
  });
  if (!opts.quiet) {
    process.stdout.write(
      `shoal sweeper ${owner}: every ${opts.intervalMs} ms${file ? `, environment from ${file}` : ""}\n`,
    );
  }
  process.send?.("ready");
  await new Promise<void>((done) => {
    const onSignal = () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      loop
        .stop()
        .then(() => scheduler.stop())
        .then(done, done);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
