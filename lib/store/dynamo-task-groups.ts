/**
 * The task-groups table (partition key `pk`, sort key `sk`):
 * - group heads: `pk = "groups"`, `sk = <name>`, with capacity, description, createdAt,
 *   updatedAt (and `deletingSince` while a delete checks the group is idle);
 * - per group, partition `pk = "g#<name>"`:
 *   - slot items `sk = "slot#<index, 5 digits>"` with `holder` = `<instanceId>#<code>#<attempt>`
 *     and `heldSince` (ms); an item exists only while the slot is held;
 *   - waiter items `sk = "wait#<waiterOrderKey>"`, so a Query returns the next waiter first.
 *
 * Single-item conditional writes only (PutItem/UpdateItem/DeleteItem with a ConditionExpression),
 * GetItem and Query, all reads strongly consistent: the gate's reasoning (a write followed by a
 * read sees every write that finished before it) needs them (DynamoDB Developer Guide, "Read
 * consistency"). A failed condition returns false/undefined instead of throwing.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import {
  conditional,
  type Item,
  isConditionFailure,
  page,
  queryAll,
  strip,
} from "./dynamo-common.js";
import type { Page } from "./records.js";
import {
  type DeleteGroupResult,
  holderId,
  MAX_WAITER_PAYLOAD_BYTES,
  parseHolderId,
  type TaskGroupCounts,
  type TaskGroupHolder,
  type TaskGroupRecord,
  type TaskGroupSlot,
  type TaskGroupStore,
  type TaskGroupWaiter,
  type TaskGroupWaiterKey,
  waiterOrderKey,
} from "./task-groups.js";

const HEADS = "groups";
const SLOT = "slot#";
const WAIT = "wait#";
/** Slot indexes have 5 digits. */
const MAX_SLOT_INDEX = 99_999;

const partition = (group: string) => `g#${group}`;

function slotKey(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index > MAX_SLOT_INDEX) {
    throw new RangeError(`slot index must be a whole number 0..${MAX_SLOT_INDEX}: ${index}`);
  }
  return `${SLOT}${String(index).padStart(5, "0")}`;
}

const waiterKey = (w: TaskGroupWaiterKey) => ({
  pk: partition(w.group),
  sk: `${WAIT}${waiterOrderKey(w)}`,
});

export class DynamoTaskGroups implements TaskGroupStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  // ---- group heads ----

  async putGroup(g: TaskGroupRecord): Promise<{ created: boolean; group: TaskGroupRecord }> {
    // Create-if-absent, else update-if-present: each step is conditional, so a delete between
    // the two sends us round again instead of resurrecting half a record.
    for (let tries = 0; tries < 5; tries++) {
      const { deletingSince: _drop, ...record } = g;
      const created = await conditional(() =>
        this.db.send(
          new PutCommand({
            TableName: this.table,
            Item: { ...record, pk: HEADS, sk: g.name },
            ConditionExpression: "attribute_not_exists(sk)",
          }),
        ),
      );
      if (created) return { created: true, group: record };
      try {
        const described = g.description !== undefined;
        const r = await this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: HEADS, sk: g.name },
            // Aliases: CAPACITY is a DynamoDB reserved word.
            UpdateExpression: `SET #c = :c, updatedAt = :u${described ? ", #d = :d" : ""} REMOVE deletingSince${described ? "" : ", #d"}`,
            ConditionExpression: "attribute_exists(sk)",
            ExpressionAttributeNames: { "#c": "capacity", "#d": "description" },
            ExpressionAttributeValues: {
              ":c": g.capacity,
              ":u": g.updatedAt,
              ...(described ? { ":d": g.description } : {}),
            },
            ReturnValues: "ALL_NEW",
          }),
        );
        return { created: false, group: strip<TaskGroupRecord>(r.Attributes ?? {}, "pk", "sk") };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
    }
    throw new Error(`task group '${g.name}' is being created and deleted concurrently`);
  }

  async getGroup(name: string): Promise<TaskGroupRecord | undefined> {
    const r = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: HEADS, sk: name }, ConsistentRead: true }),
    );
    return r.Item ? strip<TaskGroupRecord>(r.Item, "pk", "sk") : undefined;
  }

  async listGroups(limit: number, nextToken?: string): Promise<Page<TaskGroupRecord>> {
    const found = await page(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": HEADS },
        ConsistentRead: true,
      },
      limit,
      ["pk", "sk"],
      nextToken,
    );
    return { ...found, items: found.items.map((i) => strip<TaskGroupRecord>(i, "pk", "sk")) };
  }

  async deleteGroup(name: string, now: number): Promise<DeleteGroupResult> {
    const key = { pk: HEADS, sk: name };
    const marked = await conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          UpdateExpression: "SET deletingSince = :now",
          ConditionExpression: "attribute_exists(sk)",
          ExpressionAttributeValues: { ":now": now },
        }),
      ),
    );
    if (!marked) return "not-found";
    // Slot keys sort before waiter keys: the first item of the partition says which one blocks.
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": partition(name) },
        ProjectionExpression: "sk",
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    const first = (r.Items?.[0] as Item | undefined)?.sk as string | undefined;
    const mine = { ":now": now };
    if (first !== undefined) {
      await conditional(() =>
        this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: key,
            UpdateExpression: "REMOVE deletingSince",
            ConditionExpression: "deletingSince = :now",
            ExpressionAttributeValues: mine,
          }),
        ),
      );
      return first.startsWith(SLOT) ? "slot-held" : "waiting";
    }
    const deleted = await conditional(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: key,
          ConditionExpression: "deletingSince = :now",
          ExpressionAttributeValues: mine,
        }),
      ),
    );
    return deleted ? "deleted" : "changed";
  }

  // ---- slots ----

  async listSlots(group: string): Promise<TaskGroupSlot[]> {
    const items = await queryAll(this.db, this.prefixQuery(group, SLOT));
    const slots: TaskGroupSlot[] = [];
    for (const i of items) {
      const holder = parseHolderId(String(i.holder));
      if (!holder) continue;
      slots.push({
        index: Number((i.sk as string).slice(SLOT.length)),
        holder,
        heldSince: i.heldSince as number,
      });
    }
    return slots;
  }

  takeSlot(group: string, index: number, holder: TaskGroupHolder, now: number): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            pk: partition(group),
            sk: slotKey(index),
            holder: holderId(holder),
            heldSince: now,
          },
          ConditionExpression: "attribute_not_exists(#h)",
          ExpressionAttributeNames: { "#h": "holder" },
        }),
      ),
    );
  }

  freeSlot(group: string, index: number, holder: TaskGroupHolder): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { pk: partition(group), sk: slotKey(index) },
          ConditionExpression: "#h = :h",
          ExpressionAttributeNames: { "#h": "holder" },
          ExpressionAttributeValues: { ":h": holderId(holder) },
        }),
      ),
    );
  }

  // ---- waiters ----

  async putWaiter(w: TaskGroupWaiter): Promise<void> {
    const key = waiterKey(w);
    if (Buffer.byteLength(w.payload) >= MAX_WAITER_PAYLOAD_BYTES) {
      throw new RangeError(
        `waiter payload must be under ${MAX_WAITER_PAYLOAD_BYTES} bytes: ${Buffer.byteLength(w.payload)}`,
      );
    }
    await this.db.send(new PutCommand({ TableName: this.table, Item: { ...w, ...key } }));
  }

  async getWaiter(key: TaskGroupWaiterKey): Promise<TaskGroupWaiter | undefined> {
    const r = await this.db.send(
      new GetCommand({ TableName: this.table, Key: waiterKey(key), ConsistentRead: true }),
    );
    return r.Item ? strip<TaskGroupWaiter>(r.Item, "pk", "sk", "claimToken") : undefined;
  }

  async firstWaiters(group: string, limit: number): Promise<TaskGroupWaiter[]> {
    if (limit < 1) return [];
    const r = await this.db.send(
      new QueryCommand({
        ...this.prefixQuery(group, WAIT),
        Limit: limit,
      }),
    );
    return ((r.Items ?? []) as Item[]).map((i) =>
      strip<TaskGroupWaiter>(i, "pk", "sk", "claimToken"),
    );
  }

  deleteWaiter(key: TaskGroupWaiterKey): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: waiterKey(key),
          ConditionExpression: "attribute_exists(sk)",
        }),
      ),
    );
  }

  async claimWaiter(
    key: TaskGroupWaiterKey,
    token: string,
    now: number,
    staleBefore: number,
  ): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: waiterKey(key),
          UpdateExpression: "SET claimedAt = :now, claimToken = :t",
          ConditionExpression:
            "attribute_exists(sk) AND (attribute_not_exists(claimedAt) OR claimedAt < :stale)",
          ExpressionAttributeValues: { ":now": now, ":t": token, ":stale": staleBefore },
        }),
      ),
    );
  }

  async unclaimWaiter(key: TaskGroupWaiterKey, token: string): Promise<void> {
    await conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: waiterKey(key),
          UpdateExpression: "REMOVE claimedAt, claimToken",
          ConditionExpression: "claimToken = :t",
          ExpressionAttributeValues: { ":t": token },
        }),
      ),
    );
  }

  async counts(group: string): Promise<TaskGroupCounts> {
    const [used, waiting] = await Promise.all([this.count(group, SLOT), this.count(group, WAIT)]);
    return { used, waiting };
  }

  // ---- helpers ----

  private prefixQuery(group: string, prefix: string): QueryCommandInput {
    return {
      TableName: this.table,
      KeyConditionExpression: "pk = :p AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":p": partition(group), ":prefix": prefix },
      ConsistentRead: true,
    };
  }

  private async count(group: string, prefix: string): Promise<number> {
    let n = 0;
    let start: Item | undefined;
    do {
      const r = await this.db.send(
        new QueryCommand({
          ...this.prefixQuery(group, prefix),
          Select: "COUNT",
          ExclusiveStartKey: start,
        }),
      );
      n += r.Count ?? 0;
      start = r.LastEvaluatedKey as Item | undefined;
    } while (start);
    return n;
  }
}
