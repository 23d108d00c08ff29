/**
 * A simulated AWS deployment of Shoal for aws-sim.ts: the stack's tables and queues provisioned
 * on a local backend (the emulators by default; any `{ dynamodbEndpoint, sqsEndpoint, stop }`),
 * the dispatcher and worker functions driven by simulated SQS event source mappings with the
 * settings of cdk/shoal.ts, each function instance with its own runtime (as each Lambda sandbox
 * builds one at cold start), and every DynamoDB and SQS call delayed by the latency model
 * (aws-sim-latency.ts). State-change events go to a stand-in for EventBridge that waits a
 * PutEvents latency and keeps nothing. The API runs in-process (lib/api/router.ts) with API
 * Gateway events; the sweeper is invoked by the scenario, as its one-minute rule would.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { type ShoalProps, workerSettings } from "../cdk/shoal-props.js";
import { handleApiRequest } from "../lib/api/router.js";
import { type AwsClients, createAwsClients, RequestCounter } from "../lib/aws/clients.js";
import { configFromEnv, ENV, type ShoalConfig } from "../lib/aws/config.js";
import { PRIORITIES, type Priority } from "../lib/core/model.js";
import type { StateChangePublisher } from "../lib/events/event-publisher.js";
import { createRuntime, type Runtime } from "../lib/runtime/runtime.js";
import type { Emulators } from "../lib/standalone/emulators.js";
import { httpApiEvent } from "../lib/standalone/lambda-events.js";
import {
  ensureEventsQueue,
  ensureSignalsQueue,
  ensureTables,
  ensureTaskQueues,
} from "../lib/standalone/provision.js";
import { startBackendProcess } from "./aws-sim-backend.js";
import { SimulatedEsm, SimulatedFunction } from "./aws-sim-esm.js";
import {
  addSimulatedLatency,
  LatencyLedger,
  type LatencyMode,
  LatencySampler,
  seededRandom,
} from "./aws-sim-latency.js";
import { standInShell } from "./aws-sim-tasks.js";

/** The backend the simulation runs on: the emulators, or the lead's embedded engine (same shape). */
export type Backend = Pick<Emulators, "dynamodbEndpoint" | "sqsEndpoint" | "stop">;

/**
 * Cold start of a function instance, ms: the dispatcher bundle's load time measured on this
 * machine (docs/performance.md: "dispatcher bundle loads in 0.21–0.22 s").
 */
export const DEFAULT_COLD_START_MS = 215;

export interface DeployOptions {
  mode: LatencyMode;
  /** Seed of the latency draws (each client bundle draws from seed + its number). */
  seed?: number;
  /** Starts the backend; default: the emulators in memory. */
  backend?: () => Promise<Backend>;
  coldStartMs?: number;
  /**
   * The construct's worker props (cdk/shoal-props.ts, checked as it checks them):
   * `workerConcurrency` per tier (default WORKER_CONCURRENCY) and `workerBatchSize` (default 1).
   */
  worker?: Pick<ShoalProps, "workerConcurrency" | "workerBatchSize">;
  /** Run SHELL `true` / `sleep N` tasks as timers, not processes (bench/aws-sim-tasks.ts). */
  taskStandIns?: boolean;
}

export interface Deployment {
  /** The API function's runtime (warm: one instance). */
  api: Runtime;
  dispatcher: SimulatedFunction;
  worker: SimulatedFunction;
  esms: Record<string, SimulatedEsm>;
  /** Every request of every simulated function, by `Service.Operation`. */
  counter: RequestCounter;
  ledger: LatencyLedger;
  /** A new function instance's runtime (the sweeper's, for example). */
  newRuntime(): Runtime;
  /** Sends an API request as API Gateway would; @returns status and parsed JSON body. */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /**
   * Messages on a task queue of the default worker group, waiting or in flight (SQS's
   * approximate counts, read without simulated latency).
   */
  taskQueueDepth(tier: Priority): Promise<number>;
  /** Resets the counter, ledger and invocation records (between measured runs). */
  reset(): void;
  stop(): Promise<void>;
}

const REGION = "us-east-1";
const CREDENTIALS = { accessKeyId: "shoal-sim", secretAccessKey: "shoal-sim" };
/** cdk/shoal.ts: the dispatcher's event sources (batch 10; events 50, signals 5 concurrent). */
const DISPATCHER_ESM = { batchSize: 10, events: 50, signals: 5 };

/**
 * Lets `client` hold up to `maxSockets` connections (the SDK's Node handler allows 50 per host),
 * before its first request.
 */
function widenSockets(client: SQSClient, maxSockets: number): void {
  const handler = client.config.requestHandler as {
    updateHttpClientConfig?(key: string, value: unknown): void;
  };
  handler.updateHttpClientConfig?.("httpAgent", new Agent({ keepAlive: true, maxSockets }));
}

/** Deploys on a fresh backend and starts the event source mappings. */
export async function deployAwsSim(o: DeployOptions): Promise<Deployment> {
  const workers = workerSettings(o.worker ?? {});
  const taskPlugins = o.taskStandIns ? { SHELL: standInShell } : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "shoal-aws-sim-"));
  // Default: the embedded backend over its AWS-protocol endpoint (its own time per call is a
  // fraction of the emulators', so less of it adds to the simulated latency), in a process of
  // its own so that it has a core of its own (aws-sim-backend.ts).
  const backend = await (o.backend ?? (() => startBackendProcess(join(dataDir, "embedded"))))();
  const prefix = `sim${Date.now().toString(36)}`;
  const env = (eventsUrl: string): Record<string, string> => ({
    AWS_REGION: REGION,
    AWS_ENDPOINT_URL_DYNAMODB: backend.dynamodbEndpoint,
    AWS_ENDPOINT_URL_SQS: backend.sqsEndpoint,
    [ENV.prefix]: prefix,
    [ENV.dataDir]: dataDir,
    [ENV.eventsQueueUrl]: eventsUrl,
    SHOAL_QUIET: "true",
  });
  const configOf = (eventsUrl: string): ShoalConfig => {
    const c = configFromEnv(env(eventsUrl));
    return { ...c, quiet: true, aws: { ...c.aws, credentials: CREDENTIALS } };
  };
  const plain = createAwsClients(configOf("").aws);
  await ensureTables(plain.dynamo, configOf("").tables);
  const eventsUrl = await ensureEventsQueue(plain.sqs, prefix);
  const signalsUrl = await ensureSignalsQueue(plain.sqs, prefix);
  const taskUrls = await ensureTaskQueues(plain.sqs, prefix, "default");
  plain.destroy();
  const config = configOf(eventsUrl);

  const counter = new RequestCounter();
  const ledger = new LatencyLedger();
  const seed = o.seed ?? 15;
  let bundles = 0;
  const built: AwsClients[] = [];
  const simClients = (): AwsClients => {
    const c = createAwsClients(config.aws, counter);
    const sampler = new LatencySampler(seededRandom(seed + bundles++));
    addSimulatedLatency(c, { mode: o.mode, sampler, ledger });
    built.push(c);
    return c;
  };
  const esmSampler = new LatencySampler(seededRandom(seed + 1_000_000));
  const draw = (op: string) => (o.mode === "aws" ? esmSampler.draw(op) : 0);
  // EventBridge stand-in: the dispatcher and sweeper wait for PutEvents as on AWS.
  const eventBridge: StateChangePublisher = {
    publish: async (events) => {
      if (events.length === 0) return;
      for (let i = 0; i < events.length; i += 10) await delay(draw("EventBridge.PutEvents"));
    },
  };
  const newRuntime = () =>
    createRuntime(config, {
      clients: simClients(),
      stateChanges: eventBridge,
      log: () => {},
      ...(taskPlugins ? { taskPlugins } : {}),
    });
  const api = newRuntime();
  const coldStartMs = o.mode === "aws" ? (o.coldStartMs ?? DEFAULT_COLD_START_MS) : 0;
  const dispatcher = new SimulatedFunction(
    "dispatcher",
    () => {
      const rt = newRuntime();
      return (e) => rt.dispatcher.handleBatch(e.Records);
    },
    coldStartMs,
  );
  const worker = new SimulatedFunction(
    "worker",
    () => {
      const rt = newRuntime();
      // As functions/worker does: the invocation's end (the stack's 900 s timeout) bounds it.
      return (e) => rt.worker.handleBatch(e.Records, { deadline: Date.now() + 900_000 });
    },
    coldStartMs,
  );
  // The ESMs' own SQS calls (Lambda's pollers) pay SQS latency too. Lambda's pollers are
  // independent: their long polls must not queue behind the SDK's 50 sockets of one client.
  const esmClients = simClients();
  widenSockets(esmClients.sqs, 5_000);
  const onError = (e: unknown) => {
    if ((e as Error)?.name !== "AbortError") process.stderr.write(`aws-sim: ${String(e)}\n`);
  };
  const raw = createAwsClients(config.aws);
  built.push(raw);
  const common = { sqs: esmClients.sqs, rawSqs: raw.sqs, region: REGION, onError };
  const esms: Record<string, SimulatedEsm> = {
    events: new SimulatedEsm({
      ...common,
      queueUrl: eventsUrl,
      fifo: true,
      batchSize: DISPATCHER_ESM.batchSize,
      maxConcurrency: DISPATCHER_ESM.events,
      fn: dispatcher,
      latencyMs: draw,
    }),
    signals: new SimulatedEsm({
      ...common,
      queueUrl: signalsUrl,
      fifo: false,
      batchSize: DISPATCHER_ESM.batchSize,
      maxConcurrency: DISPATCHER_ESM.signals,
      fn: dispatcher,
      latencyMs: draw,
    }),
  };
  taskUrls.forEach((url, i) => {
    const tier = PRIORITIES[i] as Priority;
    esms[`tasks-${tier}`] = new SimulatedEsm({
      ...common,
      queueUrl: url,
      fifo: false,
      batchSize: workers.batchSize,
      maxConcurrency: workers.concurrency[tier],
      fn: worker,
      latencyMs: draw,
    });
  });
  for (const e of Object.values(esms)) e.start();

  return {
    api,
    dispatcher,
    worker,
    esms,
    counter,
    ledger,
    newRuntime,
    async request(method, path, body) {
      const [p, q] = path.split("?");
      const r = (await handleApiRequest(
        api.api,
        httpApiEvent({
          method,
          path: p ?? path,
          rawQueryString: q ?? "",
          headers: { "content-type": "application/json", host: "sim.local" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          requestId: randomUUID(),
          timeEpoch: Date.now(),
        }),
      )) as APIGatewayProxyStructuredResultV2;
      const text = typeof r.body === "string" ? r.body : "";
      return { status: r.statusCode ?? 200, body: text ? JSON.parse(text) : undefined };
    },
    async taskQueueDepth(tier) {
      const url = taskUrls[PRIORITIES.indexOf(tier)];
      const r = await raw.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        }),
      );
      const a = r.Attributes ?? {};
      return (
        Number(a.ApproximateNumberOfMessages ?? 0) +
        Number(a.ApproximateNumberOfMessagesNotVisible ?? 0)
      );
    },
    reset() {
      counter.reset();
      ledger.reset();
      dispatcher.invocations.length = 0;
      worker.invocations.length = 0;
    },
    async stop() {
      await Promise.all(Object.values(esms).map((e) => e.stop()));
      for (const c of built) c.destroy();
      await backend.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
