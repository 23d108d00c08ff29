/**
 * The triggers table: one item per trigger (partition key `id`), plus `listKey` = "T" and
 * `createdKey` = `<createdAt, 15 digits>#<id>` for the `byList` index (set by the store, stripped
 * on read). `lastFiredAt` only moves through markFired, a conditional UpdateItem on its previous
 * value: that is the debounce claim, so two events racing past the same last fire start one run.
 *
 * The same table holds the counters that limit loops and storms (lib/core/trigger-events.ts),
 * outside the index (no `listKey`) and expiring through DynamoDB TTL (`expiresAt`, epoch s):
 * `~rate#<trigger id>#<window start ms>` counts a trigger's runs in one minute, and
 * `~origin#<event id>` the runs one originating event led to. Each is taken with one
 * `ADD runs :1` conditioned on `runs < limit`, so concurrent deliveries never overshoot.
 */
import { DeleteCommand, type DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { INDEX, TTL_ATTRIBUTE } from "../aws/resources.js";
import type { ReleaseState } from "../core/model.js";
import {
  conditional,
  getConsistent,
  type Item,
  isConditionFailure,
  newestFirst,
  putIfAbsent,
  strip,
  timeKey,
} from "./dynamo-common.js";
import type { Page } from "./records.js";
import type { LoopStopRecord, TriggerRecord, TriggerStore } from "./triggers.js";

const LIST_KEY = "T";
/** Attributes of the store's own, stripped on read (`refusedWindow`: see recordRefusal). */
const INDEX_ATTRS = ["listKey", "createdKey", "refusedWindow"];
/** A rate window's counter outlives the window by this much, s (TTL deletes it within days). */
const RATE_COUNTER_TTL_S = 3_600;
/** An originating event's counter is kept this long, s: chains of long runs outlast a day. */
const ORIGIN_COUNTER_TTL_S = 7 * 86_400;

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

  async setTriggerState(id: string, state: ReleaseState): Promise<TriggerRecord | undefined> {
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { id },
          UpdateExpression: "SET #s = :s",
          // listKey: a trigger, never a counter item.
          ConditionExpression: "attribute_exists(listKey)",
          ExpressionAttributeNames: { "#s": "state" },
          ExpressionAttributeValues: { ":s": state },
          ReturnValues: "ALL_NEW",
        }),
      );
      return r.Attributes ? record(r.Attributes) : undefined;
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  takeRateSlot(id: string, windowStart: number, limit: number): Promise<boolean> {
    return this.takeCounter(
      `~rate#${id}#${windowStart}`,
      limit,
      Math.floor(windowStart / 1000) + 60 + RATE_COUNTER_TTL_S,
    );
  }

  async recordRefusal(id: string, windowStart: number, at: number): Promise<boolean> {
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { id },
          // refusedWindow: the window of the last refusal; the one write that moves it is the
          // window's first refusal, which the caller publishes an event for.
          UpdateExpression: "ADD refusedRuns :one SET lastRefusedAt = :at, refusedWindow = :w",
          ConditionExpression: "attribute_exists(listKey)",
          ExpressionAttributeValues: { ":one": 1, ":at": at, ":w": windowStart },
          ReturnValues: "UPDATED_OLD",
        }),
      );
      return r.Attributes?.refusedWindow !== windowStart;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  takeOriginRun(originEventId: string, limit: number, now: number): Promise<boolean> {
    return this.takeCounter(
      `~origin#${originEventId}`,
      limit,
      Math.floor(now / 1000) + ORIGIN_COUNTER_TTL_S,
    );
  }

  async recordLoopStop(id: string, stop: LoopStopRecord): Promise<boolean> {
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { id },
          UpdateExpression: "ADD loopStops :one SET lastLoopStop = :s",
          ConditionExpression: "attribute_exists(listKey)",
          ExpressionAttributeValues: { ":one": 1, ":s": stop },
          // The stop it replaced, read in the same write: of concurrent stops of one chain,
          // exactly one sees another chain's (or none) before it.
          ReturnValues: "UPDATED_OLD",
        }),
      );
      const before = r.Attributes?.lastLoopStop as LoopStopRecord | undefined;
      return before?.originEventId !== stop.originEventId;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  /** One `ADD runs :1` on a counter item, conditioned on `runs < limit`. */
  private takeCounter(id: string, limit: number, expiresAtSeconds: number): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { id },
          UpdateExpression: "ADD runs :one SET #ttl = :exp",
          ConditionExpression: "attribute_not_exists(runs) OR runs < :limit",
          ExpressionAttributeNames: { "#ttl": TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ":one": 1, ":limit": limit, ":exp": expiresAtSeconds },
        }),
      ),
    );
  }
}
