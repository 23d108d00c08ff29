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
 *
 * Unlike DynamoDB TTL, which deletes every item on its own attribute, standalone never deletes a
 * task attempt of an instance that still exists: an attempt expires `retention` after **it**
 * ended, while its instance may still run, be paused, or be recovered (`recover-failed` keeps
 * the successful attempts as they are), and losing the attempt would lose the task's record.
 * Attempts go with their instance ({@link DynamoExpiredItems.deleteInstance}); an expired
 * attempt whose instance is gone (written after the instance was deleted) goes on its own.
 */

import { setTimeout as delay } from "node:timers/promises";
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
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

type Logical = "instances" | "tasks" | "fires" | "commands" | "triggers";

/** A condition or filter expression with its attribute names and values. */
interface Condition {
  expression: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

function keyNames(logical: Logical): string[] {
  const spec = TABLES.find((t) => t.logical === logical) as TableSpec;
  return [spec.partitionKey.name, ...(spec.sortKey ? [spec.sortKey.name] : [])];
}

/**
 * Standalone's stand-in for DynamoDB TTL (see the module comment): finds the instances whose
 * retention is over and deletes them with their task attempts, and deletes orphaned attempts,
 * decided fire-ledger entries and done commands that outlived the retention. Every delete is a
 * conditional write, so a rerun, a recovery or a queued fire racing a sweep is never lost. Times
 * are epoch ms; the TTL attribute is compared in epoch seconds, as DynamoDB does.
 */
export class DynamoExpiredItems {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tables: {
      instances: string;
      tasks: string;
      fires: string;
      commands: string;
      triggers: string;
    },
  ) {}

  /**
   * Pages of the keys (and `also` attributes) of the items of `logical` that match `filter`,
   * read until `enough()` says so or the table ends.
   */
  private async scanPages(
    logical: Logical,
    filter: Condition,
    onPage: (items: Item[]) => Promise<void>,
    enough: () => boolean,
    also: string[] = [],
  ): Promise<void> {
    const attrs = [...keyNames(logical), ...also];
    const names: Record<string, string> = { ...filter.names };
    attrs.forEach((a, i) => {
      names[`#a${i}`] = a;
    });
    let start: Item | undefined;
    do {
      const r = await this.db.send(
        new ScanCommand({
          TableName: this.tables[logical],
          FilterExpression: filter.expression,
          ProjectionExpression: attrs.map((_, i) => `#a${i}`).join(", "),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: filter.values,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      await onPage(r.Items ?? []);
      start = r.LastEvaluatedKey;
    } while (start && !enough());
  }

  /** The condition "TTL attribute passed at `nowMs`", and `and` when given. */
  private expiredFilter(nowMs: number, and?: Condition): Condition {
    return {
      expression: `#ttl < :now${and ? ` AND ${and.expression}` : ""}`,
      names: { "#ttl": TTL_ATTRIBUTE, ...(and?.names ?? {}) },
      values: { ":now": Math.floor(nowMs / 1000), ...(and?.values ?? {}) },
    };
  }

  /** Up to `limit` instances whose TTL attribute passed at `nowMs` (epoch ms). */
  async expiredInstances(nowMs: number, limit: number): Promise<ExpiredInstance[]> {
    const out: ExpiredInstance[] = [];
    await this.scanPages(
      "instances",
      this.expiredFilter(nowMs),
      async (items) => {
        for (const i of items) {
          out.push({ instanceId: String(i.instanceId), workflow: String(i.workflow) });
        }
      },
      () => out.length >= limit,
      ["workflow"],
    );
    return out.slice(0, limit);
  }

  /** Whether the store has the instance (strongly consistent read). */
  async instanceExists(instanceId: string): Promise<boolean> {
    const r = await this.db.send(
      new GetCommand({
        TableName: this.tables.instances,
        Key: { instanceId },
        ProjectionExpression: "instanceId",
        ConsistentRead: true,
      }),
    );
    return r.Item !== undefined;
  }

  /**
   * Deletes an instance whose TTL attribute passed at `nowMs`, then every task instance of it
   * (attempts that never ended carry no TTL attribute of their own). The instance goes first,
   * conditionally: once it is gone nothing can rerun it, so its attempts and files may go.
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
   * Deletes up to `limit` task attempts whose TTL attribute passed at `nowMs` **and whose
   * instance is gone** (an attempt a late worker wrote after its instance was deleted). The
   * attempts of an instance that exists are left to it, whatever their own attribute says:
   * they go with the instance ({@link deleteInstance}). Reads the whole table if need be.
   * @returns how many were deleted.
   */
  async deleteOrphanedAttempts(nowMs: number, limit: number): Promise<number> {
    const exists = new Map<string, Promise<boolean>>();
    let n = 0;
    await this.scanPages(
      "tasks",
      this.expiredFilter(nowMs),
      async (items) => {
        for (const key of items) {
          if (n >= limit) return;
          const id = String(key.instanceId);
          if (!exists.has(id)) exists.set(id, this.instanceExists(id));
          if (await exists.get(id)) continue;
          if (await this.deleteIfExpired("tasks", key, nowMs)) n++;
        }
      },
      () => n >= limit,
    );
    return n;
  }

  /**
   * Deletes up to `limit` fire-ledger entries whose TTL attribute passed at `nowMs`. A
   * QUEUED_SERIAL entry is never deleted (it carries no attribute while it waits; older data
   * may): it is the only record of a run still to start.
   * @returns how many were deleted.
   */
  async deleteExpiredFires(nowMs: number, limit: number): Promise<number> {
    const notQueued: Condition = {
      expression: "#d <> :queued",
      names: { "#d": "decision" },
      values: { ":queued": "QUEUED_SERIAL" },
    };
    let n = 0;
    await this.scanPages(
      "fires",
      this.expiredFilter(nowMs, notQueued),
      async (items) => {
        for (const key of items) {
          if (n >= limit) return;
          if (await this.deleteIfExpired("fires", key, nowMs, notQueued)) n++;
        }
      },
      () => n >= limit,
    );
    return n;
  }

  /**
   * Deletes up to `limit` commands that are DONE since before `doneBefore` (epoch ms), and halt
   * markers last written before it (lib/store/dynamo-halt-markers.ts), whose instance is gone
   * (deleted by retention, or never created). A command of an instance that exists stays:
   * `start:<id>` is what keeps a start from being made twice. The delete is conditioned on the
   * command still being DONE (the marker not written again) that long.
   * @returns how many were deleted.
   */
  async deleteDoneCommands(doneBefore: number, limit: number): Promise<number> {
    const done = {
      expression: "(#s = :done AND doneAt < :before) OR markedAt < :before",
      names: { "#s": "state" },
      values: { ":done": "DONE", ":before": doneBefore },
    };
    let n = 0;
    await this.scanPages(
      "commands",
      done,
      async (items) => {
        for (const item of items) {
          if (n >= limit) return;
          if (await this.instanceExists(String(item.instanceId))) continue;
          const ok = await conditional(() =>
            this.db.send(
              new DeleteCommand({
                TableName: this.tables.commands,
                Key: { commandId: item.commandId },
                ConditionExpression: done.expression,
                ExpressionAttributeNames: done.names,
                ExpressionAttributeValues: done.values,
              }),
            ),
          );
          if (ok) n++;
        }
      },
      () => n >= limit,
      ["instanceId"],
    );
    return n;
  }

  /**
   * Deletes up to `limit` of the triggers' loop and rate counters (lib/store/dynamo-triggers.ts)
   * whose TTL attribute passed at `nowMs`; triggers themselves carry none.
   * @returns how many were deleted.
   */
  async deleteExpiredTriggerCounters(nowMs: number, limit: number): Promise<number> {
    let n = 0;
    await this.scanPages(
      "triggers",
      this.expiredFilter(nowMs),
      async (items) => {
        for (const key of items) {
          if (n >= limit) return;
          if (await this.deleteIfExpired("triggers", key, nowMs)) n++;
        }
      },
      () => n >= limit,
    );
    return n;
  }

  /** Deletes one item of `logical` if its TTL attribute still passed at `nowMs` (and `and`). */
  private deleteIfExpired(
    logical: Logical,
    key: Item,
    nowMs: number,
    and?: Condition,
  ): Promise<boolean> {
    const condition = this.expiredFilter(nowMs, and);
    return conditional(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.tables[logical],
          Key: key,
          ConditionExpression: condition.expression,
          ExpressionAttributeNames: condition.names,
          ExpressionAttributeValues: condition.values,
        }),
      ),
    );
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
        if (requests.length > 0) await delay(50 * 2 ** tries);
      }
    }
  }
}
