/**
 * The timers table: partition `shard` (always "0" for now; a later change spreads timers over
 * shards), sort key `dueKey` = `<dueAt ms, 15 digits zero-padded>#<id>`, so one Query on a shard
 * returns the due timers oldest first. Single-item writes only (PutItem, conditional DeleteItem).
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import { conditional, strip } from "./dynamo-common.js";
import type { TimerRecord, TimerStore } from "./timers.js";

/** The only shard today. */
export const TIMER_SHARD = "0";

/** Largest dueAt that fits 15 digits (year 33658): every real epoch ms does. */
const MAX_DUE_AT = 10 ** 15 - 1;

function checkDueAt(dueAt: number): void {
  if (!Number.isInteger(dueAt) || dueAt < 0 || dueAt > MAX_DUE_AT) {
    throw new RangeError(`timer dueAt must be a whole number of ms in 0..${MAX_DUE_AT}: ${dueAt}`);
  }
}

/** `<dueAt, 15 digits>#<id>`: sorts by due time, then id. @throws RangeError (see checkDueAt). */
export function timerDueKey(t: Pick<TimerRecord, "id" | "dueAt">): string {
  checkDueAt(t.dueAt);
  if (t.id === "") throw new RangeError("timer id must not be empty");
  return `${String(t.dueAt).padStart(15, "0")}#${t.id}`;
}

export class DynamoTimers implements TimerStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async putTimer(t: TimerRecord): Promise<void> {
    // Unconditional: rewriting the same timer is a no-op in effect.
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: { ...t, shard: TIMER_SHARD, dueKey: timerDueKey(t) },
      }),
    );
  }

  async listDueTimers(now: number, limit: number): Promise<TimerRecord[]> {
    if (limit < 1 || now < 0) return [];
    // Every key of a timer due at or before `now` sorts below "<now, 15 digits>:" (':' follows
    // the digits and '#' in ASCII); a later timer's digits sort above.
    const upper = `${String(Math.min(Math.floor(now), MAX_DUE_AT)).padStart(15, "0")}:`;
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: "#s = :s AND #k < :upper",
        ExpressionAttributeNames: { "#s": "shard", "#k": "dueKey" },
        ExpressionAttributeValues: { ":s": TIMER_SHARD, ":upper": upper },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((i) => strip<TimerRecord>(i, "shard", "dueKey"));
  }

  deleteTimer(t: Pick<TimerRecord, "id" | "dueAt">): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { shard: TIMER_SHARD, dueKey: timerDueKey(t) },
          ConditionExpression: "attribute_exists(#k)",
          ExpressionAttributeNames: { "#k": "dueKey" },
        }),
      ),
    );
  }
}
