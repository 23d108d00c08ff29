/**
 * Lambda handler of the sweeper, invoked by an EventBridge schedule (rate 1 minute): the
 * maintenance sweep (outbox, failover, timers, task groups), then the schedule sweep. Fires due
 * within the next minute are fired now (look-ahead); the run's scheduleTime is still the nominal
 * time. At the end the invocation gives its shard leases back, so the next one (in any
 * container) takes every shard at once.
 */
import { randomUUID } from "node:crypto";
import { MetricUnit } from "@aws-lambda-powertools/metrics";
import type { ScheduledEvent } from "aws-lambda";
import { configFromEnv, METRICS } from "../../lib/aws/config.js";
import type { SweepResult } from "../../lib/engine/schedule-sweeper.js";
import type { SweepReport } from "../../lib/engine/sweeper.js";
import { shoalMetrics } from "../../lib/runtime/metrics.js";
import { createRuntime } from "../../lib/runtime/runtime.js";

/** Built at cold start from the function's environment, reused while warm. */
const rt = createRuntime(configFromEnv(process.env));
const metrics = shoalMetrics(rt.config.prefix);

/** One owner name per container. */
const OWNER = `lambda:${randomUUID()}`;
const SWEEP_MS = 60_000;

export const handler = async (
  _event: ScheduledEvent,
): Promise<SweepReport & { schedules: SweepResult }> => {
  const report = await rt.sweeper.sweep();
  // Leases shorter than the rule's period: after a crashed invocation, the next one (a minute
  // later) takes every shard at once instead of finding them held.
  const scheduler = rt.scheduleSweeper(OWNER, SWEEP_MS, SWEEP_MS, 50_000);
  try {
    const schedules = await scheduler.sweep();
    // One metric line per sweep, also when nothing fired: a missing metric means no sweeper ran
    // (the lateness alarm treats missing data as breaching).
    metrics.addMetric(METRICS.fireLatenessMs, MetricUnit.Milliseconds, schedules.maxLatenessMs);
    metrics.addMetric(METRICS.fires, MetricUnit.Count, schedules.fired);
    metrics.publishStoredMetrics();
    return { ...report, schedules };
  } finally {
    await scheduler.stop();
  }
};
