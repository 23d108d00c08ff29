/**
 * Lambda handler of alerts: invoked by an EventBridge rule with Shoal's instance, task and misfire
 * events (each becomes the deliveries its rules ask for) and by a one-minute schedule (sends
 * what is due: retries). Each invocation then sends what is due now. Channels come from the
 * SHOAL_ALERTS environment variable the construct sets (cdk/alerts.ts); a channel URL or header
 * value given as `${secret:NAME}` is read from Secrets Manager or SSM at each send (cached a
 * minute, lib/secrets/cached-source.ts) with the grants the construct gave this function.
 */
import type { EventBridgeEvent } from "aws-lambda";
import { Alerts } from "../../lib/alerts/alerts.js";
import { alertsConfigFromEnv } from "../../lib/alerts/channels.js";
import type { DeliveryReport } from "../../lib/alerts/deliverer.js";
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

export const handler = async (
  event: EventBridgeEvent<string, unknown>,
): Promise<DeliveryReport & { created: number }> => {
  const created = event.source === "shoal" ? await alerts.onEvent(event as never) : [];
  const report = await alerts.deliverDue();
  return { ...report, created: created.length };
};
