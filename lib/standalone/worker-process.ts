/**
 * `shoal worker`: the worker handler as a long-running poller (what an ECS task runs). It takes
 * its configuration from the environment; next to a `shoal standalone`, start it with that
 * environment (`set -a; . .shoal/endpoints.env; set +a`), or let it read `./.shoal/endpoints.env`
 * when no endpoint is configured.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { sqsClient } from "../aws/clients.js";
import { loadConfig } from "../aws/config.js";
import { ensureTaskQueues } from "../aws/resources.js";
import { WorkerHeartbeat } from "../engine/worker-heartbeat.js";
import { createRuntime, setRuntime } from "../runtime/runtime.js";
import { QueuePoller } from "./poller.js";
import { TaskProtection } from "./task-protection.js";

/**
 * Reads `.shoal/endpoints.env` (or `SHOAL_ENV_FILE`) into the environment when no endpoint is
 * configured yet. @returns the file read, if any.
 */
export function loadEndpointsFile(): string | undefined {
  const configured =
    process.env.AWS_ENDPOINT_URL_SQS ||
    process.env.AWS_ENDPOINT_URL ||
    process.env.SHOAL_EVENTS_QUEUE_URL;
  const file = resolve(process.env.SHOAL_ENV_FILE ?? ".shoal/endpoints.env");
  if (configured || !existsSync(file)) return undefined;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0 && !line.startsWith("#"))
      process.env[line.slice(0, eq).trim()] ??= line.slice(eq + 1).trim();
  }
  return file;
}

/**
 * Polls a worker group's task queues until SIGINT/SIGTERM (or, as standalone's built-in worker,
 * until its parent says stop or goes away).
 */
export async function runWorkerProcess(opts: {
  group: string;
  concurrency: number;
  quiet?: boolean;
}): Promise<void> {
  const file = loadEndpointsFile();
  const config = loadConfig();
  const runtime = createRuntime(config);
  setRuntime(runtime);
  const urls = config.autoCreateQueues
    ? await ensureTaskQueues(sqsClient(), config.prefix, opts.group)
    : await Promise.all(
        (["HIGHEST", "HIGH", "MEDIUM", "LOW", "LOWEST"] as const).map((p) =>
          (runtime.api.queues as import("../queue/sqs-queues.js").SqsQueues).taskQueueUrl(
            opts.group,
            p,
          ),
        ),
      );
  // In an ECS service: no scale-in of a container while it runs tasks.
  const protection = process.env.ECS_AGENT_URI
    ? new TaskProtection({ agentUri: process.env.ECS_AGENT_URI, log: runtime.api.log })
    : undefined;
  const run = (records: Parameters<typeof runtime.worker.handleBatch>[0]) =>
    protection
      ? protection.around(() => runtime.worker.handleBatch(records))
      : runtime.worker.handleBatch(records);
  // Explain tells "no worker polls this group" from this (lib/engine/worker-heartbeat.ts).
  const heartbeat = new WorkerHeartbeat({
    store: runtime.heartbeats,
    group: opts.group,
    worker: runtime.worker.id,
    now: () => Date.now(),
    ...(runtime.api.log ? { log: runtime.api.log } : {}),
  });
  const poller = new QueuePoller({
    sqs: sqsClient(),
    queueUrls: urls,
    slots: opts.concurrency,
    batchSize: 1,
    prefetch: Math.min(10, opts.concurrency),
    deliverTwice: process.env.SHOAL_TEST_DELIVER_TWICE === "true",
    waitSeconds: 20,
    // Short, so that a message a killed poller received comes back soon; at least two lease
    // renewals, the first of which extends it (lib/engine/worker.ts).
    receiveVisibilitySeconds: Math.max(20, Math.ceil((config.leaseRenewMs / 1000) * 2)),
    region: process.env.AWS_REGION ?? "us-east-1",
    handler: (event) => run(event.Records),
    onReceive: () => heartbeat.polled(),
    onError: (e) => runtime.api.log?.("worker: poller error", { error: String(e) }),
  });
  // What workers that died here left behind (task processes, work directories) goes now, in
  // the background, then every few minutes (the worker decides when; the timer only asks).
  void runtime.worker.housekeep();
  const housekeeping = setInterval(() => void runtime.worker.housekeepIfDue(), 1_000);
  housekeeping.unref();
  poller.start();
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
      poller.stop(6_000).then(done, done);
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
