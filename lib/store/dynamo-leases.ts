/**
 * The leases table: one item per lease name (partition key `name`) with `owner`, `expiresAt` and
 * `acquiredAt`. A claim is a conditional UpdateItem, so of owners racing for a free lease exactly
 * one wins (DynamoDB Developer Guide, "Condition expressions"); expiry stands in for the session
 * timeout of the ZooKeeper locks DolphinScheduler uses. Clocks of claimers are assumed to agree
 * within a small fraction of the TTL.
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { conditional, isConditionFailure } from "./dynamo-common.js";
import type { LeaseRecord, LeaseStore } from "./leases.js";

// NAME and OWNER are DynamoDB reserved words: always aliased.
const NAMES = { "#n": "name", "#o": "owner" };

export class DynamoLeases implements LeaseStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async claimLease(
    name: string,
    owner: string,
    now: number,
    ttlMs: number,
  ): Promise<LeaseRecord | undefined> {
    if (!(ttlMs > 0) || !Number.isFinite(ttlMs)) {
      throw new RangeError(`lease ttlMs must be a positive number: ${ttlMs}`);
    }
    const expiresAt = now + ttlMs;
    // Renewal first (one request while the lease is ours and live): keeps acquiredAt, which so
    // says since when the owner has held it without a gap.
    const renewed = await this.update(name, {
      UpdateExpression: "SET expiresAt = :e",
      ConditionExpression: "#o = :o AND expiresAt >= :now",
      ExpressionAttributeNames: { "#o": "owner" },
      ExpressionAttributeValues: { ":o": owner, ":e": expiresAt, ":now": now },
    });
    if (renewed) return renewed;
    // Takeover of an absent or expired lease (ours included: the hold had a gap). A live lease of
    // ours is allowed too, in case a concurrent claim by the same owner created it meanwhile.
    return this.update(name, {
      UpdateExpression: "SET #o = :o, expiresAt = :e, acquiredAt = :now",
      ConditionExpression: "attribute_not_exists(#n) OR expiresAt < :now OR #o = :o",
      ExpressionAttributeNames: NAMES,
      ExpressionAttributeValues: { ":o": owner, ":e": expiresAt, ":now": now },
    });
  }

  releaseLease(name: string, owner: string): Promise<boolean> {
    return conditional(() =>
      this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { name },
          ConditionExpression: "#o = :o",
          ExpressionAttributeNames: { "#o": "owner" },
          ExpressionAttributeValues: { ":o": owner },
        }),
      ),
    );
  }

  async getLease(name: string): Promise<LeaseRecord | undefined> {
    const r = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { name }, ConsistentRead: true }),
    );
    return r.Item as LeaseRecord | undefined;
  }

  /** A conditional UpdateItem of one lease. @returns the lease after it, or undefined. */
  private async update(
    name: string,
    expr: {
      UpdateExpression: string;
      ConditionExpression: string;
      ExpressionAttributeNames: Record<string, string>;
      ExpressionAttributeValues: Record<string, unknown>;
    },
  ): Promise<LeaseRecord | undefined> {
    try {
      const r = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { name },
          ...expr,
          ReturnValues: "ALL_NEW",
        }),
      );
      return r.Attributes as LeaseRecord;
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }
}
