/**
 * Alert deliveries in the timers table (no table of their own: both kinds of item are small, and
 * the engine's sweeper reads shard "0" only, lib/store/dynamo-timers.ts):
 * - a record per delivery: partition `alert#<subject>`, sort key `<deliveryId>`, so one Query
 *   answers `GET /v1/instances/{id}`;
 * - a job per due send: partition `alerts`, sort key `<dueAt, 15 digits>#<subject>#<deliveryId>`,
 *   so one Query returns the due jobs oldest first.
 * Every record write is conditional (`attribute_not_exists` to create, `rev` to update).
 *
 * A record carries the TTL attribute (lib/aws/resources.ts TTL_ATTRIBUTE, epoch seconds) when a
 * retention is set: the instance retention (SHOAL_INSTANCE_RETENTION_DAYS) after its last write,
 * so an instance's alerts go about when the instance does (DynamoDB TTL on AWS; standalone's
 * retention sweep deletes them with their instance, lib/standalone/retention.ts). Jobs carry none:
 * the deliverer deletes each once done.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import { TTL_ATTRIBUTE } from "../aws/resources.js";
import { conditional, expiresAt } from "../store/dynamo-common.js";
import type { DeliveryJob, DeliveryRecord, DeliveryStore } from "./deliveries.js";

/** Partition of the due jobs. */
export const JOB_SHARD = "alerts";
const recordShard = (subject: string) => `alert#${subject}`;
const pad = (ms: number) => String(Math.max(0, Math.floor(ms))).padStart(15, "0");
const jobKey = (j: DeliveryJob) => `${pad(j.dueAt)}#${j.subject}#${j.deliveryId}`;

function fromItem(item: Record<string, unknown>): DeliveryRecord {
  const { shard: _s, dueKey: _k, [TTL_ATTRIBUTE]: _t, ...rest } = item;
  return rest as unknown as DeliveryRecord;
}

/** Retention of the records (absent or 0 days: kept forever, as instances then are). */
export interface DeliveryRetention {
  /** Days after its last write a record may go (fractions allowed; 0: never). */
  retentionDays?: number;
  /** The clock, epoch ms. */
  now?: () => number;
}

export class DynamoDeliveries implements DeliveryStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    /** The timers table's name. */
    private readonly table: string,
    private readonly retention: DeliveryRetention = {},
  ) {}

  /** The stored item of a record: keys, and the TTL attribute when retention is on. */
  private item(rec: DeliveryRecord): Record<string, unknown> {
    const now = this.retention.now?.() ?? Date.now();
    const ttl = expiresAt(Math.max(rec.occurredAt, now), this.retention.retentionDays);
    return {
      ...rec,
      shard: recordShard(rec.subject),
      dueKey: rec.deliveryId,
      ...(ttl !== undefined ? { [TTL_ATTRIBUTE]: ttl } : {}),
    };
  }

  async create(rec: DeliveryRecord): Promise<boolean> {
    const created = await conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: this.item(rec),
          ConditionExpression: "attribute_not_exists(#k)",
          ExpressionAttributeNames: { "#k": "dueKey" },
        }),
      ),
    );
    const stored = created ? rec : await this.get(rec.subject, rec.deliveryId);
    // A repeated event after a crash between the two writes: the first job is written again
    // (same key, so never twice).
    if (stored && stored.status === "PENDING" && stored.attempts === 0) {
      await this.putJob({
        deliveryId: stored.deliveryId,
        subject: stored.subject,
        dueAt: stored.createdAt,
      });
    }
    return created;
  }

  async get(subject: string, deliveryId: string): Promise<DeliveryRecord | undefined> {
    const r = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: { shard: recordShard(subject), dueKey: deliveryId },
        ConsistentRead: true,
      }),
    );
    return r.Item ? fromItem(r.Item) : undefined;
  }

  async list(subject: string): Promise<DeliveryRecord[]> {
    const out: DeliveryRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const r = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: "#s = :s",
          ExpressionAttributeNames: { "#s": "shard" },
          ExpressionAttributeValues: { ":s": recordShard(subject) },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      out.push(...(r.Items ?? []).map(fromItem));
      start = r.LastEvaluatedKey;
    } while (start);
    return out.sort((a, b) => a.createdAt - b.createdAt || (a.deliveryId < b.deliveryId ? -1 : 1));
  }

  update(rec: DeliveryRecord): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: this.item(rec),
          ConditionExpression: "#r = :prev",
          ExpressionAttributeNames: { "#r": "rev" },
          ExpressionAttributeValues: { ":prev": rec.rev - 1 },
        }),
      ),
    );
  }

  async listDueJobs(now: number, limit: number): Promise<DeliveryJob[]> {
    if (limit < 1) return [];
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        // ':' sorts after the digits and '#': every key due at or before `now` is below it.
        KeyConditionExpression: "#s = :s AND #k < :upper",
        ExpressionAttributeNames: { "#s": "shard", "#k": "dueKey" },
        ExpressionAttributeValues: { ":s": JOB_SHARD, ":upper": `${pad(now)}:` },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((i) => ({
      deliveryId: String(i.deliveryId),
      subject: String(i.subject),
      dueAt: Number(i.dueAt),
    }));
  }

  async putJob(job: DeliveryJob): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: { ...job, shard: JOB_SHARD, dueKey: jobKey(job) },
      }),
    );
  }

  deleteJob(job: DeliveryJob): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { shard: JOB_SHARD, dueKey: jobKey(job) },
          ConditionExpression: "attribute_exists(#k)",
          ExpressionAttributeNames: { "#k": "dueKey" },
        }),
      ),
    );
  }

  /**
   * Deletes every record of a subject (an instance whose retention is over, with it).
   * @returns how many were deleted.
   */
  async deleteSubject(subject: string): Promise<number> {
    let n = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const r = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: "#s = :s",
          ExpressionAttributeNames: { "#s": "shard", "#k": "dueKey" },
          ExpressionAttributeValues: { ":s": recordShard(subject) },
          ProjectionExpression: "#s, #k",
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const key of r.Items ?? []) {
        await this.db.send(
          new DeleteCommand({
            TableName: this.table,
            Key: { shard: key.shard, dueKey: key.dueKey },
          }),
        );
        n++;
      }
      start = r.LastEvaluatedKey;
    } while (start);
    return n;
  }
}
