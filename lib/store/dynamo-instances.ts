/**
 * The instances table: one item per workflow instance, listed newest first through the
 * by-created index (all instances) or the by-workflow index.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { INDEX, TTL_ATTRIBUTE } from "../aws/resources.js";
import type { Progress } from "../core/progress.js";
import { batchGet } from "./dynamo-batch.js";
import {
  expiresAt,
  getConsistent,
  type Item,
  page,
  putIfAbsent,
  putRevision,
  queryAll,
  strip,
} from "./dynamo-common.js";
import {
  packOutputSlots,
  packProgress,
  unpackOutputSlots,
  unpackProgress,
} from "./instance-packing.js";
import type { InstanceRecord, InstanceSummaryRecord, Page } from "./records.js";
import type { ListInstancesQuery } from "./store.js";

const FINAL_INSTANCE = ["STOPPED", "SUCCESS", "FAILURE"];

export class DynamoInstances {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /** Days a finished instance is kept (DynamoDB TTL on AWS); 0/absent: forever. */
    private readonly retentionDays?: number,
  ) {}

  private instanceItem(inst: InstanceRecord): Item {
    // Whole-item writes: a rerun's write (not final) drops the attribute again.
    const ttl = FINAL_INSTANCE.includes(inst.state)
      ? expiresAt(inst.endedAt, this.retentionDays)
      : undefined;
    // OUT values live on the task items (lib/engine/upstream-outputs.ts); an item written by
    // 0.1.0 (no outputSlots) keeps its values inline until the dispatcher takes it over.
    const { outputs, outputSlots, ...rest } = inst;
    return {
      ...rest,
      progress: packProgress(inst.progress),
      ...(outputSlots !== undefined
        ? { outputSlots: packOutputSlots(outputSlots) }
        : outputs && Object.keys(outputs).length > 0
          ? { outputs }
          : {}),
      listKey: "I",
      createdKey: `${new Date(inst.createdAt).toISOString()}#${inst.instanceId}`,
      ...(ttl !== undefined ? { [TTL_ATTRIBUTE]: ttl } : {}),
    };
  }

  async putInstance(inst: InstanceRecord): Promise<boolean> {
    return putIfAbsent(this.db, this.table, this.instanceItem(inst), "instanceId");
  }

  async getInstance(instanceId: string): Promise<InstanceRecord | undefined> {
    const item = await getConsistent(this.db, this.table, { instanceId });
    if (!item) return undefined;
    const inst = strip<InstanceRecord>(item, "listKey", "createdKey", TTL_ATTRIBUTE);
    inst.progress = unpackProgress(item.progress);
    if (item.outputSlots !== undefined) inst.outputSlots = unpackOutputSlots(item.outputSlots);
    return inst;
  }

  async updateInstance(inst: InstanceRecord): Promise<boolean> {
    return putRevision(this.db, this.table, this.instanceItem(inst), inst.rev);
  }

  async listInstances(q: ListInstancesQuery): Promise<Page<InstanceSummaryRecord>> {
    const byWorkflow = q.workflow !== undefined;
    // Filters apply to each page DynamoDB reads: a page may come back short, with a token.
    const filters: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ":k": byWorkflow ? q.workflow : "I" };
    if (q.state) {
      filters.push("#s = :s");
      names["#s"] = "state";
      values[":s"] = q.state;
    }
    if (q.runType) {
      filters.push("runType = :rt");
      values[":rt"] = q.runType;
    }
    // A comparison with an absent scheduleTime is false: manual runs drop out of a time range.
    if (q.scheduledAfter !== undefined) {
      filters.push("scheduleTime >= :sa");
      values[":sa"] = q.scheduledAfter;
    }
    if (q.scheduledBefore !== undefined) {
      filters.push("scheduleTime < :sb");
      values[":sb"] = q.scheduledBefore;
    }
    if (q.idContains) {
      filters.push("contains(instanceId, :id)");
      values[":id"] = q.idContains;
    }
    const found = await page(
      this.db,
      {
        TableName: this.table,
        IndexName: byWorkflow ? INDEX.instancesByWorkflow : INDEX.instancesByCreated,
        KeyConditionExpression: byWorkflow ? "workflow = :k" : "listKey = :k",
        ...(filters.length > 0 ? { FilterExpression: filters.join(" AND ") } : {}),
        ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
      },
      q.limit,
      [byWorkflow ? "workflow" : "listKey", "createdKey", "instanceId"],
      q.nextToken,
    );
    return {
      ...found,
      items: found.items.map((i) => strip<InstanceSummaryRecord>(i, "listKey", "createdKey")),
    };
  }

  /**
   * The progress of each instance that exists, from the table itself: the list indexes do not
   * carry it (the dispatcher rewrites it on every task event; lib/aws/resources.ts).
   */
  async getInstancesProgress(instanceIds: readonly string[]): Promise<Map<string, Progress>> {
    const unique = [...new Set(instanceIds)];
    const items = await batchGet(
      this.db,
      this.table,
      unique.map((instanceId) => ({ instanceId })),
      ["instanceId", "progress"],
    );
    const out = new Map<string, Progress>();
    for (const i of items) {
      if (i.progress) out.set(i.instanceId as string, unpackProgress(i.progress));
    }
    return out;
  }

  async hasUnfinishedInstances(workflow: string): Promise<boolean> {
    const items = await queryAll(this.db, {
      TableName: this.table,
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
}
