/**
 * Worker heartbeats in the leases table (lib/aws/resources.ts TABLES "leases"): one item per
 * worker group, named `worker-group#<group>` (lease names never start so), with `group`,
 * `worker` and `lastPollAt` (epoch ms) of the last heartbeat, and one attribute per worker,
 * `w:<worker id>` = `{at, used, slots, held}`. A write is a conditional UpdateItem of the writer's
 * own attribute that succeeds only when it is absent or at least `minIntervalMs` old (DynamoDB
 * Developer Guide, "Condition expressions"; nested attributes are document paths). Entries of
 * workers silent for FORGET_WORKER_MS are removed by a conditional UpdateItem of the writer that
 * sees them (the item it wrote comes back: ReturnValues ALL_NEW), which keeps the item small.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type Item, isConditionFailure } from "./dynamo-common.js";
import {
  FORGET_WORKER_MS,
  type WorkerBeat,
  type WorkerHeartbeat,
  type WorkerHeartbeatStore,
  type WorkerLoad,
} from "./worker-heartbeats.js";

/** Key of a group's heartbeat item in the leases table. */
export function heartbeatItemName(group: string): string {
  return `worker-group#${group}`;
}

/** Prefix of the per-worker attributes of a heartbeat item. */
const WORKER_ATTR = "w:";

/** Entries removed by one write at most (the expression stays small). */
const MAX_FORGET = 25;

const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/** The per-worker entries of a heartbeat item. */
function beatsOf(item: Item): WorkerBeat[] {
  const out: WorkerBeat[] = [];
  for (const [name, value] of Object.entries(item)) {
    if (!name.startsWith(WORKER_ATTR) || typeof value !== "object" || value === null) continue;
    const v = value as Record<string, unknown>;
    out.push({
      worker: name.slice(WORKER_ATTR.length),
      at: count(v.at),
      used: count(v.used),
      slots: count(v.slots),
      held: count(v.held),
    });
  }
  return out.sort((a, b) => a.worker.localeCompare(b.worker));
}

export class DynamoWorkerHeartbeats implements WorkerHeartbeatStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    /** The leases table. */
    private readonly table: string,
  ) {}

  recordPoll(
    group: string,
    worker: string,
    now: number,
    minIntervalMs: number,
    load: WorkerLoad = { used: 0, slots: 0, held: 0 },
  ): Promise<boolean> {
    if (!(minIntervalMs >= 0) || !Number.isFinite(minIntervalMs)) {
      throw new RangeError(`minIntervalMs must be a number >= 0: ${minIntervalMs}`);
    }
    return this.write(group, worker, now, minIntervalMs, load);
  }

  private async write(
    group: string,
    worker: string,
    now: number,
    minIntervalMs: number,
    load: WorkerLoad,
  ): Promise<boolean> {
    let item: Item | undefined;
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { name: heartbeatItemName(group) },
          // NAME and GROUP are DynamoDB reserved words: every name is aliased.
          UpdateExpression: "SET #g = :g, #w = :w, #t = :now, #me = :beat",
          ConditionExpression: "attribute_not_exists(#me) OR #me.#at <= :stale",
          ExpressionAttributeNames: {
            "#g": "group",
            "#w": "worker",
            "#t": "lastPollAt",
            "#me": `${WORKER_ATTR}${worker}`,
            "#at": "at",
          },
          ExpressionAttributeValues: {
            ":g": group,
            ":w": worker,
            ":now": now,
            ":beat": { at: now, used: load.used, slots: load.slots, held: load.held },
            ":stale": now - minIntervalMs,
          },
          ReturnValues: "ALL_NEW",
        }),
      );
      item = r.Attributes;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
    const gone = beatsOf(item ?? {})
      .filter((b) => b.at < now - FORGET_WORKER_MS)
      .slice(0, MAX_FORGET);
    if (gone.length > 0) await this.forget(group, gone, now - FORGET_WORKER_MS);
    return true;
  }

  /** Removes the entries of workers gone silent, unless one wrote again meanwhile. */
  private async forget(group: string, gone: WorkerBeat[], before: number): Promise<void> {
    const names: Record<string, string> = { "#at": "at" };
    gone.forEach((b, i) => {
      names[`#d${i}`] = `${WORKER_ATTR}${b.worker}`;
    });
    const keys = gone.map((_, i) => `#d${i}`);
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { name: heartbeatItemName(group) },
          UpdateExpression: `REMOVE ${keys.join(", ")}`,
          ConditionExpression: keys.map((k) => `${k}.#at < :before`).join(" AND "),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ":before": before },
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  }

  async forgetWorker(group: string, worker: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { name: heartbeatItemName(group) },
          UpdateExpression: "REMOVE #me",
          // Never creates an item for a group no heartbeat was written for.
          ConditionExpression: "attribute_exists(#n)",
          ExpressionAttributeNames: { "#me": `${WORKER_ATTR}${worker}`, "#n": "name" },
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  }

  async getHeartbeat(group: string): Promise<WorkerHeartbeat | undefined> {
    const r = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: { name: heartbeatItemName(group) },
        ConsistentRead: true,
      }),
    );
    const item = r.Item;
    if (!item) return undefined;
    return {
      group: String(item.group),
      lastPollAt: Number(item.lastPollAt),
      worker: String(item.worker),
      workers: beatsOf(item),
    };
  }
}
