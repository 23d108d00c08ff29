/**
 * What operators watch: log retention and the HTTP API's access logs, an alarm per dead-letter
 * queue and per function's errors, the sweeper lateness alarm (from the EMF metrics that
 * lib/aws/config.ts METRICS names), an optional SNS topic that mails every alarm, and the
 * CloudWatch dashboard. Everything is created in the caller's scope, so the alarms keep the
 * logical ids they had when they lived in cdk/shoal.ts.
 */
import { Duration } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  Metric,
  TextWidget,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { METRICS } from "../lib/aws/config.js";
import type { Priority } from "../lib/core/model.js";
import type { EcsWorkers } from "./ecs-workers.js";
import { suppressNag } from "./nag.js";

/**
 * Fire lateness (ms) above which schedules count as late: the sweeper runs every minute and
 * looks 60 s ahead, so a healthy fire is decided well before its time; 90 s late means at least
 * one sweep was missed or too slow.
 */
export const LATENESS_THRESHOLD_MS = 90_000;

/** The `RetentionDays` values (days), for {@link logRetention}. */
export const RETENTION_DAYS: readonly number[] = Object.values(RetentionDays)
  .filter((v): v is number => typeof v === "number")
  .sort((a, b) => a - b);

/**
 * `days` as a log retention (default one month).
 * @throws Error naming the valid values when `days` is not one CloudWatch Logs accepts.
 */
export function logRetention(days: number | undefined): RetentionDays {
  if (days === undefined) return RetentionDays.ONE_MONTH;
  if (!RETENTION_DAYS.includes(days)) {
    throw new Error(
      `logRetentionDays must be one of ${RETENTION_DAYS.join(", ")} (CloudWatch Logs retention; 9999 = never expire), got ${days}`,
    );
  }
  return days as RetentionDays;
}

/** One task queue with its worker group and priority tier. */
export interface TierQueue {
  group: string;
  priority: Priority;
  queue: Queue;
}

/** What {@link addMonitoring} watches. */
export interface MonitoringProps {
  prefix: string;
  /** Functions by short name ("api", "dispatcher", "worker", "worker-<group>", …). */
  functions: Record<string, IFunction>;
  /** The HTTP API (absent in functionUrl mode: the api function's metrics stand in). */
  httpApi?: HttpApi;
  taskQueues: TierQueue[];
  deadLetterQueues: Queue[];
  tables: Record<string, Table>;
  ecs?: EcsWorkers;
  /** Mailed on every alarm (an SNS topic with an email subscription); none when absent. */
  alarmEmail?: string;
}

/** What {@link addMonitoring} created. */
export interface ShoalMonitoring {
  /** The dashboard, named like the prefix. */
  dashboard: Dashboard;
  /** Every operational alarm (not the ECS scaling alarms), each with the topic as action. */
  alarms: Alarm[];
  /** "schedules fire late or the sweeper is not running". */
  latenessAlarm: Alarm;
  /** The alarm topic, when `alarmEmail` is set. */
  topic?: Topic;
}

const MINUTE = Duration.minutes(1);

/**
 * The sweeper's fire lateness: Maximum of METRICS.fireLatenessMs per minute for this prefix
 * (one EMF line per sweep, 0 when it decided no fire, so a missing datapoint means no sweep).
 */
export function latenessMetric(prefix: string): Metric {
  return new Metric({
    namespace: METRICS.namespace,
    metricName: METRICS.fireLatenessMs,
    dimensionsMap: { [METRICS.dimension]: prefix },
    statistic: "Maximum",
    period: MINUTE,
  });
}

/** A count the trigger Lambda reports (lib/api/trigger-delivery.ts), summed per `period`. */
export function triggerMetric(prefix: string, metricName: string, period = MINUTE): Metric {
  return new Metric({
    namespace: METRICS.namespace,
    metricName,
    dimensionsMap: { [METRICS.dimension]: prefix },
    statistic: "Sum",
    period,
  });
}

/**
 * The CloudWatch console URL of a dashboard (aws partition console domain).
 * @param region the stack's region (a token is fine).
 */
export function dashboardUrl(region: string, name: string): string {
  return `https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}#dashboards/dashboard/${name}`;
}

/**
 * Adds the alarms, the optional alarm topic and the dashboard to `scope`.
 * @throws Error when `alarmEmail` is not an email address.
 */
export function addMonitoring(scope: Construct, props: MonitoringProps): ShoalMonitoring {
  const alarms: Alarm[] = [];
  const alarm = (id: string, a: ConstructorParameters<typeof Alarm>[2]) => {
    const created = new Alarm(scope, id, a);
    alarms.push(created);
    return created;
  };

  for (const q of props.deadLetterQueues) {
    alarm(`Alarm-${q.node.id}`, {
      alarmDescription: `messages in ${q.node.id}: a message failed too often`,
      metric: q.metricApproximateNumberOfMessagesVisible({ period: MINUTE }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
  for (const [name, f] of Object.entries(props.functions)) {
    alarm(`Alarm-errors-${name}`, {
      alarmDescription: `errors of ${name}`,
      metric: f.metricErrors({ period: Duration.minutes(5) }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
  const latenessAlarm = alarm("Alarm-sweeper-lateness", {
    alarmDescription: `schedules fire late or the sweeper is not running (fire lateness > ${LATENESS_THRESHOLD_MS} ms, or no sweep reported, for 2 minutes)`,
    metric: latenessMetric(props.prefix),
    threshold: LATENESS_THRESHOLD_MS,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 2,
    datapointsToAlarm: 2,
    // Every sweep reports (0 without fires): no datapoint means the sweeper did not run.
    treatMissingData: TreatMissingData.BREACHING,
  });

  // A loop cut off means a trigger whose pattern matches the runs it starts (docs/events.md).
  alarm("Alarm-trigger-loops", {
    alarmDescription:
      "a trigger loop was stopped: a trigger's pattern matches the events of the runs it starts (GET /v1/triggers shows loopStops)",
    metric: triggerMetric(props.prefix, METRICS.triggerLoopsStopped, Duration.minutes(5)),
    threshold: 0,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });

  let topic: Topic | undefined;
  if (props.alarmEmail !== undefined) {
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(props.alarmEmail)) {
      throw new Error(`alarmEmail must be an email address, got '${props.alarmEmail}'`);
    }
    topic = new Topic(scope, "AlarmTopic", {
      topicName: `${props.prefix}-alarms`,
      displayName: `Shoal ${props.prefix} alarms`,
      enforceSSL: true,
    });
    topic.addSubscription(new EmailSubscription(props.alarmEmail));
    suppressNag(topic, [
      {
        id: "AwsSolutions-SNS2",
        reason:
          "CloudWatch alarms cannot publish to a topic encrypted with the AWS managed SNS key, and a customer managed key would cost a monthly fee at rest; the topic carries alarm names and states only.",
      },
    ]);
    for (const a of alarms) a.addAlarmAction(new SnsAction(topic));
  }

  const dashboard = new Dashboard(scope, "Dashboard", { dashboardName: props.prefix });
  addWidgets(dashboard, props);
  return { dashboard, alarms, latenessAlarm, ...(topic ? { topic } : {}) };
}

/** A graph of one minute (or `period`) datapoints. */
function graph(
  title: string,
  left: IMetric[],
  width = 8,
  extra: Partial<ConstructorParameters<typeof GraphWidget>[0]> = {},
) {
  return new GraphWidget({ title, left, width, height: 6, period: MINUTE, ...extra });
}

function addWidgets(d: Dashboard, p: MonitoringProps): void {
  const period = MINUTE;
  const heading = (markdown: string) => new TextWidget({ markdown, width: 24, height: 1 });

  d.addWidgets(heading(`## ${p.prefix}: API`));
  const api = p.functions.api;
  if (p.httpApi) {
    d.addWidgets(
      graph("Requests", [p.httpApi.metricCount({ period, label: "requests" })]),
      graph("Errors", [
        p.httpApi.metricClientError({ period, label: "4xx" }),
        p.httpApi.metricServerError({ period, label: "5xx" }),
      ]),
      graph("Latency (ms)", [
        p.httpApi.metricLatency({ period, statistic: "p50", label: "p50" }),
        p.httpApi.metricLatency({ period, statistic: "p99", label: "p99" }),
      ]),
    );
  } else if (api) {
    d.addWidgets(...lambdaGraphs({ api }, ["Invocations", "Errors", "Duration"]));
  }

  d.addWidgets(heading("## Dispatcher, sweeper, trigger and workers"));
  const others = Object.fromEntries(Object.entries(p.functions).filter(([n]) => n !== "api"));
  d.addWidgets(
    ...lambdaGraphs(others, ["Invocations", "Errors", "Duration", "ConcurrentExecutions"], 6),
  );

  d.addWidgets(
    graph(
      "Trigger runs: started, refused over the rate, loops stopped",
      [
        triggerMetric(p.prefix, METRICS.triggerRuns).with({ label: "started" }),
        triggerMetric(p.prefix, METRICS.triggerRunsRefused).with({ label: "refused (rate)" }),
        triggerMetric(p.prefix, METRICS.triggerLoopsStopped).with({ label: "loops stopped" }),
      ],
      12,
    ),
  );

  d.addWidgets(heading("## Task queues"));
  const label = (t: TierQueue) => `${t.group}/${t.priority}`;
  d.addWidgets(
    graph(
      "Tasks waiting, by priority tier",
      p.taskQueues.map((t) =>
        t.queue.metricApproximateNumberOfMessagesVisible({
          period,
          statistic: "Maximum",
          label: label(t),
        }),
      ),
      12,
    ),
    graph(
      "Age of the oldest waiting task (s)",
      p.taskQueues.map((t) =>
        t.queue.metricApproximateAgeOfOldestMessage({
          period,
          statistic: "Maximum",
          label: label(t),
        }),
      ),
      12,
    ),
  );
  d.addWidgets(
    graph(
      "Dead-letter queues (messages)",
      p.deadLetterQueues.map((q) =>
        q.metricApproximateNumberOfMessagesVisible({
          period,
          statistic: "Maximum",
          label: q.node.id.replace(/^Dlq-/, ""),
        }),
      ),
      24,
    ),
  );

  d.addWidgets(heading("## Schedules"));
  const fires = new Metric({
    namespace: METRICS.namespace,
    metricName: METRICS.fires,
    dimensionsMap: { [METRICS.dimension]: p.prefix },
    statistic: "Sum",
    period,
    label: "fires",
  });
  d.addWidgets(
    graph("Sweeper fire lateness (ms)", [latenessMetric(p.prefix).with({ label: "max" })], 12, {
      leftAnnotations: [{ value: LATENESS_THRESHOLD_MS, label: "alarm" }],
    }),
    graph("Schedule fires", [fires], 12),
  );

  d.addWidgets(heading("## DynamoDB"));
  const throttles = (metricName: string) =>
    Object.entries(p.tables).map(([name, t]) =>
      t.metric(metricName, { period, statistic: "Sum", label: name }),
    );
  d.addWidgets(
    graph("Read throttle events", throttles("ReadThrottleEvents"), 12),
    graph("Write throttle events", throttles("WriteThrottleEvents"), 12),
  );

  if (p.ecs) {
    const dims = { ClusterName: p.ecs.cluster.clusterName, ServiceName: p.ecs.service.serviceName };
    d.addWidgets(heading(`## ECS workers (group ${p.ecs.group})`));
    d.addWidgets(
      graph("Running tasks", [
        new Metric({
          namespace: "ECS/ContainerInsights",
          metricName: "RunningTaskCount",
          dimensionsMap: dims,
          statistic: "Maximum",
          period,
          label: "running tasks",
        }),
      ]),
      graph("Messages queued or running (scaling metric)", [p.ecs.depth]),
      graph("CPU and memory (%)", [
        p.ecs.service.metricCpuUtilization({ period, label: "CPU" }),
        p.ecs.service.metricMemoryUtilization({ period, label: "memory" }),
      ]),
    );
  }
}

/** Lambda metrics (AWS/Lambda) the dashboard shows: graph title and statistic. */
const LAMBDA_METRICS = {
  Invocations: { title: "Invocations", statistic: "Sum" },
  Errors: { title: "Errors", statistic: "Sum" },
  Duration: { title: "Duration (ms, p99)", statistic: "p99" },
  ConcurrentExecutions: { title: "Concurrent executions (max)", statistic: "Maximum" },
} as const;

/** One graph per Lambda metric, one line per function. */
function lambdaGraphs(
  fns: Record<string, IFunction>,
  metrics: Array<keyof typeof LAMBDA_METRICS>,
  width = 8,
): GraphWidget[] {
  return metrics.map((m) =>
    graph(
      LAMBDA_METRICS[m].title,
      Object.entries(fns).map(([name, f]) =>
        f.metric(m, { period: MINUTE, statistic: LAMBDA_METRICS[m].statistic, label: name }),
      ),
      width,
    ),
  );
}
