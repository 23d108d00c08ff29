/**
 * The schedules table: one item per schedule (partition key `id`), plus attributes only the
 * indexes read, which the store sets on every write and strips on every read:
 * - `dueShard` (= `shard`) only while `state = ONLINE` and `nextFireTime` is set: the sparse
 *   `due` index then holds exactly the schedules a sweeper shard may fire, by nextFireTime;
 * - `listKey` = "S" and `createdKey` = `<createdAt, 15 digits>#<id>` for the lists.
 * Writes are whole-item PutItems with a condition (new id, or stored rev = rev - 1), so the
 * index attributes can never disagree with the state they derive from.
 */
import { DeleteCommand, type DynamoDBDocumentClient, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { INDEX } from "../aws/resources.js";
import {
  conditional,
  getConsistent,
  type Item,
  newestFirst,
  putIfAbsent,
  putRevision,
  strip,
  timeKey,
} from "./dynamo-common.js";
import type { Page } from "./records.js";
import type { ListSchedulesQuery, ScheduleRecord, ScheduleStore } from "./schedules.js";

const LIST_KEY = "S";
const INDEX_ATTRS = ["dueShard", "dueKey", "listKey", "createdKey"];

function scheduleItem(s: ScheduleRecord): Item {
  if (s.shard === "") throw new RangeError(`schedule ${s.id}: shard must not be empty`);
  // Whatever the caller passed in index attributes is dropped: only the state decides them.
  const item = strip<Item>(s as unknown as Item, ...INDEX_ATTRS);
  item.listKey = LIST_KEY;
  item.createdKey = timeKey(s.createdAt, s.id);
  if (s.state === "ONLINE" && s.nextFireTime !== undefined) {
    item.dueShard = s.shard;
    // Unique per schedule: dynalite tells index entries with equal keys apart by only six hex
    // digits of the item key's hash, so two schedules due at the same instant could share (and
    // lose) one entry if the index sorted by nextFireTime alone.
    item.dueKey = timeKey(s.nextFireTime, s.id);
  }
  return item;
}

const record = (i: Item) => strip<ScheduleRecord>(i, ...INDEX_ATTRS);

export class DynamoSchedules implements ScheduleStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async putSchedule(s: ScheduleRecord): Promise<boolean> {
    return putIfAbsent(this.db, this.table, scheduleItem(s), "id");
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    const item = await getConsistent(this.db, this.table, { id });
    return item ? record(item) : undefined;
  }

  async updateSchedule(s: ScheduleRecord): Promise<boolean> {
    return putRevision(this.db, this.table, scheduleItem(s), s.rev);
  }

  deleteSchedule(id: string): Promise<boolean> {
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

  async listSchedules(q: ListSchedulesQuery): Promise<Page<ScheduleRecord>> {
    const found = await newestFirst(
      this.db,
      this.table,
      { all: INDEX.schedulesList, byWorkflow: INDEX.schedulesByWorkflow, listKey: LIST_KEY },
      q,
    );
    return { ...found, items: found.items.map(record) };
  }

  async listDue(shard: string, beforeMs: number, limit: number): Promise<ScheduleRecord[]> {
    // An empty shard cannot be a key value (DynamoDB refuses it), so nothing is due there.
    if (limit < 1 || shard === "") return [];
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: INDEX.schedulesDue,
        // "~" sorts after "#" and every id character: every key of a time <= beforeMs.
        KeyConditionExpression: "dueShard = :s AND dueKey <= :b",
        ExpressionAttributeValues: {
          ":s": shard,
          ":b": `${String(Math.max(0, Math.floor(beforeMs))).padStart(15, "0")}#~`,
        },
        Limit: limit,
      }),
    );
    return ((r.Items ?? []) as Item[]).map(record);
  }
}
