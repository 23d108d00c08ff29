/**
 * Worker heartbeats in the leases table (lib/aws/resources.ts TABLES "leases"): one item per
 * worker group, named `worker-group#<group>` (lease names never start so), with `group`,
 * `worker` and `lastPollAt` (epoch ms). A write is a conditional UpdateItem that succeeds only
 * when the item is absent or its `lastPollAt` is at least `minIntervalMs` old, so of the workers
 * polling a group one write a minute lands (DynamoDB Developer Guide, "Condition expressions").
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { conditional } from "./dynamo-common.js";
import type { WorkerHeartbeat, WorkerHeartbeatStore } from "./worker-heartbeats.js";

/** Key of a group's heartbeat item in the leases table. */
export function heartbeatItemName(group: string): string {
  return `worker-group#${group}`;
}

export class DynamoWorkerHeartbeats implements WorkerHeartbeatStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    /** The leases table. */
    private readonly table: string,
  ) {}

  recordPoll(group: string, worker: string, now: number, minIntervalMs: number): Promise<boolean> {
    if (!(minIntervalMs >= 0) || !Number.isFinite(minIntervalMs)) {
      throw new RangeError(`minIntervalMs must be a number >= 0: ${minIntervalMs}`);
    }
    return conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { name: heartbeatItemName(group) },
          // NAME and GROUP are DynamoDB reserved words: every name is aliased.
          UpdateExpression: "SET #g = :g, #w = :w, #t = :now",
          ConditionExpression: "attribute_not_exists(#n) OR #t <= :stale",
          ExpressionAttributeNames: {
            "#n": "name",
            "#g": "group",
            "#w": "worker",
            "#t": "lastPollAt",
          },
          ExpressionAttributeValues: {
            ":g": group,
            ":w": worker,
            ":now": now,
            ":stale": now - minIntervalMs,
          },
        }),
      ),
    );
  }

  async getHeartbeat(group: string): Promise<WorkerHeartbeat | undefined> {
    const r = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: { name: heartbeatItemName(group) },
        ConsistentRead: true,
      }),
    );
    const item = r.Item;
    if (!item) return undefined;
    return {
      group: String(item.group),
      lastPollAt: Number(item.lastPollAt),
      worker: String(item.worker),
    };
  }
}
