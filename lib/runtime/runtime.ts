/**
 * Builds the engine's parts from configuration and one bundle of AWS clients, once per process:
 * what every Lambda handler and the standalone pollers share. Tests build their own with
 * injected parts.
 */
import { join } from "node:path";
import { DynamoDeliveries } from "../alerts/dynamo-deliveries.js";
import type { ApiDeps } from "../api/deps.js";
import { type AwsClients, createAwsClients } from "../aws/clients.js";
import { ENV, type ShoalConfig } from "../aws/config.js";
import { QUEUE_SETTINGS } from "../aws/resources.js";
import { DefinitionCache } from "../engine/definitions.js";
import { Dispatcher } from "../engine/dispatcher.js";
import type { EngineDeps } from "../engine/engine-deps.js";
import { onRunFinished } from "../engine/finished-runs.js";
import { ScheduleSweeper } from "../engine/schedule-sweeper.js";
import type { SchedulingDeps } from "../engine/scheduling-deps.js";
import { Sweeper } from "../engine/sweeper.js";
import { grantTaskGroupSlot } from "../engine/task-dispatch.js";
import { TaskGroupGate } from "../engine/task-group-gate.js";
import { Worker } from "../engine/worker.js";
import type { StateChangePublisher } from "../events/event-publisher.js";
import { EventBridgePublisher } from "../events/eventbridge-publisher.js";
import { CloudWatchTaskLogs } from "../logs/cloudwatch-task-log.js";
import { FileTaskLogs } from "../logs/file-task-log.js";
import { type QueueCreator, SqsQueues } from "../queue/sqs-queues.js";
import { SqsTaskQueueDepths } from "../queue/task-queue-depths.js";
import { DynamoBackfills } from "../store/dynamo-backfills.js";
import { DynamoFires } from "../store/dynamo-fires.js";
import { DynamoLeases } from "../store/dynamo-leases.js";
import { DynamoSchedules } from "../store/dynamo-schedules.js";
import { DynamoStore } from "../store/dynamo-store.js";
import { DynamoTaskGroups } from "../store/dynamo-task-groups.js";
import { DynamoTimers } from "../store/dynamo-timers.js";
import { DynamoTriggers } from "../store/dynamo-triggers.js";
import { DynamoWorkerHeartbeats } from "../store/dynamo-worker-heartbeats.js";
import type { TaskGroupStore } from "../store/task-groups.js";
import type { WorkerHeartbeatStore } from "../store/worker-heartbeats.js";
import type { TaskPlugin } from "../tasks/plugin.js";
import { VERSION } from "../version.js";
import { createLog, type Log } from "./log.js";

export interface Runtime {
  config: ShoalConfig;
  /** The AWS clients every part uses (and their request counts). */
  clients: AwsClients;
  /** The structured log every part writes to. */
  log: Log;
  api: ApiDeps;
  /** Task groups (API endpoints and the gate share it). */
  taskGroups: TaskGroupStore;
  /** Worker heartbeats (worker processes write them, explain reads them). */
  heartbeats: WorkerHeartbeatStore;
  /** What the dispatcher and sweeper share. */
  engine: EngineDeps;
  /** Schedules, fire ledger, sweeper leases and backfills, with the engine parts they use. */
  scheduling: SchedulingDeps;
  /**
   * A schedule sweeper that shares the shards with any others under the name `owner`.
   * @param sweepMs how often it will sweep; its leases last three sweeps.
   * @param lookaheadMs fires due within this are fired now and signalled with an SQS delay.
   */
  scheduleSweeper(
    owner: string,
    sweepMs: number,
    lookaheadMs?: number,
    /** How long its leases last without renewal, ms (default three sweeps, at least 3 s). */
    leaseMs?: number,
  ): ScheduleSweeper;
  dispatcher: Dispatcher;
  worker: Worker;
  sweeper: Sweeper;
}

/** Package version (lib/version.ts), re-exported for the handlers and standalone. */
export { VERSION };

/** What {@link createRuntime} may be given instead of building it. */
export interface RuntimeOptions {
  /** The AWS clients; default: a bundle for `config.aws`. */
  clients?: AwsClients;
  /**
   * Where state-change events go; default: the EventBridge bus when `config.eventBus` is set,
   * else nowhere (standalone passes its in-process bus).
   */
  stateChanges?: StateChangePublisher;
  /** The log; default: structured lines on stderr, none when `config.quiet`. */
  log?: Log;
  /**
   * Creates queues the SQS adapter finds missing: standalone passes one when
   * `config.autoCreateQueues` (lib/standalone/provision.ts); absent, a missing queue is an error.
   */
  createQueues?: QueueCreator;
  /**
   * Task plugins by task type that take the place of the worker's own (lib/tasks/plugin.ts);
   * the others stay. For benchmarks that model a task's run instead of starting it
   * (bench/aws-sim-tasks.ts); absent everywhere else.
   */
  taskPlugins?: Partial<Record<string, TaskPlugin>>;
}

/**
 * Creates every part from `config` (lib/aws/config.ts `configFromEnv` reads it).
 * @throws Error when `config.autoCreateQueues` is set without `opts.createQueues`: provisioning
 *   lives with standalone, which must pass the creator (a missing queue would fail later).
 */
export function createRuntime(config: ShoalConfig, opts: RuntimeOptions = {}): Runtime {
  if (config.autoCreateQueues && !opts.createQueues) {
    throw new Error(
      `${ENV.autoCreateQueues}=true needs a queue creator (lib/standalone/provision.ts autoCreatedQueues)`,
    );
  }
  const clients = opts.clients ?? createAwsClients(config.aws);
  const now = () => Date.now();
  const retentionDays = config.instanceRetentionDays;
  const store = new DynamoStore(clients.dynamo, config.tables, { retentionDays });
  const queues = new SqsQueues(clients.sqs, {
    prefix: config.prefix,
    ...(config.eventsQueueUrl ? { eventsQueueUrl: config.eventsQueueUrl } : {}),
    ...(opts.createQueues ? { createQueues: opts.createQueues } : {}),
    coalesce: true,
  });
  // On AWS task logs go to CloudWatch Logs (one stream per attempt); locally to files.
  const logs = config.taskLogGroup
    ? new CloudWatchTaskLogs({
        logGroupName: config.taskLogGroup,
        client: () => clients.logs,
        ...(config.aws.region ? { region: config.aws.region } : {}),
      })
    : new FileTaskLogs(join(config.dataDir, "logs"));
  const definitions = new DefinitionCache(store);
  const log = opts.log ?? createLog({ quiet: config.quiet });
  const stateChanges =
    opts.stateChanges ??
    (config.eventBus
      ? new EventBridgePublisher(clients.eventBridge, { eventBusName: config.eventBus, log })
      : undefined);
  const taskGroups = new DynamoTaskGroups(clients.dynamo, config.tables.taskGroups);
  const timers = new DynamoTimers(clients.dynamo, config.tables.timers);
  const scheduling: SchedulingDeps = {
    store,
    queues,
    now,
    log,
    stateChanges,
    schedules: new DynamoSchedules(clients.dynamo, config.tables.schedules),
    fires: new DynamoFires(clients.dynamo, config.tables.fires, retentionDays),
    leases: new DynamoLeases(clients.dynamo, config.tables.leases),
    backfills: new DynamoBackfills(clients.dynamo, config.tables.backfills),
  };
  const triggers = new DynamoTriggers(clients.dynamo, config.tables.triggers);
  const heartbeats = new DynamoWorkerHeartbeats(clients.dynamo, config.tables.leases);
  const engine: EngineDeps = {
    store,
    queues,
    definitions,
    timers,
    now,
    log,
    stateChanges,
    taskEvents: config.taskEvents,
    // The gate grants waiting tasks through the engine it belongs to.
    gate: new TaskGroupGate(taskGroups, { now, onGranted: (w) => grantTaskGroupSlot(engine, w) }),
  };
  return {
    config,
    clients,
    log,
    api: {
      store,
      definitions,
      queues,
      logs,
      now,
      version: VERSION,
      ...(config.aws.region ? { region: config.aws.region } : {}),
      log,
      taskGroups,
      scheduling: {
        schedules: scheduling.schedules,
        fires: scheduling.fires,
        backfills: scheduling.backfills,
        triggers,
      },
      heartbeats,
      queueDepths: new SqsTaskQueueDepths(clients.sqs, config.prefix),
      lambdaWorkerGroups: config.lambdaWorkerGroups,
      ...(config.ecsWorkerGroup ? { ecsWorkerGroup: config.ecsWorkerGroup } : {}),
      // `alerts` of GET /v1/instances/{id} (deliveries live in the timers table).
      alerts: new DynamoDeliveries(clients.dynamo, config.tables.timers),
      // Trigger delivery (lib/api/trigger-delivery.ts): its loop and rate events, its limits.
      ...(stateChanges ? { stateChanges } : {}),
      triggerLimits: config.triggerLimits,
      ...(config.eventsRelayToken ? { eventsRelayToken: config.eventsRelayToken } : {}),
      // On AWS, what the construct configured; standalone sets its own alerts file's.
      ...(config.alertChannels ? { alertChannels: config.alertChannels } : {}),
    },
    scheduling,
    scheduleSweeper: (owner, sweepMs, lookaheadMs = 0, leaseMs = Math.max(3 * sweepMs, 3_000)) =>
      new ScheduleSweeper(scheduling, { owner, leaseMs, lookaheadMs }),
    taskGroups,
    heartbeats,
    engine,
    dispatcher: new Dispatcher({
      ...engine,
      // A claim's holder is presumed alive as long as a worker holding a lease (60 s on AWS,
      // 10 s standalone; at least 10 s): a run accepted just before standalone was killed starts
      // that soon after the restart, not a minute later. A second holder would only redo
      // idempotent effects.
      commandClaimStaleMs: Math.max(config.leaseMs, 10_000),
      cacheInstances: config.singleDispatcher,
      onInstanceFinished: (inst) => onRunFinished(scheduling, inst),
    }),
    worker: new Worker({
      store,
      queues,
      logs,
      now,
      dataDir: config.dataDir,
      keepFailedWorkMs: config.keepFailedWorkMs,
      leaseMs: config.leaseMs,
      leaseRenewMs: config.leaseRenewMs,
      visibilityTimeoutSeconds: QUEUE_SETTINGS.tasks.visibilityTimeoutSeconds,
      clients,
      log,
      ...(opts.taskPlugins ? { plugins: opts.taskPlugins } : {}),
    }),
    sweeper: new Sweeper({
      ...engine,
      commandResignalMs: config.commandResignalMs,
      failoverGraceMs: config.leaseMs,
    }),
  };
}
