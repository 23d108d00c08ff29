import { CfnOutput, Duration, RemovalPolicy, Stack } from "aws-cdk-lib";
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  Table,
  TableEncryption,
} from "aws-cdk-lib/aws-dynamodb";
import { EventBus, Match, Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import type { IGrantable } from "aws-cdk-lib/aws-iam";
import type { Function as ShoalFunction } from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { LogGroup } from "aws-cdk-lib/aws-logs";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { ENV, resourceNames, TABLE_ENV } from "../lib/aws/config.js";
import { QUEUE_SETTINGS, TABLES, TTL_ATTRIBUTE } from "../lib/aws/resources.js";
import { PRIORITIES, type Priority } from "../lib/core/model.js";
import { EVENT_SOURCE, TRIGGER_DETAIL_TYPES } from "../lib/core/state-events.js";
import { addAlerts } from "./alerts.js";
import { addApi } from "./api.js";
import type { LambdaHandler } from "./bundles.js";
import { EcsWorkers, ecsWorkerSettings } from "./ecs-workers.js";
import { handlerFunction } from "./handler-function.js";
import {
  addMonitoring,
  dashboardUrl,
  logRetention,
  type ShoalMonitoring,
  type TierQueue,
} from "./monitoring.js";
import { suppressNag } from "./nag.js";
import { checkPrefix, checkWorkerGroups } from "./name-limits.js";
import { SECRET_NAG_SUPPRESSIONS, secretStatements } from "./secrets.js";
import {
  type ShoalProps,
  triggerLimitsEnv,
  WORKER_EPHEMERAL_STORAGE_MIB,
  workerSettings,
} from "./shoal-props.js";
import { TASK_TYPE_NAG_SUPPRESSIONS, taskTypeStatements } from "./task-permissions.js";

/** Visibility timeout (seconds) and receives before the DLQ, as in QUEUE_SETTINGS. */
type QueueSettings = { visibilityTimeoutSeconds: number; maxReceiveCount: number };

export type { ShoalProps } from "./shoal-props.js";
export {
  WORKER_CONCURRENCY,
  WORKER_EPHEMERAL_STORAGE_MIB,
  type WorkerSettings,
  workerSettings,
} from "./shoal-props.js";

/**
 * Shoal's AWS resources (tables, queues, functions, bus, API, optional ECS workers, alarms,
 * dashboard) and the stack outputs `shoal config from-stack` reads.
 */
export class Shoal extends Construct {
  /** The DynamoDB tables by logical name (lib/aws/resources.ts: workflows, instances, …). */
  readonly tables: Record<string, Table> = {};
  /** The engine's FIFO queue of state-change events (`<prefix>-events.fifo`). */
  readonly eventsQueue: Queue;
  /** Stop and other signals to running instances (`<prefix>-signals`). */
  readonly signalsQueue: Queue;
  /** Every worker group's task queues, five per group (one per priority). */
  readonly taskQueues: Queue[] = [];
  /** The dead-letter queue of every queue above. */
  readonly deadLetterQueues: Queue[] = [];
  /** The Lambda functions by name: api, dispatcher, sweeper, trigger, worker[-<group>]. */
  readonly functions: Record<string, ShoalFunction> = {};
  /** The event bus of triggers and of Shoal's state events (`<prefix>-bus`). */
  readonly bus: EventBus;
  /** The task logs' log group (`/<prefix>/tasks`). */
  readonly taskLogs: LogGroup;
  /** The API's base URL (HTTP API endpoint or function URL). */
  readonly apiUrl: string;
  /** The ECS worker group, when `ecsWorkers` is set. */
  readonly ecsWorkers?: EcsWorkers;
  /** The dashboard, alarms and (with `alarmEmail`) the alarm topic. */
  readonly monitoring: ShoalMonitoring;

  /**
   * @throws Error on invalid props, naming the prop: prefix and worker groups that no resource
   *   name allows (cdk/name-limits.ts), retention, jwt with functionUrl, ARNs, ECS options.
   */
  constructor(scope: Construct, id: string, props: ShoalProps = {}) {
    super(scope, id);
    const prefix = props.prefix ?? "shoal";
    checkPrefix(prefix);
    const names = resourceNames(prefix);
    const removal = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const outputPrefix = props.outputPrefix ?? "";
    if (!/^[A-Za-z0-9]*$/.test(outputPrefix)) {
      throw new Error(
        `outputPrefix must be letters and digits (output keys), got '${outputPrefix}'`,
      );
    }
    const retention = logRetention(props.logRetentionDays);
    const instanceDays = props.instanceRetentionDays ?? 90;
    if (!Number.isInteger(instanceDays) || instanceDays < 0) {
      throw new Error(
        `instanceRetentionDays must be an integer >= 0 (0 = forever), got ${instanceDays}`,
      );
    }
    if (props.jwt && props.apiMode === "functionUrl") {
      throw new Error(
        "jwt needs apiMode httpApi: a Lambda function URL authorises with IAM or not at all, it has no JWT authoriser",
      );
    }
    const jwt = props.jwt;
    if (jwt && (!/^https:\/\/\S+$/.test(jwt.issuer) || jwt.audience.length === 0)) {
      throw new Error("jwt needs an https issuer URL and at least one audience");
    }
    const workerGroups = props.workerGroups ?? ["default"];
    const workerCapacity = workerSettings(props);
    const ecsGroup = props.ecsWorkers ? ecsWorkerSettings(props.ecsWorkers).group : undefined;
    checkWorkerGroups(prefix, workerGroups, ecsGroup);
    if (ecsGroup !== undefined && workerGroups.includes(ecsGroup)) {
      throw new Error(
        `worker group '${ecsGroup}' cannot be served by both a Lambda worker and ECS`,
      );
    }
    const taskStatements = [
      ...taskTypeStatements(
        props.lambdaTaskFunctions ?? [],
        props.stepFunctionsTaskStateMachines ?? [],
      ),
      ...secretStatements(this, props.taskSecrets ?? []),
    ];

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
        deletionProtection: props.deletionProtection ?? removal !== RemovalPolicy.DESTROY,
        encryption: TableEncryption.AWS_MANAGED,
        removalPolicy: removal,
        ...(spec.ttl ? { timeToLiveAttribute: TTL_ATTRIBUTE } : {}),
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

    const queue = (id: string, name: string, dlqName: string, settings: QueueSettings) => {
      const common = {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        fifo: name.endsWith(".fifo") || undefined,
      };
      const dlq = new Queue(this, `Dlq-${dlqName}`, {
        ...common,
        queueName: dlqName,
        retentionPeriod: Duration.days(14),
      });
      this.deadLetterQueues.push(dlq);
      return new Queue(this, id, {
        ...common,
        queueName: name,
        visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: dlq, maxReceiveCount: settings.maxReceiveCount },
      });
    };
    const { events, tasks } = QUEUE_SETTINGS;
    this.eventsQueue = queue("EventsQueue", names.eventsQueue, names.eventsDlq, events);
    this.signalsQueue = queue("SignalsQueue", names.signalsQueue, names.signalsDlq, events);
    const tierQueues: TierQueue[] = [];
    const taskQueuesOf = (group: string) =>
      PRIORITIES.map((priority) => {
        const [name, dlq] = [names.taskQueue(group, priority), names.taskDlq(group, priority)];
        const q = queue(`Tasks-${group}-${priority}`, name, dlq, tasks);
        this.taskQueues.push(q);
        tierQueues.push({ group, priority, queue: q });
        return q;
      });

    this.bus = new EventBus(this, "Bus", { eventBusName: `${prefix}-bus` });
    this.taskLogs = new LogGroup(this, "TaskLogs", {
      logGroupName: `/${prefix}/tasks`,
      retention,
      removalPolicy: removal,
    });

    const environment: Record<string, string> = {
      [ENV.prefix]: prefix,
      [ENV.eventsQueueUrl]: this.eventsQueue.queueUrl,
      [ENV.dataDir]: "/tmp/shoal",
      [ENV.taskLogGroup]: this.taskLogs.logGroupName,
      [ENV.eventBus]: this.bus.eventBusName,
      [ENV.taskEvents]: props.taskEvents ?? "unsuccessful",
      ...triggerLimitsEnv(props.triggerLimits),
      [ENV.instanceRetentionDays]: String(instanceDays),
      // `shoal explain` counts these groups as served (no worker heartbeat from Lambda).
      [ENV.lambdaWorkerGroups]: workerGroups.join(","),
      // … and this one as served by the ECS service, scaled to 0 while idle.
      ...(ecsGroup !== undefined ? { [ENV.ecsWorkerGroup]: ecsGroup } : {}),
      NODE_OPTIONS: "--enable-source-maps",
    };
    for (const [logical, env] of Object.entries(TABLE_ENV)) {
      environment[env] = (this.tables[logical] as Table).tableName;
    }
    const fn = (name: string, timeout: Duration, memorySize?: number, tmpMiB?: number) => {
      const f = handlerFunction(this, name, {
        handler: (name.startsWith("worker") ? "worker" : name) as LambdaHandler,
        functionName: `${prefix}-${name}`,
        timeout,
        ...(memorySize !== undefined ? { memorySize } : {}),
        ...(tmpMiB !== undefined ? { tmpMiB } : {}),
        environment,
        retention,
      });
      this.functions[name] = f;
      return f;
    };

    const api = fn("api", Duration.seconds(29));
    // The channels' names and types (no URL, no secret name): a PUT warns about a rule naming
    // another one, and GET /v1/alert-channels lists them.
    api.addEnvironment(
      ENV.alertChannels,
      JSON.stringify(
        Object.fromEntries(
          Object.entries(props.alerts?.channels ?? {}).map(([name, c]) => [name, c.type]),
        ),
      ),
    );
    // Below the events queue's 30 s visibility timeout (SQS event sources require it).
    const dispatcher = fn("dispatcher", Duration.seconds(25));
    const sweeper = fn("sweeper", Duration.seconds(55));
    const trigger = fn("trigger", Duration.seconds(30));

    // Least privilege: each function gets data access only to the tables it uses.
    const rw = (f: IGrantable, logical: string[]) => {
      for (const l of logical) this.tables[l]?.grantReadWriteData(f);
    };
    const everything = TABLES.map((t) => t.logical);
    const engine = [
      "workflows",
      "commands",
      "instances",
      "tasks",
      "taskGroups",
      "timers",
      "schedules",
      "fires",
      "backfills",
    ];
    rw(api, everything);
    rw(dispatcher, engine);
    rw(sweeper, [...engine, "leases"]);
    rw(trigger, ["workflows", "commands", "instances", "triggers"]);
    for (const f of [api, dispatcher, sweeper, trigger]) {
      this.eventsQueue.grantSendMessages(f);
      this.signalsQueue.grantSendMessages(f);
    }
    this.taskLogs.grantRead(api);
    // The API and the trigger function publish the triggers' loop and rate events.
    for (const f of [dispatcher, sweeper, api, trigger]) this.bus.grantPutEventsTo(f);

    for (const [q, maxConcurrency] of [
      [this.eventsQueue, 50],
      [this.signalsQueue, 5],
    ] as const) {
      dispatcher.addEventSource(
        new SqsEventSource(q, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency }),
      );
    }

    // Workers (Lambda functions and the ECS task role) share their permissions.
    const workers: IGrantable[] = [];
    const workerTimeout = Duration.seconds(tasks.visibilityTimeoutSeconds);
    for (const group of workerGroups) {
      const worker = fn(
        group === "default" ? "worker" : `worker-${group}`,
        workerTimeout,
        1024,
        WORKER_EPHEMERAL_STORAGE_MIB,
      );
      workers.push(worker);
      taskQueuesOf(group).forEach((q, i) => {
        worker.addEventSource(
          new SqsEventSource(q, {
            batchSize: workerCapacity.batchSize,
            reportBatchItemFailures: true,
            maxConcurrency: workerCapacity.concurrency[PRIORITIES[i] as Priority],
          }),
        );
      });
    }
    if (props.ecsWorkers && ecsGroup !== undefined) {
      // No event source: the poller drains the group's tiers strictly highest first.
      this.ecsWorkers = new EcsWorkers(this, "EcsWorkers", {
        prefix,
        options: props.ecsWorkers,
        queues: taskQueuesOf(ecsGroup),
        environment,
        logRetention: retention,
        removalPolicy: removal,
      });
      workers.push(this.ecsWorkers.taskDefinition.taskRole);
      // `shoal worker` records its heartbeat in the leases table (lib/engine/worker-heartbeat.ts).
      rw(this.ecsWorkers.taskDefinition.taskRole, ["leases"]);
    }
    for (const w of workers) {
      rw(w, ["instances", "tasks"]);
      // Read only: after each claim, the instance's halt marker and the commands it names
      // (lib/engine/halt-gate.ts).
      this.tables.commands?.grantReadData(w);
      this.eventsQueue.grantSendMessages(w);
      this.taskLogs.grantWrite(w);
      for (const st of taskStatements) w.grantPrincipal.addToPrincipalPolicy(st);
    }
    for (const { queue: q } of tierQueues) {
      for (const f of [api, dispatcher, sweeper]) q.grantSendMessages(f);
    }

    new Rule(this, "SweeperEveryMinute", {
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(sweeper)],
    });
    // Every event put on the bus, and Shoal's own instance and misfire events (a trigger may
    // start a workflow when another one ends), but not its task events (one per task: the
    // handler would run for each). The handler matches each trigger's pattern. Standalone's bus
    // applies the same rule (TRIGGER_DETAIL_TYPES).
    new Rule(this, "Triggers", {
      eventBus: this.bus,
      description: "Events for Shoal triggers (each trigger's pattern is matched in the handler)",
      eventPattern: { source: Match.anythingBut(EVENT_SOURCE) },
      targets: [new LambdaFunction(trigger)],
    });
    new Rule(this, "TriggersOnShoalEvents", {
      eventBus: this.bus,
      description: "Shoal's instance and misfire events for triggers",
      eventPattern: { source: [EVENT_SOURCE], detailType: [...TRIGGER_DETAIL_TYPES] },
      targets: [new LambdaFunction(trigger)],
    });
    if (props.alerts) {
      const { bus, taskLogs, tables } = this;
      addAlerts(this, { prefix, options: props.alerts, makeFunction: fn, bus, tables, taskLogs });
    }

    const front = addApi(this, api, {
      prefix,
      ...(props.apiMode ? { mode: props.apiMode } : {}),
      ...(props.jwt ? { jwt: props.jwt } : {}),
      retention,
      removalPolicy: removal,
    });
    this.apiUrl = front.url;
    const httpApi = front.httpApi;

    this.monitoring = addMonitoring(this, {
      prefix,
      functions: this.functions,
      ...(httpApi ? { httpApi } : {}),
      taskQueues: tierQueues,
      deadLetterQueues: this.deadLetterQueues,
      tables: this.tables,
      ...(this.ecsWorkers ? { ecs: this.ecsWorkers } : {}),
      ...(props.alarmEmail !== undefined ? { alarmEmail: props.alarmEmail } : {}),
    });
    this.suppressNagFindings();

    // Read by `shoal config from-stack`: keep the keys.
    const stack = Stack.of(this);
    if (stack.node.tryFindChild(`${outputPrefix}ApiUrl`)) {
      throw new Error(
        `stack ${stack.stackName} already has Shoal outputs named ${outputPrefix}ApiUrl, …: give each Shoal in one stack its own outputPrefix`,
      );
    }
    const output = (key: string, value: string) =>
      new CfnOutput(stack, `${outputPrefix}${key}`, { value });
    output("ApiUrl", this.apiUrl);
    output("ApiAuth", props.jwt ? "jwt" : "iam");
    output("Region", stack.region);
    output("Prefix", prefix);
    output("EventBusName", this.bus.eventBusName);
    output("TaskLogGroup", this.taskLogs.logGroupName);
    output("DashboardUrl", dashboardUrl(stack.region, prefix));
    if (this.ecsWorkers) output("EcsCluster", this.ecsWorkers.cluster.clusterName);
  }

  /**
   * cdk-nag AwsSolutions findings Shoal accepts on purpose, each with its reason (the tests run
   * the checks and fail on any finding not listed here, in ecs-workers.ts or in monitoring.ts).
   * On Shoal's resources only (cdk/nag.ts): the rest of the user's stack keeps every finding.
   */
  private suppressNagFindings(): void {
    suppressNag(this, [
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
      ...TASK_TYPE_NAG_SUPPRESSIONS,
      ...SECRET_NAG_SUPPRESSIONS,
    ]);
  }
}
