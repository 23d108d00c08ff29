/**
 * Provisioning for the emulators: creates Shoal's tables and queues (idempotently) from their
 * descriptions in lib/aws/resources.ts, as the CDK stack declares them on AWS. Standalone and the
 * tests call it before the adapters are used; `queueCreator` gives the SQS adapter what it needs
 * to create a worker group's queues on first use (SHOAL_AUTO_CREATE_QUEUES).
 */
import { setTimeout } from "node:timers/promises";
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
} from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { resourceNames, type ShoalConfig } from "../aws/config.js";
import {
  type Key,
  type KeyType,
  QUEUE_SETTINGS,
  TABLES,
  type TableSpec,
} from "../aws/resources.js";
import { PRIORITIES } from "../core/model.js";
import type { QueueCreator } from "../queue/sqs-queues.js";

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
    await setTimeout(100);
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}

/**
 * Creates the tables if missing (idempotent) and waits until they are ACTIVE.
 * @param db the document client of the bundle (it sends table commands as its base client does).
 * @throws Error when a table does not become ACTIVE within a minute; SDK errors other than
 *   "already exists" as they come.
 */
export async function ensureTables(
  db: DynamoDBDocumentClient,
  tables: Record<TableSpec["logical"], string>,
): Promise<void> {
  const ddb = db as unknown as DynamoDBClient;
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

/** Creates a group's task queues or the signals queue when the SQS adapter finds one missing. */
export function queueCreator(sqs: SQSClient, prefix: string): QueueCreator {
  return {
    taskQueues: (group) => ensureTaskQueues(sqs, prefix, group),
    signalsQueue: () => ensureSignalsQueue(sqs, prefix),
  };
}

/**
 * The runtime option that creates missing queues on first use when `config.autoCreateQueues`
 * (SHOAL_AUTO_CREATE_QUEUES, which standalone sets), else none: spread into `createRuntime`'s
 * options.
 */
export function autoCreatedQueues(
  config: Pick<ShoalConfig, "autoCreateQueues" | "prefix">,
  sqs: SQSClient,
): { createQueues?: QueueCreator } {
  return config.autoCreateQueues ? { createQueues: queueCreator(sqs, config.prefix) } : {};
}
