/**
 * Task logs in CloudWatch Logs: one log stream per task attempt, named by `logStreamName`, in
 * one log group. Writers buffer lines and send them with PutLogEvents in batches that respect
 * the API's limits; readers page with GetLogEvents behind a Shoal token that wraps CloudWatch's
 * forward token. Limits and behaviour below are from the CloudWatch Logs API reference
 * (PutLogEvents, GetLogEvents, CreateLogStream:
 * https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutLogEvents.html).
 */
import { createHash } from "node:crypto";
import {
  type CloudWatchLogsClient,
  CreateLogStreamCommand,
  GetLogEventsCommand,
  type GetLogEventsCommandOutput,
  type InputLogEvent,
  PutLogEventsCommand,
  type RejectedLogEventsInfo,
} from "@aws-sdk/client-cloudwatch-logs";
import { logsClient } from "../aws/clients.js";
import { validationError } from "../core/errors.js";
import {
  type LogLine,
  type LogPage,
  logName,
  type TaskLogKey,
  type TaskLogs,
  type TaskLogWriter,
} from "./task-log.js";

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
/** CreateLogStream: stream names are 1..512 characters. */
const MAX_STREAM_NAME = 512;
/** GetLogEvents: `limit` is 1..10,000. */
const MAX_GET_EVENTS = 10_000;
/**
 * GetLogEvents calls one read makes at most: a read keeps paging past short or empty pages (the
 * API may return fewer events than asked while more exist) until the token stops moving.
 */
const MAX_READ_CALLS = 10;
const TOKEN_PREFIX = "cw1.";
const MAX_TOKEN_CHARS = 4096;

/** Construction options of `CloudWatchTaskLogs`. */
export interface CloudWatchTaskLogsOptions {
  /** The log group holding every task's streams (provisioned with the stack, not created here). */
  logGroupName: string;
  /** Region of the console links `url` gives (task responses' `logUrl`); none without it. */
  region?: string;
  /** The Logs client; `logsClient` from lib/aws/clients.ts by default. */
  client?: () => CloudWatchLogsClient;
  /** How long a written line may wait in the buffer before it is sent, ms (default 1,000). */
  flushIntervalMs?: number;
  /** Attempts per request (CreateLogStream, each PutLogEvents batch) before giving up (default 8). */
  maxAttempts?: number;
  /** First retry delay, ms; doubled per attempt, capped at 5 s, with jitter (default 200). */
  retryBaseMs?: number;
  /**
   * Told about lines that could not be delivered (never thrown into the task): the error and
   * how many lines (events) were lost. Default: a warning on stderr.
   */
  onError?: (error: unknown, lostEvents: number, stream: string) => void;
}

/**
 * `<workflow>/<instanceId>/<taskCode>/<attempt>` as a log stream name. Stream names may not
 * contain ':' or '*' (CreateLogStream), so those (and '%', to stay reversible) are
 * percent-encoded; validated names never contain them. A name past 512 characters (not
 * reachable with validated names either) is cut and suffixed with a hash to stay unique.
 */
export function logStreamName(key: TaskLogKey): string {
  const name = logName(key).replace(
    /[%:*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  if (name.length <= MAX_STREAM_NAME) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 16);
  return `${name.slice(0, MAX_STREAM_NAME - hash.length - 1)}~${hash}`;
}

/**
 * The CloudWatch console URL of one attempt's stream in `region`. The console's fragment takes
 * names URI-encoded twice with '%' written as '$' ('/' becomes `$252F`), as its own links do.
 */
export function logUrl(key: TaskLogKey, where: { region: string; logGroupName: string }): string {
  const consoleEncode = (s: string) => encodeURIComponent(encodeURIComponent(s)).replace(/%/g, "$");
  const region = encodeURIComponent(where.region);
  return (
    `https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}` +
    `#logsV2:log-groups/log-group/${consoleEncode(where.logGroupName)}` +
    `/log-events/${consoleEncode(logStreamName(key))}`
  );
}

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

/**
 * `TaskLogs` on CloudWatch Logs.
 * - `open` creates the stream (CreateLogStream; an existing stream is fine: a redelivered
 *   attempt appends to it) and returns a buffering writer; see `write`/`close` below.
 * - `read` pages with GetLogEvents (`startFromHead: true`); the returned `nextToken` is always
 *   present, so a follower can poll; when nothing new exists it is the token passed in.
 */
export class CloudWatchTaskLogs implements TaskLogs {
  private readonly logGroupName: string;
  /** The CloudWatch console URL of an attempt's stream (present when `region` was given). */
  readonly url?: (key: TaskLogKey) => string;
  private readonly client: () => CloudWatchLogsClient;
  private readonly flushIntervalMs: number;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly onError: (error: unknown, lostEvents: number, stream: string) => void;

  constructor(opts: CloudWatchTaskLogsOptions) {
    this.logGroupName = opts.logGroupName;
    if (opts.region) {
      const where = { region: opts.region, logGroupName: opts.logGroupName };
      this.url = (key) => logUrl(key, where);
    }
    this.client = opts.client ?? logsClient;
    this.flushIntervalMs = opts.flushIntervalMs ?? 1000;
    this.maxAttempts = Math.max(1, opts.maxAttempts ?? 8);
    this.retryBaseMs = opts.retryBaseMs ?? 200;
    this.onError =
      opts.onError ??
      ((e, n, stream) =>
        console.warn(`shoal: ${n} log line(s) of ${stream} were not delivered: ${errorText(e)}`));
  }

  /**
   * Starts the attempt's log. Lines are buffered and sent in order, one PutLogEvents at a time,
   * when `flushIntervalMs` has passed since the first unsent line, as soon as a full batch is
   * waiting, and on `close()`, which resolves once everything was sent or given up. A write
   * after `close()` is ignored. Nothing here throws or rejects into the task.
   */
  open(key: TaskLogKey): TaskLogWriter {
    const stream = logStreamName(key);
    return new StreamWriter(this.flushIntervalMs, this.createStream(stream), (events) =>
      this.put(stream, events),
    );
  }

  /**
   * Reads up to `limit` lines after `nextToken` (from the head without one). A stream that does
   * not exist yet reads as empty, with a token that starts from the head.
   * @throws ShoalError ValidationError for a token this store did not hand out for this log;
   *   other GetLogEvents errors (access, throttling past the SDK's retries) as they come.
   */
  async read(key: TaskLogKey, opts: { nextToken?: string; limit: number }): Promise<LogPage> {
    const stream = logStreamName(key);
    const from = opts.nextToken === undefined ? {} : decodeReadToken(opts.nextToken, stream);
    // The position is the last line returned (its timestamp, and how many lines so far carried
    // it). CloudWatch tokens expire after 24 hours; an expired one resumes from the position.
    let token = from.t;
    let at = from.a;
    let count = from.n ?? 0;
    let skip = 0; // lines at `at` already returned, passed over after restarting at `startTime`
    const lines: LogLine[] = [];
    for (let calls = 0; lines.length < opts.limit && calls < MAX_READ_CALLS; calls++) {
      let out: GetLogEventsCommandOutput;
      try {
        out = await this.client().send(
          new GetLogEventsCommand({
            logGroupName: this.logGroupName,
            logStreamName: stream,
            startFromHead: true,
            limit: Math.max(1, Math.min(MAX_GET_EVENTS, opts.limit - lines.length + skip)),
            ...(token !== undefined
              ? { nextToken: token }
              : at !== undefined
                ? { startTime: at }
                : {}),
          }),
        );
      } catch (e) {
        const name = errorName(e);
        if (name === "ResourceNotFoundException") break; // not started yet: nothing to read
        if (name === "InvalidParameterException" && token !== undefined) {
          token = undefined; // expired: restart from the position
          skip = at === undefined ? 0 : count;
          continue;
        }
        throw e;
      }
      let overflow = false;
      for (const ev of out.events ?? []) {
        const ts = ev.timestamp ?? 0;
        if (skip > 0 && ts === at) {
          skip--;
          continue;
        }
        skip = 0;
        if (lines.length >= opts.limit) {
          overflow = true;
          break;
        }
        lines.push({ timestamp: new Date(ts).toISOString(), message: ev.message ?? "" });
        if (ts === at) count++;
        else {
          at = ts;
          count = 1;
        }
      }
      if (overflow) {
        token = undefined; // CloudWatch's token is past lines not returned: resume by position
        break;
      }
      const next = out.nextForwardToken;
      if (next === undefined || next === token) break; // the end, for now
      token = next;
    }
    return { lines, nextToken: encodeReadToken(stream, { t: token, a: at, n: count }) };
  }

  /** CreateLogStream with retries; an existing stream is success. Never rejects. */
  private async createStream(stream: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client().send(
          new CreateLogStreamCommand({ logGroupName: this.logGroupName, logStreamName: stream }),
        );
        return;
      } catch (e) {
        if (errorName(e) === "ResourceAlreadyExistsException") return;
        // Not fatal: the first PutLogEvents tries once more (ResourceNotFoundException).
        if (!retryable(e) || attempt >= this.maxAttempts) return;
        await delay(this.backoff(attempt));
      }
    }
  }

  /**
   * Sends one batch, retrying throttling and server errors with backoff. Sequence tokens are
   * ignored by PutLogEvents now ("The sequence token is now ignored ... never return
   * InvalidSequenceTokenException or DataAlreadyAcceptedException"), so none is sent; both
   * legacy errors are still handled: DataAlreadyAccepted means the batch is stored (resending
   * would duplicate it), InvalidSequenceToken is retried with the token it names. PutLogEvents
   * has no idempotency key, so a retry after a lost response may store a batch twice: the API
   * allows no better. Never rejects; lines given up are reported to `onError`.
   */
  private async put(stream: string, logEvents: InputLogEvent[]): Promise<void> {
    let sequenceToken: string | undefined;
    let recreated = false;
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await this.client().send(
          new PutLogEventsCommand({
            logGroupName: this.logGroupName,
            logStreamName: stream,
            logEvents,
            ...(sequenceToken !== undefined ? { sequenceToken } : {}),
          }),
        );
        const rejected = rejectedCount(out.rejectedLogEventsInfo, logEvents.length);
        if (rejected > 0) {
          const why = new Error("PutLogEvents rejected events outside the accepted time range");
          this.onError(why, rejected, stream);
        }
        return;
      } catch (e) {
        const name = errorName(e);
        if (name === "DataAlreadyAcceptedException") return;
        if (name === "InvalidSequenceTokenException") {
          sequenceToken = (e as { expectedSequenceToken?: string }).expectedSequenceToken;
        } else if (name === "ResourceNotFoundException" && !recreated) {
          recreated = true; // the stream was never created (or was deleted): once more
          await this.createStream(stream);
          continue;
        } else if (!retryable(e)) {
          this.onError(e, logEvents.length, stream);
          return;
        }
        if (attempt >= this.maxAttempts) {
          this.onError(e, logEvents.length, stream);
          return;
        }
        await delay(this.backoff(attempt));
      }
    }
  }

  /** Exponential backoff with jitter, ms: base·2^(n-1), capped at 5 s, then 50..100% of it. */
  private backoff(attempt: number): number {
    const d = Math.min(5000, this.retryBaseMs * 2 ** (attempt - 1));
    return d / 2 + (Math.random() * d) / 2;
  }
}

/** A buffered event, with its size as PutLogEvents counts it (message bytes + 26). */
interface Pending {
  timestamp: number;
  message: string;
  bytes: number;
}

/** One attempt's writer: a queue of events drained by a single sender, so order is kept. */
class StreamWriter implements TaskLogWriter {
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

/** Events PutLogEvents refused for their timestamps (too old, expired, too new). */
function rejectedCount(info: RejectedLogEventsInfo | undefined, total: number): number {
  if (!info) return 0;
  const oldEnd = Math.max(info.tooOldLogEventEndIndex ?? -1, info.expiredLogEventEndIndex ?? -1);
  const newStart = info.tooNewLogEventStartIndex ?? total;
  return Math.min(total, oldEnd + 1 + Math.max(0, total - newStart));
}

/** Where a read continues: CloudWatch's forward token and the last line's timestamp/count. */
interface ReadPosition {
  t?: string | undefined;
  a?: number | undefined;
  n?: number | undefined;
}

/** Ties a token to its stream, so a token of another log is refused rather than misapplied. */
function streamTag(stream: string): string {
  return createHash("sha256").update(stream).digest("base64url").slice(0, 11);
}

function encodeReadToken(stream: string, p: ReadPosition): string {
  const body = {
    s: streamTag(stream),
    ...(p.t !== undefined ? { t: p.t } : {}),
    ...(p.a !== undefined ? { a: p.a, n: p.n } : {}),
  };
  return TOKEN_PREFIX + Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

/** @throws ShoalError ValidationError (the API's 400) for anything `encodeReadToken` did not make for `stream`. */
function decodeReadToken(raw: string, stream: string): ReadPosition {
  const bad = () =>
    validationError([{ path: "nextToken", message: "is not a token this API returned" }]);
  const body = raw.slice(TOKEN_PREFIX.length);
  if (raw.length > MAX_TOKEN_CHARS || !raw.startsWith(TOKEN_PREFIX)) throw bad();
  if (!/^[A-Za-z0-9_-]+$/.test(body)) throw bad();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw bad();
  const { s, t, a, n } = v as Record<string, unknown>;
  if (s !== streamTag(stream)) throw bad();
  if (t !== undefined && (typeof t !== "string" || t.length === 0)) throw bad();
  const whole = (x: unknown): x is number =>
    typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  if (a === undefined ? n !== undefined : !whole(a) || !whole(n) || n < 1) throw bad();
  return { t: t as string | undefined, a: a as number | undefined, n: n as number | undefined };
}

function errorName(e: unknown): string | undefined {
  return (e as { name?: string } | undefined)?.name;
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

const RETRYABLE = new Set([
  "ThrottlingException",
  "ServiceUnavailableException",
  "InternalServerError",
  "InternalFailure",
  "RequestTimeout",
  "TimeoutError",
]);

/**
 * Throttling, server faults and errors that are not a service answer (the network, a timeout)
 * are worth a retry; other client faults (a bad request, access denied) are not.
 */
function retryable(e: unknown): boolean {
  const err = e as { name?: string; $fault?: string; $retryable?: unknown };
  if (RETRYABLE.has(err.name ?? "") || err.$fault === "server" || err.$retryable) return true;
  return err.$fault !== "client";
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
