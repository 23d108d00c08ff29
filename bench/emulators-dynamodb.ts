/**
 * The emulators scenario's DynamoDB figures (dynalite), with the request shapes the engine sends:
 * the dispatcher's conditional task put, the worker's claim, the instance rewrite with a rev
 * condition, a consistent read, the sweeper's lease query, and their rates with 16 callers.
 */
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { INDEX } from "../lib/aws/resources.js";
import { lastCpuMsPerOp, type MeasureContext, rate, timeEach } from "./emulators-measure.js";
import { summarize } from "./stats.js";

/** The worker's claim as the engine sends it: conditional, sets the lease (GSI), ALL_NEW. */
function claim(table: string, taskKey: string): UpdateCommand {
  return new UpdateCommand({
    TableName: table,
    Key: { instanceId: "inst-1", taskKey },
    UpdateExpression: "SET #s = :r, startedAt = :now, leaseExpiresAt = :exp, leaseShard = :sh",
    ConditionExpression: "#s IN (:a, :b)",
    ExpressionAttributeNames: { "#s": "state" },
    ExpressionAttributeValues: {
      ":r": "RUNNING",
      ":now": Date.now(),
      ":exp": Date.now() + 10_000,
      ":sh": "L0",
      ":a": "SUBMITTED",
      ":b": "DISPATCHED",
    },
    ReturnValues: "ALL_NEW",
  });
}

/** Task instance written by the dispatcher (conditional put). */
function taskItem(i: number) {
  return {
    instanceId: "inst-1",
    taskKey: `task_${i}#0001`,
    workflow: "bench",
    code: `task_${i}`,
    attempt: 1,
    type: "SHELL",
    state: "DISPATCHED",
    priority: "MEDIUM",
    workerGroup: "default",
    submittedAt: Date.now(),
  };
}

/** Single requests one after another, then puts and claims with 16 concurrent callers. */
export async function measureDynamoDB(ctx: MeasureContext): Promise<void> {
  const { ddb, names, N, store, rows, add } = ctx;
  add(
    "DynamoDB PutItem task (attribute_not_exists)",
    await timeEach(N, (i) =>
      ddb.send(
        new PutCommand({
          TableName: names.tables.tasks,
          Item: taskItem(i),
          ConditionExpression: "attribute_not_exists(taskKey)",
        }),
      ),
    ),
  );
  // Worker claim: conditional update, sets the lease (GSI), returns ALL_NEW.
  add(
    "DynamoDB UpdateItem claim (cond., GSI, ALL_NEW)",
    await timeEach(N, (i) => ddb.send(claim(names.tables.tasks, `task_${i}#0001`))),
  );
  // Instance item with a 1,001-task progress string, rewritten with a rev condition.
  const inst = {
    instanceId: "inst-1",
    workflow: "bench",
    version: 1,
    state: "RUNNING",
    priority: "MEDIUM",
    failureStrategy: "END",
    commandType: "START_WORKFLOW",
    params: {},
    dryRun: false,
    taskScope: "DOWNSTREAM",
    createdAt: Date.now(),
    progress: { slots: "S".repeat(500) + "D".repeat(501), attempts: {} },
    listKey: "I",
    createdKey: `${new Date().toISOString()}#inst-1`,
    rev: 0,
  };
  await ddb.send(new PutCommand({ TableName: names.tables.instances, Item: inst }));
  let rev = 0;
  add(
    "DynamoDB PutItem instance (rev cond., 2 GSIs)",
    await timeEach(N, async () => {
      rev++;
      await ddb.send(
        new PutCommand({
          TableName: names.tables.instances,
          Item: { ...inst, rev },
          ConditionExpression: "rev = :prev",
          ExpressionAttributeValues: { ":prev": rev - 1 },
        }),
      );
    }),
  );
  add(
    "DynamoDB GetItem instance (consistent)",
    await timeEach(N, () =>
      ddb.send(
        new GetCommand({
          TableName: names.tables.instances,
          Key: { instanceId: "inst-1" },
          ConsistentRead: true,
        }),
      ),
    ),
  );
  add(
    "DynamoDB Query leases GSI (sweeper)",
    await timeEach(100, () =>
      ddb.send(
        new QueryCommand({
          TableName: names.tables.tasks,
          IndexName: INDEX.leases,
          KeyConditionExpression: "leaseShard = :s AND leaseExpiresAt < :now",
          ExpressionAttributeValues: { ":s": "L0", ":now": 0 },
          Limit: 100,
        }),
      ),
    ),
  );
  const putRate = await rate(1000, 16, (i) =>
    ddb.send(
      new PutCommand({
        TableName: names.tables.tasks,
        Item: taskItem(10_000 + i),
        ConditionExpression: "attribute_not_exists(taskKey)",
      }),
    ),
  );
  rows.push({
    what: "DynamoDB PutItem task, 16 concurrent",
    store,
    s: summarize([]),
    perSecond: putRate,
    cpuMs: lastCpuMsPerOp(),
  });
  const updateRate = await rate(1000, 16, (i) =>
    ddb.send(claim(names.tables.tasks, `task_${10_000 + i}#0001`)),
  );
  rows.push({
    what: "DynamoDB UpdateItem claim, 16 concurrent",
    store,
    s: summarize([]),
    perSecond: updateRate,
    cpuMs: lastCpuMsPerOp(),
  });
}

/** BatchWriteItem of 25 task items: what one batched request costs, to weigh batching. */
export async function measureBatchWrite(ctx: MeasureContext): Promise<void> {
  const { ddb, names, B, add } = ctx;
  add(
    "DynamoDB BatchWriteItem 25 task items",
    await timeEach(B, (i) =>
      ddb.send(
        new BatchWriteCommand({
          RequestItems: {
            [names.tables.tasks]: Array.from({ length: 25 }, (_, k) => ({
              PutRequest: { Item: taskItem(100_000 + i * 25 + k) },
            })),
          },
        }),
      ),
    ),
  );
}
