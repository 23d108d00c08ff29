/**
 * Tables, indexes and queues, described once. The standalone runtime creates them from these
 * descriptions (idempotently) and the CDK stack will declare them from the same data.
 * Keys and conditions are explained in docs/architecture.md.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
} from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { PRIORITIES } from "../core/model.js";
import { resourceNames } from "./config.js";

type KeyType = "S" | "N";
interface Key {
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
 * DynamoDB TTL attribute of finished instances, their task instances and fire-ledger entries:
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
        // Sparse: RUNNING task instances carry leaseShard (and failed-over ones until their event is
        // sent); the sweeper finds expired ones.
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
    logical: "timers",
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

async function ensureTable(ddb: DynamoDBClient, spec: TableSpec, tableName: string): Promise<void> {
  const attrs = new Map<string, KeyType>();
  const add = (k?: Key) => {
    if (k) attrs.set(k.name, k.type);
  };
  add(spec.partitionKey);
  add(spec.sortKey);
  for (const ix of spec.indexes) {
    add(ix.partitionKey);
    add(ix.sortKey);
  }
  const keySchema = (pk: Key, sk?: Key) => [
    { AttributeName: pk.name, KeyType: "HASH" as const },
    ...(sk ? [{ AttributeName: sk.name, KeyType: "RANGE" as const }] : []),
  ];
  try {
    await ddb.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [...attrs].map(([AttributeName, AttributeType]) => ({
          AttributeName,
          AttributeType,
        })),
        KeySchema: keySchema(spec.partitionKey, spec.sortKey),
        // DynamoDB refuses an empty GlobalSecondaryIndexes list: leave it out when there is none.
        ...(spec.indexes.length > 0
          ? {
              GlobalSecondaryIndexes: spec.indexes.map((ix) => ({
                IndexName: ix.name,
                KeySchema: keySchema(ix.partitionKey, ix.sortKey),
                Projection: ix.include
                  ? { ProjectionType: "INCLUDE" as const, NonKeyAttributes: ix.include }
                  : { ProjectionType: "ALL" as const },
              })),
            }
          : {}),
      }),
    );
  } catch (e) {
    if (!(e instanceof ResourceInUseException)) throw e;
  }
  // Wait until ACTIVE (dynalite is quick; real DynamoDB takes seconds).
  for (let i = 0; i < 600; i++) {
    const d = await ddb.send(new DescribeTableCommand({ TableName: tableName }));
    if (d.Table?.TableStatus === "ACTIVE") return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}

/** Creates the tables if missing (idempotent). */
export async function ensureTables(
  ddb: DynamoDBClient,
  tables: Record<TableSpec["logical"], string>,
): Promise<void> {
  for (const spec of TABLES) await ensureTable(ddb, spec, tables[spec.logical]);
}

async function createQueue(
  sqs: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<string> {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!out.QueueUrl) throw new Error(`CreateQueue ${name} returned no URL`);
  return out.QueueUrl;
}

async function queueArn(sqs: SQSClient, url: string): Promise<string> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }),
  );
  const arn = out.Attributes?.QueueArn;
  if (!arn) throw new Error(`no QueueArn for ${url}`);
  return arn;
}

/** Creates the events FIFO queue and its DLQ (idempotent). @returns the queue URL. */
export async function ensureEventsQueue(sqs: SQSClient, prefix: string): Promise<string> {
  const names = resourceNames(prefix);
  const dlq = await createQueue(sqs, names.eventsDlq, { FifoQueue: "true" });
  return createQueue(sqs, names.eventsQueue, {
    FifoQueue: "true",
    VisibilityTimeout: String(QUEUE_SETTINGS.events.visibilityTimeoutSeconds),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: await queueArn(sqs, dlq),
      maxReceiveCount: QUEUE_SETTINGS.events.maxReceiveCount,
    }),
  });
}

/**
 * Creates the signals queue (standard, so that a message may carry DelaySeconds, which FIFO
 * queues refuse) and its DLQ (idempotent). @returns the queue URL.
 */
export async function ensureSignalsQueue(sqs: SQSClient, prefix: string): Promise<string> {
  const names = resourceNames(prefix);
  const dlq = await createQueue(sqs, names.signalsDlq, {});
  return createQueue(sqs, names.signalsQueue, {
    VisibilityTimeout: String(QUEUE_SETTINGS.events.visibilityTimeoutSeconds),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: await queueArn(sqs, dlq),
      maxReceiveCount: QUEUE_SETTINGS.events.maxReceiveCount,
    }),
  });
}

/** Creates one worker group's task queues (one per priority tier) and DLQs. @returns URLs, highest first. */
export async function ensureTaskQueues(
  sqs: SQSClient,
  prefix: string,
  group: string,
): Promise<string[]> {
  const names = resourceNames(prefix);
  const urls: string[] = [];
  for (const p of PRIORITIES) {
    const dlq = await createQueue(sqs, names.taskDlq(group, p), {});
    urls.push(
      await createQueue(sqs, names.taskQueue(group, p), {
        VisibilityTimeout: String(QUEUE_SETTINGS.tasks.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: await queueArn(sqs, dlq),
          maxReceiveCount: QUEUE_SETTINGS.tasks.maxReceiveCount,
        }),
      }),
    );
  }
  return urls;
}
