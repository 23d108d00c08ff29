/**
 * CloudWatch metrics as Embedded Metric Format log lines: the Lambda's log line becomes a metric,
 * with no PutMetricData call and no extra cost per request
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
 * Names are shared with the CDK alarms and dashboard (lib/aws/config.ts METRICS).
 */
import { METRICS } from "../aws/config.js";

/** One metric value and its CloudWatch unit. */
export interface MetricValue {
  value: number;
  unit: "Milliseconds" | "Count";
}

/**
 * The EMF JSON line for `values` under namespace {@link METRICS.namespace}, dimension
 * `{Prefix: prefix}`, at `now` (epoch ms).
 */
export function emfLine(prefix: string, values: Record<string, MetricValue>, now: number): string {
  const doc: Record<string, unknown> = {
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: METRICS.namespace,
          Dimensions: [[METRICS.dimension]],
          Metrics: Object.entries(values).map(([Name, v]) => ({ Name, Unit: v.unit })),
        },
      ],
    },
    [METRICS.dimension]: prefix,
  };
  for (const [name, v] of Object.entries(values)) doc[name] = v.value;
  return JSON.stringify(doc);
}
