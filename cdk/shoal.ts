/**
 * The `Shoal` construct: everything Shoal needs on AWS, declared from the same descriptions the
 * standalone runtime creates (lib/aws/resources.ts tables and queue settings) and wired to the
 * handlers through the shared environment variable names (lib/aws/config.ts). Put it into any
 * CDK app; `ShoalStack` (shoal-stack.ts) is the ready-made stack.
 */
import { fileURLToPath } from "node:url";
import { CfnOutput, Duration, RemovalPolicy, Stack } from "aws-cdk-lib";
import { type CfnStage, HttpApi, HttpMethod } from "aws-cdk-lib/aws-apigatewayv2";
import { HttpIamAuthorizer } from "aws-cdk-lib/aws-apigatewayv2-authorizers";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { Alarm, ComparisonOperator, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  Table,
  TableEncryption,
} from "aws-cdk-lib/aws-dynamodb";
import { EventBus, Match, Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { Architecture, FunctionUrlAuthType, Runtime } from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { NagSuppressions } from "cdk-nag";
import { Construct } from "constructs";
import { ENV, resourceNames, TABLE_ENV } from "../lib/aws/config.js";
import { QUEUE_SETTINGS, TABLES } from "../lib/aws/resources.js";
import { PRIORITIES, type Priority } from "../lib/core/model.js";

export interface ShoalProps {
  /** Resource name prefix (`SHOAL_PREFIX`), default "shoal". */
  prefix?: string;
  /** DynamoDB deletion protection (default true; false for throw-away stacks). */
  deletionProtection?: boolean;
  /** Retention of the task log group (default one month). */
  logRetention?: RetentionDays;
  /**
   * "httpApi" (default): API Gateway HTTP API with IAM authorisation. "functionUrl": a Lambda
   * function URL with IAM auth, for LocalStack's free tier, which has no HTTP API.
   */
  apiMode?: "httpApi" | "functionUrl";
  /** Worker groups with task queues and a worker function (default ["default"]). */
  workerGroups?: string[];
}

/**
 * Concurrent worker invocations per priority tier. Lambda polls every queue at once, so the
 * order under backlog comes from these weights: a HIGHEST task has ten times the worker slots
 * of a LOWEST one (docs/aws.md). ECS workers drain the tiers strictly in order instead.
 */
export const WORKER_CONCURRENCY: Record<Priority, number> = {
  HIGHEST: 20,
  HIGH: 10,
  MEDIUM: 6,
  LOW: 3,
  LOWEST: 2,
};

const HANDLERS = fileURLToPath(new URL("../functions/", import.meta.url));

export class Shoal extends Construct {
  readonly tables: Record<string, Table> = {};
  readonly eventsQueue: Queue;
  readonly signalsQueue: Queue;
  readonly taskQueues: Queue[] = [];
  readonly deadLetterQueues: Queue[] = [];
  readonly functions: Record<string, NodejsFunction> = {};
  readonly bus: EventBus;
  readonly taskLogs: LogGroup;
  /** The API's base URL (HTTP API endpoint or function URL). */
  readonly apiUrl: string;

  constructor(scope: Construct, id: string, props: ShoalProps = {}) {
    super(scope, id);
    const prefix = props.prefix ?? "shoal";
    const names = resourceNames(prefix);
    const removal = RemovalPolicy.RETAIN;

    for (const spec of TABLES) {
      const attr = (k: { name: string; type: "S" | "N" }) => ({
        name: k.name,
        type: k.type === "S" ? AttributeType.STRING : AttributeType.NUMBER,
      });
      const table = new Table(this, `Table-${spec.logical}`, {
        tableName: names.tables[spec.logical as keyof typeof names.tables],
        partitionKey: attr(spec.partitionKey),
        ...(spec.sortKey ? { sortKey: attr(spec.sortKey) } : {}),
        billingMode: BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        deletionProtection: props.deletionProtection ?? true,
        encryption: TableEncryption.AWS_MANAGED,
        removalPolicy: removal,
        ...(spec.logical === "instances" ? { timeToLiveAttribute: "expiresAt" } : {}),
      });
      for (const ix of spec.indexes) {
        table.addGlobalSecondaryIndex({
          indexName: ix.name,
          partitionKey: attr(ix.partitionKey),
          ...(ix.sortKey ? { sortKey: attr(ix.sortKey) } : {}),
          ...(ix.include
            ? { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: ix.include }
            : { projectionType: ProjectionType.ALL }),
        });
      }
      this.tables[spec.logical] = table;
    }

    const dlq = (name: string, fifo = false) => {
      const q = new Queue(this, `Dlq-${name}`, {
        queueName: name,
        fifo: fifo || undefined,
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      this.deadLetterQueues.push(q);
      return q;
    };
    this.eventsQueue = new Queue(this, "EventsQueue", {
      queueName: names.eventsQueue,
      fifo: true,
      visibilityTimeout: Duration.seconds(QUEUE_SETTINGS.events.visibilityTimeoutSeconds),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: {
        queue: dlq(names.eventsDlq, true),
        maxReceiveCount: QUEUE_SETTINGS.events.maxReceiveCount,
      },
    });
    this.signalsQueue = new Queue(this, "SignalsQueue", {
      queueName: names.signalsQueue,
      visibilityTimeout: Duration.seconds(QUEUE_SETTINGS.events.visibilityTimeoutSeconds),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: {
        queue: dlq(names.signalsDlq),
        maxReceiveCount: QUEUE_SETTINGS.events.maxReceiveCount,
      },
    });

    this.bus = new EventBus(this, "Bus", { eventBusName: `${prefix}-bus` });
    this.taskLogs = new LogGroup(this, "TaskLogs", {
      logGroupName: `/${prefix}/tasks`,
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: removal,
    });

    const environment: Record<string, string> = {
      [ENV.prefix]: prefix,
      [ENV.eventsQueueUrl]: this.eventsQueue.queueUrl,
      [ENV.dataDir]: "/tmp/shoal",
      [ENV.taskLogGroup]: this.taskLogs.logGroupName,
      NODE_OPTIONS: "--enable-source-maps",
    };
    for (const [logical, env] of Object.entries(TABLE_ENV)) {
      environment[env] = (this.tables[logical] as Table).tableName;
    }
    const fn = (name: string, timeout: Duration, memorySize = 512) => {
      const f = new NodejsFunction(this, `Fn-${name}`, {
        functionName: `${prefix}-${name}`,
        entry: `${HANDLERS}${name}/index.ts`,
        handler: "handler",
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize,
        timeout,
        environment,
        bundling: {
          format: OutputFormat.ESM,
          target: "node22",
          minify: true,
          sourceMap: true,
          forceDockerBundling: false,
          // ESM bundles of CommonJS dependencies need `require`.
          banner:
            "import { createRequire as __shoalRequire } from 'module'; const require = __shoalRequire(import.meta.url);",
        },
      });
      this.functions[name] = f;
      return f;
    };

    const api = fn("api", Duration.seconds(29));
    // Below the events queue's 30 s visibility timeout (SQS event sources require it).
    const dispatcher = fn("dispatcher", Duration.seconds(25));
    const sweeper = fn("sweeper", Duration.seconds(55));
    const trigger = fn("trigger", Duration.seconds(30));
    const workerTimeout = Duration.seconds(QUEUE_SETTINGS.tasks.visibilityTimeoutSeconds);

    // Least privilege: each function gets data access only to the tables it uses.
    const rw = (f: NodejsFunction, logical: string[]) => {
      for (const l of logical) this.tables[l]?.grantReadWriteData(f);
    };
    const everything = TABLES.map((t) => t.logical);
    rw(api, everything);
    rw(dispatcher, [
      "workflows",
      "commands",
      "instances",
      "tasks",
      "taskGroups",
      "timers",
      "schedules",
      "fires",
      "backfills",
    ]);
    rw(sweeper, [
      "workflows",
      "commands",
      "instances",
      "tasks",
      "taskGroups",
      "timers",
      "schedules",
      "fires",
      "leases",
      "backfills",
    ]);
    rw(trigger, ["workflows", "commands", "instances", "triggers"]);
    for (const f of [api, dispatcher, sweeper, trigger]) {
      this.eventsQueue.grantSendMessages(f);
      this.signalsQueue.grantSendMessages(f);
    }
    this.taskLogs.grantRead(api);

    dispatcher.addEventSource(
      new SqsEventSource(this.eventsQueue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: 50,
      }),
    );
    dispatcher.addEventSource(
      new SqsEventSource(this.signalsQueue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: 5,
      }),
    );

    for (const group of props.workerGroups ?? ["default"]) {
      const worker = fn(group === "default" ? "worker" : `worker-${group}`, workerTimeout, 1024);
      rw(worker, ["instances", "tasks"]);
      this.eventsQueue.grantSendMessages(worker);
      this.taskLogs.grantWrite(worker);
      for (const p of PRIORITIES) {
        const q = new Queue(this, `Tasks-${group}-${p}`, {
          queueName: names.taskQueue(group, p),
          visibilityTimeout: workerTimeout,
          encryption: QueueEncryption.SQS_MANAGED,
          enforceSSL: true,
          deadLetterQueue: {
            queue: dlq(names.taskDlq(group, p)),
            maxReceiveCount: QUEUE_SETTINGS.tasks.maxReceiveCount,
          },
        });
        this.taskQueues.push(q);
        q.grantSendMessages(dispatcher);
        q.grantSendMessages(sweeper);
        q.grantSendMessages(api);
        worker.addEventSource(
          new SqsEventSource(q, {
            batchSize: 1,
            reportBatchItemFailures: true,
            maxConcurrency: WORKER_CONCURRENCY[p],
          }),
        );
      }
    }

    new Rule(this, "SweeperEveryMinute", {
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(sweeper)],
    });
    new Rule(this, "Triggers", {
      eventBus: this.bus,
      description: "Events for Shoal triggers (each trigger's pattern is matched in the handler)",
      eventPattern: { source: Match.prefix("") },
      targets: [new LambdaFunction(trigger)],
    });

    for (const q of this.deadLetterQueues) {
      new Alarm(this, `Alarm-${q.node.id}`, {
        alarmDescription: `messages in ${q.node.id}: a message failed too often`,
        metric: q.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }
    for (const [name, f] of Object.entries(this.functions)) {
      new Alarm(this, `Alarm-errors-${name}`, {
        alarmDescription: `errors of ${name}`,
        metric: f.metricErrors({ period: Duration.minutes(5) }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }

    if (props.apiMode === "functionUrl") {
      const url = api.addFunctionUrl({ authType: FunctionUrlAuthType.AWS_IAM });
      this.apiUrl = url.url;
    } else {
      const http = new HttpApi(this, "HttpApi", {
        apiName: `${prefix}-api`,
        defaultAuthorizer: new HttpIamAuthorizer(),
      });
      // Access logs of every API call (who, what, status), kept like the task logs.
      const accessLogs = new LogGroup(this, "ApiAccessLogs", {
        logGroupName: `/${prefix}/api-access`,
        retention: props.logRetention ?? RetentionDays.ONE_MONTH,
        removalPolicy: removal,
      });
      const stage = http.defaultStage?.node.defaultChild as CfnStage | undefined;
      if (stage) {
        stage.accessLogSettings = {
          destinationArn: accessLogs.logGroupArn,
          format: JSON.stringify({
            requestId: "$context.requestId",
            ip: "$context.identity.sourceIp",
            caller: "$context.identity.caller",
            user: "$context.identity.user",
            requestTime: "$context.requestTime",
            method: "$context.httpMethod",
            path: "$context.path",
            status: "$context.status",
            error: "$context.integrationErrorMessage",
          }),
        };
      }
      http.addRoutes({
        path: "/{proxy+}",
        methods: [HttpMethod.ANY],
        integration: new HttpLambdaIntegration("Api", api),
      });
      this.apiUrl = http.apiEndpoint;
    }
    this.suppressNagFindings();
    new CfnOutput(Stack.of(this), "ApiUrl", { value: this.apiUrl });
    new CfnOutput(Stack.of(this), "EventBusName", { value: this.bus.eventBusName });
  }

  /**
   * cdk-nag AwsSolutions findings Shoal accepts on purpose, each with its reason (the test runs
   * the checks and fails on any finding not listed here).
   */
  private suppressNagFindings(): void {
    // Stack-wide, so that policies CDK splits off at synthesis (overflow policies) are covered.
    NagSuppressions.addStackSuppressions(
      Stack.of(this),
      [
        {
          id: "AwsSolutions-L1",
          reason:
            "Shoal targets the Node.js 22 runtime (its engines field and CI); a newer runtime is adopted deliberately, not by the next deploy.",
        },
        {
          id: "AwsSolutions-IAM4",
          reason:
            "AWSLambdaBasicExecutionRole only lets each function write its own CloudWatch log streams; it is AWS's scoped policy for exactly that.",
          appliesTo: [
            "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
          ],
        },
        {
          id: "AwsSolutions-IAM5",
          reason:
            "Queries of a table's global secondary indexes need the table's index ARNs (<table>/index/*); the actions are the table's data actions only, on Shoal's own tables.",
          appliesTo: [{ regex: "/^Resource::<.*\\.Arn>\\/index\\/\\*$/g" }],
        },
        {
          id: "AwsSolutions-IAM5",
          reason:
            "Task log streams are created per task attempt under Shoal's own log group (<group>:*).",
          appliesTo: [{ regex: "/^Resource::<.*TaskLogs.*\\.Arn>:\\*$/g" }],
        },
      ],
      true,
    );
  }
}
