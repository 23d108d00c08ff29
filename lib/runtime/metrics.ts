/**
 * CloudWatch metrics as Embedded Metric Format log lines, through Powertools for AWS Lambda's
 * Metrics: the Lambda's log line becomes a metric, with no PutMetricData call and no extra cost
 * per request
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
 * Names are shared with the CDK alarms and dashboard (lib/aws/config.ts METRICS).
 */
import { Metrics } from "@aws-lambda-powertools/metrics";
import { METRICS } from "../aws/config.js";

/**
 * The metrics of one deployment: namespace {@link METRICS.namespace}, one dimension
 * {@link METRICS.dimension} = `prefix`. Powertools' default `service` dimension is dropped: the
 * alarms and dashboard (cdk/monitoring.ts) match the metrics on `Prefix` alone, and a metric
 * with another set of dimensions is another metric to CloudWatch.
 * `publishStoredMetrics()` prints the line on stdout. Powertools' switches apply:
 * `POWERTOOLS_METRICS_DISABLED=true` or `POWERTOOLS_DEV=true` print nothing, and the sweeper's
 * lateness alarm, which treats missing data as breaching, then fires: do not set them on a stack.
 */
export function shoalMetrics(prefix: string): Metrics {
  const metrics = new Metrics({ namespace: METRICS.namespace });
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ [METRICS.dimension]: prefix });
  return metrics;
}
