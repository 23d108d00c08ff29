/**
 * Standalone's stand-in for DynamoDB TTL on alert delivery records (dynamo-deliveries.ts), which
 * its retention sweep drives (lib/standalone/retention.ts), as lib/store/dynamo-expired.ts does for
 * instances, attempts and fires:
 * - the records of an instance go when the instance does ({@link deleteWithInstance});
 * - a record whose TTL attribute passed goes on its own when it belongs to no instance (a
 *   schedule's misfire) or to an instance that is gone (an event handled after the instance was
 *   deleted) — never while its instance exists, whatever its own attribute says, as attempts.
 * Finding the latter scans the timers table with a filter: fine for a local data directory swept
 * every few minutes; on AWS, DynamoDB TTL does it.
 */
import { DeleteCommand, type DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { TTL_ATTRIBUTE } from "../aws/resources.js";
import { conditional } from "../store/dynamo-common.js";
import { DynamoDeliveries } from "./dynamo-deliveries.js";

/** Prefix of the partitions of delivery records (`alert#<subject>`). */
const RECORD_PREFIX = "alert#";
/** Subjects of misfire deliveries, which belong to no instance. */
const SCHEDULE_SUBJECT = "schedule:";

export class DynamoExpiredDeliveries {
  private readonly deliveries: DynamoDeliveries;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    /** The timers table's name. */
    private readonly table: string,
  ) {
    this.deliveries = new DynamoDeliveries(db, table);
  }

  /**
   * Deletes the delivery records of an instance the sweep just deleted.
   * @returns how many were deleted.
   */
  deleteWithInstance(instanceId: string): Promise<number> {
    return this.deliveries.deleteSubject(instanceId);
  }

  /**
   * Deletes up to `limit` records whose TTL attribute passed at `nowMs` (epoch ms) and that
   * belong to no instance that exists (see the module comment). Each delete is conditioned on the
   * attribute still having passed. Reads the whole table if need be.
   * @param instanceExists whether the store has an instance (strongly consistent).
   * @returns how many were deleted.
   */
  async deleteExpired(
    nowMs: number,
    limit: number,
    instanceExists: (instanceId: string) => Promise<boolean>,
  ): Promise<number> {
    const nowS = Math.floor(nowMs / 1000);
    const exists = new Map<string, Promise<boolean>>();
    let n = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const r = await this.db.send(
        new ScanCommand({
          TableName: this.table,
          FilterExpression: "begins_with(#s, :p) AND #ttl < :now",
          ExpressionAttributeNames: { "#s": "shard", "#k": "dueKey", "#ttl": TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ":p": RECORD_PREFIX, ":now": nowS },
          ProjectionExpression: "#s, #k",
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const key of r.Items ?? []) {
        if (n >= limit) return n;
        const subject = String(key.shard).slice(RECORD_PREFIX.length);
        if (!subject.startsWith(SCHEDULE_SUBJECT)) {
          if (!exists.has(subject)) exists.set(subject, instanceExists(subject));
          if (await exists.get(subject)) continue;
        }
        const deleted = await conditional(() =>
          this.db.send(
            new DeleteCommand({
              TableName: this.table,
              Key: { shard: key.shard, dueKey: key.dueKey },
              ConditionExpression: "#ttl < :now",
              ExpressionAttributeNames: { "#ttl": TTL_ATTRIBUTE },
              ExpressionAttributeValues: { ":now": nowS },
            }),
          ),
        );
        if (deleted) n++;
      }
      start = r.LastEvaluatedKey;
    } while (start && n < limit);
    return n;
  }
}
