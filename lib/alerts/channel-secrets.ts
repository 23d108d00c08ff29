// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/**
 * Channel URLs and header values from secrets (docs/alerts.md "Channels from secrets"): a
 * webhook or Slack channel's `url` may be a whole `${secret:NAME}`, and a webhook's header values
 * may hold `${secret:NAME}` references. The configuration (the alerts file, the construct's
 * props, the function's SHOAL_ALERTS) then holds the name only; the deliverer reads the value
 * through the same secret sources as task workers (lib/secrets/: SHOAL_SECRET_<NAME> and the
 * secrets file in standalone, Secrets Manager and SSM on AWS) right before each send, and keeps
 * it in memory for that send. A secret that cannot be read fails that send (retried like any
 * failure), with a message naming the secret, never a value.
 */

import { channelSecretNames, HTTP_URL, wholeSecretReference } from "../core/alert-channels.js";
import { SECRET_REFERENCE } from "../core/secret-references.js";
import { SecretMasker } from "../secrets/mask.js";
import { resolveSecrets } from "../secrets/resolve.js";
import { SecretReadError, type SecretSource } from "../secrets/secret-source.js";
import type { Channel } from "./channels.js";
import { SendError } from "./send.js";

/** A channel ready to send to, and the masking of the values it was given. */
export interface ResolvedChannel {
  channel: Channel;
  /** Masks every secret value the channel holds (empty for a channel without secrets). */
  masker: SecretMasker;
}

/**
 * The channel with its secret references replaced by their values, read from `source` (not
 * called for a channel without references).
 * @param name the channel's name, for messages.
 * @throws SendError naming the channel and the secret (never a value): not found (saying where
 *   it was looked for), unreadable, a URL secret that is not an http(s) URL, a header value with
 *   CR, LF or NUL, or no secret source configured.
 */
export async function resolveChannel(
  name: string,
  channel: Channel,
  source: (() => SecretSource) | undefined,
): Promise<ResolvedChannel> {
  const names = channel.type === "email" ? [] : channelSecretNames(channel);
  if (channel.type === "email" || names.length === 0) {
    return { channel, masker: new SecretMasker([]) };
  }
  let values: Map<string, string>;
  try {
    if (!source) throw new SecretReadError("no secret source is configured here");
    values = await resolveSecrets(names, source());
  } catch (e) {
    const why = e instanceof SecretReadError ? e.message : `secret source: ${(e as Error).message}`;
    throw new SendError(`channel '${name}': ${why}`);
  }
  const masker = new SecretMasker(values.values());
  const fill = (text: string) =>
    text.replace(SECRET_REFERENCE, (_w, n: string) => values.get(n) ?? "");
  const urlName = wholeSecretReference(channel.url);
  const url = urlName !== undefined ? (values.get(urlName) ?? "").trim() : channel.url;
  if (urlName !== undefined && !HTTP_URL.test(url)) {
    throw new SendError(
      `channel '${name}': secret '${urlName}' must hold an http:// or https:// URL`,
    );
  }
  if (channel.type === "slack") return { channel: { ...channel, url }, masker };
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(channel.headers ?? {})) {
    const filled = fill(v);
    if (/[\r\n\0]/.test(filled)) {
      throw new SendError(
        `channel '${name}': header ${k}: a secret value holds CR, LF or NUL, which a header cannot`,
      );
    }
    headers[k] = filled;
  }
  return {
    channel: { ...channel, url, ...(channel.headers ? { headers } : {}) },
    masker,
  };
}
