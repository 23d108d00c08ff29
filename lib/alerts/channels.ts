/**
 * Alert channels: deployment configuration, never workflow data. A channel's URL is a credential
 * (a Slack incoming-webhook URL lets anyone post), so it lives in the alerts file of
 * `shoal standalone --alerts FILE` (or the `SHOAL_ALERTS` environment variable), or in the
 * construct's props on AWS; rules name channels only. Logs name a channel and its host, never
 * its URL (docs/alerts.md).
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import {
  channelUrlProblem,
  headerValueProblem,
  wholeSecretReference,
} from "../core/alert-channels.js";
import { CHANNEL_NAME_PATTERN } from "../core/alert-rules.js";
import { formatPath } from "../core/validate.js";

/** Environment variable holding the alerts configuration itself (JSON or YAML). */
export const ALERTS_ENV = "SHOAL_ALERTS";
/** Environment variable naming an alerts file (what `--alerts FILE` sets). */
export const ALERTS_FILE_ENV = "SHOAL_ALERTS_FILE";

const httpsOrHttp = z
  .string()
  .max(2048)
  .refine((u) => /^https?:\/\/[^\s/]+/.test(u), { error: "must be an http:// or https:// URL" });

/** A channel's URL: an http(s) URL, or `${secret:NAME}` read at each send (channel-secrets.ts). */
const channelUrl = z
  .string()
  .max(2048)
  .superRefine((u, ctx) => {
    const problem = channelUrlProblem(u);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const webhook = z.strictObject({
  type: z.literal("webhook"),
  url: channelUrl,
  /** Extra request headers (an Authorization token, say); values may hold `${secret:NAME}`. */
  headers: z
    .record(
      z.string(),
      z
        .string()
        .max(8192)
        .superRefine((v, ctx) => {
          const problem = headerValueProblem(v);
          if (problem) ctx.addIssue({ code: "custom", message: problem });
        }),
    )
    .optional(),
});
const slack = z.strictObject({ type: z.literal("slack"), url: channelUrl });
const email = z.strictObject({
  type: z.literal("email"),
  /** The SNS topic the construct created for the channel (its e-mail subscriptions). */
  topicArn: z.string().regex(/^arn:aws[a-z-]*:sns:/, { error: "must be an SNS topic ARN" }),
});

/** One channel, by type. */
export const channelSchema = z.discriminatedUnion("type", [webhook, slack, email], {
  error: "type must be webhook, slack or email",
});
export type Channel = z.infer<typeof channelSchema>;

/** Retry settings of the deliverer; the defaults send 5 times over about 8.5 minutes. */
const deliverySchema = z.strictObject({
  /** Sends of one alert at most (1..10). */
  attempts: z.number().int().min(1).max(10).default(5),
  /** Wait before the 2nd, 3rd… send, seconds (the last value repeats). */
  backoffSeconds: z.array(z.number().min(0).max(3600)).min(1).default([30, 60, 120, 300]),
  /** Limit of one POST, seconds (≤ 10). */
  timeoutSeconds: z.number().min(0.1).max(10).default(10),
});

/** The alerts configuration: the channels and how deliveries are retried. */
export const alertsConfigSchema = z.strictObject({
  /** Base URL of the console (links `<consoleUrl>/instances/<id>`); standalone: its own URL. */
  consoleUrl: httpsOrHttp.optional(),
  channels: z
    .record(
      z.string().regex(CHANNEL_NAME_PATTERN, {
        error: `channel names must match ${CHANNEL_NAME_PATTERN.source}`,
      }),
      channelSchema,
    )
    .default({}),
  delivery: deliverySchema.default({
    attempts: 5,
    backoffSeconds: [30, 60, 120, 300],
    timeoutSeconds: 10,
  }),
});
export type AlertsConfig = z.infer<typeof alertsConfigSchema>;

/** A configuration problem, naming where and which rule (the CLI prints it and exits 2). */
export class AlertsConfigError extends Error {
  override name = "AlertsConfigError";
}

/**
 * Parses an alerts document (YAML or JSON).
 * @param origin where it came from, for the message (`alerts.yaml`, `SHOAL_ALERTS`).
 * @throws AlertsConfigError naming the field and the rule; never echoes a URL.
 */
export function parseAlertsConfig(text: string, origin: string): AlertsConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    // The parser's message quotes the text around the error (a literal URL, a header value):
    // say where, never what (as lib/secrets/file-source.ts does).
    const pos = (e as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
    const where = pos ? ` (line ${pos.line}, column ${pos.col})` : "";
    throw new AlertsConfigError(`${origin}: not YAML or JSON${where}`);
  }
  const parsed = alertsConfigSchema.safeParse(doc ?? {});
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (i) => `${origin}: ${formatPath(i.path) || "(document)"}: ${i.message}`,
    );
    throw new AlertsConfigError(lines.join("\n"));
  }
  return parsed.data;
}

/**
 * The configuration from the environment: `SHOAL_ALERTS` (the document), else the file
 * `SHOAL_ALERTS_FILE` names, else none.
 * @throws AlertsConfigError for an unreadable file or a bad document.
 */
export function alertsConfigFromEnv(env: NodeJS.ProcessEnv): AlertsConfig | undefined {
  const inline = env[ALERTS_ENV];
  if (inline) return parseAlertsConfig(inline, ALERTS_ENV);
  const file = env[ALERTS_FILE_ENV];
  if (!file) return undefined;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new AlertsConfigError(
      `alerts file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  return parseAlertsConfig(text, file);
}

/**
 * What logs and records may say about a channel: its type and host, never the URL (a URL from a
 * secret: the name of the secret until it is resolved).
 */
export function describeChannel(c: Channel): string {
  if (c.type === "email") return `email (${c.topicArn.split(":").pop()})`;
  const secret = wholeSecretReference(c.url);
  if (secret !== undefined) return `${c.type} (secret ${secret})`;
  try {
    return `${c.type} (${new URL(c.url).host})`;
  } catch {
    return c.type;
  }
}

/** Each channel's type by name: what the API may tell about the configuration (no URL, no topic). */
export function channelTypes(config: AlertsConfig): Record<string, Channel["type"]> {
  return Object.fromEntries(Object.entries(config.channels).map(([name, c]) => [name, c.type]));
}
