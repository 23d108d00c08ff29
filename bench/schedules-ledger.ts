/**
 * The fire ledger read back after a run of the schedules scenario, and the schedules it lacks:
 * which of them lost their dynalite index entry (and were never listed due).
 */
import { createHash } from "node:crypto";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { AwsClients } from "../lib/aws/clients.js";
import { round } from "./stats.js";

/**
 * dynalite (4.0, db/index.js `createIndexKey`/`hashPrefix`) keys a GSI entry by the index key plus
 * only the first 6 hex digits of an MD5 of the table key: two items with equal index keys whose
 * prefixes collide share one entry, and the first to leave the index deletes it for both. The
 * schedules of one shard all due at T0 have equal `due` keys, so about k²/2²⁵ of k lose theirs and
 * are never listed again (real DynamoDB keeps every entry). @returns that prefix.
 */
function dynaliteIndexPrefix(id: string): string {
  return createHash("md5").update("Outliers").update(id, "utf8").digest("hex").slice(0, 6);
}

/** Schedules without a fire record, and how many of them share a dynalite index entry. */
export function neverFired(
  created: ReadonlyArray<{ id: string; shard: string }>,
  fired: ReadonlySet<string>,
): { ids: string[]; sharingIndexEntry: number; expectedSharing: number } {
  const entries = new Map<string, number>();
  const perShard = new Map<string, number>();
  for (const c of created) {
    const k = `${c.shard}:${dynaliteIndexPrefix(c.id)}`;
    entries.set(k, (entries.get(k) ?? 0) + 1);
    perShard.set(c.shard, (perShard.get(c.shard) ?? 0) + 1);
  }
  const ids = created.filter((c) => !fired.has(c.id));
  // Expected items that lose their entry: one per colliding pair, k(k−1)/2 pairs ÷ 16^6 per shard.
  const expected = [...perShard.values()].reduce((a, k) => a + (k * (k - 1)) / 2 / 16 ** 6, 0);
  return {
    ids: ids.map((c) => c.id),
    sharingIndexEntry: ids.filter(
      (c) => (entries.get(`${c.shard}:${dynaliteIndexPrefix(c.id)}`) ?? 0) > 1,
    ).length,
    expectedSharing: round(expected, 1),
  };
}

/** Every fire record of the ledger (Scan, paginated). */
export async function scanFires(
  clients: AwsClients,
  table: string,
): Promise<
  Array<{ scheduleId: string; nominalTime: number; actualTime: number; decision: string }>
> {
  const out: Array<{
    scheduleId: string;
    nominalTime: number;
    actualTime: number;
    decision: string;
  }> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const r = await clients.dynamo.send(
      new ScanCommand({
        TableName: table,
        ProjectionExpression: "scheduleId, nominalTime, actualTime, #d",
        ExpressionAttributeNames: { "#d": "decision" },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    out.push(...((r.Items ?? []) as typeof out));
    start = r.LastEvaluatedKey;
  } while (start);
  return out;
}
