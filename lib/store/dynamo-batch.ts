/**
 * Reads of many items by key in few requests (BatchGetItem, 100 keys a request): what the
 * instance list reads for a page's progress and its tasks' states, so that a page costs a few
 * requests rather than one per item.
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { Item } from "./dynamo-common.js";

/** DynamoDB's limit of keys per BatchGetItem request. */
const KEYS_PER_REQUEST = 100;
/** Rounds of re-asking for the keys DynamoDB left unprocessed (throttling) before giving up. */
const MAX_ROUNDS = 8;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The items of `keys` that exist, in no particular order; eventually consistent unless
 * `consistent` (charged twice the units).
 * @param attributes the attributes to return (a projection: the read is still charged on the
 *   whole item's size).
 * @returns ⌈keys/100⌉ requests, plus one per round of unprocessed keys.
 * @throws Error when DynamoDB still leaves keys unprocessed after {@link MAX_ROUNDS} rounds.
 */
export async function batchGet(
  db: DynamoDBDocumentClient,
  table: string,
  keys: readonly Item[],
  attributes: readonly string[],
  consistent = false,
): Promise<Item[]> {
  const names = Object.fromEntries(attributes.map((a, i) => [`#a${i}`, a]));
  const projection = Object.keys(names).join(", ");
  const out: Item[] = [];
  for (let start = 0; start < keys.length; start += KEYS_PER_REQUEST) {
    let pending: Item[] = keys.slice(start, start + KEYS_PER_REQUEST);
    for (let round = 0; pending.length > 0; round++) {
      if (round >= MAX_ROUNDS) {
        throw new Error(`BatchGetItem on ${table}: ${pending.length} keys left unprocessed`);
      }
      // Unprocessed keys come from throttling: back off before asking again.
      if (round > 0) await pause(Math.min(1000, 25 * 2 ** round));
      const r = await db.send(
        new BatchGetCommand({
          RequestItems: {
            [table]: {
              Keys: pending,
              ProjectionExpression: projection,
              ExpressionAttributeNames: names,
              ...(consistent ? { ConsistentRead: true } : {}),
            },
          },
        }),
      );
      out.push(...((r.Responses?.[table] ?? []) as Item[]));
      pending = (r.UnprocessedKeys?.[table]?.Keys ?? []) as Item[];
    }
  }
  return out;
}
