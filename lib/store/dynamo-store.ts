/**
 * Store on DynamoDB: single-item conditional writes (PutItem/UpdateItem/DeleteItem with a
 * ConditionExpression), GetItem, Query and BatchWriteItem only — no transactions, streams, TTL
 * or PartiQL (DynamoDB Developer Guide, "Condition expressions"). Runs unchanged on dynalite.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { validationError } from "../core/errors.js";
import type { ReleaseState, TaskState, WorkflowDefinition } from "../core/model.js";
import { INDEX } from "../aws/resources.js";
import type {
  CommandRecord,
  InstanceRecord,
  Page,
  StoredDefinition,
  TaskInstanceRecord,
  WorkflowHead,
} from "./records.js";
import type { ListInstancesQuery, Store } from "./store.js";

type Item = Record<string, unknown>;
const LEASE_SHARD = "L0";
const PENDING_SHARD = "P0";
const FINAL_INSTANCE = ["STOPPED", "SUCCESS", "FAILURE"];

/** `code#0001`: sorts attempts in order within a task. */
export function taskKey(code: string, attempt: number): string {
  return `${code}#${String(attempt).padStart(4, "0")}`;
}

function isConditionFailure(e: unknown): boolean {
  return (
    e instanceof ConditionalCheckFailedException ||
    (e as { name?: string })?.name === "ConditionalCheckFailedException"
  );
}

function encodeToken(key: Item | undefined): string | undefined {
  return key ? Buffer.from(JSON.stringify(key)).toString("base64url") : undefined;
}

function decodeToken(token: string | undefined): Item | undefined {
  if (!token) return undefined;
  try {
    const v = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Item;
  } catch {}
  throw validationError([{ path: "nextToken", message: "is not a token this API returned" }]);
}

function strip<T>(item: Item, ...keys: string[]): T {
  const out = { ...item };
  for (const k of keys) delete out[k];
  return out as T;
}

export class DynamoStore implements Store {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tables: { workflows: string; commands: string; instances: string; tasks: string },
  ) {}

  private async conditional(run: () => Promise<unknown>): Promise<boolean> {
    try {
      await run();
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  private async queryAll(input: QueryCommandInput): Promise<Item[]> {
    const out: Item[] = [];
    let start: Item | undefined;
    do {
      const r = await this.db.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
      out.push(...((r.Items ?? []) as Item[]));
      start = r.LastEvaluatedKey as Item | undefined;
    } while (start);
    return out;
  }

  // ---- workflows ----

  async getWorkflowHead(name: string): Promise<WorkflowHead | undefined> {
    const r = await this.db.send(
      new GetCommand({ TableName: this.tables.workflows, Key: { name, version: 0 } }),
    );
    return r.Item ? strip<WorkflowHead>(r.Item, "version", "listKey") : undefined;
  }

  async getDefinition(name: string, version: number): Promise<StoredDefinition | undefined> {
    const r = await this.db.send(
      new GetCommand({ TableName: this.tables.workflows, Key: { name, version } }),
    );
    if (!r.Item || version < 1) return undefined;
    const def = JSON.parse(gunzipSync(r.Item.def as Uint8Array).toString("utf8")) as WorkflowDefinition;
    return { name, version, definition: def, createdAt: r.Item.createdAt as number };
  }

  async putDefinition(def: StoredDefinition): Promise<boolean> {
    // Gzipped: a 10,000-task definition stays well under DynamoDB's 400 KB item limit.
    const body = gzipSync(JSON.stringify(def.definition));
    return this.conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tables.workflows,
          Item: { name: def.name, version: def.version, def: body, createdAt: def.createdAt },
          ConditionExpression: "attribute_not_exists(#n)",
          ExpressionAttributeNames: { "#n": "name" },
        }),
      ),
    );
  }

  async putWorkflowHead(head: WorkflowHead, expectedLatest: number): Promise<boolean> {
    return this.conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tables.workflows,
          Item: { ...head, version: 0, listKey: "W" },
          ConditionExpression:
            expectedLatest === 0 ? "attribute_not_exists(#n)" : "latestVersion = :expected",
          ...(expectedLatest === 0
            ? { ExpressionAttributeNames: { "#n": "name" } }
            : { ExpressionAttributeValues: { ":expected": expectedLatest } }),
        }),
      ),
    );
  }

  async setReleaseState(name: string, state: ReleaseState, now: number): Promise<WorkflowHead | undefined> {
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.tables.workflows,
          Key: { name, version: 0 },
          UpdateExpression: "SET releaseState = :s, updatedAt = :now",
          ConditionExpression: "attribute_exists(#n)",
          ExpressionAttributeNames: { "#n": "name" },
          ExpressionAttributeValues: { ":s": state, ":now": now },
          ReturnValues: "ALL_NEW",
        }),
      );
      return strip<WorkflowHead>(r.Attributes ?? {}, "version", "listKey");
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  async listWorkflows(limit: number, nextToken?: string): Promise<Page<WorkflowHead>> {
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.tables.workflows,
        IndexName: INDEX.workflowList,
        KeyConditionExpression: "listKey = :w",
        ExpressionAttributeValues: { ":w": "W" },
        Limit: limit,
        ExclusiveStartKey: decodeToken(nextToken),
      }),
    );
    return {
      items: (r.Items ?? []).map((i) => strip<WorkflowHead>(i, "version", "listKey")),
      nextToken: encodeToken(r.LastEvaluatedKey),
    };
  }

  async deleteWorkflow(name: string): Promise<void> {
    const keys = await this.queryAll({
      TableName: this.tables.workflows,
      KeyConditionExpression: "#n = :n",
      ExpressionAttributeNames: { "#n": "name" },
      ExpressionAttributeValues: { ":n": name },
      ProjectionExpression: "#n, version",
    });
    // Head last, so a crash half-way leaves a listed workflow that can be deleted again.
    keys.sort((a, b) => (b.version as number) - (a.version as number));
    for (let i = 0; i < keys.length; i += 25) {
      let items: Item[] = keys.slice(i, i + 25).map((k) => ({ DeleteRequest: { Key: k } }));
      for (let tries = 0; items.length > 0 && tries < 10; tries++) {
        const r = await this.db.send(
          new BatchWriteCommand({ RequestItems: { [this.tables.workflows]: items as never } }),
        );
        items = (r.UnprocessedItems?.[this.tables.workflows] ?? []) as Item[];
      }
    }
  }

  // ---- commands ----

  putCommand(cmd: CommandRecord): Promise<boolean> {
    return this.conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tables.commands,
          Item: { ...cmd, pendingShard: PENDING_SHARD },
          ConditionExpression: "attribute_not_exists(commandId)",
        }),
      ),
    );
  }

  async getCommand(commandId: string): Promise<CommandRecord | undefined> {
    const r = await this.db.send(
      new GetCommand({ TableName: this.tables.commands, Key: { commandId } }),
    );
    return r.Item ? strip<CommandRecord>(r.Item, "pendingShard") : undefined;
  }

  async claimCommand(commandId: string, now: number, staleMs: number): Promise<CommandRecord | undefined> {
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.tables.commands,
          Key: { commandId },
          UpdateExpression: "SET claimedAt = :now",
          ConditionExpression:
            "#s = :pending AND (attribute_not_exists(claimedAt) OR claimedAt < :stale)",
          ExpressionAttributeNames: { "#s": "state" },
          ExpressionAttributeValues: { ":pending": "PENDING", ":now": now, ":stale": now - staleMs },
          ReturnValues: "ALL_NEW",
        }),
      );
      return strip<CommandRecord>(r.Attributes ?? {}, "pendingShard");
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  async completeCommand(commandId: string, now: number): Promise<void> {
    await this.conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tables.commands,
          Key: { commandId },
          UpdateExpression: "SET #s = :done, doneAt = :now REMOVE pendingShard",
          ConditionExpression: "#s = :pending",
          ExpressionAttributeNames: { "#s": "state" },
          ExpressionAttributeValues: { ":done": "DONE", ":pending": "PENDING", ":now": now },
        }),
      ),
    );
  }

  async listPendingCommands(before: number, limit: number): Promise<CommandRecord[]> {
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.tables.commands,
        IndexName: INDEX.pendingCommands,
        KeyConditionExpression: "pendingShard = :p AND createdAt < :before",
        ExpressionAttributeValues: { ":p": PENDING_SHARD, ":before": before },
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((i) => strip<CommandRecord>(i, "pendingShard"));
  }

  async markResignalled(commandId: string, resignals: number): Promise<void> {
    await this.conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tables.commands,
          Key: { commandId },
          UpdateExpression: "SET resignals = :r",
          ConditionExpression: "attribute_exists(commandId)",
          ExpressionAttributeValues: { ":r": resignals },
        }),
      ),
    );
  }

  // ---- instances ----

  private instanceItem(inst: InstanceRecord): Item {
    return {
      ...inst,
      listKey: "I",
      createdKey: `${new Date(inst.createdAt).toISOString()}#${inst.instanceId}`,
    };
  }

  putInstance(inst: InstanceRecord): Promise<boolean> {
    return this.conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tables.instances,
          Item: this.instanceItem(inst),
          ConditionExpression: "attribute_not_exists(instanceId)",
        }),
      ),
    );
  }

  async getInstance(instanceId: string): Promise<InstanceRecord | undefined> {
    const r = await this.db.send(
      new GetCommand({ TableName: this.tables.instances, Key: { instanceId }, ConsistentRead: true }),
    );
    return r.Item ? strip<InstanceRecord>(r.Item, "listKey", "createdKey") : undefined;
  }

  updateInstance(inst: InstanceRecord): Promise<boolean> {
    return this.conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tables.instances,
          Item: this.instanceItem(inst),
          ConditionExpression: "rev = :prev",
          ExpressionAttributeValues: { ":prev": inst.rev - 1 },
        }),
      ),
    );
  }

  async listInstances(q: ListInstancesQuery): Promise<Page<InstanceRecord>> {
    const byWorkflow = q.workflow !== undefined;
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.tables.instances,
        IndexName: byWorkflow ? INDEX.instancesByWorkflow : INDEX.instancesByCreated,
        KeyConditionExpression: byWorkflow ? "workflow = :k" : "listKey = :k",
        ...(q.state ? { FilterExpression: "#s = :s", ExpressionAttributeNames: { "#s": "state" } } : {}),
        ExpressionAttributeValues: { ":k": byWorkflow ? q.workflow : "I", ...(q.state ? { ":s": q.state } : {}) },
        ScanIndexForward: false,
        Limit: q.limit,
        ExclusiveStartKey: decodeToken(q.nextToken),
      }),
    );
    return {
      items: (r.Items ?? []).map((i) => strip<InstanceRecord>(i, "listKey", "createdKey")),
      nextToken: encodeToken(r.LastEvaluatedKey),
    };
  }

  async hasUnfinishedInstances(workflow: string): Promise<boolean> {
    const items = await this.queryAll({
      TableName: this.tables.instances,
      IndexName: INDEX.instancesByWorkflow,
      KeyConditionExpression: "workflow = :w",
      FilterExpression: "NOT (#s IN (:a, :b, :c))",
      ExpressionAttributeNames: { "#s": "state" },
      ExpressionAttributeValues: {
        ":w": workflow,
        ":a": FINAL_INSTANCE[0],
        ":b": FINAL_INSTANCE[1],
        ":c": FINAL_INSTANCE[2],
      },
      ProjectionExpression: "instanceId",
    });
    return items.length > 0;
  }

  // ---- task instances ----

  private taskItem(t: TaskInstanceRecord): Item {
    return { ...t, taskKey: taskKey(t.code, t.attempt) };
  }

  putTaskInstance(task: TaskInstanceRecord): Promise<boolean> {
    return this.conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.tables.tasks,
          Item: this.taskItem(task),
          ConditionExpression: "attribute_not_exists(taskKey)",
        }),
      ),
    );
  }

  async getTaskInstance(instanceId: string, code: string, attempt: number): Promise<TaskInstanceRecord | undefined> {
    const r = await this.db.send(
      new GetCommand({
        TableName: this.tables.tasks,
        Key: { instanceId, taskKey: taskKey(code, attempt) },
        ConsistentRead: true,
      }),
    );
    return r.Item ? strip<TaskInstanceRecord>(r.Item, "taskKey", "leaseShard") : undefined;
  }

  async listTaskInstances(instanceId: string): Promise<TaskInstanceRecord[]> {
    const items = await this.queryAll({
      TableName: this.tables.tasks,
      KeyConditionExpression: "instanceId = :i",
      ExpressionAttributeValues: { ":i": instanceId },
    });
    return items.map((i) => strip<TaskInstanceRecord>(i, "taskKey", "leaseShard"));
  }

  async listAttempts(instanceId: string, code: string): Promise<TaskInstanceRecord[]> {
    const items = await this.queryAll({
      TableName: this.tables.tasks,
      KeyConditionExpression: "instanceId = :i AND begins_with(taskKey, :c)",
      ExpressionAttributeValues: { ":i": instanceId, ":c": `${code}#` },
    });
    return items.map((i) => strip<TaskInstanceRecord>(i, "taskKey", "leaseShard"));
  }

  async updateTask(
    key: { instanceId: string; code: string; attempt: number },
    from: readonly TaskState[],
    changes: Partial<TaskInstanceRecord>,
    opts: { worker?: string; removeLease?: boolean; leaseExpiredBefore?: number } = {},
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
      sets.push("leaseShard = :shard");
      values[":shard"] = LEASE_SHARD;
    }
    if (opts.removeLease) removes.push("leaseShard", "leaseExpiresAt");
    const states = from.map((s, i) => {
      values[`:from${i}`] = s;
      return `:from${i}`;
    });
    let condition = `#state IN (${states.join(", ")})`;
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
          TableName: this.tables.tasks,
          Key: { instanceId: key.instanceId, taskKey: taskKey(key.code, key.attempt) },
          UpdateExpression:
            (sets.length ? `SET ${sets.join(", ")}` : "") +
            (removes.length ? ` REMOVE ${removes.join(", ")}` : ""),
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: "ALL_NEW",
        }),
      );
      return strip<TaskInstanceRecord>(r.Attributes ?? {}, "taskKey", "leaseShard");
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  async listExpiredLeases(now: number, limit: number): Promise<TaskInstanceRecord[]> {
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.tables.tasks,
        IndexName: INDEX.leases,
        KeyConditionExpression: "leaseShard = :s AND leaseExpiresAt < :now",
        ExpressionAttributeValues: { ":s": LEASE_SHARD, ":now": now },
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((i) => strip<TaskInstanceRecord>(i, "taskKey", "leaseShard"));
  }
}
