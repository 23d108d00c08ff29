/**
 * Sends one alert to one channel: an HTTP POST for `webhook` and `slack` channels (a bounded
 * timeout, no redirects followed: a redirect could carry the alert elsewhere), an SNS Publish for
 * `email` channels. Every failure is thrown as a {@link SendError} whose message never contains
 * the channel's URL or a header value (both are credentials; records and logs keep the message).
 */
import { SecretMasker } from "../secrets/mask.js";
import type { Channel } from "./channels.js";
import { type AlertContent, emailBody, slackBody, webhookBody } from "./format.js";

/** Header carrying the delivery id, so that receivers can drop a repeated delivery. */
export const DELIVERY_ID_HEADER = "X-Shoal-Delivery-Id";

/** A send that failed; `message` is safe to record and log. */
export class SendError extends Error {
  override name = "SendError";
}

/** Publishes an e-mail through an SNS topic (AWS only; built by the runtime). */
export type EmailPublisher = (topicArn: string, subject: string, message: string) => Promise<void>;

export interface SendOptions {
  /** Limit of one POST, ms. */
  timeoutMs: number;
  /** Absent outside AWS: e-mail channels then fail with a clear reason. */
  publishEmail?: EmailPublisher;
  /** The fetch to use (tests may pass their own); default the global one. */
  fetch?: typeof fetch;
}

/** Most characters of a receiver's answer kept in `lastError`. */
const ANSWER_CHARS = 200;

/** Words of a header value at least this long are masked on their own (a token after `Bearer`). */
const MIN_WORD_MASK = 8;
/**
 * Header values shorter than this are not masked (`1`, `no`): masking them would garble every
 * message (each `1` of it) and they carry no credential.
 */
const MIN_VALUE_MASK = 4;

/**
 * What a message about a send to `channel` may keep: the URL (whole, its user info, path and
 * query, each query parameter's value) and every header value of 4 characters or more (whole,
 * URL-encoded, and each word of 8 characters or more: a receiver may echo only the token of
 * `Bearer <token>`) become `***`, `<url>`, `/<path>` or `?<query>`. Literal values are masked as
 * secret ones are: a literal header is a credential all the same.
 */
export function channelScrubber(channel: Channel): (message: string) => string {
  if (channel.type === "email") return (m) => m;
  const values: string[] = [];
  for (const v of Object.values(channel.type === "webhook" ? (channel.headers ?? {}) : {})) {
    if (v.trim().length >= MIN_VALUE_MASK) values.push(v);
    for (const word of v.split(/\s+/)) if (word.length >= MIN_WORD_MASK) values.push(word);
  }
  const url = channel.url;
  const parts: Array<[string, string]> = [];
  try {
    const u = new URL(url);
    if (u.password) parts.push([u.password, "***"]);
    if (u.username) parts.push([u.username, "***"]);
    if (u.search) parts.push([u.search, "?<query>"]);
    if (u.pathname.length > 1) parts.push([u.pathname, "/<path>"]);
    // A receiver may echo one parameter of the query (`token=…`), decoded.
    for (const v of u.searchParams.values()) if (v.length >= MIN_VALUE_MASK) values.push(v);
  } catch {
    // not a URL: nothing more to hide
  }
  const headerMasker = new SecretMasker(values);
  return (message) => {
    let out = url ? message.split(url).join("<url>") : message;
    for (const [from, to] of parts) out = out.split(from).join(to);
    return headerMasker.mask(out);
  };
}

/**
 * Sends `content` to `channel`.
 * @throws SendError: the receiver's status (`HTTP 500: <first 200 characters>`), a timeout, a
 *   connection error by code (`ECONNREFUSED`), or an SNS error's name.
 */
export async function sendAlert(
  channel: Channel,
  content: AlertContent,
  opts: SendOptions,
): Promise<void> {
  if (channel.type === "email") {
    if (!opts.publishEmail) {
      throw new SendError("e-mail channels need AWS (an SNS topic): not available here");
    }
    const { subject, message } = emailBody(content);
    try {
      await opts.publishEmail(channel.topicArn, subject, message);
    } catch (e) {
      throw new SendError(`SNS Publish failed: ${(e as Error).name}: ${(e as Error).message}`);
    }
    return;
  }
  const body = channel.type === "slack" ? slackBody(content) : webhookBody(content);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "shoal-alerts",
    [DELIVERY_ID_HEADER]: content.deliveryId,
    ...(channel.type === "webhook" ? (channel.headers ?? {}) : {}),
  };
  const scrub = channelScrubber(channel);
  const doFetch = opts.fetch ?? fetch;
  let res: Response;
  try {
    res = await doFetch(channel.url, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    if (err.name === "TimeoutError" || err.name === "AbortError") {
      throw new SendError(`no answer within ${opts.timeoutMs / 1000}s`);
    }
    const why = err.cause?.code ?? err.cause?.message ?? err.message;
    throw new SendError(scrub(`request failed: ${why}`));
  }
  if (res.status >= 200 && res.status < 300) {
    await res.body?.cancel().catch(() => {});
    return;
  }
  const text = await res.text().catch(() => "");
  // Masked before it is cut (a cut could keep the start of a value) and again once its
  // whitespace is folded (a value the receiver echoed across lines).
  const answer = scrub(scrub(text).replace(/\s+/g, " ").trim()).slice(0, ANSWER_CHARS);
  throw new SendError(`HTTP ${res.status}${answer ? `: ${answer}` : ""}`);
}
