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
import { INDEX } from "../aws/resources.js";
import { ShoalError, validationError } from "../core/errors.js";
import type { ReleaseState, TaskState, WorkflowDefinition } from "../core/model.js";
import type {
  CommandRecord,
  InstanceRecord,
  InstanceSummaryRecord,
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

const badToken = () =>
  validationError([{ path: "nextToken", message: "is not a token this API returned" }]);

/** Decodes a token and checks it has exactly the key attributes of the index it pages. */
function decodeToken(token: string | undefined, keys: readonly string[]): Item | undefined {
  if (!token) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw badToken();
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) throw badToken();
  const item = v as Item;
  const names = Object.keys(item).sort();
  if (names.join() !== [...keys].sort().join()) throw badToken();
  if (!names.every((k) => typeof item[k] === "string" || typeof item[k] === "number")) {
    throw badToken();
  }
  return item;
}

/** The largest gzipped definition stored in one item (DynamoDB items hold 400 KB). */
export const MAX_STORED_DEFINITION_BYTES = 350 * 1024;

function strip<T>(item: Item, ...keys: string[]): T {
  const out = { ...item };
  for (const k of keys) delete out[k];
  return out as T;
}

export class DynamoStore implements Store {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tables: {
      workflows: string;
      commands: string;
      instances: string;
      tasks: string;
    },
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
    const def = JSON.parse(
      gunzipSync(r.Item.def as Uint8Array).toString("utf8"),
    ) as WorkflowDefinition;
    return { name, version, definition: def, createdAt: r.Item.createdAt as number };
  }

  async putDefinition(def: StoredDefinition): Promise<boolean> {
    // Gzipped: a 10,000-task definition stays well under DynamoDB's 400 KB item limit.
    const body = gzipSync(JSON.stringify(def.definition));
    if (body.length > MAX_STORED_DEFINITION_BYTES) {
      throw new ShoalError(
        "PayloadTooLarge",
        `the definition is too large to store: ${Math.ceil(body.length / 1024)} KiB compressed, at most ${MAX_STORED_DEFINITION_BYTES / 1024} KiB`,
      );
    }
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

  async setReleaseState(
    name: string,
    state: ReleaseState,
    now: number,
  ): Promise<WorkflowHead | undefined> {
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.tables.workflows,
          Key: { name, version: 0 },
          UpdateExpression: "SET releaseState = :s, updatedAt = :now",
          ConditionExpression: "attribute_exists(#n) AND attribute_not_exists(deleted)",
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

  /**
   * One page of a query. Asks for one item more than `limit`, so a token is returned only when
   * more items exist (API-v1.md); with a filter, DynamoDB's own LastEvaluatedKey is used.
   * @throws ShoalError ValidationError for a token that does not fit this query.
   */
  private async page(
    input: QueryCommandInput,
    limit: number,
    keys: readonly string[],
    nextToken?: string,
  ): Promise<Page<Item>> {
    const filtered = input.FilterExpression !== undefined;
    let r: { Items?: Item[]; LastEvaluatedKey?: Item };
    try {
      r = (await this.db.send(
        new QueryCommand({
          ...input,
          Limit: filtered ? limit : limit + 1,
          ExclusiveStartKey: decodeToken(nextToken, keys),
        }),
      )) as typeof r;
    } catch (e) {
      if (nextToken && (e as Error).name === "ValidationException") throw badToken();
      throw e;
    }
    const items = r.Items ?? [];
    if (filtered) return { items, nextToken: encodeToken(r.LastEvaluatedKey) };
    if (items.length <= limit) return { items };
    const page = items.slice(0, limit);
    const last = page[page.length - 1] as Item;
    return {
      items: page,
      nextToken: encodeToken(Object.fromEntries(keys.map((k) => [k, last[k]]))),
    };
  }

  async listWorkflows(limit: number, nextToken?: string): Promise<Page<WorkflowHead>> {
    const page = await this.page(
      {
        TableName: this.tables.workflows,
        IndexName: INDEX.workflowList,
        KeyConditionExpression: "listKey = :w",
        ExpressionAttributeValues: { ":w": "W" },
      },
      limit,
      ["listKey", "name", "version"],
      nextToken,
    );
    return { ...page, items: page.items.map((i) => strip<WorkflowHead>(i, "version", "listKey")) };
  }

  async deleteWorkflow(name: string): Promise<void> {
    const keys = await this.queryAll({
      TableName: this.tables.workflows,
      KeyConditionExpression: "#n = :n AND version > :zero",
      ExpressionAttributeNames: { "#n": "name" },
      ExpressionAttributeValues: { ":n": name, ":zero": 0 },
      ProjectionExpression: "#n, version",
    });
    for (let i = 0; i < keys.length; i += 25) {
      let items: Item[] = keys.slice(i, i + 25).map((k) => ({ DeleteRequest: { Key: k } }));
      for (let tries = 0; items.length > 0 && tries < 10; tries++) {
        const r = await this.db.send(
          new BatchWriteCommand({ RequestItems: { [this.tables.workflows]: items as never } }),
        );
        items = (r.UnprocessedItems?.[this.tables.workflows] ?? []) as Item[];
      }
    }
    // The head becomes a tombstone (unlisted) that remembers the last version number.
    await this.db.send(
      new UpdateCommand({
        TableName: this.tables.workflows,
        Key: { name, version: 0 },
        UpdateExpression: "SET deleted = :t REMOVE listKey, description",
        ConditionExpression: "attribute_exists(#n)",
        ExpressionAttributeNames: { "#n": "name" },
        ExpressionAttributeValues: { ":t": true },
      }),
    );
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

  async claimCommand(
    commandId: string,
    now: number,
    staleMs: number,
  ): Promise<CommandRecord | undefined> {
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.tables.commands,
          Key: { commandId },
          UpdateExpression: "SET claimedAt = :now",
          ConditionExpression:
            "#s = :pending AND (attribute_not_exists(claimedAt) OR claimedAt < :stale)",
          ExpressionAttributeNames: { "#s": "state" },
          ExpressionAttributeValues: {
            ":pending": "PENDING",
            ":now": now,
            ":stale": now - staleMs,
          },
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

  async releaseCommandClaim(commandId: string, claimedAt: number): Promise<void> {
    await this.conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tables.commands,
          Key: { commandId },
          UpdateExpression: "REMOVE claimedAt",
          ConditionExpression: "claimedAt = :mine",
          ExpressionAttributeValues: { ":mine": claimedAt },
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

  async markResignalled(commandId: string, resignals: number, at: number): Promise<void> {
    await this.conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.tables.commands,
          Key: { commandId },
          UpdateExpression: "SET resignals = :r, lastSignalAt = :at",
          ConditionExpression: "attribute_exists(commandId)",
          ExpressionAttributeValues: { ":r": resignals, ":at": at },
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
      new GetCommand({
        TableName: this.tables.instances,
        Key: { instanceId },
        ConsistentRead: true,
      }),
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

  async listInstances(q: ListInstancesQuery): Promise<Page<InstanceSummaryRecord>> {
    const byWorkflow = q.workflow !== undefined;
    const page = await this.page(
      {
        TableName: this.tables.instances,
        IndexName: byWorkflow ? INDEX.instancesByWorkflow : INDEX.instancesByCreated,
        KeyConditionExpression: byWorkflow ? "workflow = :k" : "listKey = :k",
        ...(q.state
          ? { FilterExpression: "#s = :s", ExpressionAttributeNames: { "#s": "state" } }
          : {}),
        ExpressionAttributeValues: {
          ":k": byWorkflow ? q.workflow : "I",
          ...(q.state ? { ":s": q.state } : {}),
        },
        ScanIndexForward: false,
      },
      q.limit,
      [byWorkflow ? "workflow" : "listKey", "createdKey", "instanceId"],
      q.nextToken,
    );
    return {
      ...page,
      items: page.items.map((i) => strip<InstanceSummaryRecord>(i, "listKey", "createdKey")),
    };
  }

  async hasPendingStart(workflow: string): Promise<boolean> {
    const items = await this.queryAll({
      TableName: this.tables.commands,
      IndexName: INDEX.pendingCommands,
      KeyConditionExpression: "pendingShard = :p",
      FilterExpression: "workflow = :w AND #t = :start",
      ExpressionAttributeNames: { "#t": "type" },
      ExpressionAttributeValues: {
        ":p": PENDING_SHARD,
        ":w": workflow,
        ":start": "START_WORKFLOW",
      },
      ProjectionExpression: "commandId",
    });
    return items.length > 0;
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

  async getTaskInstance(
    instanceId: string,
    code: string,
    attempt: number,
  ): Promise<TaskInstanceRecord | undefined> {
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
      sets.push("leaseShard = :shard");
      values[":shard"] = LEASE_SHARD;
    }
    if (opts.removeLease) removes.push("leaseShard", "leaseExpiresAt");
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
          TableName: this.tables.tasks,
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
