/**
 * Lambda handler of event triggers: an EventBridge rule on Shoal's bus delivers matching events
 * here; every online trigger whose pattern matches starts its run, within the loop and rate limits
 * (lib/api/trigger-delivery.ts). A redelivered event (same `id`) starts nothing twice: the run's
 * id derives from (trigger, event id). What the limits refused is counted as CloudWatch metrics
 * (`TriggerRunsRefused`, `TriggerLoopsStopped`, besides `TriggerRuns`) in one EMF line per
 * invocation.
 */
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { deliverTriggerEvent, type TriggerOutcome } from "../../lib/api/trigger-delivery.js";
import { configFromEnv } from "../../lib/aws/config.js";
import { shoalMetrics } from "../../lib/runtime/metrics.js";
import { createRuntime } from "../../lib/runtime/runtime.js";

/** Built at cold start from the function's environment, reused while warm. */
const rt = createRuntime(configFromEnv(process.env));
const metrics = shoalMetrics(rt.config.prefix);
const api = {
  ...rt.api,
  metric: (name: string, value: number) => metrics.addMetric(name, MetricUnit.Count, value),
};

export const handler = async (
  event: Record<string, unknown> & { id: string },
): Promise<TriggerOutcome[]> => {
  try {
    return await deliverTriggerEvent(api, event);
  } finally {
    // Only when something was counted: an invocation that started nothing prints no line.
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  }
};
