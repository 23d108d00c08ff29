/**
 * ReceiveMessage (one attempt, without the wait), DeleteMessage and ChangeMessageVisibility of the
 * embedded SQS engine, each in one `BEGIN IMMEDIATE` transaction (SQS API Reference):
 * - standard queues hand out visible messages oldest first; FIFO queues hand out a message group's
 *   messages in order, and nothing of a group while one of its messages is in flight;
 * - a message received maxReceiveCount times that is due again moves to the RedrivePolicy's
 *   dead-letter queue instead (in order, on FIFO); messages past the retention period are dropped;
 * - a receipt handle names one receive: deleting with an older one succeeds and deletes nothing
 *   (DeleteMessage: "you must provide the most recently received ReceiptHandle").
 */
import { randomBytes } from "node:crypto";
import { invalidParameter, sqsError } from "./sqs-errors.js";
import { ACCOUNT, nameOf, numeric, type RedrivePolicy, redrivePolicy } from "./sqs-queue-attrs.js";
import { findQueue, type QueueRow } from "./sqs-queue-ops.js";
import { decodeAttributes } from "./sqs-send.js";
import type { SqsStore } from "./sqs-store.js";

/** A stored message, as the engine reads it. */
interface Row {
  seq: number;
  id: string;
  body: string;
  attrs: string | null;
  md5_body: string;
  md5_attrs: string | null;
  group_id: string | null;
  dedup_id: string | null;
  seq_number: string | null;
  sent_ms: number;
  expires_ms: number;
  visible_ms: number;
  receive_count: number;
  first_receive_ms: number | null;
  dlq_source: string | null;
}

const COLUMNS = `seq, id, body, attrs, md5_body, md5_attrs, group_id, dedup_id, seq_number, sent_ms,
  expires_ms, visible_ms, receive_count, first_receive_ms, dlq_source`;

/** Rows read as arrays (see SqsStore.arrays), in COLUMNS' order. */
function rowsOf(values: unknown[]): Row[] {
  return (values as unknown[][]).map((v) => ({
    seq: v[0] as number,
    id: v[1] as string,
    body: v[2] as string,
    attrs: v[3] as string | null,
    md5_body: v[4] as string,
    md5_attrs: v[5] as string | null,
    group_id: v[6] as string | null,
    dedup_id: v[7] as string | null,
    seq_number: v[8] as string | null,
    sent_ms: v[9] as number,
    expires_ms: v[10] as number,
    visible_ms: v[11] as number,
    receive_count: v[12] as number,
    first_receive_ms: v[13] as number | null,
    dlq_source: v[14] as string | null,
  }));
}

/** What one receive asks for. */
export interface ReceiveOptions {
  max: number;
  visibilitySeconds: number;
  /** System attribute names asked for (`All` for all). */
  systemNames: string[];
  /** Message attribute names or `prefix.*` asked for (`All` / `.*` for all). */
  attributeNames: string[];
  /** ARN of a queue by name (DeadLetterQueueSourceArn). */
  arnOf: (name: string) => string;
}

/** A message as ReceiveMessage answers it. */
export type ReceivedMessage = Record<string, unknown>;

/** A receipt handle: the message's row and the receive's token. */
function handleOf(seq: number, token: string): string {
  return Buffer.from(`${seq}:${token}`).toString("base64url");
}

/**
 * The row and token a receipt handle names.
 * @throws ReceiptHandleIsInvalid when it is not one of this engine's handles.
 */
export function parseHandle(handle: unknown): { seq: number; token: string } {
  const text = typeof handle === "string" ? Buffer.from(handle, "base64url").toString() : "";
  const m = /^(\d{1,16}):([0-9a-f]{16})$/.exec(text);
  if (!m || typeof handle !== "string" || handleOf(Number(m[1]), m[2] as string) !== handle)
    throw sqsError(
      "ReceiptHandleIsInvalid",
      `The input receipt handle "${String(handle)}" is not a valid receipt handle.`,
    );
  return { seq: Number(m[1]), token: m[2] as string };
}

function moveToDeadLetter(
  store: SqsStore,
  policy: RedrivePolicy | undefined,
  row: Row,
  sourceArn: string,
  nowMs: number,
): boolean {
  if (!policy || row.receive_count < policy.maxReceiveCount) return false;
  const dlq = findQueue(store, nameOf(policy.deadLetterTargetArn));
  if (!dlq) return false;
  store
    .stmt(
      `INSERT INTO sqs_messages (queue, id, body, attrs, md5_body, md5_attrs, group_id, dedup_id,
         seq_number, sent_ms, expires_ms, visible_ms, dlq_source)
       SELECT ?, id, body, attrs, md5_body, md5_attrs, group_id, dedup_id, seq_number, sent_ms,
         ?, ?, ? FROM sqs_messages WHERE seq = ?`,
    )
    .run(
      dlq.name,
      row.sent_ms + numeric(dlq.attrs, "MessageRetentionPeriod") * 1000,
      nowMs,
      sourceArn,
      row.seq,
    );
  store.stmt("DELETE FROM sqs_messages WHERE seq = ?").run(row.seq);
  return true;
}

/**
 * Whether `queue` may have a message to hand out now, without the write lock: a visible message
 * (standard) or a ready group (FIFO: its head visible, none of its messages in flight). A long
 * poll woken by another process's commit (to any queue) looks here first.
 */
export function anyReceivable(store: SqsStore, q: QueueRow, nowMs: number): boolean {
  const sql = q.fifo
    ? "SELECT 1 FROM sqs_fifo_groups WHERE queue = ? AND ready_ms <= ? LIMIT 1"
    : "SELECT 1 FROM sqs_messages WHERE queue = ? AND visible_ms <= ? LIMIT 1";
  return store.stmt(sql).get(q.name, nowMs) !== undefined;
}

/**
 * Takes up to `opts.max` messages (none when none is due), in one transaction.
 * @returns the messages and the dead-letter queues that received messages (to wake).
 */
export function receiveOnce(
  store: SqsStore,
  q: QueueRow,
  opts: ReceiveOptions,
  nowMs: number,
): { messages: ReceivedMessage[]; redriven: string[] } {
  // Nothing due: answer without taking the write lock (the common case of an idle long poll).
  if (!anyReceivable(store, q, nowMs)) return { messages: [], redriven: [] };
  return store.tx(() => {
    const taken: Row[] = [];
    const redriven = new Set<string>();
    const sourceArn = opts.arnOf(q.name);
    const policy = redrivePolicy(q.attrs);
    const consider = (row: Row): void => {
      if (row.expires_ms <= nowMs) {
        store.stmt("DELETE FROM sqs_messages WHERE seq = ?").run(row.seq);
      } else if (moveToDeadLetter(store, policy, row, sourceArn, nowMs)) {
        redriven.add(nameOf(policy?.deadLetterTargetArn ?? ""));
      } else taken.push(row);
    };
    if (!q.fifo) {
      const due = store.arrays(
        `SELECT ${COLUMNS} FROM sqs_messages WHERE queue = ? AND visible_ms <= ? ORDER BY visible_ms LIMIT ?`,
      );
      // Rows dropped or redriven make room: ask again (taken rows are still due, skip them).
      const seen = new Set<number>();
      for (let round = 0; taken.length < opts.max && round < 100; round++) {
        const rows = rowsOf(due.all(q.name, nowMs, opts.max + seen.size));
        const fresh = rows.filter((r) => !seen.has(r.seq));
        if (fresh.length === 0) break;
        for (const r of fresh) {
          if (taken.length >= opts.max) break;
          seen.add(r.seq);
          consider(r);
        }
      }
    } else {
      // Ready groups' heads, longest ready first, through the (queue, ready_ms, head_seq) index:
      // the cost follows what is taken, not the number of groups (sqs_fifo_groups in
      // sqs-store.ts). The last column says whether the group has more messages after its head.
      const heads = store.arrays(
        `SELECT ${COLUMNS.split(",")
          .map((c) => `m.${c.trim()}`)
          .join(", ")}, EXISTS (SELECT 1 FROM sqs_messages n
             WHERE n.queue = g.queue AND n.group_id = g.group_id AND n.seq > g.head_seq)
         FROM sqs_fifo_groups g JOIN sqs_messages m ON m.seq = g.head_seq
         WHERE g.queue = ? AND g.ready_ms <= ? ORDER BY g.ready_ms, g.head_seq LIMIT ?`,
      );
      const after = store.arrays(
        `SELECT ${COLUMNS} FROM sqs_messages WHERE queue = ? AND group_id = ? AND seq > ?
         ORDER BY seq LIMIT ?`,
      );
      // Groups whose head was dropped or redriven may still be ready: ask again, skipping the
      // groups done (a group taken with VisibilityTimeout 0 stays ready).
      const seen = new Set<string>();
      for (let round = 0; taken.length < opts.max && round < 100; round++) {
        const found = heads.all(
          q.name,
          nowMs,
          opts.max - taken.length + seen.size,
        ) as unknown as unknown[][];
        const fresh = found.filter((v) => !seen.has(v[6] as string));
        if (fresh.length === 0) break;
        for (const v of fresh) {
          if (taken.length >= opts.max) break;
          const [head] = rowsOf([v]) as [Row];
          const group = head.group_id as string;
          seen.add(group);
          consider(head);
          if (!v[15]) continue;
          for (const r of rowsOf(
            after.all(q.name, group, head.seq, opts.max - taken.length + 10),
          )) {
            // A later message never passes an earlier one that is delayed or in flight.
            if (r.visible_ms > nowMs || taken.length >= opts.max) break;
            consider(r);
          }
        }
      }
    }
    const token = randomBytes(8).toString("hex");
    if (taken.length > 0)
      store
        .stmt(
          `UPDATE sqs_messages SET visible_ms = ?, receive_count = receive_count + 1,
             first_receive_ms = COALESCE(first_receive_ms, ?), receive_ms = ?, receipt = ?
           WHERE seq IN (SELECT value FROM json_each(?))`,
        )
        .run(
          nowMs + opts.visibilitySeconds * 1000,
          nowMs,
          nowMs,
          token,
          JSON.stringify(taken.map((r) => r.seq)),
        );
    const messages = taken.map((r) => render(q, r, handleOf(r.seq, token), nowMs, opts));
    return { messages, redriven: [...redriven] };
  });
}

function render(
  q: QueueRow,
  r: Row,
  handle: string,
  nowMs: number,
  opts: ReceiveOptions,
): ReceivedMessage {
  const m: ReceivedMessage = {
    MessageId: r.id,
    ReceiptHandle: handle,
    MD5OfBody: r.md5_body,
    Body: r.body,
  };
  const all = opts.systemNames.includes("All");
  const system: Record<string, string | null> = {
    SenderId: ACCOUNT,
    SentTimestamp: String(r.sent_ms),
    ApproximateReceiveCount: String(r.receive_count + 1),
    ApproximateFirstReceiveTimestamp: String(r.first_receive_ms ?? nowMs),
    MessageGroupId: r.group_id,
    MessageDeduplicationId: q.fifo ? r.dedup_id : null,
    SequenceNumber: r.seq_number,
    DeadLetterQueueSourceArn: r.dlq_source,
  };
  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(system))
    if (v !== null && (all || opts.systemNames.includes(k))) attributes[k] = v;
  if (Object.keys(attributes).length > 0) m.Attributes = attributes;
  if (r.attrs && opts.attributeNames.length > 0) {
    const wanted = (name: string) =>
      opts.attributeNames.some(
        (n) =>
          n === "All" ||
          n === ".*" ||
          n === name ||
          (n.endsWith(".*") && name.startsWith(n.slice(0, -1))),
      );
    const picked = Object.fromEntries(
      Object.entries(decodeAttributes(r.attrs)).filter(([k]) => wanted(k)),
    );
    if (Object.keys(picked).length > 0) {
      m.MessageAttributes = picked;
      if (r.md5_attrs) m.MD5OfMessageAttributes = r.md5_attrs;
    }
  }
  return m;
}

/**
 * Deletes the message a receipt handle names, in the open transaction; an older handle of a
 * message received again, or a message deleted already, deletes nothing (SQS answers success).
 * @throws ReceiptHandleIsInvalid for a handle that is not one.
 */
export function deleteOne(store: SqsStore, q: QueueRow, handle: unknown): void {
  const { seq, token } = parseHandle(handle);
  const row = store.stmt("SELECT queue, receipt FROM sqs_messages WHERE seq = ?").get(seq) as
    | { queue: string; receipt: string | null }
    | undefined;
  if (!row) return;
  if (row.queue !== q.name)
    throw sqsError(
      "ReceiptHandleIsInvalid",
      `The input receipt handle "${String(handle)}" is not a valid receipt handle.`,
    );
  if (row.receipt === token) store.stmt("DELETE FROM sqs_messages WHERE seq = ?").run(seq);
}

/**
 * Sets the visibility timeout of the message a receipt handle names, from now, in the open
 * transaction: 0..43,200 s, and never beyond 12 hours after the receive.
 * @throws InvalidParameterValue (out of range; the message gone), MessageNotInflight (not in
 *   flight under this receive), ReceiptHandleIsInvalid.
 */
export function changeVisibility(
  store: SqsStore,
  q: QueueRow,
  handle: unknown,
  seconds: unknown,
  nowMs: number,
): void {
  if (typeof seconds !== "number" || !Number.isInteger(seconds) || seconds < 0 || seconds > 43_200)
    throw invalidParameter("VisibilityTimeout", seconds, "must be an integer from 0 to 43200.");
  const { seq, token } = parseHandle(handle);
  const row = store
    .stmt("SELECT queue, receipt, visible_ms, receive_ms FROM sqs_messages WHERE seq = ?")
    .get(seq) as
    | { queue: string; receipt: string | null; visible_ms: number; receive_ms: number }
    | undefined;
  if (!row || row.queue !== q.name)
    throw invalidParameter(
      "ReceiptHandle",
      handle,
      "Message does not exist or is not available for visibility timeout change.",
    );
  if (row.receipt !== token || row.visible_ms <= nowMs)
    throw sqsError("MessageNotInflight", "The message referred to isn't in flight.");
  if (nowMs + seconds * 1000 > row.receive_ms + 43_200_000)
    throw invalidParameter(
      "VisibilityTimeout",
      seconds,
      "Total VisibilityTimeout for the message is beyond the limit [43200 seconds].",
    );
  store
    .stmt("UPDATE sqs_messages SET visible_ms = ? WHERE seq = ?")
    .run(nowMs + seconds * 1000, seq);
}

/** When the next message of `queue` that is not due yet becomes due (epoch ms), if any. */
export function nextDue(store: SqsStore, q: QueueRow, nowMs: number): number | undefined {
  // FIFO: when the next group becomes ready (a group's later messages wait for its head).
  const sql = q.fifo
    ? "SELECT MIN(ready_ms) AS at FROM sqs_fifo_groups WHERE queue = ? AND ready_ms > ?"
    : "SELECT MIN(visible_ms) AS at FROM sqs_messages WHERE queue = ? AND visible_ms > ?";
  const r = store.stmt(sql).get(q.name, nowMs) as { at: number | null };
  return r.at ?? undefined;
}
