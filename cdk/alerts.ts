// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/**
 * Alerts on AWS (docs/alerts.md): the alerts function (functions/alerts), fed by two rules on
 * Shoal's bus (instance and misfire events; task attempts that FAILED) and a one-minute schedule
 * (retries), plus one SNS topic per `email` channel, encrypted with a customer managed KMS key and
 * with the channel's addresses subscribed. The channels reach the function as its SHOAL_ALERTS
 * environment variable. A webhook or Slack URL (and a header value) is either literal — then
 * readable by whoever may read the function's configuration — or `${secret:NAME}`: the variable
 * then holds the name only, and the function is granted read access to exactly the secrets its
 * channels name (cdk/secrets.ts), which it reads at each send (lib/alerts/channel-secrets.ts).
 */
import { Duration, Stack, Token } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { type IEventBus, Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import type { Function as LambdaFn } from "aws-cdk-lib/aws-lambda";
import type { ILogGroup } from "aws-cdk-lib/aws-logs";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import type { Construct } from "constructs";
import {
  channelSecretNames,
  channelUrlProblem,
  headerValueProblem,
} from "../lib/core/alert-channels.js";
import { CHANNEL_NAME_PATTERN } from "../lib/core/alert-rules.js";
import { parseSecretName } from "../lib/core/secret-references.js";
import { DETAIL_TYPES, EVENT_SOURCE } from "../lib/core/state-events.js";
import { secretStatements } from "./secrets.js";

/** The alerts function's timeout (docs/alerts.md "On AWS"). */
export const ALERTS_TIMEOUT = Duration.minutes(5);

/** One alert channel of the construct's `alerts` prop. */
export type AlertChannelOptions =
  | {
      /** A generic JSON POST (docs/alerts.md "Webhook body"). */
      type: "webhook";
      /** The URL, or `${secret:NAME}` (Secrets Manager name or ARN, `ssm:/…`) holding it. */
      url: string;
      /** Extra request headers (an Authorization token, say); values may hold `${secret:NAME}`. */
      headers?: Record<string, string>;
    }
  | {
      /** A Slack incoming webhook (text + blocks). */
      type: "slack";
      /** The webhook URL, or `${secret:NAME}` holding it (recommended: the URL is a credential). */
      url: string;
    }
  | {
      /** E-mail through an SNS topic `<prefix>-alerts-<name>`; AWS mails a confirmation link first. */
      type: "email";
      addresses: string[];
    };

/** The `alerts` prop of the `Shoal` construct. */
export interface ShoalAlertsOptions {
  /** Channels by name (the names rules use: `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`). */
  channels: Record<string, AlertChannelOptions>;
  /** Base URL of a console serving `/instances/<id>`; alerts carry no link when absent. */
  consoleUrl?: string;
  /** Retries: sends at most (default 5), waits between them, s (default [30, 60, 120, 300]), POST timeout, s (≤ 10). */
  delivery?: { attempts?: number; backoffSeconds?: number[]; timeoutSeconds?: number };
}

/** What {@link addAlerts} wires. */
export interface AlertsWiring {
  prefix: string;
  options: ShoalAlertsOptions;
  /** Makes the function (the construct's own factory: environment, log group, bundle). */
  makeFunction: (name: "alerts", timeout: Duration) => LambdaFn;
  bus: IEventBus;
  /** The tables by logical name (lib/aws/resources.ts). */
  tables: Record<string, ITable>;
  taskLogs: ILogGroup;
}

/**
 * The secrets a webhook or Slack channel names (`${secret:NAME}` as its whole `url`, anywhere in
 * a header value), by the name grants use (without `#key`): the alerts function's own rules
 * (lib/core/alert-channels.ts), applied at synthesis. A URL that is an unresolved token passes.
 * @throws Error naming the channel's field and the rule.
 */
function channelSecrets(
  name: string,
  c: Exclude<AlertChannelOptions, { type: "email" }>,
): string[] {
  const fail = (field: string, rule: string): never => {
    throw new Error(`alerts.channels.${name}.${field}: ${rule}`);
  };
  const urlProblem = Token.isUnresolved(c.url) ? undefined : channelUrlProblem(c.url);
  if (urlProblem) fail("url", urlProblem);
  if (c.type === "webhook") {
    for (const [k, v] of Object.entries(c.headers ?? {})) {
      const problem = headerValueProblem(v);
      if (problem) fail(`headers.${k}`, problem);
    }
  }
  return channelSecretNames(c).map((n) => {
    const parsed = parseSecretName(n);
    return typeof parsed === "string" ? fail("url", parsed) : parsed.base;
  });
}

/**
 * Declares the alerts function, its rules, topics and grants in `scope`.
 * @throws Error for a channel name or e-mail address that cannot work (at synthesis).
 */
export function addAlerts(scope: Construct, w: AlertsWiring): LambdaFn {
  // A pass sends up to 50 jobs, 8 at a time, each POST up to 10 s plus its content: minutes,
  // not seconds. The deliverer stops taking jobs when less than one POST and a margin is left
  // and claims a send for the rest of the invocation (lib/alerts/deliverer.ts), so a timeout
  // never lets a claim lapse under a send still going. No reserved concurrency: claims are
  // conditional writes, so parallel invocations never send one attempt twice, and a cap would
  // throttle event bursts (one invocation per failed instance or task) into delays.
  const fn = w.makeFunction("alerts", ALERTS_TIMEOUT);
  const channels: Record<string, unknown> = {};
  const secretNames = new Set<string>();
  let key: Key | undefined;
  for (const [name, c] of Object.entries(w.options.channels)) {
    if (!CHANNEL_NAME_PATTERN.test(name)) {
      throw new Error(`alerts.channels: '${name}' must match ${CHANNEL_NAME_PATTERN.source}`);
    }
    if (c.type !== "email") {
      for (const base of channelSecrets(name, c)) secretNames.add(base);
      channels[name] = c;
      continue;
    }
    key ??= new Key(scope, "AlertsKey", {
      description: `Shoal ${w.prefix} alert e-mail topics`,
      enableKeyRotation: true,
    });
    const topic = new Topic(scope, `AlertTopic-${name}`, {
      topicName: `${w.prefix}-alerts-${name}`,
      displayName: `Shoal ${w.prefix} alerts`,
      masterKey: key,
      enforceSSL: true,
    });
    for (const address of c.addresses) {
      if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(address)) {
        throw new Error(`alerts.channels.${name}: '${address}' is not an e-mail address`);
      }
      topic.addSubscription(new EmailSubscription(address));
    }
    // Not topic.grantPublish: on an encrypted topic it adds kms:GenerateDataKey* (a wildcard).
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ["sns:Publish"], resources: [topic.topicArn] }),
    );
    channels[name] = { type: "email", topicArn: topic.topicArn };
  }
  // Publishing to an encrypted topic: the data key for the message, nothing wider.
  key?.grant(fn, "kms:GenerateDataKey", "kms:Decrypt");
  // Exactly the secrets the channels name; values never reach the environment.
  for (const statement of secretStatements(scope, [...secretNames])) fn.addToRolePolicy(statement);
  fn.addEnvironment(
    "SHOAL_ALERTS",
    Stack.of(scope).toJsonString({
      channels,
      ...(w.options.consoleUrl ? { consoleUrl: w.options.consoleUrl } : {}),
      ...(w.options.delivery ? { delivery: w.options.delivery } : {}),
    }),
  );
  // Reads what an alert says; writes its deliveries (timers table, lib/alerts/dynamo-deliveries.ts).
  for (const t of ["workflows", "instances", "tasks", "schedules"]) w.tables[t]?.grantReadData(fn);
  w.tables.timers?.grantReadWriteData(fn);
  w.taskLogs.grantRead(fn);

  const target = new LambdaFunction(fn);
  new Rule(scope, "AlertsOnShoalEvents", {
    eventBus: w.bus,
    description: "Shoal's instance and misfire events for alert rules",
    eventPattern: {
      source: [EVENT_SOURCE],
      detailType: [DETAIL_TYPES.instance, DETAIL_TYPES.misfire],
    },
    targets: [target],
  });
  new Rule(scope, "AlertsOnTaskFailures", {
    eventBus: w.bus,
    description: "Failed task attempts for TASK_RETRY_EXHAUSTED alert rules",
    eventPattern: {
      source: [EVENT_SOURCE],
      detailType: [DETAIL_TYPES.task],
      detail: { state: ["FAILURE"] },
    },
    targets: [target],
  });
  new Rule(scope, "AlertsEveryMinute", {
    schedule: Schedule.rate(Duration.minutes(1)),
    description: "Sends alert deliveries that are due (retries)",
    targets: [target],
  });
  return fn;
}
