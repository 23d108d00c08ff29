/**
 * Task logs in CloudWatch Logs: one log stream per task attempt, named by `logStreamName`, in
 * one log group. Writers buffer lines and send them with PutLogEvents in batches that respect
 * the API's limits (cloudwatch-log-writer.ts); readers page with GetLogEvents behind a Shoal
 * token that wraps CloudWatch's forward token (cloudwatch-read-token.ts). Limits and behaviour
 * below are from the CloudWatch Logs API reference (PutLogEvents, GetLogEvents, CreateLogStream:
 * https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutLogEvents.html).
 */
import { setTimeout as delay } from "node:timers/promises";
import {
  type CloudWatchLogsClient,
  CreateLogStreamCommand,
  GetLogEventsCommand,
  type GetLogEventsCommandOutput,
  type InputLogEvent,
  PutLogEventsCommand,
  type RejectedLogEventsInfo,
} from "@aws-sdk/client-cloudwatch-logs";
import { StreamWriter } from "./cloudwatch-log-writer.js";
import { decodeReadToken, encodeReadToken } from "./cloudwatch-read-token.js";
import { logStreamName, logUrl } from "./cloudwatch-stream-names.js";
import type { LogLine, LogPage, TaskLogKey, TaskLogs, TaskLogWriter } from "./task-log.js";

/** GetLogEvents: `limit` is 1..10,000. */
const MAX_GET_EVENTS = 10_000;
/**
 * GetLogEvents calls one read makes at most: a read keeps paging past short or empty pages (the
 * API may return fewer events than asked while more exist) until the token stops moving.
 */
const MAX_READ_CALLS = 10;
/** Construction options of `CloudWatchTaskLogs`. */
export interface CloudWatchTaskLogsOptions {
  /** The log group holding every task's streams (provisioned with the stack, not created here). */
  logGroupName: string;
  /** Region of the console links `url` gives (task responses' `logUrl`); none without it. */
  region?: string;
  /** The Logs client (the runtime's bundle, lib/aws/clients.ts), asked for on first use. */
  client: () => CloudWatchLogsClient;
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
 * `TaskLogs` on CloudWatch Logs.
 * - `open` creates the stream (CreateLogStream; an existing stream is fine: a redelivered
 *   attempt appends to it) and returns a buffering writer; see `write`/`close` below.
 * - `read` pages with GetLogEvents (`startFromHead: true`); the returned `nextToken` is always
 *   present, so a follower can poll; when nothing new exists it is the token passed in.
 * - `tail` reads the end with GetLogEvents (`startFromHead: false`) and its backward token.
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
    this.client = opts.client;
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
   * @throws RequestError ValidationError for a token this store did not hand out for this log;
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

  /**
   * The last `limit` lines: GetLogEvents with `startFromHead: false` (the latest events, in
   * time order), then its backward token while a page came back short (the API may return
   * fewer events than asked while more exist), at most {@link MAX_READ_CALLS} calls. A stream
   * that does not exist yet reads as [].
   * @throws GetLogEvents errors other than ResourceNotFoundException.
   */
  async tail(key: TaskLogKey, limit: number): Promise<LogLine[]> {
    if (limit <= 0) return [];
    const stream = logStreamName(key);
    let lines: LogLine[] = [];
    let token: string | undefined;
    for (let calls = 0; lines.length < limit && calls < MAX_READ_CALLS; calls++) {
      let out: GetLogEventsCommandOutput;
      try {
        out = await this.client().send(
          new GetLogEventsCommand({
            logGroupName: this.logGroupName,
            logStreamName: stream,
            startFromHead: false,
            limit: Math.min(MAX_GET_EVENTS, limit - lines.length),
            ...(token !== undefined ? { nextToken: token } : {}),
          }),
        );
      } catch (e) {
        if (errorName(e) === "ResourceNotFoundException") break;
        throw e;
      }
      const page = (out.events ?? []).map((ev) => ({
        timestamp: new Date(ev.timestamp ?? 0).toISOString(),
        message: ev.message ?? "",
      }));
      lines = [...page, ...lines];
      const back = out.nextBackwardToken;
      if (back === undefined || back === token) break; // the head of the stream
      token = back;
    }
    return lines.slice(-limit);
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

/** Events PutLogEvents refused for their timestamps (too old, expired, too new). */
function rejectedCount(info: RejectedLogEventsInfo | undefined, total: number): number {
  if (!info) return 0;
  const oldEnd = Math.max(info.tooOldLogEventEndIndex ?? -1, info.expiredLogEventEndIndex ?? -1);
  const newStart = info.tooNewLogEventStartIndex ?? total;
  return Math.min(total, oldEnd + 1 + Math.max(0, total - newStart));
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
