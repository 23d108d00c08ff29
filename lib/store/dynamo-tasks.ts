/**
 * The tasks table: one item per attempt of a task of an instance (sort key `taskKey`); a
 * RUNNING attempt with a lease sits in the leases index (shard `L0`, or its worker lease's shard
 * once handed to it, dynamo-worker-leases.ts), and so does an attempt over whose task event is
 * not known to be sent (shard `E0`, the outbox of task events).
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { INDEX, TTL_ATTRIBUTE } from "../aws/resources.js";
import { isFinalTaskState, type TaskState } from "../core/model.js";
import { batchGet } from "./dynamo-batch.js";
import {
  conditional,
  expiresAt,
  type Item,
  isConditionFailure,
  queryAll,
  strip,
} from "./dynamo-common.js";
import { workerLeaseShard } from "./dynamo-worker-leases.js";
import type { TaskInstanceRecord } from "./records.js";
import type { TaskAttemptKey } from "./store.js";

/** The leases index's shard of RUNNING attempts (and of failed-over ones until their event is sent). */
const LEASE_SHARD = "L0";
/** The leases index's shard of attempts over whose task event is not known to be sent. */
const EVENT_SHARD = "E0";

/** `code#0001`: sorts attempts in order within a task. */
export function taskKey(code: string, attempt: number): string {
  return `${code}#${String(attempt).padStart(4, "0")}`;
}

export class DynamoTasks {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /**
     * Days a finished attempt is kept, counted from its own end; 0/absent: forever. On AWS
     * DynamoDB TTL deletes it then, even while its instance still runs or may be recovered
     * (docs/aws.md "Retention and protection"); standalone deletes attempts only with their
     * instance (lib/store/dynamo-expired.ts).
     */
    private readonly retentionDays?: number,
  ) {}

  /** TTL of an attempt that ends with this write (epoch s), else undefined. */
  private ttl(state: TaskState | undefined, endedAt: number | undefined) {
    return state && isFinalTaskState(state) ? expiresAt(endedAt, this.retentionDays) : undefined;
  }

  private taskItem(t: TaskInstanceRecord): Item {
    const ttl = this.ttl(t.state, t.endedAt);
    return {
      ...t,
      taskKey: taskKey(t.code, t.attempt),
      ...(ttl !== undefined ? { [TTL_ATTRIBUTE]: ttl } : {}),
    };
  }

  putTaskInstance(task: TaskInstanceRecord): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: this.taskItem(task),
          ConditionExpression: "attribute_not_exists(taskKey)",
        }),
      ),
    );
  }

  async getTaskInstance(
    instanceId: string,
    code: string,
    attempt: number,
  ): Promise<TaskInstanceRecord | undefined> {
    const r = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: { instanceId, taskKey: taskKey(code, attempt) },
        ConsistentRead: true,
      }),
    );
    return r.Item
      ? strip<TaskInstanceRecord>(r.Item, "taskKey", "leaseShard", TTL_ATTRIBUTE)
      : undefined;
  }

  async listTaskInstances(instanceId: string): Promise<TaskInstanceRecord[]> {
    const items = await queryAll(this.db, {
      TableName: this.table,
      KeyConditionExpression: "instanceId = :i",
      ExpressionAttributeValues: { ":i": instanceId },
    });
    return items.map((i) => strip<TaskInstanceRecord>(i, "taskKey", "leaseShard", TTL_ATTRIBUTE));
  }

  /** The state of each attempt of `keys` that exists, by BatchGetItem (store.ts). */
  async getTaskStates(
    keys: readonly TaskAttemptKey[],
  ): Promise<(TaskAttemptKey & { state: TaskState })[]> {
    const items = await batchGet(
      this.db,
      this.table,
      keys.map((k) => ({ instanceId: k.instanceId, taskKey: taskKey(k.code, k.attempt) })),
      ["instanceId", "code", "attempt", "state"],
    );
    return items as unknown as (TaskAttemptKey & { state: TaskState })[];
  }

  /** The OUT values of each attempt of `keys` that has some, by consistent BatchGetItem (store.ts). */
  async getTaskOutputs(
    keys: readonly TaskAttemptKey[],
  ): Promise<(TaskAttemptKey & { outputs: Record<string, string> })[]> {
    const items = await batchGet(
      this.db,
      this.table,
      keys.map((k) => ({ instanceId: k.instanceId, taskKey: taskKey(k.code, k.attempt) })),
      ["instanceId", "code", "attempt", "outputs"],
      true,
    );
    return items.filter((i) => i.outputs !== undefined) as unknown as (TaskAttemptKey & {
      outputs: Record<string, string>;
    })[];
  }

  async listAttempts(instanceId: string, code: string): Promise<TaskInstanceRecord[]> {
    const items = await queryAll(this.db, {
      TableName: this.table,
      KeyConditionExpression: "instanceId = :i AND begins_with(taskKey, :c)",
      ExpressionAttributeValues: { ":i": instanceId, ":c": `${code}#` },
    });
    return items.map((i) => strip<TaskInstanceRecord>(i, "taskKey", "leaseShard", TTL_ATTRIBUTE));
  }

  async updateTask(
    key: { instanceId: string; code: string; attempt: number },
    from: readonly TaskState[],
    changes: Partial<TaskInstanceRecord>,
    opts: {
      worker?: string;
      removeLease?: boolean;
      leaseExpiredBefore?: number;
      createWith?: TaskInstanceRecord;
    } = {},
  ): Promise<TaskInstanceRecord | undefined> {
    const names: Record<string, string> = { "#state": "state" };
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    const removes: string[] = [];
    let n = 0;
    for (const [k, v] of Object.entries(changes)) {
      if (v === undefined) continue;
      names[`#f${n}`] = k;
      values[`:v${n}`] = v;
      sets.push(`#f${n} = :v${n}`);
      n++;
    }
    if (changes.leaseExpiresAt !== undefined) {
      // A final state's "lease" is its event's deadline: the outbox, a shard of its own. An
      // attempt handed to a worker lease sits in that lease's shard (dynamo-worker-leases.ts).
      sets.push("leaseShard = :shard");
      values[":shard"] =
        changes.state && isFinalTaskState(changes.state)
          ? EVENT_SHARD
          : changes.workerLease !== undefined
            ? workerLeaseShard(changes.workerLease)
            : LEASE_SHARD;
    }
    if (opts.removeLease) removes.push("leaseShard", "leaseExpiresAt");
    const ttl = this.ttl(changes.state, changes.endedAt);
    if (ttl !== undefined) {
      names["#ttl"] = TTL_ATTRIBUTE;
      values[":ttl"] = ttl;
      sets.push("#ttl = :ttl");
    }
    const states = from.map((s, i) => {
      values[`:from${i}`] = s;
      return `:from${i}`;
    });
    let condition = `#state IN (${states.join(", ")})`;
    if (opts.createWith) {
      // Fields of a missing item: set only where absent, so an existing item keeps its own.
      for (const [k, v] of Object.entries(opts.createWith)) {
        if (k in changes || k === "instanceId" || k === "state" || v === undefined) continue;
        names[`#c${n}`] = k;
        values[`:c${n}`] = v;
        sets.push(`#c${n} = if_not_exists(#c${n}, :c${n})`);
        n++;
      }
      condition = `(attribute_not_exists(taskKey) OR ${condition})`;
    }
    if (opts.worker !== undefined) {
      names["#worker"] = "worker";
      values[":worker"] = opts.worker;
      condition += " AND #worker = :worker";
    }
    if (opts.leaseExpiredBefore !== undefined) {
      values[":expiredBefore"] = opts.leaseExpiredBefore;
      condition += " AND leaseExpiresAt < :expiredBefore";
    }
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { instanceId: key.instanceId, taskKey: taskKey(key.code, key.attempt) },
          UpdateExpression: [
            sets.length ? `SET ${sets.join(", ")}` : "",
            removes.length ? `REMOVE ${removes.join(", ")}` : "",
          ]
            .filter(Boolean)
            .join(" "),
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: "ALL_NEW",
        }),
      );
      return strip<TaskInstanceRecord>(r.Attributes ?? {}, "taskKey", "leaseShard", TTL_ATTRIBUTE);
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  listExpiredLeases(now: number, limit: number): Promise<TaskInstanceRecord[]> {
    return this.listDue(LEASE_SHARD, now, limit);
  }

  listOverdueTaskEvents(now: number, limit: number): Promise<TaskInstanceRecord[]> {
    return this.listDue(EVENT_SHARD, now, limit);
  }

  /** The items of one shard of the leases index whose deadline is before `now`, oldest first. */
  private async listDue(shard: string, now: number, limit: number): Promise<TaskInstanceRecord[]> {
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: INDEX.leases,
        KeyConditionExpression: "leaseShard = :s AND leaseExpiresAt < :now",
        ExpressionAttributeValues: { ":s": shard, ":now": now },
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((i) =>
      strip<TaskInstanceRecord>(i, "taskKey", "leaseShard", TTL_ATTRIBUTE),
    );
  }
}
