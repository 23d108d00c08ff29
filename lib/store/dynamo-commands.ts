/**
 * The commands table: one item per command; a PENDING command also sits in the
 * pending-commands index (one shard) until it is done.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { INDEX } from "../aws/resources.js";
import { conditional, isConditionFailure, queryAll, strip } from "./dynamo-common.js";
import type { CommandRecord } from "./records.js";

const PENDING_SHARD = "P0";

export class DynamoCommands {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  putCommand(cmd: CommandRecord): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...cmd, pendingShard: PENDING_SHARD },
          ConditionExpression: "attribute_not_exists(commandId)",
        }),
      ),
    );
  }

  async getCommand(commandId: string): Promise<CommandRecord | undefined> {
    const r = await this.db.send(new GetCommand({ TableName: this.table, Key: { commandId } }));
    return r.Item ? strip<CommandRecord>(r.Item, "pendingShard") : undefined;
  }

  async claimCommand(
    commandId: string,
    now: number,
    staleMs: number,
  ): Promise<CommandRecord | undefined> {
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { commandId },
          UpdateExpression: "SET claimedAt = :now",
          ConditionExpression:
            "#s = :pending AND (attribute_not_exists(claimedAt) OR claimedAt < :stale)",
          ExpressionAttributeNames: { "#s": "state" },
          ExpressionAttributeValues: {
            ":pending": "PENDING",
            ":now": now,
            ":stale": now - staleMs,
          },
          ReturnValues: "ALL_NEW",
        }),
      );
      return strip<CommandRecord>(r.Attributes ?? {}, "pendingShard");
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  async completeCommand(commandId: string, now: number): Promise<void> {
    await conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { commandId },
          UpdateExpression: "SET #s = :done, doneAt = :now REMOVE pendingShard",
          ConditionExpression: "#s = :pending",
          ExpressionAttributeNames: { "#s": "state" },
          ExpressionAttributeValues: { ":done": "DONE", ":pending": "PENDING", ":now": now },
        }),
      ),
    );
  }

  async releaseCommandClaim(commandId: string, claimedAt: number): Promise<void> {
    await conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { commandId },
          UpdateExpression: "REMOVE claimedAt",
          ConditionExpression: "claimedAt = :mine",
          ExpressionAttributeValues: { ":mine": claimedAt },
        }),
      ),
    );
  }

  async listPendingCommands(before: number, limit: number): Promise<CommandRecord[]> {
    const r = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: INDEX.pendingCommands,
        KeyConditionExpression: "pendingShard = :p AND createdAt < :before",
        ExpressionAttributeValues: { ":p": PENDING_SHARD, ":before": before },
        Limit: limit,
      }),
    );
    return (r.Items ?? []).map((i) => strip<CommandRecord>(i, "pendingShard"));
  }

  async markResignalled(commandId: string, resignals: number, at: number): Promise<void> {
    await conditional(() =>
      this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { commandId },
          UpdateExpression: "SET resignals = :r, lastSignalAt = :at",
          ConditionExpression: "attribute_exists(commandId)",
          ExpressionAttributeValues: { ":r": resignals, ":at": at },
        }),
      ),
    );
  }

  async hasPendingStart(workflow: string): Promise<boolean> {
    const items = await queryAll(this.db, {
      TableName: this.table,
      IndexName: INDEX.pendingCommands,
      KeyConditionExpression: "pendingShard = :p",
      FilterExpression: "workflow = :w AND #t = :start",
      ExpressionAttributeNames: { "#t": "type" },
      ExpressionAttributeValues: {
        ":p": PENDING_SHARD,
        ":w": workflow,
        ":start": "START_WORKFLOW",
      },
      ProjectionExpression: "commandId",
    });
    return items.length > 0;
  }
}
