/**
 * Names and settings that reach handlers through environment variables, parsed once into a typed
 * {@link ShoalConfig}. The variable names are shared constants: the CDK stack sets them, the
 * standalone runtime writes them to `endpoints.env`, and {@link configFromEnv} reads them.
 */
import type { Priority } from "../core/model.js";
import type { TriggerLimits } from "../core/trigger-events.js";
import {
  alertChannelsOf,
  days,
  minutes,
  positive,
  type TaskEventsSetting,
  taskEventsSetting,
  triggerLimitsFromEnv,
} from "./config-values.js";
import { ENV } from "./env-names.js";
import { type FaultSpec, parseFaultSpec } from "./fault-injection.js";

export {
  alertChannelsSetting,
  type TaskEventsSetting,
  taskEventsSetting,
} from "./config-values.js";
export { ENV } from "./env-names.js";

/** The AWS services Shoal calls, as keys of {@link AwsConfig.endpoints}. */
export type AwsService =
  | "dynamodb"
  | "sqs"
  | "lambda"
  | "sfn"
  | "logs"
  | "eventBridge"
  | "cloudFormation";

/**
 * Each service's suffix of `AWS_ENDPOINT_URL_<SERVICE>`: its SDK service id in upper case with
 * spaces as underscores (AWS SDKs and Tools reference guide, "Service-specific endpoints").
 */
export const ENDPOINT_ENV: Record<AwsService, string> = {
  dynamodb: "AWS_ENDPOINT_URL_DYNAMODB",
  sqs: "AWS_ENDPOINT_URL_SQS",
  lambda: "AWS_ENDPOINT_URL_LAMBDA",
  sfn: "AWS_ENDPOINT_URL_SFN",
  logs: "AWS_ENDPOINT_URL_CLOUDWATCH_LOGS",
  eventBridge: "AWS_ENDPOINT_URL_EVENTBRIDGE",
  cloudFormation: "AWS_ENDPOINT_URL_CLOUDFORMATION",
};

/**
 * Where and as whom the AWS clients connect (lib/aws/clients.ts). What is absent is left to the
 * SDK's own chain (region from the profile, credentials from the environment, the profile, the
 * container or instance role); nothing here names an endpoint of its own.
 */
export interface AwsConfig {
  /** AWS_REGION. */
  region?: string;
  /**
   * Endpoints by service: AWS_ENDPOINT_URL_<SERVICE>, else AWS_ENDPOINT_URL (none when
   * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is `true`). Emulators and LocalStack set them.
   */
  endpoints: Partial<Record<AwsService, string>>;
  /** Static credentials (the emulators' dummy keys); absent: the SDK's credential chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** A named profile of the shared config files (the CLI's `--profile`). */
  profile?: string;
  /** Test hook: faults injected into the clients' calls (SHOAL_TEST_FAULTS). */
  faults?: FaultSpec;
  /**
   * The data directory of `shoal standalone`'s embedded backend (SHOAL_EMBEDDED_DIR): DynamoDB
   * and SQS calls go to it in-process (lib/embedded/) instead of to an endpoint.
   */
  embeddedDir?: string;
}

/**
 * The AWS part of the configuration from the variables the SDK itself reads: AWS_REGION,
 * AWS_ENDPOINT_URL_<SERVICE> over AWS_ENDPOINT_URL, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS.
 * Credentials and profiles stay with the SDK's chain.
 */
export function awsConfigFromEnv(env: NodeJS.ProcessEnv): AwsConfig {
  const ignore = env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === "true";
  const endpoints: Partial<Record<AwsService, string>> = {};
  if (!ignore) {
    for (const [service, name] of Object.entries(ENDPOINT_ENV) as Array<[AwsService, string]>) {
      const url = env[name] || env.AWS_ENDPOINT_URL;
      if (url) endpoints[service] = url;
    }
  }
  const faults = env[ENV.testFaults] ? parseFaultSpec(env[ENV.testFaults] ?? "") : undefined;
  const embeddedDir = env[ENV.embeddedDir] || undefined;
  return {
    ...(env.AWS_REGION ? { region: env.AWS_REGION } : {}),
    endpoints,
    ...(faults ? { faults } : {}),
    ...(embeddedDir ? { embeddedDir } : {}),
  };
}

/**
 * CloudWatch metrics Shoal emits in Embedded Metric Format log lines (no API call; CloudWatch
 * extracts them from the function's log). The CDK alarms and dashboard use the same names.
 */
export const METRICS = {
  namespace: "Shoal",
  /** Dimension naming the deployment (its prefix). */
  dimension: "Prefix",
  /** Milliseconds between a schedule's nominal fire time and the sweeper's decision (max per sweep). */
  fireLatenessMs: "FireLatenessMs",
  /** Fires decided in one sweep (count). */
  fires: "Fires",
  /** Runs started by triggers (count; the trigger Lambda, lib/api/trigger-delivery.ts). */
  triggerRuns: "TriggerRuns",
  /** Runs refused over a trigger's rate limit, SHOAL_TRIGGER_MAX_RUNS_PER_MINUTE (count). */
  triggerRunsRefused: "TriggerRunsRefused",
  /** Runs not started to cut a trigger loop off: depth or runs per originating event (count). */
  triggerLoopsStopped: "TriggerLoopsStopped",
} as const;

/** The environment variable naming each table, by logical name (lib/aws/resources.ts TABLES). */
export const TABLE_ENV = {
  workflows: ENV.workflowsTable,
  commands: ENV.commandsTable,
  instances: ENV.instancesTable,
  tasks: ENV.tasksTable,
  taskGroups: ENV.taskGroupsTable,
  timers: ENV.timersTable,
  schedules: ENV.schedulesTable,
  fires: ENV.firesTable,
  leases: ENV.leasesTable,
  backfills: ENV.backfillsTable,
  triggers: ENV.triggersTable,
} as const;

/** Runtime configuration of handlers and pollers, parsed once ({@link configFromEnv}). */
export interface ShoalConfig {
  prefix: string;
  /** Region, endpoints and credentials of the AWS clients. */
  aws: AwsConfig;
  tables: {
    workflows: string;
    commands: string;
    instances: string;
    tasks: string;
    /** Task group heads, slots and waiters (lib/store/dynamo-task-groups.ts). */
    taskGroups: string;
    /** Due times the sweeper acts on (lib/store/dynamo-timers.ts). */
    timers: string;
    /** Cron/rate/one-time schedules (lib/store/dynamo-schedules.ts). */
    schedules: string;
    /** The fire ledger: one item per schedule and nominal time (lib/store/dynamo-fires.ts). */
    fires: string;
    /** Named leases, e.g. of a sweeper shard (lib/store/dynamo-leases.ts). */
    leases: string;
    /** Backfills ("complement data") and their progress (lib/store/dynamo-backfills.ts). */
    backfills: string;
    /** Event-pattern triggers (lib/store/dynamo-triggers.ts). */
    triggers: string;
  };
  /** URL of the events FIFO queue; resolved by name when empty. */
  eventsQueueUrl?: string;
  /** Where task logs and working directories live (standalone and ECS workers). */
  dataDir: string;
  /** How long a worker's claim on a task lasts without renewal, ms. */
  leaseMs: number;
  /** How often a running task's lease is renewed (and a kill request noticed), ms. */
  leaseRenewMs: number;
  /**
   * Create task queues of unknown worker groups on first use (standalone only): the process that
   * provisions passes `createRuntime` a queue creator (lib/standalone/provision.ts
   * `autoCreatedQueues`); `createRuntime` refuses this flag without one.
   */
  autoCreateQueues: boolean;
  /** A command left PENDING this long is signalled again by the sweeper, ms. */
  commandResignalMs: number;
  /** This process is the only dispatcher (standalone): it may keep instances in memory. */
  singleDispatcher: boolean;
  /** CloudWatch Logs group of task logs; absent: files under `dataDir`. */
  taskLogGroup?: string;
  /** EventBridge bus of state-change events; absent: none (standalone: its in-process bus). */
  eventBus?: string;
  /** Which task state-change events are published (SHOAL_TASK_EVENTS; default `unsuccessful`). */
  taskEvents: TaskEventsSetting;
  /**
   * Days finished instances, their task attempts and fire-ledger entries are kept before DynamoDB
   * TTL deletes them (on AWS); 0: forever (the default; the CDK stack sets 90).
   */
  instanceRetentionDays: number;
  /** How long a worker keeps the work directory of an attempt that did not succeed, ms. */
  keepFailedWorkMs: number;
  /** Worker groups served by a Lambda worker (on AWS; empty in standalone). */
  lambdaWorkerGroups: string[];
  /** The worker group the stack's ECS service serves (on AWS with ECS workers). */
  ecsWorkerGroup?: string;
  /** The API of the standalone a `shoal sweeper` runs next to (its misfire events go there). */
  standaloneUrl?: string;
  /** Standalone: the token that lets its own relay put events with source `shoal`. */
  eventsRelayToken?: string;
  /** What cuts trigger loops and storms off (SHOAL_TRIGGER_MAX_*). */
  triggerLimits: TriggerLimits;
  /** Standalone only: how often its retention sweep runs, ms. */
  retentionSweepMs: number;
  /** No structured log lines. */
  quiet: boolean;
  /** Test hook: pollers deliver every batch twice, concurrently. */
  deliverTwice: boolean;
  /** Test hook: verbs whose command signals standalone's dispatcher holds (never carries out). */
  holdCommands?: string[];
  /** The ECS agent's URI, inside an ECS task (scale-in protection while tasks run). */
  ecsAgentUri?: string;
  /** The deployment's alert channels, name → type (SHOAL_ALERT_CHANNELS); absent: not known. */
  alertChannels?: Record<string, string>;
}

/** Resource names derived from a prefix (`shoal` unless set). */
export function resourceNames(prefix: string) {
  return {
    tables: {
      workflows: `${prefix}-workflows`,
      commands: `${prefix}-commands`,
      instances: `${prefix}-instances`,
      tasks: `${prefix}-tasks`,
      taskGroups: `${prefix}-task-groups`,
      timers: `${prefix}-timers`,
      schedules: `${prefix}-schedules`,
      fires: `${prefix}-fires`,
      leases: `${prefix}-leases`,
      backfills: `${prefix}-backfills`,
      triggers: `${prefix}-triggers`,
    },
    eventsQueue: `${prefix}-events.fifo`,
    /** Standard queue for signals that must wait (schedule look-ahead: DelaySeconds). */
    signalsQueue: `${prefix}-signals`,
    signalsDlq: `${prefix}-signals-dlq`,
    eventsDlq: `${prefix}-events-dlq.fifo`,
    /** Task queue of one worker group and priority tier. */
    taskQueue: (group: string, priority: Priority) =>
      `${prefix}-tasks-${group}-${priority.toLowerCase()}`,
    taskDlq: (group: string, priority: Priority) =>
      `${prefix}-tasks-${group}-${priority.toLowerCase()}-dlq`,
  };
}

/** Standalone's default period of retention sweeps, seconds. */
const RETENTION_SWEEP_SECONDS = 600;

/**
 * The configuration of a process, parsed once from environment variables (defaults suit AWS
 * Lambda; the table in docs/architecture.md lists them).
 * @throws Error naming the variable and the rule when a number is malformed, e.g.
 *   `SHOAL_LEASE_SECONDS must be a positive number, got 'x'`.
 */
export function configFromEnv(env: NodeJS.ProcessEnv): ShoalConfig {
  const prefix = env[ENV.prefix] || "shoal";
  const names = resourceNames(prefix);
  return {
    prefix,
    aws: awsConfigFromEnv(env),
    tables: {
      workflows: env[ENV.workflowsTable] || names.tables.workflows,
      commands: env[ENV.commandsTable] || names.tables.commands,
      instances: env[ENV.instancesTable] || names.tables.instances,
      tasks: env[ENV.tasksTable] || names.tables.tasks,
      taskGroups: env[ENV.taskGroupsTable] || names.tables.taskGroups,
      timers: env[ENV.timersTable] || names.tables.timers,
      schedules: env[ENV.schedulesTable] || names.tables.schedules,
      fires: env[ENV.firesTable] || names.tables.fires,
      leases: env[ENV.leasesTable] || names.tables.leases,
      backfills: env[ENV.backfillsTable] || names.tables.backfills,
      triggers: env[ENV.triggersTable] || names.tables.triggers,
    },
    ...(env[ENV.eventsQueueUrl] ? { eventsQueueUrl: env[ENV.eventsQueueUrl] } : {}),
    dataDir: env[ENV.dataDir] || "/tmp/shoal",
    leaseMs: positive(env, ENV.leaseSeconds, 60) * 1000,
    leaseRenewMs: positive(env, ENV.leaseRenewSeconds, 15) * 1000,
    autoCreateQueues: env[ENV.autoCreateQueues] === "true",
    commandResignalMs: positive(env, ENV.commandResignalSeconds, 30) * 1000,
    singleDispatcher: env[ENV.singleDispatcher] === "true",
    ...(env[ENV.taskLogGroup] ? { taskLogGroup: env[ENV.taskLogGroup] } : {}),
    ...(env[ENV.eventBus] ? { eventBus: env[ENV.eventBus] } : {}),
    taskEvents: taskEventsSetting(env[ENV.taskEvents]),
    instanceRetentionDays: days(env, ENV.instanceRetentionDays),
    keepFailedWorkMs: minutes(env, ENV.keepFailedWorkMinutes, 60) * 60_000,
    lambdaWorkerGroups: (env[ENV.lambdaWorkerGroups] ?? "")
      .split(",")
      .map((g) => g.trim())
      .filter((g) => g !== ""),
    ...(env[ENV.ecsWorkerGroup] ? { ecsWorkerGroup: env[ENV.ecsWorkerGroup] } : {}),
    ...(env[ENV.standaloneUrl] ? { standaloneUrl: env[ENV.standaloneUrl] } : {}),
    ...(env[ENV.eventsRelayToken] ? { eventsRelayToken: env[ENV.eventsRelayToken] } : {}),
    triggerLimits: triggerLimitsFromEnv(env),
    // A negative or unreadable value is refused, naming the variable (it used to run the sweep
    // every millisecond).
    retentionSweepMs: positive(env, ENV.retentionSweepSeconds, RETENTION_SWEEP_SECONDS) * 1000,
    quiet: env[ENV.quiet] === "true",
    deliverTwice: env[ENV.testDeliverTwice] === "true",
    ...(env[ENV.testHoldCommands]
      ? {
          holdCommands: String(env[ENV.testHoldCommands])
            .split(",")
            .map((v) => v.trim()),
        }
      : {}),
    ...(env[ENV.ecsAgentUri] ? { ecsAgentUri: env[ENV.ecsAgentUri] } : {}),
    ...alertChannelsOf(env),
  };
}
