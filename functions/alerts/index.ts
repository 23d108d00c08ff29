/**
 * Lambda handler of alerts: invoked by an EventBridge rule with Shoal's instance, task and misfire
 * events (each becomes the deliveries its rules ask for, sent at once; a failure to write them
 * fails the invocation, which Lambda retries) and by a one-minute schedule (sends what is due:
 * retries), within the invocation's time left (lib/alerts/lambda-event.ts). Channels come from the
 * SHOAL_ALERTS environment variable the construct sets (cdk/alerts.ts); a channel URL or header
 * value given as `${secret:NAME}` is read from Secrets Manager or SSM at each send (cached a
 * minute, lib/secrets/cached-source.ts) with the grants the construct gave this function.
 */
import type { Context, EventBridgeEvent } from "aws-lambda";
import { Alerts } from "../../lib/alerts/alerts.js";
import { alertsConfigFromEnv } from "../../lib/alerts/channels.js";
import {
  type AlertsInvocationReport,
  handleAlertsInvocation,
} from "../../lib/alerts/lambda-event.js";
import { snsEmailPublisher } from "../../lib/alerts/sns-email.js";
import { configFromEnv } from "../../lib/aws/config.js";
import { createRuntime } from "../../lib/runtime/runtime.js";
import { secretClientsOf } from "../../lib/secrets/attempt-secrets.js";
import { secretSourceFromEnv } from "../../lib/secrets/sources.js";

/** Built at cold start from the function's environment, reused while warm. */
const rt = createRuntime(configFromEnv(process.env));
const config = alertsConfigFromEnv(process.env);
const alerts = new Alerts({
  dynamo: rt.clients.dynamo,
  timersTable: rt.config.tables.timers,
  store: rt.api.store,
  definitions: rt.api.definitions,
  schedules: rt.scheduling.schedules,
  logs: rt.api.logs,
  now: () => Date.now(),
  log: rt.log,
  ...(config ? { config } : {}),
  publishEmail: snsEmailPublisher(rt.clients),
  secrets: () => secretSourceFromEnv(process.env, secretClientsOf(rt.clients)),
  retentionDays: rt.config.instanceRetentionDays,
});

export const handler = (
  event: EventBridgeEvent<string, unknown>,
  context?: Pick<Context, "getRemainingTimeInMillis">,
): Promise<AlertsInvocationReport> =>
  handleAlertsInvocation(alerts, event as unknown as Record<string, unknown>, {
    // Lambda always passes it; a caller without one (a local harness) gets no time limit.
    ...(context?.getRemainingTimeInMillis
      ? { remainingMs: () => context.getRemainingTimeInMillis() }
      : {}),
    log: rt.log,
  });
