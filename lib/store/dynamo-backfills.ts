/**
 * The backfills table: one item per backfill (partition key `id`), plus attributes only the
 * indexes read, set by the store on every write and stripped on every read:
 * - `activeShard` = "A" only while `state = RUNNING` (sparse `active` index, oldest first);
 * - `listKey` = "B" and `createdKey` = `<createdAt, 15 digits>#<id>` for the lists;
 * - `total`, `firstTime`, `lastTime`: the count and range of nominalTimes, which the list
 *   indexes carry instead of the times themselves (INCLUDE projection, lib/aws/resources.ts).
 * Writes are whole-item PutItems with a condition (new id, or stored rev = rev - 1).
 */
import { type DynamoDBDocumentClient, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { INDEX } from "../aws/resources.js";
import type {
  BackfillRecord,
  BackfillStore,
  BackfillSummary,
  ListBackfillsQuery,
} from "./backfills.js";
import {
  getConsistent,
  type Item,
  newestFirst,
  putIfAbsent,
  putRevision,
  strip,
  timeKey,
} from "./dynamo-common.js";
import type { Page } from "./records.js";

const ACTIVE_SHARD = "A";
const LIST_KEY = "B";
const INDEX_ATTRS = ["activeShard", "listKey", "createdKey"];
const SUMMARY_ATTRS = ["total", "firstTime", "lastTime"];

function backfillItem(b: BackfillRecord): Item {
  const item = strip<Item>(b as unknown as Item, ...INDEX_ATTRS, ...SUMMARY_ATTRS);
  item.listKey = LIST_KEY;
  item.createdKey = timeKey(b.createdAt, b.id);
  if (b.state === "RUNNING") item.activeShard = ACTIVE_SHARD;
  item.total = b.nominalTimes.length;
  if (b.nominalTimes.length > 0) {
    item.firstTime = b.nominalTimes[0];
    item.lastTime = b.nominalTimes[b.nominalTimes.length - 1];
  }
  return item;
}

const summary = (i: Item) => strip<BackfillSummary>(i, ...INDEX_ATTRS);

export class DynamoBackfills implements BackfillStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async putBackfill(b: BackfillRecord): Promise<boolean> {
    return putIfAbsent(this.db, this.table, backfillItem(b), "id");
  }

  async getBackfill(id: string): Promise<BackfillRecord | undefined> {
    const item = await getConsistent(this.db, this.table, { id });
    return item ? strip<BackfillRecord>(item, ...INDEX_ATTRS, ...SUMMARY_ATTRS) : undefined;
  }

  async updateBackfill(b: BackfillRecord): Promise<boolean> {
    return putRevision(this.db, this.table, backfillItem(b), b.rev);
  }

  async listActiveBackfills(limit: number): Promise<BackfillSummary[]> {
    if (limit < 1) return [];
    // One page is enough: the sweeper comes back for the rest on its next round.
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: INDEX.backfillsActive,
        KeyConditionExpression: "activeShard = :a",
        ExpressionAttributeValues: { ":a": ACTIVE_SHARD },
        Limit: limit,
      }),
    );
    return ((r.Items ?? []) as Item[]).map(summary);
  }

  async listBackfills(q: ListBackfillsQuery): Promise<Page<BackfillSummary>> {
    const found = await newestFirst(
      this.db,
      this.table,
      { all: INDEX.backfillsList, byWorkflow: INDEX.backfillsByWorkflow, listKey: LIST_KEY },
      q,
    );
    return { ...found, items: found.items.map(summary) };
  }
}
