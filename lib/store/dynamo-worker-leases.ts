/**
 * Worker leases (worker-leases.ts) in the tasks table, beside the attempts they cover: a worker
 * lease is item (`~workers`, `<leaseId>`), all of them in one partition that the sweeper reads
 * whole (there are as many as live workers), and in no index, so that a renewal is one write
 * unit, not three (an index entry keyed by its expiry would move at every renewal). An attempt
 * handed to a worker lease sits in shard `W#<leaseId>` of the leases index. Every write is
 * conditional, one item each.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { INDEX, TTL_ATTRIBUTE } from "../aws/resources.js";
import { conditional, isConditionFailure, queryAll, strip } from "./dynamo-common.js";
import type { TaskInstanceRecord } from "./records.js";
import type { WorkerLeaseRecord, WorkerLeaseRenewal, WorkerLeaseStore } from "./worker-leases.js";

/** The partition of worker leases. */
const PARTITION = "~workers";
/** The leases index's shard of the attempts handed to worker lease `leaseId`. */
export const workerLeaseShard = (leaseId: string) => `W#${leaseId}`;
/**
 * A worker lease nobody cleared (the sweeper deletes it once its attempts are failed over) goes
 * with DynamoDB TTL this long after it lapsed, s.
 */
const LEFTOVER_SECONDS = 24 * 3600;

const key = (leaseId: string) => ({ instanceId: PARTITION, taskKey: leaseId });

export class DynamoWorkerLeases implements WorkerLeaseStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async renewWorkerLease(
    leaseId: string,
    worker: string,
    expiresAt: number,
    opts: { create: boolean; handledKills?: readonly string[] },
  ): Promise<WorkerLeaseRenewal | undefined> {
    const names: Record<string, string> = { "#ttl": TTL_ATTRIBUTE };
    const values: Record<string, unknown> = {
      ":e": expiresAt,
      ":w": worker,
      ":ttl": Math.floor(expiresAt / 1000) + LEFTOVER_SECONDS,
    };
    const sets = ["leaseExpiresAt = :e", "worker = :w", "#ttl = :ttl"];
    const removes: string[] = [];
    if (opts.create) {
      sets.push("kills = :none");
      values[":none"] = {};
    } else {
      (opts.handledKills ?? []).forEach((ref, i) => {
        names[`#k${i}`] = ref;
        removes.push(`kills.#k${i}`);
      });
    }
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(leaseId),
          UpdateExpression: `SET ${sets.join(", ")}${removes.length ? ` REMOVE ${removes.join(", ")}` : ""}`,
          // A renewal of a lease the sweeper marked dead (or deleted) must fail: its attempts
          // are being failed over, and the worker has to learn it.
          ConditionExpression: opts.create
            ? "attribute_not_exists(taskKey)"
            : "attribute_exists(leaseExpiresAt) AND attribute_not_exists(dead)",
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: "ALL_NEW",
        }),
      );
      return { kills: (r.Attributes?.kills ?? {}) as Record<string, string> };
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  requestWorkerKill(leaseId: string, ref: string, reason: string): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(leaseId),
          UpdateExpression: "SET kills.#k = :r",
          ConditionExpression: "attribute_exists(kills) AND attribute_not_exists(dead)",
          ExpressionAttributeNames: { "#k": ref },
          ExpressionAttributeValues: { ":r": reason },
        }),
      ),
    );
  }

  async listExpiredWorkerLeases(now: number, limit: number): Promise<WorkerLeaseRecord[]> {
    // The whole partition, filtered here: a live worker's lease is not listed, a few hundred
    // bytes each (the sweeper reads it once a sweep).
    const items = await queryAll(this.db, {
      TableName: this.table,
      KeyConditionExpression: "instanceId = :p",
      FilterExpression: "leaseExpiresAt < :now",
      ExpressionAttributeValues: { ":p": PARTITION, ":now": now },
      ConsistentRead: true,
    });
    return items
      .map((i) => ({
        leaseId: String(i.taskKey),
        worker: String(i.worker),
        leaseExpiresAt: Number(i.leaseExpiresAt),
        ...(i.dead ? { dead: true } : {}),
        ...(typeof i.deadAt === "number" ? { deadAt: i.deadAt } : {}),
      }))
      .sort((a, b) => a.leaseExpiresAt - b.leaseExpiresAt)
      .slice(0, limit);
  }

  markWorkerLeaseDead(leaseId: string, now: number): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(leaseId),
          // It stays (lapsed) until its attempts are failed over: a sweep that dies half-way
          // leaves it for the next.
          UpdateExpression: "SET dead = :t, deadAt = :now",
          ConditionExpression: "leaseExpiresAt < :now",
          ExpressionAttributeValues: { ":t": true, ":now": now },
        }),
      ),
    );
  }

  async listWorkerLeaseTasks(leaseId: string, limit: number): Promise<TaskInstanceRecord[]> {
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: INDEX.leases,
        KeyConditionExpression: "leaseShard = :s",
        ExpressionAttributeValues: { ":s": workerLeaseShard(leaseId) },
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((i) =>
      strip<TaskInstanceRecord>(i, "taskKey", "leaseShard", TTL_ATTRIBUTE),
    );
  }

  async deleteWorkerLease(leaseId: string): Promise<void> {
    await conditional(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: key(leaseId),
          ConditionExpression: "dead = :t",
          ExpressionAttributeValues: { ":t": true },
        }),
      ),
    );
  }
}
