/**
 * Helpers shared by the per-table parts of the DynamoDB store: the conditional-write wrapper,
 * paging tokens, one-page and every-page queries, and dropping index-only attributes.
 */
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { validationError } from "../core/errors.js";
import type { Page } from "./records.js";

export type Item = Record<string, unknown>;

export function isConditionFailure(e: unknown): boolean {
  return (
    e instanceof ConditionalCheckFailedException ||
    (e as { name?: string })?.name === "ConditionalCheckFailedException"
  );
}

export async function conditional(run: () => Promise<unknown>): Promise<boolean> {
  try {
    await run();
    return true;
  } catch (e) {
    if (isConditionFailure(e)) return false;
    throw e;
  }
}

function encodeToken(key: Item | undefined): string | undefined {
  return key ? Buffer.from(JSON.stringify(key)).toString("base64url") : undefined;
}

const badToken = () =>
  validationError([{ path: "nextToken", message: "is not a token this API returned" }]);

/** Decodes a token and checks it has exactly the key attributes of the index it pages. */
function decodeToken(token: string | undefined, keys: readonly string[]): Item | undefined {
  if (!token) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw badToken();
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) throw badToken();
  const item = v as Item;
  const names = Object.keys(item).sort();
  if (names.join() !== [...keys].sort().join()) throw badToken();
  if (!names.every((k) => typeof item[k] === "string" || typeof item[k] === "number")) {
    throw badToken();
  }
  return item;
}

export function strip<T>(item: Item, ...keys: string[]): T {
  const out = { ...item };
  for (const k of keys) delete out[k];
  return out as T;
}

export async function queryAll(
  db: DynamoDBDocumentClient,
  input: QueryCommandInput,
): Promise<Item[]> {
  const out: Item[] = [];
  let start: Item | undefined;
  do {
    const r = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    out.push(...((r.Items ?? []) as Item[]));
    start = r.LastEvaluatedKey as Item | undefined;
  } while (start);
  return out;
}

/**
 * One page of a query. Asks for one item more than `limit`, so a token is returned only when
 * more items exist (API-v1.md); with a filter, DynamoDB's own LastEvaluatedKey is used.
 * @throws ShoalError ValidationError for a token that does not fit this query.
 */
export async function page(
  db: DynamoDBDocumentClient,
  input: QueryCommandInput,
  limit: number,
  keys: readonly string[],
  nextToken?: string,
): Promise<Page<Item>> {
  const filtered = input.FilterExpression !== undefined;
  let r: { Items?: Item[]; LastEvaluatedKey?: Item };
  try {
    r = (await db.send(
      new QueryCommand({
        ...input,
        Limit: filtered ? limit : limit + 1,
        ExclusiveStartKey: decodeToken(nextToken, keys),
      }),
    )) as typeof r;
  } catch (e) {
    if (nextToken && (e as Error).name === "ValidationException") throw badToken();
    throw e;
  }
  const items = r.Items ?? [];
  if (filtered) return { items, nextToken: encodeToken(r.LastEvaluatedKey) };
  if (items.length <= limit) return { items };
  const page = items.slice(0, limit);
  const last = page[page.length - 1] as Item;
  return {
    items: page,
    nextToken: encodeToken(Object.fromEntries(keys.map((k) => [k, last[k]]))),
  };
}
