/** What the API handler needs; built once per process (functions/api) or by the tests. */
import type { DeliveryStore } from "../alerts/deliveries.js";
import type { TriggerLimits } from "../core/trigger-events.js";
import type { DefinitionCache } from "../engine/definitions.js";
import type { StateChangePublisher } from "../events/event-publisher.js";
import type { LocalEventBus } from "../events/local-event-bus.js";
import type { TaskLogs } from "../logs/task-log.js";
import type { Queues } from "../queue/queues.js";
import type { TaskQueueDepths } from "../queue/task-queue-depths.js";
import type { BackfillStore } from "../store/backfills.js";
import type { FireStore } from "../store/fires.js";
import type { ScheduleStore } from "../store/schedules.js";
import type { Store } from "../store/store.js";
import type { TaskGroupStore } from "../store/task-groups.js";
import type { TriggerStore } from "../store/triggers.js";
import type { WorkerHeartbeatStore } from "../store/worker-heartbeats.js";

export interface ApiDeps {
  store: Store;
  /**
   * Definition versions, cached in the process (versions are immutable): an instance's reads
   * (`GET` instance, explain, logs, attempts) fetch and unzip its definition once, not per call.
   */
  definitions: DefinitionCache;
  queues: Queues;
  logs: TaskLogs;
  /** Task groups (`/v1/task-groups`). */
  taskGroups: TaskGroupStore;
  /** Schedules, their fire ledger, backfills and triggers. */
  scheduling: {
    schedules: ScheduleStore;
    fires: FireStore;
    backfills: BackfillStore;
    triggers: TriggerStore;
  };
  now: () => number;
  /**
   * The AWS region written into the envelopes of events `POST /v1/events` accepts (the
   * configuration's AWS_REGION); default `us-east-1`, as standalone's emulators use.
   */
  region?: string;
  /** Package version, for /v1/health. */
  version: string;
  /**
   * Each part's state for `/v1/health` (`ok`, `restarting`, `down`), by part name: standalone's
   * children (`dynamodb`, `sqs`, `worker`). Absent on AWS: health is then always `ok`.
   */
  parts?: () => Record<string, string>;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Standalone's in-process event bus (`GET /v1/events/recent`); absent on AWS. */
  bus?: LocalEventBus;
  /**
   * Where the triggers' own events go ("Shoal Trigger Loop Stopped", "… Rate Limited"): the
   * EventBridge bus on AWS, standalone's bus; absent: nowhere.
   */
  stateChanges?: StateChangePublisher;
  /** What cuts trigger loops and storms off; default DEFAULT_TRIGGER_LIMITS. */
  triggerLimits?: TriggerLimits;
  /**
   * Standalone: the token its own relay (a `shoal sweeper`'s misfire events) sends in
   * `x-shoal-relay`; the only way entries with source `shoal` enter `POST /v1/events`.
   */
  eventsRelayToken?: string;
  /** Counts a metric (the trigger Lambda's CloudWatch EMF line); absent: not counted. */
  metric?: (name: string, value: number) => void;
  /** Worker heartbeats (explain: does a worker poll the group?); absent: not known. */
  heartbeats?: WorkerHeartbeatStore;
  /** Task queue depths per tier (explain: "queued behind N tasks"); absent: not known. */
  queueDepths?: TaskQueueDepths;
  /** Worker groups a Lambda worker serves (AWS): explain counts them served without heartbeat. */
  lambdaWorkerGroups?: readonly string[];
  /** The worker group the stack's ECS service serves (AWS): explain words its absence so. */
  ecsWorkerGroup?: string;
  /** Alert deliveries (`alerts` of `GET /v1/instances/{id}`); absent: not shown. */
  alerts?: Pick<DeliveryStore, "list">;
  /**
   * The deployment's alert channels, name → type (`webhook`, `slack`, `email`): standalone's
   * alerts configuration (`--alerts`, SHOAL_ALERTS), or on AWS the construct's `alerts` prop
   * (SHOAL_ALERT_CHANNELS, names and types only, never a URL). A PUT of a definition whose rule
   * names another channel answers a warning; `GET /v1/alert-channels` lists them. Absent: not
   * known (an API function deployed without the variable), so nothing is checked.
   */
  alertChannels?: Readonly<Record<string, string>>;
}
