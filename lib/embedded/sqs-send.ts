/**
 * SendMessage and SendMessageBatch of the embedded SQS engine (SQS API Reference): sizes up to
 * the queue's MaximumMessageSize (1 MiB by default, body plus attributes) and 1 MiB per batch,
 * DelaySeconds 0..900 on standard queues only, MessageGroupId required on FIFO queues, and FIFO
 * deduplication within 5 minutes (by MessageDeduplicationId or, with ContentBasedDeduplication,
 * the SHA-256 of the body), scoped to the queue or to the message group (DeduplicationScope).
 */
import { createHash, randomUUID } from "node:crypto";
import type { EmbeddedServiceError } from "./client-stack.js";
import { invalidParameter, missingParameter, sqsError } from "./sqs-errors.js";
import {
  checkAttributes,
  checkBody,
  type MessageAttributeValue,
  md5Hex,
  md5OfAttributes,
} from "./sqs-md5.js";
import { numeric } from "./sqs-queue-attrs.js";
import type { QueueRow } from "./sqs-queue-ops.js";
import type { SqsStore } from "./sqs-store.js";

/** FIFO deduplication interval, ms (SQS: 5 minutes). */
export const DEDUP_INTERVAL_MS = 5 * 60_000;

/** Largest SendMessageBatch request, bytes (sum of the messages' sizes). */
export const MAX_BATCH_BYTES = 1_048_576;

/** One message to send, as SendMessage and SendMessageBatch's entries carry it. */
export interface SendEntry {
  Id?: string;
  MessageBody?: string;
  DelaySeconds?: number;
  MessageAttributes?: Record<string, MessageAttributeValue>;
  MessageDeduplicationId?: string;
  MessageGroupId?: string;
}

/** A checked message, ready to be stored. */
interface Prepared {
  body: string;
  attrs: string | null;
  md5Body: string;
  md5Attrs: string | undefined;
  delayMs: number;
  groupId: string | null;
  dedupId: string | null;
  size: number;
}

/** What a send answers per message. */
export interface SendResult {
  MessageId: string;
  MD5OfMessageBody: string;
  MD5OfMessageAttributes?: string;
  SequenceNumber?: string;
}

const TOKEN = /^[\x21-\x7e]{1,128}$/;

/**
 * Checks one message against the queue's rules.
 * @throws InvalidParameterValue, MissingParameter, InvalidMessageContents naming the rule.
 */
export function prepareSend(q: QueueRow, e: SendEntry): Prepared {
  const body = e.MessageBody;
  if (body === undefined || body === "") throw missingParameter("MessageBody");
  checkBody(body);
  const size = Buffer.byteLength(body) + checkAttributes(e.MessageAttributes);
  const max = numeric(q.attrs, "MaximumMessageSize");
  if (size > max)
    throw invalidParameter(
      "MessageBody",
      "(message)",
      `Message must be shorter than ${max} bytes.`,
    );
  let delay = numeric(q.attrs, "DelaySeconds");
  if (e.DelaySeconds !== undefined && e.DelaySeconds !== null) {
    if (q.fifo)
      throw invalidParameter(
        "DelaySeconds",
        e.DelaySeconds,
        "The request include parameter that is not valid for this queue type.",
      );
    if (!Number.isInteger(e.DelaySeconds) || e.DelaySeconds < 0 || e.DelaySeconds > 900)
      throw invalidParameter("DelaySeconds", e.DelaySeconds, "must be from 0 to 900 seconds.");
    delay = e.DelaySeconds;
  }
  let groupId: string | null = e.MessageGroupId ?? null;
  let dedupId: string | null = e.MessageDeduplicationId ?? null;
  if (groupId !== null && !TOKEN.test(groupId))
    throw invalidParameter("MessageGroupId", groupId, "1 to 128 printable ASCII characters.");
  if (q.fifo) {
    if (groupId === null) throw missingParameter("MessageGroupId");
    if (dedupId === null) {
      if (q.attrs.ContentBasedDeduplication !== "true")
        throw invalidParameter(
          "MessageDeduplicationId",
          "(none)",
          "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly.",
        );
      dedupId = createHash("sha256").update(body, "utf8").digest("hex");
    } else if (!TOKEN.test(dedupId))
      throw invalidParameter(
        "MessageDeduplicationId",
        dedupId,
        "1 to 128 printable ASCII characters.",
      );
  } else if (dedupId !== null) {
    throw invalidParameter(
      "MessageDeduplicationId",
      dedupId,
      "The request include parameter that is not valid for this queue type.",
    );
  }
  if (!q.fifo && groupId === null) groupId = null;
  return {
    body,
    attrs: e.MessageAttributes ? encodeAttributes(e.MessageAttributes) : null,
    md5Body: md5Hex(body),
    md5Attrs: md5OfAttributes(e.MessageAttributes),
    delayMs: delay * 1000,
    groupId,
    dedupId,
    size,
  };
}

function encodeAttributes(attrs: Record<string, MessageAttributeValue>): string | null {
  const out: Record<string, { t: string; s?: string; b?: string }> = {};
  for (const [k, v] of Object.entries(attrs)) {
    out[k] = {
      t: v.DataType ?? "String",
      ...(v.BinaryValue !== undefined
        ? { b: Buffer.from(v.BinaryValue).toString("base64") }
        : { s: v.StringValue ?? "" }),
    };
  }
  return Object.keys(out).length > 0 ? JSON.stringify(out) : null;
}

/** Message attributes as stored, back in the SDK's shape. */
export function decodeAttributes(json: string): Record<string, MessageAttributeValue> {
  const stored = JSON.parse(json) as Record<string, { t: string; s?: string; b?: string }>;
  const out: Record<string, MessageAttributeValue> = {};
  for (const [k, v] of Object.entries(stored)) {
    out[k] =
      v.b !== undefined
        ? { DataType: v.t, BinaryValue: new Uint8Array(Buffer.from(v.b, "base64")) }
        : { DataType: v.t, StringValue: v.s ?? "" };
  }
  return out;
}

/**
 * Stores checked messages in the open transaction (FIFO duplicates within the interval are
 * answered with the first message's id and sequence number, and not stored).
 */
export function storeMessages(
  store: SqsStore,
  q: QueueRow,
  messages: Prepared[],
  nowMs: number,
): SendResult[] {
  const retentionMs = numeric(q.attrs, "MessageRetentionPeriod") * 1000;
  const insert = store.stmt(
    `INSERT INTO sqs_messages (queue, id, body, attrs, md5_body, md5_attrs, group_id, dedup_id,
       seq_number, sent_ms, expires_ms, visible_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  if (store.sweepDue(nowMs)) {
    // Now and then (on a send, so an idle process does nothing): forget deduplication ids past
    // their interval and drop messages past their retention that no receive came across.
    store.stmt("DELETE FROM sqs_dedup WHERE expires_ms <= ?").run(nowMs);
    store.stmt("DELETE FROM sqs_messages WHERE expires_ms <= ?").run(nowMs);
  }
  const byGroup = q.attrs.DeduplicationScope === "messageGroup";
  const out: SendResult[] = [];
  for (const m of messages) {
    const base = {
      MD5OfMessageBody: m.md5Body,
      ...(m.md5Attrs ? { MD5OfMessageAttributes: m.md5Attrs } : {}),
    };
    let seqNumber: string | null = null;
    let dedupKey = "";
    if (q.fifo) {
      dedupKey = byGroup ? `${m.groupId}\u0000${m.dedupId}` : (m.dedupId as string);
      const dup = store
        .stmt(
          "SELECT message_id, seq_number FROM sqs_dedup WHERE queue = ? AND key = ? AND expires_ms > ?",
        )
        .get(q.name, dedupKey, nowMs) as { message_id: string; seq_number: string } | undefined;
      if (dup) {
        out.push({ MessageId: dup.message_id, ...base, SequenceNumber: dup.seq_number });
        continue;
      }
      const r = store
        .stmt("UPDATE sqs_queues SET next_seq = next_seq + 1 WHERE name = ? RETURNING next_seq")
        .get(q.name) as { next_seq: number };
      seqNumber = `1${String(r.next_seq - 1).padStart(19, "0")}`;
    }
    const id = randomUUID();
    insert.run(
      q.name,
      id,
      m.body,
      m.attrs,
      m.md5Body,
      m.md5Attrs ?? null,
      m.groupId,
      m.dedupId,
      seqNumber,
      nowMs,
      nowMs + retentionMs,
      nowMs + m.delayMs,
    );
    if (q.fifo)
      store
        .stmt(
          "INSERT OR REPLACE INTO sqs_dedup (queue, key, message_id, seq_number, expires_ms) VALUES (?, ?, ?, ?, ?)",
        )
        .run(q.name, dedupKey, id, seqNumber, nowMs + DEDUP_INTERVAL_MS);
    out.push({ MessageId: id, ...base, ...(seqNumber ? { SequenceNumber: seqNumber } : {}) });
  }
  return out;
}

const BATCH_ID = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * Checks a batch request's entries: present, at most 10, ids well-formed and distinct.
 * @throws EmptyBatchRequest, TooManyEntriesInBatchRequest, InvalidBatchEntryId,
 *   BatchEntryIdsNotDistinct.
 */
export function checkBatch(entries: Array<{ Id?: string }> | undefined): void {
  if (!entries || entries.length === 0)
    throw sqsError("EmptyBatchRequest", "There should be at least one entry in the request.");
  if (entries.length > 10)
    throw sqsError(
      "TooManyEntriesInBatchRequest",
      `Maximum number of entries per request are 10. You have sent ${entries.length}.`,
    );
  const ids = new Set<string>();
  for (const e of entries) {
    if (typeof e.Id !== "string" || !BATCH_ID.test(e.Id))
      throw sqsError(
        "InvalidBatchEntryId",
        "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
      );
    if (ids.has(e.Id)) throw sqsError("BatchEntryIdsNotDistinct", `Id ${e.Id} repeated.`);
    ids.add(e.Id);
  }
}

/** A batch entry's failure as SQS reports it. */
export function failure(
  id: string,
  e: unknown,
): {
  Id: string;
  SenderFault: boolean;
  Code: string;
  Message: string;
} {
  const err = e as EmbeddedServiceError;
  return {
    Id: id,
    SenderFault: err.$fault !== "server",
    Code: err.name ?? "InternalError",
    Message: err.message ?? String(e),
  };
}

/** Total size of a batch, checked before any message is stored. @throws BatchRequestTooLong */
export function checkBatchSize(sizes: number[]): void {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total > MAX_BATCH_BYTES)
    throw sqsError(
      "BatchRequestTooLong",
      `Batch requests cannot be longer than ${MAX_BATCH_BYTES} bytes. You have sent ${total} bytes.`,
    );
}
