/**
 * Sends one alert to one channel: an HTTP POST for `webhook` and `slack` channels (a bounded
 * timeout, no redirects followed: a redirect could carry the alert elsewhere), an SNS Publish for
 * `email` channels. Every failure is thrown as a {@link SendError} whose message never contains
 * the channel's URL (the URL is a credential; records and logs keep the message).
 */
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

/** Removes any occurrence of `url` (and its path and query) from a message. */
function scrub(message: string, url: string): string {
  let out = message.split(url).join("<url>");
  try {
    const u = new URL(url);
    if (u.pathname.length > 1) out = out.split(u.pathname).join("/<path>");
    if (u.search) out = out.split(u.search).join("?<query>");
  } catch {
    // not a URL: nothing more to hide
  }
  return out;
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
    throw new SendError(scrub(`request failed: ${why}`, channel.url));
  }
  if (res.status >= 200 && res.status < 300) {
    await res.body?.cancel().catch(() => {});
    return;
  }
  const text = await res.text().catch(() => "");
  const answer = text.replace(/\s+/g, " ").trim().slice(0, ANSWER_CHARS);
  throw new SendError(scrub(`HTTP ${res.status}${answer ? `: ${answer}` : ""}`, channel.url));
}
