/**
 * The queue operations of the embedded SQS engine: CreateQueue, GetQueueUrl, ListQueues,
 * GetQueueAttributes, SetQueueAttributes, DeleteQueue, PurgeQueue (SQS API Reference).
 */
import { invalidParameter, missingParameter, noSuchQueue, sqsError } from "./sqs-errors.js";
import {
  ACCOUNT,
  COMPUTED,
  checkQueueName,
  knownAttribute,
  nameOf,
  normaliseAttributes,
  type QueueAttributes,
  withDefaults,
} from "./sqs-queue-attrs.js";
import type { SqsStore } from "./sqs-store.js";

/** A queue's row. */
export interface QueueRow {
  name: string;
  fifo: boolean;
  attrs: QueueAttributes;
  createdS: number;
  modifiedS: number;
}

/** Where the engine's URLs and ARNs point. */
export interface QueueNaming {
  region: string;
  /** `http://host[:port]` queue URLs start with (default `http://sqs.<region>.localhost`). */
  urlBase?: string;
}

/** The URL of queue `name`. */
export function queueUrl(naming: QueueNaming, name: string): string {
  const base = (naming.urlBase ?? `http://sqs.${naming.region}.localhost`).replace(/\/+$/, "");
  return `${base}/${ACCOUNT}/${name}`;
}

/** The ARN of queue `name`. */
export function queueArnOf(naming: QueueNaming, name: string): string {
  return `arn:aws:sqs:${naming.region}:${ACCOUNT}:${name}`;
}

/** The queue named `name`, or undefined. */
export function findQueue(store: SqsStore, name: string): QueueRow | undefined {
  const r = store
    .arrays("SELECT fifo, attrs, created_s, modified_s FROM sqs_queues WHERE name = ?")
    .get(name) as unknown as [number, string, number, number] | undefined;
  if (!r) return undefined;
  return { name, fifo: r[0] === 1, attrs: parseAttrs(r[1]), createdS: r[2], modifiedS: r[3] };
}

/** Parsed queue attributes by their JSON (a queue's settings change rarely; parse once). */
const parsed = new Map<string, QueueAttributes>();

function parseAttrs(json: string): QueueAttributes {
  let a = parsed.get(json);
  if (!a) {
    a = JSON.parse(json) as QueueAttributes;
    if (parsed.size > 1000) parsed.clear();
    parsed.set(json, a);
  }
  // A copy: callers may change what they get.
  return { ...a };
}

/**
 * The queue a request's QueueUrl names (any URL whose last two path parts are account/name).
 * @throws MissingParameter without a URL, QueueDoesNotExist when there is no such queue.
 */
export function queueOf(store: SqsStore, url: unknown): QueueRow {
  if (typeof url !== "string" || url === "") throw missingParameter("QueueUrl");
  const q = findQueue(store, nameOf(url));
  if (!q) throw noSuchQueue();
  return q;
}

function lookupArn(store: SqsStore) {
  return (arn: string) => {
    const q = arn.startsWith("arn:aws:sqs:") ? findQueue(store, nameOf(arn)) : undefined;
    return q ? { fifo: q.fifo } : undefined;
  };
}

/**
 * CreateQueue: an existing queue of the name comes back when every attribute given matches its
 * own, else QueueNameExists.
 */
export function createQueue(
  store: SqsStore,
  naming: QueueNaming,
  input: { QueueName?: string; Attributes?: Record<string, string> },
  nowMs: number,
): { QueueUrl: string } {
  const name = input.QueueName;
  if (!name) throw missingParameter("QueueName");
  const fifo = input.Attributes?.FifoQueue === "true";
  checkQueueName(name, fifo);
  const attrs = normaliseAttributes(input.Attributes, fifo, true, lookupArn(store));
  return store.tx(() => {
    const existing = findQueue(store, name);
    if (existing) {
      const mine = withDefaults(existing.attrs);
      for (const [k, v] of Object.entries(attrs)) {
        if ((mine[k] ?? "") !== v)
          throw sqsError(
            "QueueNameExists",
            `A queue already exists with the same name and a different value for attribute ${k}`,
          );
      }
      return { QueueUrl: queueUrl(naming, name) };
    }
    const s = Math.floor(nowMs / 1000);
    store
      .stmt(
        "INSERT INTO sqs_queues (name, fifo, attrs, created_s, modified_s) VALUES (?, ?, ?, ?, ?)",
      )
      .run(name, fifo ? 1 : 0, JSON.stringify(attrs), s, s);
    return { QueueUrl: queueUrl(naming, name) };
  });
}

/** GetQueueUrl. @throws QueueDoesNotExist */
export function getQueueUrl(
  store: SqsStore,
  naming: QueueNaming,
  input: { QueueName?: string },
): { QueueUrl: string } {
  if (!input.QueueName) throw missingParameter("QueueName");
  if (!findQueue(store, input.QueueName)) throw noSuchQueue();
  return { QueueUrl: queueUrl(naming, input.QueueName) };
}

/** ListQueues: by name prefix, in name order, `MaxResults` (1..1000) a page with a NextToken. */
export function listQueues(
  store: SqsStore,
  naming: QueueNaming,
  input: { QueueNamePrefix?: string; MaxResults?: number; NextToken?: string },
): { QueueUrls?: string[]; NextToken?: string } {
  const max = input.MaxResults;
  if (max !== undefined && (!Number.isInteger(max) || max < 1 || max > 1000))
    throw invalidParameter("MaxResults", max, "must be between 1 and 1000.");
  if (input.NextToken !== undefined && max === undefined)
    throw invalidParameter("NextToken", input.NextToken, "MaxResults is required with NextToken.");
  const after = input.NextToken ? Buffer.from(input.NextToken, "base64url").toString() : "";
  const prefix = input.QueueNamePrefix ?? "";
  const rows = store
    .stmt(
      "SELECT name FROM sqs_queues WHERE name > ? AND substr(name, 1, ?) = ? ORDER BY name LIMIT ?",
    )
    .all(after, prefix.length, prefix, (max ?? 1000) + 1) as Array<{ name: string }>;
  const page = rows.slice(0, max ?? 1000);
  const out: { QueueUrls?: string[]; NextToken?: string } = {};
  if (page.length > 0) out.QueueUrls = page.map((r) => queueUrl(naming, r.name));
  const last = page[page.length - 1];
  if (max !== undefined && rows.length > page.length && last)
    out.NextToken = Buffer.from(last.name).toString("base64url");
  return out;
}

/** GetQueueAttributes: `All` or the names asked for (counts are exact here, at `nowMs`). */
export function getQueueAttributes(
  store: SqsStore,
  naming: QueueNaming,
  input: { QueueUrl?: string; AttributeNames?: string[] },
  nowMs: number,
): { Attributes?: Record<string, string> } {
  const q = queueOf(store, input.QueueUrl);
  const names = input.AttributeNames ?? [];
  for (const n of names)
    if (n !== "All" && !knownAttribute(n))
      throw sqsError("InvalidAttributeName", `Unknown Attribute ${n}.`);
  const all = names.includes("All");
  const want = (n: string) => all || names.includes(n);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(withDefaults(q.attrs))) if (want(k)) out[k] = v;
  if (COMPUTED.some((n) => n.startsWith("Approximate") && want(n))) {
    const c = store
      .stmt(
        `SELECT
           COALESCE(SUM(visible_ms <= ?), 0) AS visible,
           COALESCE(SUM(visible_ms > ? AND receive_count > 0), 0) AS inflight,
           COALESCE(SUM(visible_ms > ? AND receive_count = 0), 0) AS delayed
         FROM sqs_messages WHERE queue = ? AND expires_ms > ?`,
      )
      .get(nowMs, nowMs, nowMs, q.name, nowMs) as Record<string, number>;
    if (want("ApproximateNumberOfMessages")) out.ApproximateNumberOfMessages = String(c.visible);
    if (want("ApproximateNumberOfMessagesNotVisible"))
      out.ApproximateNumberOfMessagesNotVisible = String(c.inflight);
    if (want("ApproximateNumberOfMessagesDelayed"))
      out.ApproximateNumberOfMessagesDelayed = String(c.delayed);
  }
  if (want("CreatedTimestamp")) out.CreatedTimestamp = String(q.createdS);
  if (want("LastModifiedTimestamp")) out.LastModifiedTimestamp = String(q.modifiedS);
  if (want("QueueArn")) out.QueueArn = queueArnOf(naming, q.name);
  return Object.keys(out).length > 0 ? { Attributes: out } : {};
}

/** SetQueueAttributes (FifoQueue cannot change). */
export function setQueueAttributes(
  store: SqsStore,
  input: { QueueUrl?: string; Attributes?: Record<string, string> },
  nowMs: number,
): Record<string, never> {
  if (!input.Attributes) throw missingParameter("Attributes");
  store.tx(() => {
    const q = queueOf(store, input.QueueUrl);
    const attrs = normaliseAttributes(input.Attributes, q.fifo, false, lookupArn(store));
    const merged = { ...q.attrs, ...attrs };
    for (const [k, v] of Object.entries(merged)) if (v === "") delete merged[k];
    store
      .stmt("UPDATE sqs_queues SET attrs = ?, modified_s = ? WHERE name = ?")
      .run(JSON.stringify(merged), Math.floor(nowMs / 1000), q.name);
  });
  return {};
}

/** DeleteQueue: the queue and its messages. */
export function deleteQueue(store: SqsStore, input: { QueueUrl?: string }): Record<string, never> {
  store.tx(() => {
    const q = queueOf(store, input.QueueUrl);
    store.stmt("DELETE FROM sqs_messages WHERE queue = ?").run(q.name);
    store.stmt("DELETE FROM sqs_dedup WHERE queue = ?").run(q.name);
    store.stmt("DELETE FROM sqs_queues WHERE name = ?").run(q.name);
  });
  return {};
}

/** PurgeQueue: every message of the queue, at once. */
export function purgeQueue(store: SqsStore, input: { QueueUrl?: string }): Record<string, never> {
  store.tx(() => {
    const q = queueOf(store, input.QueueUrl);
    store.stmt("DELETE FROM sqs_messages WHERE queue = ?").run(q.name);
  });
  return {};
}
