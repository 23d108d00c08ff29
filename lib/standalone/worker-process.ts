/**
 * `shoal worker`: the worker handler as a long-running poller (what an ECS task runs). It takes
 * its configuration from the environment; next to a `shoal standalone`, `--data-dir DIR` reads
 * the `DIR/endpoints.env` that standalone wrote, and with nothing configured it reads
 * `./.shoal/endpoints.env` (or `SHOAL_ENV_FILE`).
 */
// A process that joins a standalone on the embedded backend opens its files (SHOAL_EMBEDDED_DIR).
import "../embedded/register.js";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { createAwsClients, type RequestCounter } from "../aws/clients.js";
import { configFromEnv } from "../aws/config.js";
import { ShoalError } from "../core/errors.js";
import { PRIORITIES } from "../core/model.js";
import { WorkerHeartbeat } from "../engine/worker-heartbeat.js";
import type { SqsQueues } from "../queue/sqs-queues.js";
import { createRuntime } from "../runtime/runtime.js";
import { readEnvFile } from "./env-file.js";
import { QueuePoller } from "./poller.js";
import { autoCreatedQueues, ensureTaskQueues } from "./provision.js";
import { TaskProtection } from "./task-protection.js";

/**
 * The shortest visibility timeout a worker receives task messages with, seconds: how long a
 * message a killed worker received, and did not start, stays hidden from the others.
 */
const RECEIVE_VISIBILITY_MIN_SECONDS = 5;

/**
 * Nothing tells a worker or sweeper where Shoal is; the message says what to do. Not retryable:
 * the CLI reports it as a usage error (lib/cli/commands/server.ts).
 */
export class NoConfigurationError extends ShoalError {}

/**
 * Where a `shoal worker` or `shoal sweeper` finds Shoal, into `env`:
 * - `dataDir` given (`--data-dir`): `<dataDir>/endpoints.env`, the file `shoal standalone
 *   --data-dir <dataDir>` writes when it starts; its values win over the environment's;
 * - else, when no endpoint is configured (AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL,
 *   SHOAL_EVENTS_QUEUE_URL): `SHOAL_ENV_FILE`, else `./.shoal/endpoints.env` (standalone's
 *   default data directory), where unset in the environment;
 * - else the environment as it is (a deployed stack: AWS_REGION and the SHOAL_* settings).
 * The file's variables become the process's environment on purpose: its configuration, and what
 * its task processes inherit (the emulators' endpoints, docs/architecture.md).
 * @returns the file read, if any.
 * @throws NoConfigurationError when `<dataDir>/endpoints.env` does not exist, or when there is
 *   no file, no endpoint and no AWS region (AWS_REGION, AWS_DEFAULT_REGION, AWS_PROFILE or an
 *   AWS config file) either: the SDK would only say "Region is missing".
 */
export function loadEndpointsFile(
  dataDir?: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (dataDir !== undefined) {
    const file = resolve(dataDir, "endpoints.env");
    if (!existsSync(file)) {
      throw new NoConfigurationError(
        `--data-dir ${dataDir}: no endpoints.env there. It is written by 'shoal standalone --data-dir ${dataDir}' when it starts: start that first, or pass the --data-dir it runs with`,
      );
    }
    readEnvFile(file, env, true);
    return file;
  }
  const configured = env.AWS_ENDPOINT_URL_SQS || env.AWS_ENDPOINT_URL || env.SHOAL_EVENTS_QUEUE_URL;
  const file = resolve(env.SHOAL_ENV_FILE ?? ".shoal/endpoints.env");
  if (!configured && existsSync(file)) {
    readEnvFile(file, env, false);
    return file;
  }
  const region =
    env.AWS_REGION ||
    env.AWS_DEFAULT_REGION ||
    env.AWS_PROFILE ||
    existsSync(env.AWS_CONFIG_FILE ?? join(homedir(), ".aws", "config"));
  if (!configured && !region) {
    throw new NoConfigurationError(
      `no Shoal to connect to: no ${env.SHOAL_ENV_FILE ? file : ".shoal/endpoints.env here"} and no AWS region configured. Next to a 'shoal standalone', pass its data directory: --data-dir DIR (the one it was started with; its banner prints the command). For a deployed stack, set AWS_REGION and the stack's SHOAL_* settings (docs/aws.md)`,
    );
  }
  return undefined;
}

/**
 * Polls a worker group's task queues until SIGINT/SIGTERM (or, as standalone's built-in worker,
 * until its parent says stop or goes away).
 * @throws NoConfigurationError when nothing says where Shoal is ({@link loadEndpointsFile}).
 */
export async function runWorkerProcess(opts: {
  group: string;
  concurrency: number;
  quiet?: boolean;
  /** A standalone's data directory: its `endpoints.env` configures this worker. */
  dataDir?: string;
  /** Counts this worker's AWS requests (the benchmarks' worker processes report them). */
  counter?: RequestCounter;
}): Promise<void> {
  const file = loadEndpointsFile(opts.dataDir);
  const config = configFromEnv(process.env);
  const clients = createAwsClients(config.aws, opts.counter);
  const runtime = createRuntime(config, {
    clients,
    ...autoCreatedQueues(config, clients.sqs),
  });
  const urls = config.autoCreateQueues
    ? await ensureTaskQueues(clients.sqs, config.prefix, opts.group)
    : await Promise.all(
        PRIORITIES.map((p) => (runtime.api.queues as SqsQueues).taskQueueUrl(opts.group, p)),
      );
  // In an ECS service: no scale-in of a container while it runs tasks.
  const protection = config.ecsAgentUri
    ? new TaskProtection({ agentUri: config.ecsAgentUri, log: runtime.log })
    : undefined;
  const run = (records: Parameters<typeof runtime.worker.handleBatch>[0]) =>
    protection
      ? protection.around(() => runtime.worker.handleBatch(records))
      : runtime.worker.handleBatch(records);
  const poller = new QueuePoller({
    sqs: clients.sqs,
    queueUrls: urls,
    slots: opts.concurrency,
    batchSize: 1,
    // No more messages than free slots: a message received ahead is hidden from every other
    // worker, and from everyone for its visibility timeout if this worker is killed.
    prefetch: 0,
    deliverTwice: config.deliverTwice,
    waitSeconds: 20,
    // Short, so that a message a killed poller received but did not start comes back within
    // seconds; two lease renewals, the first of which extends it (lib/engine/worker.ts).
    receiveVisibilitySeconds: Math.max(
      RECEIVE_VISIBILITY_MIN_SECONDS,
      Math.ceil((config.leaseRenewMs / 1000) * 2),
    ),
    region: config.aws.region ?? "us-east-1",
    handler: (event) => run(event.Records),
    onError: (e) => runtime.api.log?.("worker: poller error", { error: String(e) }),
  });
  // What workers that died here left behind (task processes, work directories) goes now, in
  // the background, then every few minutes (the worker decides when; the timer only asks).
  void runtime.worker.housekeep();
  const housekeeping = setInterval(() => void runtime.worker.housekeepIfDue(), 1_000);
  housekeeping.unref();
  poller.start();
  // Explain tells "no worker serves this group" and "all its slots are busy" from this: written
  // on a timer, busy or idle (lib/engine/worker-heartbeat.ts).
  const heartbeat = new WorkerHeartbeat({
    store: runtime.heartbeats,
    group: opts.group,
    worker: runtime.worker.id,
    now: () => Date.now(),
    load: () => poller.load(),
    ...(runtime.api.log ? { log: runtime.api.log } : {}),
  });
  heartbeat.start();
  if (!opts.quiet) {
    process.stdout.write(
      `shoal worker ${runtime.worker.id}: group '${opts.group}', ${opts.concurrency} task slot(s)${file ? `, environment from ${file}` : ""}\n`,
    );
  }
  process.send?.("ready");
  await new Promise<void>((done) => {
    const onSignal = () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      clearInterval(housekeeping);
      runtime.worker.shutdown();
      protection?.stop();
      Promise.all([poller.stop(6_000), heartbeat.stop()]).then(() => done(), done);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    // As a child of standalone: stop when told, and when the parent dies (even by SIGKILL).
    process.on("message", (m) => {
      if (m === "stop") onSignal();
    });
    process.on("disconnect", onSignal);
  });
}
