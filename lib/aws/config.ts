/**
 * Names and settings that reach handlers through environment variables, parsed once into a typed
 * {@link ShoalConfig}. The variable names are shared constants: the CDK stack sets them, the
 * standalone runtime writes them to `endpoints.env`, and {@link configFromEnv} reads them.
 */
import type { Priority } from "../core/model.js";
import {
  DEFAULT_TRIGGER_LIMITS,
  TRIGGER_LIMIT_RANGES,
  type TriggerLimits,
} from "../core/trigger-events.js";
import { type FaultSpec, parseFaultSpec } from "./fault-injection.js";

/** Environment variable names (shared with cdk/ and the standalone runtime). */
export const ENV = {
  prefix: "SHOAL_PREFIX",
  workflowsTable: "SHOAL_TABLE_WORKFLOWS",
  commandsTable: "SHOAL_TABLE_COMMANDS",
  instancesTable: "SHOAL_TABLE_INSTANCES",
  tasksTable: "SHOAL_TABLE_TASKS",
  taskGroupsTable: "SHOAL_TABLE_TASK_GROUPS",
  timersTable: "SHOAL_TABLE_TIMERS",
  schedulesTable: "SHOAL_TABLE_SCHEDULES",
  firesTable: "SHOAL_TABLE_FIRES",
  leasesTable: "SHOAL_TABLE_LEASES",
  backfillsTable: "SHOAL_TABLE_BACKFILLS",
  triggersTable: "SHOAL_TABLE_TRIGGERS",
  eventsQueueUrl: "SHOAL_EVENTS_QUEUE_URL",
  dataDir: "SHOAL_DATA_DIR",
  leaseSeconds: "SHOAL_LEASE_SECONDS",
  leaseRenewSeconds: "SHOAL_LEASE_RENEW_SECONDS",
  autoCreateQueues: "SHOAL_AUTO_CREATE_QUEUES",
  commandResignalSeconds: "SHOAL_COMMAND_RESIGNAL_SECONDS",
  singleDispatcher: "SHOAL_SINGLE_DISPATCHER",
  /** CloudWatch Logs group for task logs (on AWS); unset: log files under the data dir. */
  taskLogGroup: "SHOAL_TASK_LOG_GROUP",
  /** EventBridge bus that state-change events go to (on AWS); unset: no bus (standalone: in-process). */
  eventBus: "SHOAL_EVENT_BUS",
  /**
   * Which task state-change events are published: `unsuccessful` (default: every attempt that
   * did not end SUCCESS), `all`, or `none` (docs/events.md). One event per successful task was
   * $1.00 per million tasks on EventBridge that nothing of Shoal's consumed.
   */
  taskEvents: "SHOAL_TASK_EVENTS",
  /**
   * The API of the `shoal standalone` this process runs next to (written to its endpoints.env):
   * a `shoal sweeper` sends its misfire events there, onto the standalone's bus.
   */
  standaloneUrl: "SHOAL_STANDALONE_URL",
  /**
   * Standalone only (in its endpoints.env): the token a `shoal sweeper` next to it sends with its
   * misfire events (`x-shoal-relay`), the one way events with source `shoal` enter
   * `POST /v1/events`; anyone else's are refused, so nobody can forge the events that chain
   * workflows.
   */
  eventsRelayToken: "SHOAL_EVENTS_RELAY_TOKEN",
  /** Deepest chain of trigger-started runs (docs/events.md "Trigger loops"); default 10. */
  triggerMaxDepth: "SHOAL_TRIGGER_MAX_DEPTH",
  /** Runs one originating event may lead to through triggers, in all; default 100. */
  triggerMaxRunsPerEvent: "SHOAL_TRIGGER_MAX_RUNS_PER_EVENT",
  /** Runs one trigger may start a minute; the excess is refused and counted; default 60. */
  triggerMaxRunsPerMinute: "SHOAL_TRIGGER_MAX_RUNS_PER_MINUTE",
  /** Days a finished instance is kept before DynamoDB TTL deletes it; unset or 0: kept forever. */
  instanceRetentionDays: "SHOAL_INSTANCE_RETENTION_DAYS",
  /**
   * Worker groups a Lambda worker serves, comma-separated (the stack's `workerGroups`): their
   * queues are polled by an event source mapping, so `shoal explain` counts them as served
   * without a worker heartbeat (lib/engine/worker-heartbeat.ts).
   */
  lambdaWorkerGroups: "SHOAL_LAMBDA_WORKER_GROUPS",
  /**
   * The worker group the stack's ECS service serves (its `ecsWorkerGroup`; unset without ECS
   * workers): `shoal explain` says that a queued task scales the service out from zero, rather
   * than "start one with shoal worker".
   */
  ecsWorkerGroup: "SHOAL_ECS_WORKER_GROUP",
  /**
   * Minutes a worker keeps the work directory of an attempt that did not succeed, for
   * debugging (default 60; 0 removes it at once). A successful attempt's goes when it ends.
   */
  keepFailedWorkMinutes: "SHOAL_KEEP_FAILED_WORK_MINUTES",
  /**
   * Standalone only: seconds between its retention sweeps, which delete what expired (the
   * emulators have no DynamoDB TTL); default 600.
   */
  retentionSweepSeconds: "SHOAL_RETENTION_SWEEP_SECONDS",
  /** `true`: no structured log lines (tests, benchmarks, `shoal standalone` children). */
  quiet: "SHOAL_QUIET",
  /** Test hook: pollers hand every batch to the handler twice, concurrently (`true`). */
  testDeliverTwice: "SHOAL_TEST_DELIVER_TWICE",
  /** Test hook: injected DynamoDB/SQS latency and errors (format: lib/aws/fault-injection.ts). */
  testFaults: "SHOAL_TEST_FAULTS",
  /**
   * Test hook, standalone only: verbs (`stop,pause`) whose commands its dispatcher never carries
   * out, their signals held in flight (lib/standalone/held-signals.ts).
   */
  testHoldCommands: "SHOAL_TEST_HOLD_COMMANDS",
  /**
   * Standalone's embedded backend (lib/embedded/): the directory of its SQLite files. Set, the
   * DynamoDB and SQS clients of standalone, its worker and sweeper processes and `shoal worker`s
   * started from its endpoints.env call it in-process instead of an endpoint.
   */
  embeddedDir: "SHOAL_EMBEDDED_DIR",
  /**
   * The deployment's alert channels as JSON, name → type (`{"ops":"slack"}`; `{}`: none), which
   * the construct gives the API function (never a URL: those stay with the alerts function's
   * SHOAL_ALERTS). The API warns about a rule naming another channel. Unset: not known.
   */
  alertChannels: "SHOAL_ALERT_CHANNELS",
  /** Set by ECS in a task's containers: its agent's URI (scale-in protection). */
  ecsAgentUri: "ECS_AGENT_URI",
} as const;

/** SHOAL_TASK_EVENTS: which task state-change events are published. */
export type TaskEventsSetting = "unsuccessful" | "all" | "none";

const TASK_EVENTS_SETTINGS: readonly TaskEventsSetting[] = ["unsuccessful", "all", "none"];

/**
 * Parses SHOAL_TASK_EVENTS (empty: `unsuccessful`).
 * @throws Error naming the variable and the values it takes.
 */
export function taskEventsSetting(value: string | undefined): TaskEventsSetting {
  if (!value) return "unsuccessful";
  if (!(TASK_EVENTS_SETTINGS as readonly string[]).includes(value))
    throw new Error(
      `${ENV.taskEvents} must be one of: ${TASK_EVENTS_SETTINGS.join(", ")} (it is '${value}')`,
    );
  return value as TaskEventsSetting;
}

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

function num(env: NodeJS.ProcessEnv, key: string, fallback: number): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`${key} must be a positive number, got '${raw}'`);
  return n;
}

function nonNegative(env: NodeJS.ProcessEnv, key: string): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return 0;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`${key} must be a number of days >= 0, got '${raw}'`);
  return n;
}

function minutes(env: NodeJS.ProcessEnv, key: string, fallback: number): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`${key} must be a number of minutes >= 0, got '${raw}'`);
  return n;
}

/** A trigger limit (lib/core/trigger-events.ts): a whole number in its range, else the default. */
function limit(env: NodeJS.ProcessEnv, key: string, which: keyof TriggerLimits): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return DEFAULT_TRIGGER_LIMITS[which];
  const [lo, hi] = TRIGGER_LIMIT_RANGES[which];
  const n = Number(raw);
  if (!Number.isInteger(n) || n < lo || n > hi)
    throw new Error(`${key} must be a whole number from ${lo} to ${hi}, got '${raw}'`);
  return n;
}

/**
 * Parses SHOAL_ALERT_CHANNELS (undefined when unset or empty).
 * @throws Error naming the variable unless it is a JSON object of strings.
 */
export function alertChannelsSetting(
  value: string | undefined,
): Record<string, string> | undefined {
  if (!value) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const ok =
    typeof parsed === "object" &&
    parsed !== null &&
    !Array.isArray(parsed) &&
    Object.values(parsed).every((t) => typeof t === "string");
  if (!ok) {
    throw new Error(
      `${ENV.alertChannels} must be a JSON object of channel name to type, e.g. {"ops":"slack"}`,
    );
  }
  return parsed as Record<string, string>;
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
    leaseMs: num(env, ENV.leaseSeconds, 60) * 1000,
    leaseRenewMs: num(env, ENV.leaseRenewSeconds, 15) * 1000,
    autoCreateQueues: env[ENV.autoCreateQueues] === "true",
    commandResignalMs: num(env, ENV.commandResignalSeconds, 30) * 1000,
    singleDispatcher: env[ENV.singleDispatcher] === "true",
    ...(env[ENV.taskLogGroup] ? { taskLogGroup: env[ENV.taskLogGroup] } : {}),
    ...(env[ENV.eventBus] ? { eventBus: env[ENV.eventBus] } : {}),
    taskEvents: taskEventsSetting(env[ENV.taskEvents]),
    instanceRetentionDays: nonNegative(env, ENV.instanceRetentionDays),
    keepFailedWorkMs: minutes(env, ENV.keepFailedWorkMinutes, 60) * 60_000,
    lambdaWorkerGroups: (env[ENV.lambdaWorkerGroups] ?? "")
      .split(",")
      .map((g) => g.trim())
      .filter((g) => g !== ""),
    ...(env[ENV.ecsWorkerGroup] ? { ecsWorkerGroup: env[ENV.ecsWorkerGroup] } : {}),
    ...(env[ENV.standaloneUrl] ? { standaloneUrl: env[ENV.standaloneUrl] } : {}),
    ...(env[ENV.eventsRelayToken] ? { eventsRelayToken: env[ENV.eventsRelayToken] } : {}),
    triggerLimits: {
      maxDepth: limit(env, ENV.triggerMaxDepth, "maxDepth"),
      maxRunsPerOrigin: limit(env, ENV.triggerMaxRunsPerEvent, "maxRunsPerOrigin"),
      maxRunsPerMinute: limit(env, ENV.triggerMaxRunsPerMinute, "maxRunsPerMinute"),
    },
    // A negative or unreadable value is refused, naming the variable (it used to run the sweep
    // every millisecond).
    retentionSweepMs: num(env, ENV.retentionSweepSeconds, RETENTION_SWEEP_SECONDS) * 1000,
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

function alertChannelsOf(env: NodeJS.ProcessEnv): { alertChannels?: Record<string, string> } {
  const alertChannels = alertChannelsSetting(env[ENV.alertChannels]);
  return alertChannels ? { alertChannels } : {};
}
