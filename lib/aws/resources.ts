/**
 * Tables, indexes and queues, described once: the CDK stack declares them from these
 * descriptions (cdk/shoal.ts), and standalone creates them on its emulators from the same data
 * (lib/standalone/provision.ts). Keys and conditions are explained in docs/architecture.md.
 */

/** A key attribute's type: string or number. */
export type KeyType = "S" | "N";
/** A key attribute of a table or index. */
export interface Key {
  name: string;
  type: KeyType;
}

/** A table: partition key, optional sort key, sparse global secondary indexes (ALL projection unless `include` says otherwise). */
export interface TableSpec {
  logical:
    | "workflows"
    | "commands"
    | "instances"
    | "tasks"
    | "taskGroups"
    | "timers"
    | "schedules"
    | "fires"
    | "leases"
    | "backfills"
    | "triggers";
  partitionKey: Key;
  sortKey?: Key;
  /**
   * `include`: the non-key attributes an index projects (INCLUDE); all attributes when absent.
   * A smaller projection makes every write of the item cheaper (each index holds a copy).
   */
  indexes: Array<{ name: string; partitionKey: Key; sortKey?: Key; include?: string[] }>;
  /**
   * The table's items may carry {@link TTL_ATTRIBUTE}: on AWS, DynamoDB TTL deletes them after
   * that time. The emulators have no TTL, so there the attribute is inert.
   */
  ttl?: true;
}

/**
 * DynamoDB TTL attribute of finished instances, their task instances, fire-ledger entries and
 * alert delivery records:
 * epoch **seconds** (DynamoDB's TTL format, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-before-you-start.html).
 */
export const TTL_ATTRIBUTE = "expiresAt";

/** GSI names, used by the store. */
export const INDEX = {
  workflowList: "byList",
  pendingCommands: "pending",
  instancesByCreated: "byCreated",
  instancesByWorkflow: "byWorkflow",
  leases: "leases",
  /** Sparse: ONLINE schedules with a next fire time, by shard and nextFireTime. */
  schedulesDue: "due",
  schedulesByWorkflow: "byWorkflow",
  schedulesList: "byList",
  /** Sparse: RUNNING backfills, oldest first. */
  backfillsActive: "active",
  backfillsByWorkflow: "byWorkflow",
  backfillsList: "byList",
  triggersList: "byList",
} as const;

/**
 * Backfill attributes the list indexes carry (besides their keys and id): everything but the
 * nominal times, which can be thousands of numbers and would be copied on every progress write.
 * `total`, `firstTime` and `lastTime` are written by the store to stand in for them.
 */
const BACKFILL_SUMMARY = [
  "mode",
  "parallelism",
  "priority",
  "params",
  "failureStrategy",
  "state",
  "next",
  "running",
  "done",
  "failed",
  "updatedAt",
  "rev",
  "total",
  "firstTime",
  "lastTime",
];

/**
 * Instance attributes the list indexes carry (besides their keys and instanceId). A GSI's
 * projection cannot be changed in place (DynamoDB UpdateTable only creates or deletes an index;
 * CloudFormation: `NonKeyAttributes` "Update requires: Updates are not supported"). On a
 * deployed table, adding an attribute here (`runType` was added) means deleting and re-creating
 * both instance indexes (one index per table update), while the instance lists are unavailable;
 * `ensureTables` leaves existing tables as they are.
 */
const INSTANCE_SUMMARY = [
  "version",
  "state",
  "priority",
  "createdAt",
  "startedAt",
  "endedAt",
  "scheduleTime",
  "runType",
];

export const TABLES: readonly TableSpec[] = [
  {
    // Head item at version 0 (latest version, release state); definitions at version 1..n.
    logical: "workflows",
    partitionKey: { name: "name", type: "S" },
    sortKey: { name: "version", type: "N" },
    indexes: [
      {
        name: INDEX.workflowList,
        partitionKey: { name: "listKey", type: "S" },
        sortKey: { name: "name", type: "S" },
      },
    ],
  },
  {
    logical: "commands",
    partitionKey: { name: "commandId", type: "S" },
    indexes: [
      {
        // Sparse: only commands not yet done carry pendingShard.
        name: INDEX.pendingCommands,
        partitionKey: { name: "pendingShard", type: "S" },
        sortKey: { name: "createdAt", type: "N" },
      },
    ],
  },
  {
    logical: "instances",
    ttl: true,
    partitionKey: { name: "instanceId", type: "S" },
    indexes: [
      {
        // Lists need the summary only, not the progress the dispatcher rewrites on every event.
        name: INDEX.instancesByCreated,
        partitionKey: { name: "listKey", type: "S" },
        sortKey: { name: "createdKey", type: "S" },
        include: ["workflow", ...INSTANCE_SUMMARY],
      },
      {
        name: INDEX.instancesByWorkflow,
        partitionKey: { name: "workflow", type: "S" },
        sortKey: { name: "createdKey", type: "S" },
        include: INSTANCE_SUMMARY,
      },
    ],
  },
  {
    logical: "tasks",
    ttl: true,
    partitionKey: { name: "instanceId", type: "S" },
    sortKey: { name: "taskKey", type: "S" },
    indexes: [
      {
        // Sparse: RUNNING task instances carry leaseShard "L0" (and failed-over ones until their
        // event is sent), attempts over whose event is not known to be sent "E0" (the outbox);
        // the attempts handed to a worker lease "W#<leaseId>" (lib/store/dynamo-worker-leases.ts);
        // the sweeper finds the expired ones.
        name: INDEX.leases,
        partitionKey: { name: "leaseShard", type: "S" },
        sortKey: { name: "leaseExpiresAt", type: "N" },
      },
    ],
  },
  {
    // Group heads in partition "groups" (sort key: name); per group, partition "g#<name>" holds
    // slot items ("slot#00000", attribute holder while taken) and waiter items ("wait#<order>",
    // so that a Query returns the next waiter first). See lib/store/dynamo-task-groups.ts.
    logical: "taskGroups",
    partitionKey: { name: "pk", type: "S" },
    sortKey: { name: "sk", type: "S" },
    indexes: [],
  },
  {
    // One shard ("0") for now; dueKey = "<dueAt ms, 15 digits>#<id>" sorts by due time.
    // Only alert delivery records carry the TTL attribute (lib/alerts/dynamo-deliveries.ts);
    // timers and delivery jobs never do: each is deleted once done.
    logical: "timers",
    ttl: true,
    partitionKey: { name: "shard", type: "S" },
    sortKey: { name: "dueKey", type: "S" },
    indexes: [],
  },
  {
    // createdKey = "<createdAt ms, 15 digits>#<id>" sorts the lists by creation time.
    logical: "schedules",
    partitionKey: { name: "id", type: "S" },
    indexes: [
      {
        // Sparse: dueShard (= shard) is set by the store only while ONLINE with a nextFireTime.
        name: INDEX.schedulesDue,
        partitionKey: { name: "dueShard", type: "S" },
        // "<nextFireTime, 15 digits>#<id>": by due time, and unique (see dynamo-schedules.ts).
        sortKey: { name: "dueKey", type: "S" },
      },
      {
        name: INDEX.schedulesByWorkflow,
        partitionKey: { name: "workflow", type: "S" },
        sortKey: { name: "createdKey", type: "S" },
      },
      {
        // listKey is always "S": one partition lists every schedule.
        name: INDEX.schedulesList,
        partitionKey: { name: "listKey", type: "S" },
        sortKey: { name: "createdKey", type: "S" },
      },
    ],
  },
  {
    // The fire ledger: one item per (schedule, nominal time), written once (attribute_not_exists).
    logical: "fires",
    ttl: true,
    partitionKey: { name: "scheduleId", type: "S" },
    sortKey: { name: "nominalTime", type: "N" },
    indexes: [],
  },
  {
    // Named leases (owner, expiresAt): the claim is a conditional UpdateItem.
    logical: "leases",
    partitionKey: { name: "name", type: "S" },
    indexes: [],
  },
  {
    logical: "backfills",
    partitionKey: { name: "id", type: "S" },
    indexes: [
      {
        // Sparse: activeShard ("A") is set by the store only while RUNNING.
        name: INDEX.backfillsActive,
        partitionKey: { name: "activeShard", type: "S" },
        sortKey: { name: "createdAt", type: "N" },
        include: ["workflow", ...BACKFILL_SUMMARY],
      },
      {
        name: INDEX.backfillsByWorkflow,
        partitionKey: { name: "workflow", type: "S" },
        sortKey: { name: "createdKey", type: "S" },
        include: [...BACKFILL_SUMMARY, "createdAt"],
      },
      {
        // listKey is always "B".
        name: INDEX.backfillsList,
        partitionKey: { name: "listKey", type: "S" },
        sortKey: { name: "createdKey", type: "S" },
        include: ["workflow", ...BACKFILL_SUMMARY, "createdAt"],
      },
    ],
  },
  {
    logical: "triggers",
    partitionKey: { name: "id", type: "S" },
    // The loop and rate counters expire (lib/store/dynamo-triggers.ts); triggers carry no TTL.
    ttl: true,
    indexes: [
      {
        // listKey is always "T"; createdKey as for schedules.
        name: INDEX.triggersList,
        partitionKey: { name: "listKey", type: "S" },
        sortKey: { name: "createdKey", type: "S" },
      },
    ],
  },
];

/** Queue settings. Visibility timeouts in seconds. */
export const QUEUE_SETTINGS = {
  events: { visibilityTimeoutSeconds: 30, maxReceiveCount: 20 },
  // The claim fences repeats, and releases at shutdown count as receives: be generous.
  tasks: { visibilityTimeoutSeconds: 900, maxReceiveCount: 50 },
} as const;
