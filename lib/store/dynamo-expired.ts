/**
 * What DynamoDB TTL does on AWS, done by hand for the emulators, which have no TTL: finds and
 * deletes the items whose TTL attribute (lib/aws/resources.ts TTL_ATTRIBUTE, epoch seconds) has
 * passed. Standalone's retention sweep (lib/standalone/retention.ts) drives it. A scan with a
 * filter reads the whole table, which is fine for a local data directory swept every few minutes
 * and would not be on AWS (where TTL does it for free).
 *
 * Every delete is conditioned on the attribute still having passed: a rerun that started since
 * the scan removed it, and its instance stays (the same guarantee DynamoDB TTL gives, which
 * checks the attribute again before deleting).
 */
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  ScanCommand,
} from "@aws-sdk/lib-dynamodb";
import { TABLES, type TableSpec, TTL_ATTRIBUTE } from "../aws/resources.js";
import { conditional, type Item } from "./dynamo-common.js";

/** An instance whose retention is over. */
export interface ExpiredInstance {
  instanceId: string;
  workflow: string;
}

function keyNames(logical: TableSpec["logical"]): string[] {
  const spec = TABLES.find((t) => t.logical === logical) as TableSpec;
  return [spec.partitionKey.name, ...(spec.sortKey ? [spec.sortKey.name] : [])];
}

export class DynamoExpiredItems {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tables: { instances: string; tasks: string; fires: string },
  ) {}

  /** Keys (and `also` attributes) of up to `limit` items of `table` expired at `nowMs`. */
  private async scan(
    logical: "instances" | "tasks" | "fires",
    nowMs: number,
    limit: number,
    also: string[] = [],
  ): Promise<Item[]> {
    const attrs = [...keyNames(logical), ...also];
    const names: Record<string, string> = { "#ttl": TTL_ATTRIBUTE };
    attrs.forEach((a, i) => {
      names[`#a${i}`] = a;
    });
    const out: Item[] = [];
    let start: Item | undefined;
    do {
      const r = await this.db.send(
        new ScanCommand({
          TableName: this.tables[logical],
          FilterExpression: "#ttl < :now",
          ProjectionExpression: attrs.map((_, i) => `#a${i}`).join(", "),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ":now": Math.floor(nowMs / 1000) },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      out.push(...(r.Items ?? []));
      start = r.LastEvaluatedKey;
    } while (start && out.length < limit);
    return out.slice(0, limit);
  }

  /** Up to `limit` instances whose TTL attribute passed at `nowMs` (epoch ms). */
  async expiredInstances(nowMs: number, limit: number): Promise<ExpiredInstance[]> {
    const items = await this.scan("instances", nowMs, limit, ["workflow"]);
    return items.map((i) => ({
      instanceId: String(i.instanceId),
      workflow: String(i.workflow),
    }));
  }

  /**
   * Deletes an instance whose TTL attribute passed at `nowMs`, then every task instance of it
   * (attempts that never ended carry no TTL attribute of their own).
   * @returns false when it is not expired (any more): nothing was deleted.
   */
  async deleteInstance(instanceId: string, nowMs: number): Promise<boolean> {
    const deleted = await conditional(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.tables.instances,
          Key: { instanceId },
          ConditionExpression: "#ttl < :now",
          ExpressionAttributeNames: { "#ttl": TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ":now": Math.floor(nowMs / 1000) },
        }),
      ),
    );
    if (!deleted) return false;
    let start: Item | undefined;
    do {
      const r = await this.db.send(
        new QueryCommand({
          TableName: this.tables.tasks,
          KeyConditionExpression: "instanceId = :id",
          ExpressionAttributeValues: { ":id": instanceId },
          ProjectionExpression: "instanceId, taskKey",
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      await this.batchDelete(this.tables.tasks, r.Items ?? []);
      start = r.LastEvaluatedKey;
    } while (start);
    return true;
  }

  /**
   * Deletes up to `limit` items of `logical` whose TTL attribute passed at `nowMs`: attempts of
   * an instance that was rerun since, fire-ledger entries.
   * @returns how many were deleted.
   */
  async deleteExpired(logical: "tasks" | "fires", nowMs: number, limit: number): Promise<number> {
    const keys = await this.scan(logical, nowMs, limit);
    let n = 0;
    for (const key of keys) {
      const ok = await conditional(() =>
        this.db.send(
          new DeleteCommand({
            TableName: this.tables[logical],
            Key: key,
            ConditionExpression: "#ttl < :now",
            ExpressionAttributeNames: { "#ttl": TTL_ATTRIBUTE },
            ExpressionAttributeValues: { ":now": Math.floor(nowMs / 1000) },
          }),
        ),
      );
      if (ok) n++;
    }
    return n;
  }

  /** Deletes items by key, 25 per request, retrying what DynamoDB left unprocessed. */
  private async batchDelete(table: string, keys: Item[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 25) {
      let requests = keys.slice(i, i + 25).map((Key) => ({ DeleteRequest: { Key } }));
      for (let tries = 0; requests.length > 0 && tries < 10; tries++) {
        const r = await this.db.send(
          new BatchWriteCommand({ RequestItems: { [table]: requests } }),
        );
        requests = (r.UnprocessedItems?.[table] ?? []) as typeof requests;
        if (requests.length > 0) await new Promise((res) => setTimeout(res, 50 * 2 ** tries));
      }
    }
  }
}
