// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/**
 * Secret references in alert channels (pure: checks and names, shared by the alerts function,
 * standalone's alerts file and the construct's synthesis; lib/alerts/channel-secrets.ts reads
 * the values): a webhook or Slack channel's `url` may be a whole `${secret:NAME}`, and a webhook's
 * header values may hold `${secret:NAME}` references, NAME as in task definitions
 * (lib/core/secret-references.ts).
 */
import { findSecretReferences, parseSecretName, SECRET_NAME_RULE } from "./secret-references.js";

/** A whole-value reference: `${secret:NAME}` and nothing else. */
const WHOLE_REFERENCE = /^\$\{secret:([^}\n]*)\}$/;

/** An http(s) URL, as the configuration's literal URLs must be. */
export const HTTP_URL = /^https?:\/\/[^\s/]+/;

/** The NAME of a whole-value reference, or undefined when `value` is not one. */
export function wholeSecretReference(value: string): string | undefined {
  return WHOLE_REFERENCE.exec(value)?.[1];
}

/**
 * Why a channel `url` is not acceptable, as a phrase, or undefined when it is: an http(s) URL,
 * or exactly `${secret:NAME}` with a valid NAME (lib/core/secret-references.ts).
 */
export function channelUrlProblem(url: string): string | undefined {
  const name = wholeSecretReference(url);
  if (name !== undefined) {
    return typeof parseSecretName(name) === "string"
      ? `\${secret:${name.slice(0, 80)}}: the name ${SECRET_NAME_RULE}`
      : undefined;
  }
  if (url.includes("${secret:")) {
    return "a secret reference must be the whole URL: ${secret:NAME} (put the whole URL in the secret)";
  }
  return HTTP_URL.test(url) ? undefined : "must be an http:// or https:// URL, or ${secret:NAME}";
}

/** Why a header value's references are not acceptable, or undefined when they are. */
export function headerValueProblem(value: string): string | undefined {
  for (const r of findSecretReferences(value)) {
    if (typeof parseSecretName(r.name) === "string") {
      return `\${secret:${r.name.slice(0, 80)}}: the name ${SECRET_NAME_RULE}`;
    }
  }
  return undefined;
}

/** The parts of a channel that may hold references (a CDK prop or a parsed channel). */
export interface ChannelLike {
  type: string;
  url?: string;
  headers?: Record<string, string>;
}

/** The secret names a channel uses, as written (`slack-url`, `prod/hooks#ops`), deduplicated. */
export function channelSecretNames(c: ChannelLike): string[] {
  const names = new Set<string>();
  const whole = c.url !== undefined ? wholeSecretReference(c.url) : undefined;
  if (whole !== undefined) names.add(whole);
  for (const v of Object.values(c.headers ?? {})) {
    for (const r of findSecretReferences(v)) names.add(r.name);
  }
  return [...names];
}
