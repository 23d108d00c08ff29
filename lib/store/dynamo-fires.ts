/**
 * The fires table, the ledger of scheduled nominal times: partition `scheduleId`, sort key
 * `nominalTime` (N). An entry is created once (PutItem with attribute_not_exists), which is what
 * makes a nominal time fire at most once however many sweepers run; afterwards only its decision
 * moves, conditioned on the decision it moves from (DynamoDB Developer Guide, "Condition
 * expressions"). Reads are strongly consistent.
 *
 * Retention (the TTL attribute): an entry decided when it is written expires `retentionDays`
 * after its nominal time; a QUEUED_SERIAL entry carries none while it waits (deleting it would
 * drop the queued run without a trace, lib/engine/schedule-runs.ts startNextQueued) and gets one
 * when it becomes FIRED or DISCARDED_OVERLAP: `retentionDays` after that decision.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { TTL_ATTRIBUTE } from "../aws/resources.js";
import type { FireDecision } from "../core/fire-decisions.js";
import { conditional, expiresAt, isConditionFailure, page } from "./dynamo-common.js";
import type { FireChanges, FireRecord, FireStore, ListFiresQuery } from "./fires.js";
import type { Page } from "./records.js";

/** The attributes updateFire may set (the key never changes). */
const CHANGEABLE: ReadonlyArray<keyof FireChanges> = [
  "decision",
  "instanceId",
  "actualTime",
  "latenessMs",
];

export class DynamoFires implements FireStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /** Days a decided ledger entry is kept (DynamoDB TTL on AWS); 0/absent: forever. */
    private readonly retentionDays?: number,
    /** Clock (epoch ms) of a decision that carries no `actualTime` (DISCARDED_OVERLAP). */
    private readonly now: () => number = Date.now,
  ) {}

  putFire(f: FireRecord): Promise<boolean> {
    const ttl =
      f.decision === "QUEUED_SERIAL" ? undefined : expiresAt(f.nominalTime, this.retentionDays);
    return conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: ttl !== undefined ? { ...f, [TTL_ATTRIBUTE]: ttl } : f,
          ConditionExpression: "attribute_not_exists(scheduleId)",
        }),
      ),
    );
  }

  async getFire(scheduleId: string, nominalTime: number): Promise<FireRecord | undefined> {
    const r = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: { scheduleId, nominalTime },
        ConsistentRead: true,
      }),
    );
    return r.Item as FireRecord | undefined;
  }

  async updateFire(
    scheduleId: string,
    nominalTime: number,
    fromDecision: FireDecision,
    changes: FireChanges,
  ): Promise<FireRecord | undefined> {
    const names: Record<string, string> = { "#from": "decision" };
    const values: Record<string, unknown> = { ":from": fromDecision };
    const sets: string[] = [];
    CHANGEABLE.forEach((k, n) => {
      const v = changes[k];
      if (v === undefined) return;
      names[`#a${n}`] = k;
      values[`:a${n}`] = v;
      sets.push(`#a${n} = :a${n}`);
    });
    // A queued entry is decided now: its retention starts (none while it waited).
    if (fromDecision === "QUEUED_SERIAL" && changes.decision && changes.decision !== fromDecision) {
      const ttl = expiresAt(
        Math.max(nominalTime, changes.actualTime ?? this.now()),
        this.retentionDays,
      );
      if (ttl !== undefined) {
        names["#ttl"] = TTL_ATTRIBUTE;
        values[":ttl"] = ttl;
        sets.push("#ttl = :ttl");
      }
    }
    // Nothing to change still checks the condition (and returns the fire), via a no-op SET.
    if (sets.length === 0) sets.push("#from = :from");
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { scheduleId, nominalTime },
          UpdateExpression: `SET ${sets.join(", ")}`,
          // The decision condition also fails on a missing item, so no fire is created here.
          ConditionExpression: "#from = :from",
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: "ALL_NEW",
        }),
      );
      return r.Attributes as FireRecord;
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  async listFires(scheduleId: string, q: ListFiresQuery): Promise<Page<FireRecord>> {
    const values: Record<string, unknown> = { ":s": scheduleId };
    let range = "";
    if (q.from !== undefined && q.to !== undefined) {
      // An empty range: BETWEEN would be refused (DynamoDB requires low <= high).
      if (q.from > q.to) return { items: [] };
      range = " AND nominalTime BETWEEN :from AND :to";
      values[":from"] = q.from;
      values[":to"] = q.to;
    } else if (q.from !== undefined) {
      range = " AND nominalTime >= :from";
      values[":from"] = q.from;
    } else if (q.to !== undefined) {
      range = " AND nominalTime <= :to";
      values[":to"] = q.to;
    }
    const found = await page(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: `scheduleId = :s${range}`,
        ExpressionAttributeValues: values,
        ConsistentRead: true,
      },
      q.limit,
      ["scheduleId", "nominalTime"],
      q.nextToken,
    );
    return { ...found, items: found.items as unknown as FireRecord[] };
  }
}
