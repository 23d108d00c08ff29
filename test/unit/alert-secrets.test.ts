// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/**
 * Channel URLs and header values from secrets (lib/alerts/channel-secrets.ts): what the alerts
 * configuration accepts and refuses, naming the field; how a channel is resolved through a secret
 * source (the environment adapter here); every failure names the secret and never a value; what
 * logs may say about such a channel.
 */
import { describe, expect, it } from "vitest";
import { resolveChannel } from "../../lib/alerts/channel-secrets.js";
import {
  AlertsConfigError,
  type Channel,
  describeChannel,
  parseAlertsConfig,
} from "../../lib/alerts/channels.js";
import { channelScrubber, SendError } from "../../lib/alerts/send.js";
import { channelSecretNames } from "../../lib/core/alert-channels.js";
import { EnvSecretSource } from "../../lib/secrets/env-source.js";

const URL_VALUE = "https://hooks.slack.com/services/T1/B2/s3cr3tpath";

describe("alert channels from secrets", () => {
  it("the configuration takes a whole ${secret:NAME} URL and references in header values", () => {
    const c = parseAlertsConfig(
      [
        "channels:",
        '  a: { type: slack, url: "${secret:hooks/a}" }',
        '  b: { type: webhook, url: "${secret:ssm:/hooks/b}", headers: { Authorization: "Bearer ${secret:tokens#b}" } }',
      ].join("\n"),
      "alerts.yaml",
    );
    expect(channelSecretNames(c.channels.a as Channel)).toEqual(["hooks/a"]);
    expect(channelSecretNames(c.channels.b as Channel)).toEqual(["ssm:/hooks/b", "tokens#b"]);
    expect(describeChannel(c.channels.a as Channel)).toBe("slack (secret hooks/a)");
  });

  it("refuses a reference in part of a URL and a bad name, naming the field", () => {
    const bad = (channel: string) => () =>
      parseAlertsConfig(`channels:\n  a: ${channel}`, "alerts.yaml");
    expect(bad('{ type: slack, url: "https://x.example/${secret:p}" }')).toThrow(
      "alerts.yaml: channels.a.url: a secret reference must be the whole URL: ${secret:NAME} (put the whole URL in the secret)",
    );
    expect(bad('{ type: slack, url: "${secret:no spaces}" }')).toThrow(
      /^alerts\.yaml: channels\.a\.url: \$\{secret:no spaces\}: the name must be/,
    );
    expect(
      bad('{ type: webhook, url: "https://x.example", headers: { X: "${secret:a b}" } }'),
    ).toThrow(/channels\.a\.headers\.X: \$\{secret:a b\}: the name must be/);
    expect(bad('{ type: slack, url: "ftp://x" }')).toThrow(AlertsConfigError);
  });

  it("resolves the URL and headers at send time; a literal channel needs no source", async () => {
    const env = {
      SHOAL_SECRET_HOOKS_A: URL_VALUE,
      SHOAL_SECRET_TOKENS: JSON.stringify({ b: "tok123" }),
    };
    const source = () => new EnvSecretSource(env);
    const webhook: Channel = {
      type: "webhook",
      url: "${secret:hooks/a}",
      headers: { Authorization: "Bearer ${secret:tokens#b}", "X-Plain": "p" },
    };
    const r = await resolveChannel("ops", webhook, source);
    expect(r.channel).toEqual({
      type: "webhook",
      url: URL_VALUE,
      headers: { Authorization: "Bearer tok123", "X-Plain": "p" },
    });
    expect(r.masker.mask(`HTTP 403: bad token tok123 for ${URL_VALUE}`)).toBe(
      "HTTP 403: bad token *** for ***",
    );
    const literal: Channel = { type: "slack", url: "https://example.com/x" };
    const plain = await resolveChannel("chat", literal, undefined);
    expect(plain.channel).toBe(literal);
  });

  it("fails naming the channel and the secret, never a value", async () => {
    const env = { SHOAL_SECRET_NOT_A_URL: "s3cr3t-but-no-url", SHOAL_SECRET_CRLF: "a\r\nb" };
    const source = () => new EnvSecretSource(env);
    const fail = (c: Channel, src: typeof source | null = source) =>
      resolveChannel("ops", c, src ?? undefined).then(
        () => "resolved",
        (e: Error) => (e instanceof SendError ? e.message : `not a SendError: ${e}`),
      );
    expect(await fail({ type: "slack", url: "${secret:missing}" })).toBe(
      "channel 'ops': secret 'missing' not found (looked in: environment variable SHOAL_SECRET_MISSING)",
    );
    expect(await fail({ type: "slack", url: "${secret:not-a-url}" })).toBe(
      "channel 'ops': secret 'not-a-url' must hold an http:// or https:// URL",
    );
    expect(
      await fail({
        type: "webhook",
        url: "https://x.example",
        headers: { Authorization: "${secret:crlf}" },
      }),
    ).toBe(
      "channel 'ops': header Authorization: a secret value holds CR, LF or NUL, which a header cannot",
    );
    expect(await fail({ type: "slack", url: "${secret:x}" }, null)).toBe(
      "channel 'ops': no secret source is configured here",
    );
  });

  it("masks the URL's parts and every header value, literal or resolved, in error text", () => {
    const scrub = channelScrubber({
      type: "webhook",
      url: "https://user:pa55word@hooks.example/T0/B0?token=qs-secret",
      headers: { Authorization: "Bearer literaltoken123", "X-Env": "prod", "X-Key": "k3y-v4lue" },
    });
    expect(scrub("echo Bearer literaltoken123; token literaltoken123")).toBe("echo ***; token ***");
    expect(scrub("bad key k3y-v4lue")).toBe("bad key ***");
    expect(scrub("at /T0/B0?token=qs-secret as user:pa55word, qs-secret")).toBe(
      "at /<path>?<query> as ***:***, ***",
    );
    // A value of fewer than 4 characters is no credential: masking it would garble the text.
    expect(scrub("prod is down")).toBe("*** is down");
    expect(
      channelScrubber({ type: "webhook", url: "https://x.example", headers: { A: "1" } })("HTTP 1"),
    ).toBe("HTTP 1");
  });
});
