/**
 * The workflows table: one item per stored definition version (gzipped) and, at version 0,
 * the workflow's head (listed through the workflow-list index, a tombstone once deleted).
 */
import { gunzipSync, gzipSync } from "node:zlib";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { INDEX } from "../aws/resources.js";
import { RequestError } from "../core/errors.js";
import type { ReleaseState, WorkflowDefinition } from "../core/model.js";
import { conditional, isConditionFailure, page, strip } from "./dynamo-common.js";
import type { Page, StoredDefinition, WorkflowHead } from "./records.js";

/** The largest gzipped definition stored in one item (DynamoDB items hold 400 KB). */
export const MAX_STORED_DEFINITION_BYTES = 350 * 1024;

export class DynamoWorkflows {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async getWorkflowHead(name: string): Promise<WorkflowHead | undefined> {
    const r = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { name, version: 0 } }),
    );
    return r.Item ? strip<WorkflowHead>(r.Item, "version", "listKey") : undefined;
  }

  async getDefinition(name: string, version: number): Promise<StoredDefinition | undefined> {
    const r = await this.db.send(new GetCommand({ TableName: this.table, Key: { name, version } }));
    if (!r.Item || version < 1) return undefined;
    const def = JSON.parse(
      gunzipSync(r.Item.def as Uint8Array).toString("utf8"),
    ) as WorkflowDefinition;
    return { name, version, definition: def, createdAt: r.Item.createdAt as number };
  }

  async putDefinition(def: StoredDefinition): Promise<boolean> {
    // Gzipped: a 10,000-task definition stays well under DynamoDB's 400 KB item limit.
    const body = gzipSync(JSON.stringify(def.definition));
    if (body.length > MAX_STORED_DEFINITION_BYTES) {
      // The client's definition does not fit one item: its error, by code; the API picks the status.
      throw new RequestError(
        "PayloadTooLarge",
        `the definition is too large to store: ${Math.ceil(body.length / 1024)} KiB compressed, at most ${MAX_STORED_DEFINITION_BYTES / 1024} KiB`,
      );
    }
    return conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { name: def.name, version: def.version, def: body, createdAt: def.createdAt },
          ConditionExpression: "attribute_not_exists(#n)",
          ExpressionAttributeNames: { "#n": "name" },
        }),
      ),
    );
  }

  async putWorkflowHead(head: WorkflowHead, expectedLatest: number): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...head, version: 0, listKey: "W" },
          ConditionExpression:
            expectedLatest === 0 ? "attribute_not_exists(#n)" : "latestVersion = :expected",
          ...(expectedLatest === 0
            ? { ExpressionAttributeNames: { "#n": "name" } }
            : { ExpressionAttributeValues: { ":expected": expectedLatest } }),
        }),
      ),
    );
  }

  async setReleaseState(
    name: string,
    state: ReleaseState,
    now: number,
  ): Promise<WorkflowHead | undefined> {
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { name, version: 0 },
          UpdateExpression: "SET releaseState = :s, updatedAt = :now",
          ConditionExpression: "attribute_exists(#n) AND attribute_not_exists(deleted)",
          ExpressionAttributeNames: { "#n": "name" },
          ExpressionAttributeValues: { ":s": state, ":now": now },
          ReturnValues: "ALL_NEW",
        }),
      );
      return strip<WorkflowHead>(r.Attributes ?? {}, "version", "listKey");
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  async listWorkflows(limit: number, nextToken?: string): Promise<Page<WorkflowHead>> {
    const found = await page(
      this.db,
      {
        TableName: this.table,
        IndexName: INDEX.workflowList,
        KeyConditionExpression: "listKey = :w",
        ExpressionAttributeValues: { ":w": "W" },
      },
      limit,
      ["listKey", "name", "version"],
      nextToken,
    );
    return {
      ...found,
      items: found.items.map((i) => strip<WorkflowHead>(i, "version", "listKey")),
    };
  }

  async deleteWorkflow(name: string): Promise<void> {
    // The versions stay: instances that ran them keep their DAG, explain and render. Nothing
    // reaches them by name any more (GET, runs, schedules and sub-workflows read the head).
    // The head becomes a tombstone (unlisted) that remembers the last version number.
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { name, version: 0 },
        UpdateExpression: "SET deleted = :t REMOVE listKey, displayName, description",
        ConditionExpression: "attribute_exists(#n)",
        ExpressionAttributeNames: { "#n": "name" },
        ExpressionAttributeValues: { ":t": true },
      }),
    );
  }
}
