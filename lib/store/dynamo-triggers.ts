/**
 * The triggers table: one item per trigger (partition key `id`), plus `listKey` = "T" and
 * `createdKey` = `<createdAt, 15 digits>#<id>` for the `byList` index (set by the store, stripped
 * on read). `lastFiredAt` only moves through markFired, a conditional UpdateItem on its previous
 * value: that is the debounce claim, so two events racing past the same last fire start one run.
 */
import { DeleteCommand, type DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { INDEX } from "../aws/resources.js";
import {
  conditional,
  getConsistent,
  type Item,
  newestFirst,
  putIfAbsent,
  strip,
  timeKey,
} from "./dynamo-common.js";
import type { Page } from "./records.js";
import type { TriggerRecord, TriggerStore } from "./triggers.js";

const LIST_KEY = "T";
const INDEX_ATTRS = ["listKey", "createdKey"];

const record = (i: Item) => strip<TriggerRecord>(i, ...INDEX_ATTRS);

export class DynamoTriggers implements TriggerStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async putTrigger(t: TriggerRecord): Promise<boolean> {
    const item = strip<Item>(t as unknown as Item, ...INDEX_ATTRS);
    item.listKey = LIST_KEY;
    item.createdKey = timeKey(t.createdAt, t.id);
    return putIfAbsent(this.db, this.table, item, "id");
  }

  async getTrigger(id: string): Promise<TriggerRecord | undefined> {
    const item = await getConsistent(this.db, this.table, { id });
    return item ? record(item) : undefined;
  }

  updateTrigger(t: TriggerRecord): Promise<boolean> {
    // UpdateItem, not PutItem: a whole-item replace would write back the lastFiredAt the editor
    // read and could undo a debounce claim made since.
    return conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { id: t.id },
          UpdateExpression:
            "SET workflow = :w, eventPattern = :e, params = :p, debounceSeconds = :d, rev = :rev",
          ConditionExpression: "rev = :prev",
          ExpressionAttributeValues: {
            ":w": t.workflow,
            ":e": t.eventPattern,
            ":p": t.params,
            ":d": t.debounceSeconds,
            ":rev": t.rev,
            ":prev": t.rev - 1,
          },
        }),
      ),
    );
  }

  async listTriggers(limit: number, nextToken?: string): Promise<Page<TriggerRecord>> {
    const found = await newestFirst(
      this.db,
      this.table,
      { all: INDEX.triggersList, listKey: LIST_KEY },
      { limit, ...(nextToken ? { nextToken } : {}) },
    );
    return { ...found, items: found.items.map(record) };
  }

  deleteTrigger(id: string): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { id },
          ConditionExpression: "attribute_exists(id)",
        }),
      ),
    );
  }

  markFired(
    id: string,
    expectedLastFiredAt: number | undefined,
    firedAt: number,
  ): Promise<boolean> {
    const first = expectedLastFiredAt === undefined;
    return conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { id },
          UpdateExpression: "SET lastFiredAt = :f",
          // attribute_exists(id) keeps a deleted trigger from being recreated as a stub.
          ConditionExpression: first
            ? "attribute_exists(id) AND attribute_not_exists(lastFiredAt)"
            : "lastFiredAt = :prev",
          ExpressionAttributeValues: {
            ":f": firedAt,
            ...(first ? {} : { ":prev": expectedLastFiredAt }),
          },
        }),
      ),
    );
  }
}
