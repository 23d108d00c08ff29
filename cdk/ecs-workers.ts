/**
 * Workers beyond the Lambda defaults. The ECS Fargate worker group: `shoal worker`
 * (lib/standalone/worker-process.ts) as a Fargate service that polls one worker group's five
 * task queues, for tasks longer than Lambda's 15 minutes. It costs nothing at rest: public
 * subnets without NAT gateways, and a service scaled on the queues' depth down to zero tasks.
 * And the task-type permissions every worker (function or ECS task role) gets.
 */
import { join } from "node:path";
import { Duration, RemovalPolicy, Stack } from "aws-cdk-lib";
import {
  AdjustmentType,
  MetricAggregationType,
  ScalableTarget,
  ServiceNamespace,
  StepScalingAction,
} from "aws-cdk-lib/aws-applicationautoscaling";
import {
  Alarm,
  ComparisonOperator,
  MathExpression,
  type Metric,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { ApplicationScalingAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import {
  FlowLogDestination,
  FlowLogTrafficType,
  SecurityGroup,
  SubnetType,
  Vpc,
} from "aws-cdk-lib/aws-ec2";
import { Platform } from "aws-cdk-lib/aws-ecr-assets";
import {
  Cluster,
  ContainerImage,
  ContainerInsights,
  CpuArchitecture,
  FargateService,
  FargateTaskDefinition,
  LinuxParameters,
  LogDrivers,
  OperatingSystemFamily,
} from "aws-cdk-lib/aws-ecs";
import { PolicyStatement, Role } from "aws-cdk-lib/aws-iam";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { bundlesDir } from "./bundles.js";
import { suppressNag } from "./nag.js";

/** Options of the ECS worker group (`ShoalProps.ecsWorkers`; context flags in cdk/app.ts). */
export interface EcsWorkerOptions {
  /** Worker group the service serves (default "ecs"); tasks choose it with `workerGroup`. */
  group?: string;
  /** Most Fargate tasks the service scales out to (default 10; at least 1). */
  maxTasks?: number;
  /** Fargate CPU units per task (default 1024 = 1 vCPU; 256 … 16384). */
  cpu?: number;
  /** Memory per task, MiB (default 2048; must suit `cpu`, see the Fargate task size table). */
  memoryMiB?: number;
  /** Tasks one container runs at the same time: `shoal worker --concurrency` (default 4, 1 … 256). */
  concurrency?: number;
}

/** Defaults of {@link EcsWorkerOptions}. */
export const ECS_DEFAULTS = {
  group: "ecs",
  maxTasks: 10,
  cpu: 1024,
  memoryMiB: 2048,
  concurrency: 4,
} as const;

/**
 * Seconds Fargate waits after SIGTERM before SIGKILL (120 s is Fargate's maximum,
 * https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task_definition_parameters.html).
 * `shoal worker` stops at once on SIGTERM and hands its running tasks back for failover.
 */
export const ECS_STOP_TIMEOUT_SECONDS = 120;

/** Minutes the queues must stay empty before the service scales in to zero tasks. */
export const ECS_IDLE_MINUTES = 5;

/** Most step adjustments the scale-out policy gets (Application Auto Scaling caps them). */
const MAX_STEPS = 10;

/** Fargate's CPU sizes (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/fargate-tasks-services.html). */
const FARGATE_CPU = [256, 512, 1024, 2048, 4096, 8192, 16384];

/**
 * One step of the scale-out policy: from `fromDepth` queued-or-running messages on, run `tasks`
 * Fargate tasks.
 */
export interface DepthStep {
  fromDepth: number;
  tasks: number;
}

/**
 * Steps of the scale-out policy: `tasks = ceil(depth / concurrency)` at each step's lower bound,
 * capped at `maxTasks`. With more than ten task counts the steps are spread evenly between 1 and
 * `maxTasks` (a depth between two steps gets the lower one's count).
 * @throws Error when `maxTasks` or `concurrency` is not a positive integer.
 */
export function depthSteps(maxTasks: number, concurrency: number): DepthStep[] {
  for (const [name, v] of [
    ["maxTasks", maxTasks],
    ["concurrency", concurrency],
  ] as const) {
    if (!Number.isInteger(v) || v < 1)
      throw new Error(`ecsWorkers.${name} must be an integer >= 1, got ${v}`);
  }
  const n = Math.min(maxTasks, MAX_STEPS);
  const counts = new Set<number>();
  for (let i = 0; i < n; i++) {
    counts.add(n === 1 ? 1 : 1 + Math.round((i * (maxTasks - 1)) / (n - 1)));
  }
  return [...counts].map((tasks) => ({ fromDepth: (tasks - 1) * concurrency + 1, tasks }));
}

/** Validated options with their defaults filled in. @throws Error naming the bad option. */
export function ecsWorkerSettings(o: EcsWorkerOptions): Required<EcsWorkerOptions> {
  const s = { ...ECS_DEFAULTS, ...o };
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(s.group)) {
    throw new Error(
      `ecsWorkers.group must be 1-40 letters, digits, '-' or '_' (SQS queue names), got '${s.group}'`,
    );
  }
  if (!FARGATE_CPU.includes(s.cpu)) {
    throw new Error(`ecsWorkers.cpu must be one of ${FARGATE_CPU.join(", ")}, got ${s.cpu}`);
  }
  if (!Number.isInteger(s.memoryMiB) || s.memoryMiB < 512) {
    throw new Error(`ecsWorkers.memoryMiB must be an integer >= 512, got ${s.memoryMiB}`);
  }
  if (s.concurrency > 256)
    throw new Error(`ecsWorkers.concurrency must be <= 256, got ${s.concurrency}`);
  depthSteps(s.maxTasks, s.concurrency);
  return s;
}

/** Inputs of {@link EcsWorkers}, from the `Shoal` construct. */
export interface EcsWorkersProps {
  prefix: string;
  options: EcsWorkerOptions;
  /** The group's task queues, highest priority first. */
  queues: Queue[];
  /** The functions' environment (lib/aws/config.ts ENV names). */
  environment: Record<string, string>;
  logRetention: RetentionDays;
  /** Of the flow and worker log groups (default RETAIN). */
  removalPolicy?: RemovalPolicy;
}

/**
 * VPC, cluster, task definition, service and queue-depth scaling of the ECS worker group. The
 * task role may consume the group's queues; the `Shoal` construct grants it the rest (tables,
 * events queue, task logs, bus, task-type permissions) like the worker functions.
 */
export class EcsWorkers extends Construct {
  readonly group: string;
  readonly vpc: Vpc;
  readonly cluster: Cluster;
  readonly taskDefinition: FargateTaskDefinition;
  readonly service: FargateService;
  readonly logGroup: LogGroup;
  /** Σ over the group's queues of visible + in-flight messages (1-minute Maximum). */
  readonly depth: MathExpression;

  constructor(scope: Construct, id: string, props: EcsWorkersProps) {
    super(scope, id);
    const s = ecsWorkerSettings(props.options);
    this.group = s.group;
    const { prefix } = props;

    // Public subnets only and no NAT gateway: tasks reach AWS APIs through their public IP,
    // so nothing is billed while no task runs.
    const flowLogs = new LogGroup(this, "FlowLogs", {
      logGroupName: `/${prefix}/vpc-flow-logs`,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.vpc = new Vpc(this, "Vpc", {
      vpcName: `${prefix}-workers`,
      natGateways: 0,
      maxAzs: 2,
      subnetConfiguration: [{ name: "public", subnetType: SubnetType.PUBLIC, cidrMask: 24 }],
      // Flow logs (cdk-nag VPC7): billed per byte logged, so nothing at rest either.
      flowLogs: {
        all: {
          destination: FlowLogDestination.toCloudWatchLogs(flowLogs),
          trafficType: FlowLogTrafficType.ALL,
        },
      },
    });
    const securityGroup = new SecurityGroup(this, "Tasks", {
      vpc: this.vpc,
      description: "Shoal ECS workers: outbound only (no ingress)",
      allowAllOutbound: true,
    });
    this.cluster = new Cluster(this, "Cluster", {
      vpc: this.vpc,
      clusterName: `${prefix}-workers`,
      // cdk-nag ECS4, and the dashboard's running task count (ECS/ContainerInsights).
      containerInsightsV2: ContainerInsights.ENABLED,
    });

    this.logGroup = new LogGroup(this, "Logs", {
      logGroupName: `/${prefix}/ecs-workers`,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.taskDefinition = new FargateTaskDefinition(this, "TaskDef", {
      family: `${prefix}-worker-${s.group}`,
      cpu: s.cpu,
      memoryLimitMiB: s.memoryMiB,
      runtimePlatform: {
        cpuArchitecture: CpuArchitecture.ARM64,
        operatingSystemFamily: OperatingSystemFamily.LINUX,
      },
    });
    this.taskDefinition.addContainer("worker", {
      // Built from the bundled worker and its Dockerfile (cdk/worker-image, shipped in the
      // package's dist/ecs-worker), not from a source tree. Only staged at synthesis; Docker
      // builds it at deploy (needs arm64 emulation on x86).
      image: ContainerImage.fromAsset(join(bundlesDir(), "ecs-worker"), {
        platform: Platform.LINUX_ARM64,
      }),
      // The image's ENTRYPOINT runs `shoal worker` (cdk/worker-image/main.ts).
      command: ["--group", s.group, "--concurrency", String(s.concurrency)],
      environment: { ...props.environment, AWS_REGION: Stack.of(this).region },
      logging: LogDrivers.awsLogs({ streamPrefix: "worker", logGroup: this.logGroup }),
      stopTimeout: Duration.seconds(ECS_STOP_TIMEOUT_SECONDS),
      // An init process reaps the SHELL tasks' orphans and forwards SIGTERM to node.
      linuxParameters: new LinuxParameters(this, "Linux", { initProcessEnabled: true }),
    });
    for (const q of props.queues) q.grantConsumeMessages(this.taskDefinition.taskRole);
    // Scale-in protection while a container runs tasks (lib/standalone/task-protection.ts).
    this.taskDefinition.addToTaskRolePolicy(
      new PolicyStatement({
        actions: ["ecs:UpdateTaskProtection", "ecs:GetTaskProtection"],
        resources: [
          Stack.of(this).formatArn({
            service: "ecs",
            resource: "task",
            // The literal name (clusterName is a token): the grant names the cluster.
            resourceName: `${prefix}-workers/*`,
          }),
        ],
      }),
    );

    this.service = new FargateService(this, "Service", {
      cluster: this.cluster,
      serviceName: `${prefix}-worker-${s.group}`,
      taskDefinition: this.taskDefinition,
      assignPublicIp: true,
      securityGroups: [securityGroup],
      vpcSubnets: { subnetType: SubnetType.PUBLIC },
      // No desiredCount: a deploy keeps the count the scaling set (it creates with 1 task,
      // scaled in after ECS_IDLE_MINUTES without messages).
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
    });

    this.depth = queueDepth(props.queues);
    this.scaleOnDepth(s.maxTasks, s.concurrency);
    this.suppressNagFindings();
  }

  /**
   * Step scaling on {@link depth}: a "busy" alarm (depth >= 1 for one minute) sets the task
   * count from {@link depthSteps}; an "idle" alarm (depth 0, or no data, for
   * {@link ECS_IDLE_MINUTES} minutes) sets it to 0. In-flight messages count, so tasks that run
   * keep their workers; a task still running on a container stopped at scale-in is handed back
   * on SIGTERM, or failed over by its lease, and runs again on another worker.
   */
  private scaleOnDepth(maxTasks: number, concurrency: number): void {
    const target = new ScalableTarget(this, "Scaling", {
      serviceNamespace: ServiceNamespace.ECS,
      scalableDimension: "ecs:service:DesiredCount",
      resourceId: `service/${this.cluster.clusterName}/${this.service.serviceName}`,
      minCapacity: 0,
      maxCapacity: maxTasks,
      // ECS's service-linked role for Application Auto Scaling (as ECS's autoScaleTaskCount
      // uses); without a role CDK would create one without permissions.
      role: Role.fromRoleArn(
        this,
        "ScalingRole",
        Stack.of(this).formatArn({
          region: "",
          service: "iam",
          resource: "role/aws-service-role/ecs.application-autoscaling.amazonaws.com",
          resourceName: "AWSServiceRoleForApplicationAutoScaling_ECSService",
        }),
      ),
    });
    const out = new StepScalingAction(this, "ScaleOnDepth", {
      scalingTarget: target,
      adjustmentType: AdjustmentType.EXACT_CAPACITY,
      metricAggregationType: MetricAggregationType.MAXIMUM,
      cooldown: Duration.minutes(2),
    });
    const steps = depthSteps(maxTasks, concurrency);
    // Bounds are relative to the alarm's threshold (1).
    steps.forEach((step, i) => {
      const next = steps[i + 1];
      out.addAdjustment({
        lowerBound: step.fromDepth - 1,
        ...(next ? { upperBound: next.fromDepth - 1 } : {}),
        adjustment: step.tasks,
      });
    });
    new Alarm(this, "Busy", {
      alarmDescription: `ECS workers (${this.group}): messages queued or running, scale to ceil(depth / ${concurrency}) tasks`,
      metric: this.depth,
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }).addAlarmAction(new ApplicationScalingAction(out));

    const idle = new StepScalingAction(this, "ScaleToZero", {
      scalingTarget: target,
      adjustmentType: AdjustmentType.EXACT_CAPACITY,
      metricAggregationType: MetricAggregationType.MAXIMUM,
    });
    idle.addAdjustment({ upperBound: 0, adjustment: 0 });
    new Alarm(this, "Idle", {
      alarmDescription: `ECS workers (${this.group}): no message for ${ECS_IDLE_MINUTES} minutes, scale to 0 tasks`,
      metric: this.depth,
      threshold: 1,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: ECS_IDLE_MINUTES,
      // SQS stops reporting a queue's metrics after hours without activity: nothing queued.
      treatMissingData: TreatMissingData.BREACHING,
    }).addAlarmAction(new ApplicationScalingAction(idle));
  }

  private suppressNagFindings(): void {
    suppressNag(this.taskDefinition, [
      {
        id: "AwsSolutions-ECS2",
        reason:
          "The environment holds resource names and settings (tables, queue URL, bus, log group), the same as the functions' environment; no secret.",
      },
    ]);
    suppressNag(this.taskDefinition.obtainExecutionRole(), [
      {
        id: "AwsSolutions-IAM5",
        reason:
          "ecr:GetAuthorizationToken has no resource-level permissions (it must be '*'); the execution role pulls only the worker image.",
        appliesTo: ["Resource::*"],
      },
    ]);
    suppressNag(this.taskDefinition.taskRole, [
      {
        id: "AwsSolutions-IAM5",
        reason:
          "A worker protects its own task from scale-in (ecs:UpdateTaskProtection); task ids are random, so the resource is the cluster's tasks (task/<cluster>/*).",
        appliesTo: [{ regex: "/^Resource::arn:<AWS::Partition>:ecs:.*:task\\/.*\\/\\*$/g" }],
      },
    ]);
  }
}

/**
 * Σ over `queues` of ApproximateNumberOfMessagesVisible + ApproximateNumberOfMessagesNotVisible
 * (1-minute Maximum; a queue without data counts 0): the messages waiting and the tasks running.
 */
export function queueDepth(queues: Queue[]): MathExpression {
  const usingMetrics: Record<string, Metric> = {};
  const period = Duration.minutes(1);
  queues.forEach((q, i) => {
    usingMetrics[`v${i}`] = q.metricApproximateNumberOfMessagesVisible({
      period,
      statistic: "Maximum",
    });
    usingMetrics[`n${i}`] = q.metricApproximateNumberOfMessagesNotVisible({
      period,
      statistic: "Maximum",
    });
  });
  return new MathExpression({
    expression: Object.keys(usingMetrics)
      .map((k) => `FILL(${k}, 0)`)
      .join(" + "),
    usingMetrics,
    period,
    label: "messages queued or running",
  });
}
