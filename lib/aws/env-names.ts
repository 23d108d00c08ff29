/**
 * The names of the environment variables that reach Shoal's handlers and processes: the CDK stack
 * sets them, the standalone runtime writes them to `endpoints.env`, and lib/aws/config.ts reads
 * them (`configFromEnv`).
 */

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
