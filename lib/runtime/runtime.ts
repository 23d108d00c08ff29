/**
 * Builds the engine's parts from configuration, once per process: what every Lambda handler and
 * the standalone pollers share. Tests build their own with injected parts.
 */
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import type { ApiDeps } from "../api/deps.js";
import { dynamoClient, eventBridgeClient, sqsClient } from "../aws/clients.js";
import { loadConfig, type ShoalConfig } from "../aws/config.js";
import { QUEUE_SETTINGS } from "../aws/resources.js";
import { DefinitionCache } from "../engine/definitions.js";
import { Dispatcher } from "../engine/dispatcher.js";
import type { EngineDeps } from "../engine/engine-deps.js";
import { onRunFinished, ScheduleSweeper, type SchedulingDeps } from "../engine/scheduling.js";
import { Sweeper } from "../engine/sweeper.js";
import { grantTaskGroupSlot } from "../engine/task-dispatch.js";
import { TaskGroupGate } from "../engine/task-group-gate.js";
import { Worker } from "../engine/worker.js";
import type { EventPublisher } from "../events/event-publisher.js";
import { EventBridgePublisher } from "../events/eventbridge-publisher.js";
import { CloudWatchTaskLogs } from "../logs/cloudwatch-task-log.js";
import { FileTaskLogs } from "../logs/file-task-log.js";
import { SqsQueues } from "../queue/sqs-queues.js";
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
import { structuredLog } from "./log.js";

export interface Runtime {
  config: ShoalConfig;
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

/** Package version (inlined by esbuild in Lambda bundles). */
export const VERSION: string = pkg.version;

/**
 * Creates every part from the environment (see lib/aws/config.ts for the variables).
 * @param opts.events where state-change events go; default: the EventBridge bus when
 *   `SHOAL_EVENT_BUS` is set, else nowhere (standalone passes its in-process bus).
 */
export function createRuntime(
  config: ShoalConfig = loadConfig(),
  opts: { events?: EventPublisher } = {},
): Runtime {
  const now = () => Date.now();
  const retentionDays = config.instanceRetentionDays;
  const store = new DynamoStore(dynamoClient(), config.tables, { retentionDays });
  const queues = new SqsQueues(sqsClient(), {
    prefix: config.prefix,
    ...(config.eventsQueueUrl ? { eventsQueueUrl: config.eventsQueueUrl } : {}),
    autoCreateQueues: config.autoCreateQueues,
    coalesce: true,
  });
  // On AWS task logs go to CloudWatch Logs (one stream per attempt); locally to files.
  const logs = config.taskLogGroup
    ? new CloudWatchTaskLogs({
        logGroupName: config.taskLogGroup,
        ...(process.env.AWS_REGION ? { region: process.env.AWS_REGION } : {}),
      })
    : new FileTaskLogs(join(config.dataDir, "logs"));
  const definitions = new DefinitionCache(store);
  const log = structuredLog;
  const events =
    opts.events ??
    (config.eventBus
      ? new EventBridgePublisher(eventBridgeClient(), { eventBusName: config.eventBus, log })
      : undefined);
  const taskGroups = new DynamoTaskGroups(dynamoClient(), config.tables.taskGroups);
  const timers = new DynamoTimers(dynamoClient(), config.tables.timers);
  const scheduling: SchedulingDeps = {
    store,
    queues,
    now,
    log,
    events,
    schedules: new DynamoSchedules(dynamoClient(), config.tables.schedules),
    fires: new DynamoFires(dynamoClient(), config.tables.fires, retentionDays),
    leases: new DynamoLeases(dynamoClient(), config.tables.leases),
    backfills: new DynamoBackfills(dynamoClient(), config.tables.backfills),
  };
  const triggers = new DynamoTriggers(dynamoClient(), config.tables.triggers);
  const heartbeats = new DynamoWorkerHeartbeats(dynamoClient(), config.tables.leases);
  const engine: EngineDeps = {
    store,
    queues,
    definitions,
    timers,
    now,
    log,
    events,
    // The gate grants waiting tasks through the engine it belongs to.
    gate: new TaskGroupGate(taskGroups, { now, onGranted: (w) => grantTaskGroupSlot(engine, w) }),
  };
  return {
    config,
    api: {
      store,
      definitions,
      queues,
      logs,
      now,
      version: VERSION,
      log,
      taskGroups,
      scheduling: {
        schedules: scheduling.schedules,
        fires: scheduling.fires,
        backfills: scheduling.backfills,
        triggers,
      },
      heartbeats,
      queueDepths: new SqsTaskQueueDepths(sqsClient(), config.prefix),
      lambdaWorkerGroups: config.lambdaWorkerGroups,
      ...(config.ecsWorkerGroup ? { ecsWorkerGroup: config.ecsWorkerGroup } : {}),
    },
    scheduling,
    scheduleSweeper: (owner, sweepMs, lookaheadMs = 0, leaseMs = Math.max(3 * sweepMs, 3_000)) =>
      new ScheduleSweeper(scheduling, { owner, leaseMs, lookaheadMs }),
    taskGroups,
    heartbeats,
    engine,
    dispatcher: new Dispatcher({
      ...engine,
      commandClaimStaleMs: 60_000,
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
      log,
    }),
    sweeper: new Sweeper({ ...engine, commandResignalMs: config.commandResignalMs }),
  };
}

let cached: Runtime | undefined;

/** The process-wide runtime (Lambda: built on the first invocation, reused while warm). */
export function runtime(): Runtime {
  cached ??= createRuntime();
  return cached;
}

/** Replaces the process-wide runtime (standalone after it set the environment; tests). */
export function setRuntime(r: Runtime | undefined): void {
  cached = r;
}
