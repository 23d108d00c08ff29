/**
 * Helpers shared by the per-table parts of the DynamoDB store: the conditional-write wrapper,
 * paging tokens, one-page and every-page queries, and dropping index-only attributes.
 */
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
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

/** Writes `item` unless an item with its key exists (`attribute_not_exists(<keyAttr>)`). */
export function putIfAbsent(
  db: DynamoDBDocumentClient,
  table: string,
  item: Item,
  keyAttr: string,
): Promise<boolean> {
  return conditional(() =>
    db.send(
      new PutCommand({
        TableName: table,
        Item: item,
        ConditionExpression: "attribute_not_exists(#k)",
        ExpressionAttributeNames: { "#k": keyAttr },
      }),
    ),
  );
}

/**
 * Replaces the whole item if its stored `rev` is `rev - 1` (the optimistic lock of instances,
 * schedules and backfills: every write is conditioned on the revision it read).
 */
export function putRevision(
  db: DynamoDBDocumentClient,
  table: string,
  item: Item,
  rev: number,
): Promise<boolean> {
  return conditional(() =>
    db.send(
      new PutCommand({
        TableName: table,
        Item: item,
        ConditionExpression: "rev = :prev",
        ExpressionAttributeValues: { ":prev": rev - 1 },
      }),
    ),
  );
}

/** A strongly consistent GetItem (state is always read as last written). */
export async function getConsistent(
  db: DynamoDBDocumentClient,
  table: string,
  key: Item,
): Promise<Item | undefined> {
  const r = await db.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
  return r.Item;
}

/** Largest epoch ms that fits 15 digits (year 33658): every real time does. */
export const MAX_MS = 10 ** 15 - 1;

/**
 * The TTL attribute value (lib/aws/resources.ts TTL_ATTRIBUTE) of an item that may go
 * `retentionDays` after `ms`: epoch seconds, as DynamoDB TTL wants them. Undefined when
 * retention is off (0 or absent) or `ms` unknown.
 */
export function expiresAt(ms: number | undefined, retentionDays: number | undefined) {
  if (!retentionDays || retentionDays <= 0 || ms === undefined) return undefined;
  return Math.floor(ms / 1000) + Math.round(retentionDays * 86_400);
}

/**
 * `<ms, 15 digits zero-padded>#<id>`: sorts by time, then id (list keys by creation time, the
 * schedules' due key), and is unique per item, unlike the time alone.
 * @throws RangeError when `ms` is not a whole number of ms in 0 .. 10^15 - 1.
 */
export function timeKey(ms: number, id: string): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_MS) {
    throw new RangeError(`time must be a whole number of ms in 0..${MAX_MS}: ${ms}`);
  }
  return `${String(ms).padStart(15, "0")}#${id}`;
}

function encodeToken(key: Item | undefined): string | undefined {
  return key ? Buffer.from(JSON.stringify(key)).toString("base64url") : undefined;
}

/** `cause`: DynamoDB's refusal of the start key, when that is how the token was found out. */
const badToken = (cause?: unknown) =>
  validationError([{ path: "nextToken", message: "is not a token this API returned" }], undefined, {
    cause,
  });

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
 * more items exist (docs/api.md "Lists and pagination"); with a filter, DynamoDB's own LastEvaluatedKey is used.
 * @throws RequestError ValidationError for a token that does not fit this query.
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
    if (nextToken && (e as Error).name === "ValidationException") throw badToken(e);
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

/**
 * One page of a resource list, newest first: one workflow's items (index `ix.byWorkflow`,
 * partition `workflow`) when `q.workflow` is given, else all of them (index `ix.all`, partition
 * `listKey` = `ix.listKey`); both indexes sort by `createdKey` (`timeKey`), the item key is `id`.
 * `q.state` filters each page on the `state` attribute: a page may then hold fewer than
 * `q.limit` items (even none) and still carry a token.
 * @throws RequestError ValidationError for a token this query did not hand out.
 */
export function newestFirst(
  db: DynamoDBDocumentClient,
  table: string,
  ix: { all: string; listKey: string; byWorkflow?: string },
  q: { limit: number; workflow?: string; state?: string; nextToken?: string },
): Promise<Page<Item>> {
  const byWorkflow = q.workflow !== undefined && ix.byWorkflow !== undefined;
  const partition = byWorkflow ? "workflow" : "listKey";
  return page(
    db,
    {
      TableName: table,
      IndexName: byWorkflow ? ix.byWorkflow : ix.all,
      KeyConditionExpression: "#p = :p",
      ...(q.state !== undefined ? { FilterExpression: "#s = :s" } : {}),
      ExpressionAttributeNames: {
        "#p": partition,
        ...(q.state !== undefined ? { "#s": "state" } : {}),
      },
      ExpressionAttributeValues: {
        ":p": byWorkflow ? q.workflow : ix.listKey,
        ...(q.state !== undefined ? { ":s": q.state } : {}),
      },
      ScanIndexForward: false,
    },
    q.limit,
    [partition, "createdKey", "id"],
    q.nextToken,
  );
}
