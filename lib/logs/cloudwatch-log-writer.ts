/**
 * Writing one attempt's log to CloudWatch Logs: lines are buffered and handed to a sender in
 * batches that respect PutLogEvents' limits (CloudWatch Logs API reference, PutLogEvents:
 * https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutLogEvents.html).
 */
import type { InputLogEvent } from "@aws-sdk/client-cloudwatch-logs";
import type { TaskLogWriter } from "./task-log.js";

/** PutLogEvents: at most 10,000 events per batch. */
export const MAX_BATCH_EVENTS = 10_000;
/** PutLogEvents: at most 1,048,576 bytes per batch: messages in UTF-8 plus 26 bytes per event. */
export const MAX_BATCH_BYTES = 1_048_576;
/** PutLogEvents: the per-event overhead counted in the batch size, bytes. */
export const EVENT_OVERHEAD_BYTES = 26;
/**
 * The largest event, bytes (256 KiB). AWS has since raised the event limit to 1 MB; 256 KiB,
 * overhead included, is accepted under both the old and the new limit.
 */
export const MAX_EVENT_BYTES = 262_144;
/** The longest message one event carries, UTF-8 bytes; longer lines are split. */
export const MAX_MESSAGE_BYTES = MAX_EVENT_BYTES - EVENT_OVERHEAD_BYTES;
/** PutLogEvents: a batch may not span more than 24 hours (ms); batches span strictly less. */
export const MAX_BATCH_SPAN_MS = 24 * 60 * 60 * 1000;
/**
 * Splits a message into pieces of at most `maxBytes` UTF-8 bytes (default `MAX_MESSAGE_BYTES`),
 * never inside a character. Returns `[message]` when it fits.
 */
export function splitMessage(message: string, maxBytes = MAX_MESSAGE_BYTES): string[] {
  if (Buffer.byteLength(message, "utf8") <= maxBytes) return [message];
  const buf = Buffer.from(message, "utf8");
  const parts: string[] = [];
  let start = 0;
  while (start < buf.length) {
    let end = Math.min(start + maxBytes, buf.length);
    // Back off continuation bytes (10xxxxxx) so a multi-byte character stays whole.
    while (end < buf.length && end > start && ((buf[end] as number) & 0xc0) === 0x80) end--;
    if (end === start) end = Math.min(start + maxBytes, buf.length);
    parts.push(buf.toString("utf8", start, end));
    start = end;
  }
  return parts;
}

/** A buffered event, with its size as PutLogEvents counts it (message bytes + 26). */
interface Pending {
  timestamp: number;
  message: string;
  bytes: number;
}

/**
 * One attempt's writer: a queue of events drained by a single sender, so order is kept. Batches
 * go to `send` once `ready` resolved (the stream exists), when `flushIntervalMs` passed since the
 * first unsent line, when a batch is full, and on `close()`.
 */
export class StreamWriter implements TaskLogWriter {
  private readonly pending: Pending[] = [];
  private pendingBytes = 0;
  private lastTimestamp = 0;
  /** Events queued so far, events taken off the queue (sent or given up), and the flush mark. */
  private written = 0;
  private taken = 0;
  private flushTarget = 0;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly flushIntervalMs: number,
    private readonly ready: Promise<void>,
    private readonly send: (events: InputLogEvent[]) => Promise<void>,
  ) {}

  /**
   * Queues one line at `at` (ms since the epoch, default now). Newlines become spaces (one line,
   * one event, as in the file log); an empty line is sent as " " (PutLogEvents refuses empty
   * messages); lines past `MAX_MESSAGE_BYTES` become several events. Timestamps never go
   * backwards (an earlier `at` takes the previous line's time): PutLogEvents wants batches in
   * chronological order, and readers see events in timestamp order.
   */
  write(message: string, at?: number): void {
    if (this.closing) return;
    const when = at !== undefined && Number.isFinite(at) ? Math.floor(at) : Date.now();
    const timestamp = Math.max(when, this.lastTimestamp);
    this.lastTimestamp = timestamp;
    const text = message.replace(/\r?\n/g, " ") || " ";
    for (const part of splitMessage(text)) {
      const bytes = Buffer.byteLength(part, "utf8") + EVENT_OVERHEAD_BYTES;
      this.pending.push({ timestamp, message: part, bytes });
      this.pendingBytes += bytes;
      this.written++;
    }
    if (this.isFull()) void this.pump();
    else this.arm();
  }

  /** Sends everything written; resolves when it was sent or given up, never rejects. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.flushTarget = this.written;
      while (this.taken < this.flushTarget) await this.pump();
      await this.ready;
    })();
    return this.closing;
  }

  /** A whole batch is waiting: a limit is reached or the next event would pass one. */
  private isFull(): boolean {
    const first = this.pending[0];
    const last = this.pending[this.pending.length - 1];
    if (!first || !last) return false;
    return (
      this.pending.length >= MAX_BATCH_EVENTS ||
      this.pendingBytes >= MAX_BATCH_BYTES ||
      last.timestamp - first.timestamp >= MAX_BATCH_SPAN_MS
    );
  }

  /** Takes the longest prefix of the queue that fits one PutLogEvents batch (at least one). */
  private take(): InputLogEvent[] {
    const first = this.pending[0];
    let bytes = 0;
    let n = 0;
    for (const e of this.pending) {
      if (
        n === MAX_BATCH_EVENTS ||
        bytes + e.bytes > MAX_BATCH_BYTES ||
        e.timestamp - (first?.timestamp ?? e.timestamp) >= MAX_BATCH_SPAN_MS
      )
        break;
      bytes += e.bytes;
      n++;
    }
    this.pendingBytes -= bytes;
    this.taken += n;
    return this.pending.splice(0, n).map(({ timestamp, message }) => ({ timestamp, message }));
  }

  /** Starts the flush timer for queued lines, unless one runs or a send is under way. */
  private arm(): void {
    if (this.timer || this.draining || this.closing || this.pending.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushTarget = this.written;
      void this.pump();
    }, this.flushIntervalMs);
    this.timer.unref?.(); // a forgotten writer must not keep the process alive
  }

  /** Runs the single sender (or joins the running one). */
  private pump(): Promise<void> {
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
      if (this.isFull() || (this.taken < this.flushTarget && !this.closing)) void this.pump();
      else this.arm();
    });
    return this.draining;
  }

  private async drain(): Promise<void> {
    await this.ready;
    while (this.pending.length > 0 && (this.isFull() || this.taken < this.flushTarget)) {
      const batch = this.take();
      try {
        await this.send(batch);
      } catch {
        // `send` reports its own failures; a throwing reporter must not stall the log.
      }
    }
  }
}
