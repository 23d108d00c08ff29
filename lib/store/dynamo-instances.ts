/**
 * The instances table: one item per workflow instance, listed newest first through the
 * by-created index (all instances) or the by-workflow index.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { INDEX, TTL_ATTRIBUTE } from "../aws/resources.js";
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
    return {
      ...inst,
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
    return item ? strip<InstanceRecord>(item, "listKey", "createdKey", TTL_ATTRIBUTE) : undefined;
  }

  async updateInstance(inst: InstanceRecord): Promise<boolean> {
    return putRevision(this.db, this.table, this.instanceItem(inst), inst.rev);
  }

  async listInstances(q: ListInstancesQuery): Promise<Page<InstanceSummaryRecord>> {
    const byWorkflow = q.workflow !== undefined;
    // Filters apply to each page DynamoDB reads: a page may come back short, with a token.
    const filters: string[] = [];
    if (q.state) filters.push("#s = :s");
    if (q.runType) filters.push("runType = :rt");
    const found = await page(
      this.db,
      {
        TableName: this.table,
        IndexName: byWorkflow ? INDEX.instancesByWorkflow : INDEX.instancesByCreated,
        KeyConditionExpression: byWorkflow ? "workflow = :k" : "listKey = :k",
        ...(filters.length > 0 ? { FilterExpression: filters.join(" AND ") } : {}),
        ...(q.state ? { ExpressionAttributeNames: { "#s": "state" } } : {}),
        ExpressionAttributeValues: {
          ":k": byWorkflow ? q.workflow : "I",
          ...(q.state ? { ":s": q.state } : {}),
          ...(q.runType ? { ":rt": q.runType } : {}),
        },
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
