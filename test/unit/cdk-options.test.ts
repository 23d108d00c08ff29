/**
 * The CDK stack with every option on (ECS workers, JWT, alarm email, task-type permissions, log
 * and instance retention), synthesized once, offline (the worker image is only staged, Docker
 * is not needed), and checked with cdk-nag; plus the option parsing and validation.
 */
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { App, Aspects, RemovalPolicy, type Stack } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { beforeAll, describe, expect, it } from "vitest";
import { depthSteps, ECS_STOP_TIMEOUT_SECONDS } from "../../cdk/ecs-workers.js";
import { LATENESS_THRESHOLD_MS, RETENTION_DAYS } from "../../cdk/monitoring.js";
import { type ShoalProps, WORKER_CONCURRENCY, workerSettings } from "../../cdk/shoal.js";
import { ShoalStack, shoalPropsFromContext } from "../../cdk/shoal-stack.js";
import { taskTypeStatements } from "../../cdk/task-permissions.js";
import { ENV, METRICS, TABLE_ENV } from "../../lib/aws/config.js";
import { PRIORITIES } from "../../lib/core/model.js";

const run = promisify(execFile);
const LAMBDA_ARN = "arn:aws:lambda:eu-west-1:123456789012:function:etl";
const MACHINE_ARN = "arn:aws:states:eu-west-1:123456789012:stateMachine:report";
const OPTIONS: ShoalProps = {
  prefix: "o",
  ecsWorkers: { maxTasks: 7, concurrency: 3 },
  jwt: { issuer: "https://issuer.example.com/", audience: ["aud1", "aud2"] },
  alarmEmail: "ops@example.com",
  lambdaTaskFunctions: [LAMBDA_ARN],
  stepFunctionsTaskStateMachines: [MACHINE_ARN],
  logRetentionDays: 14,
  instanceRetentionDays: 30,
  workerConcurrency: { HIGHEST: 200, HIGH: 150, MEDIUM: 100 },
  workerBatchSize: 10,
  triggerLimits: { maxDepth: 5, maxRunsPerEvent: 50, maxRunsPerMinute: 600 },
};

// biome-ignore lint/suspicious/noExplicitAny: synthesized CloudFormation is untyped JSON.
type Cfn = any;
type Resource = { Type: string; Properties: Record<string, Cfn> };

describe("ShoalStack with every option", () => {
  let stack: Stack;
  let t: Template;
  const of = (type: string) => Object.entries(t.findResources(type)) as [string, Resource][];

  beforeAll(() => {
    const app = new App();
    stack = new ShoalStack(app, "Opts", { shoal: OPTIONS });
    Aspects.of(app).add(new AwsSolutionsChecks());
    t = Template.fromStack(stack);
  }, 120_000);

  it("gives the functions the trigger limits, lets the trigger and API functions publish their loop and rate events, and alarms on a stopped loop", () => {
    const trigger = of("AWS::Lambda::Function").find(
      ([, r]) => r.Properties.FunctionName === "o-trigger",
    );
    expect(trigger?.[1].Properties.Environment.Variables).toMatchObject({
      [ENV.triggerMaxDepth]: "5",
      [ENV.triggerMaxRunsPerEvent]: "50",
      [ENV.triggerMaxRunsPerMinute]: "600",
    });
    // Policies and the managed overflow policies CDK splits a large one into.
    const putters = [...of("AWS::IAM::Policy"), ...of("AWS::IAM::ManagedPolicy")]
      .filter(([, r]) => JSON.stringify(r.Properties).includes('"events:PutEvents"'))
      .map(([, r]) => JSON.stringify(r.Properties.Roles));
    for (const fn of ["Fntrigger", "Fnapi"]) {
      expect(
        putters.some((roles) => roles.includes(fn)),
        fn,
      ).toBe(true);
    }
    t.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: METRICS.triggerLoopsStopped,
      Namespace: METRICS.namespace,
      Threshold: 0,
    });
    expect(
      () => new ShoalStack(new App(), "BadLimits", { shoal: { triggerLimits: { maxDepth: 0 } } }),
    ).toThrow("triggerLimits.maxDepth must be an integer from 1 to 100, got 0");
  });

  it("runs `shoal worker` on ECS Fargate arm64 with the functions' environment", () => {
    t.hasResourceProperties("AWS::ECS::Cluster", {
      ClusterName: "o-workers",
      ClusterSettings: [{ Name: "containerInsights", Value: "enabled" }],
    });
    const [[, td]] = of("AWS::ECS::TaskDefinition") as [[string, Resource]];
    expect(td.Properties.RuntimePlatform).toEqual({
      CpuArchitecture: "ARM64",
      OperatingSystemFamily: "LINUX",
    });
    expect(td.Properties.RequiresCompatibilities).toEqual(["FARGATE"]);
    const [container] = td.Properties.ContainerDefinitions;
    expect(container.Command).toEqual(["--group", "ecs", "--concurrency", "3"]);
    expect(container.StopTimeout).toBe(ECS_STOP_TIMEOUT_SECONDS);
    expect(container.LinuxParameters).toMatchObject({ InitProcessEnabled: true });
    const env = Object.fromEntries(
      container.Environment.map((e: { Name: string; Value: unknown }) => [e.Name, e.Value]),
    );
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining([
        ...Object.values(TABLE_ENV),
        ENV.prefix,
        ENV.eventsQueueUrl,
        ENV.taskLogGroup,
        ENV.eventBus,
        ENV.instanceRetentionDays,
        "AWS_REGION",
      ]),
    );
    expect(env[ENV.dataDir]).toBe("/tmp/shoal");
    expect(env[ENV.instanceRetentionDays]).toBe("30");
    expect(container.LogConfiguration.LogDriver).toBe("awslogs");

    const [[, service]] = of("AWS::ECS::Service") as [[string, Resource]];
    expect(service.Properties.LaunchType).toBe("FARGATE");
    expect(service.Properties.NetworkConfiguration.AwsvpcConfiguration.AssignPublicIp).toBe(
      "ENABLED",
    );
    // Left to the scaling (a deploy does not reset it).
    expect(service.Properties.DesiredCount).toBeUndefined();
  });

  it("lets a worker protect its own task from scale-in, on the cluster's tasks only", () => {
    const statements = of("AWS::IAM::Policy").flatMap(
      ([, p]) => p.Properties.PolicyDocument.Statement as Cfn[],
    );
    const protect = statements.find((st) =>
      [st.Action].flat().includes("ecs:UpdateTaskProtection"),
    );
    expect(protect).toBeDefined();
    expect(JSON.stringify(protect.Resource)).toContain(":task/o-workers/*");
  });

  it("networks without NAT gateways: public subnets only, no ingress, flow logs", () => {
    t.resourceCountIs("AWS::EC2::NatGateway", 0);
    t.resourceCountIs("AWS::EC2::VPC", 1);
    for (const [, subnet] of of("AWS::EC2::Subnet")) {
      expect(subnet.Properties.MapPublicIpOnLaunch).toBe(true);
    }
    for (const [, sg] of of("AWS::EC2::SecurityGroup")) {
      expect(sg.Properties.SecurityGroupIngress).toBeUndefined();
    }
    t.resourceCountIs("AWS::EC2::SecurityGroupIngress", 0);
    t.resourceCountIs("AWS::EC2::FlowLog", 1);
  });

  it("scales 0..maxTasks in steps on the depth of the group's five queues", () => {
    t.hasResourceProperties("AWS::ApplicationAutoScaling::ScalableTarget", {
      MinCapacity: 0,
      MaxCapacity: 7,
      ScalableDimension: "ecs:service:DesiredCount",
      ServiceNamespace: "ecs",
      RoleARN: {
        "Fn::Join": [
          "",
          Match.arrayWith([
            ":iam::",
            Match.stringLikeRegexp(
              "role/aws-service-role/ecs.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_ECSService",
            ),
          ]),
        ],
      },
    });
    const policies = of("AWS::ApplicationAutoScaling::ScalingPolicy").map(
      ([, p]) => p.Properties.StepScalingPolicyConfiguration,
    );
    expect(policies.every((p) => p.AdjustmentType === "ExactCapacity")).toBe(true);
    const steps = depthSteps(7, 3);
    expect(steps.map((s) => s.tasks)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(steps[1]).toEqual({ fromDepth: 4, tasks: 2 });
    const scaleOut = policies.find((p) => p.StepAdjustments.length > 1);
    expect(scaleOut.StepAdjustments).toEqual(
      steps.map((s, i) => ({
        MetricIntervalLowerBound: s.fromDepth - 1,
        ...(steps[i + 1] ? { MetricIntervalUpperBound: (steps[i + 1]?.fromDepth ?? 0) - 1 } : {}),
        ScalingAdjustment: s.tasks,
      })),
    );
    const scaleIn = policies.find((p) => p.StepAdjustments.length === 1);
    expect(scaleIn.StepAdjustments).toEqual([
      { MetricIntervalUpperBound: 0, ScalingAdjustment: 0 },
    ]);

    const scalingAlarms = of("AWS::CloudWatch::Alarm").filter(([, a]) =>
      String(a.Properties.AlarmDescription).startsWith("ECS workers"),
    );
    expect(scalingAlarms).toHaveLength(2);
    for (const [, a] of scalingAlarms) {
      const metrics = a.Properties.Metrics as Array<Record<string, Cfn>>;
      const expr = metrics.find((m) => m.Expression);
      expect(expr?.Expression).toMatch(/^FILL\(v0, 0\) \+ FILL\(n0, 0\) \+ /);
      const stats = metrics.filter((m) => m.MetricStat).map((m) => m.MetricStat);
      expect(stats).toHaveLength(2 * PRIORITIES.length);
      expect(new Set(stats.map((s) => s.Metric.MetricName))).toEqual(
        new Set(["ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible"]),
      );
      expect(stats.every((s) => s.Period === 60)).toBe(true);
      const queueIds = stats.map((s) => s.Metric.Dimensions[0].Value["Fn::GetAtt"][0]);
      const names = queueIds.map((id) => t.toJSON().Resources[id].Properties.QueueName);
      expect(new Set(names)).toEqual(
        new Set(PRIORITIES.map((p) => `o-tasks-ecs-${p.toLowerCase()}`)),
      );
      // Scaling alarms act on the service only, not on the topic.
      expect(a.Properties.AlarmActions).toHaveLength(1);
    }
    const idle = scalingAlarms.find(
      ([, a]) => a.Properties.ComparisonOperator === "LessThanThreshold",
    );
    expect(idle?.[1].Properties).toMatchObject({
      EvaluationPeriods: 5,
      TreatMissingData: "breaching",
    });
  });

  it("gives the ECS group's queues no Lambda event source (the poller drains them in order)", () => {
    const queueNames = Object.fromEntries(
      of("AWS::SQS::Queue").map(([id, q]) => [id, String(q.Properties.QueueName)]),
    );
    const sources = of("AWS::Lambda::EventSourceMapping").map(
      ([, m]) => queueNames[m.Properties.EventSourceArn["Fn::GetAtt"][0]],
    );
    expect(sources).toHaveLength(2 + PRIORITIES.length);
    expect(sources.filter((n) => n?.startsWith("o-tasks-ecs-"))).toEqual([]);
    for (const p of PRIORITIES) {
      t.hasResourceProperties("AWS::SQS::Queue", {
        QueueName: `o-tasks-ecs-${p.toLowerCase()}`,
        VisibilityTimeout: 900,
        RedrivePolicy: Match.objectLike({ maxReceiveCount: 50 }),
      });
    }
  });

  it("gives the Lambda worker's mappings workerConcurrency per tier and workerBatchSize", () => {
    const queueNames = Object.fromEntries(
      of("AWS::SQS::Queue").map(([id, q]) => [id, String(q.Properties.QueueName)]),
    );
    const byTier = new Map(
      of("AWS::Lambda::EventSourceMapping").map(([, m]) => [
        queueNames[m.Properties.EventSourceArn["Fn::GetAtt"][0]],
        m.Properties,
      ]),
    );
    const want = { HIGHEST: 200, HIGH: 150, MEDIUM: 100, LOW: 3, LOWEST: 2 };
    for (const p of PRIORITIES) {
      const m = byTier.get(`o-tasks-default-${p.toLowerCase()}`);
      expect(m?.ScalingConfig, p).toEqual({ MaximumConcurrency: want[p] });
      expect(m?.BatchSize, p).toBe(10);
      // A batch hands over whatever a receive finds: a lone task does not wait for company.
      expect(m?.MaximumBatchingWindowInSeconds, p).toBeUndefined();
    }
    // The dispatcher's mappings keep their own settings.
    expect(byTier.get("o-events.fifo")?.ScalingConfig).toEqual({ MaximumConcurrency: 50 });
  });

  it("authorises the HTTP API with the JWT issuer and audiences", () => {
    t.hasResourceProperties("AWS::ApiGatewayV2::Authorizer", {
      AuthorizerType: "JWT",
      JwtConfiguration: { Issuer: "https://issuer.example.com/", Audience: ["aud1", "aud2"] },
      IdentitySource: ["$request.header.Authorization"],
    });
    t.hasResourceProperties("AWS::ApiGatewayV2::Route", {
      RouteKey: "ANY /{proxy+}",
      AuthorizationType: "JWT",
    });
  });

  it("has the dashboard and mails every alarm, the sweeper lateness alarm included", () => {
    const [[, dashboard]] = of("AWS::CloudWatch::Dashboard") as [[string, Resource]];
    expect(dashboard.Properties.DashboardName).toBe("o");
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const s of [
      METRICS.fireLatenessMs,
      METRICS.fires,
      "RunningTaskCount",
      "ConcurrentExecutions",
      "ApproximateAgeOfOldestMessage",
      "WriteThrottleEvents",
      "5xx",
      METRICS.triggerRuns,
      METRICS.triggerRunsRefused,
      METRICS.triggerLoopsStopped,
    ]) {
      expect(body).toContain(s);
    }

    t.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "email",
      Endpoint: "ops@example.com",
    });
    const [[topicId]] = of("AWS::SNS::Topic") as [[string, Resource]];
    const lateness = of("AWS::CloudWatch::Alarm").filter(
      ([, a]) => a.Properties.MetricName === METRICS.fireLatenessMs,
    );
    expect(lateness).toHaveLength(1);
    expect(lateness[0]?.[1].Properties).toMatchObject({
      Namespace: METRICS.namespace,
      Dimensions: [{ Name: METRICS.dimension, Value: "o" }],
      Statistic: "Maximum",
      Period: 60,
      Threshold: LATENESS_THRESHOLD_MS,
      ComparisonOperator: "GreaterThanThreshold",
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
      TreatMissingData: "breaching",
      AlarmDescription: expect.stringMatching(/^schedules fire late or the sweeper is not running/),
    });
    const operational = of("AWS::CloudWatch::Alarm").filter(
      ([, a]) => !String(a.Properties.AlarmDescription).startsWith("ECS workers"),
    );
    // DLQs (events, signals, two groups of five tiers), five functions, lateness, trigger loops.
    expect(operational).toHaveLength(2 + 2 * PRIORITIES.length + 5 + 1 + 1);
    for (const [, a] of operational) expect(a.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
  });

  it("lets only the workers invoke the given functions and state machines", () => {
    const roleOf = (role: unknown) => JSON.stringify(role);
    const grants: Record<string, { resources: unknown[]; roles: string[] }> = {};
    for (const [, policy] of [...of("AWS::IAM::Policy"), ...of("AWS::IAM::ManagedPolicy")]) {
      for (const st of policy.Properties.PolicyDocument.Statement) {
        for (const action of [st.Action].flat() as string[]) {
          if (!/^(lambda:InvokeFunction|states:)/.test(action)) continue;
          grants[action] ??= { resources: [], roles: [] };
          grants[action].resources.push(...[st.Resource].flat());
          grants[action].roles.push(...policy.Properties.Roles.map(roleOf));
        }
      }
    }
    const unique = (xs: unknown[]) =>
      [...new Set(xs.map((x) => JSON.stringify(x)))].map((x) => JSON.parse(x));
    expect(unique(grants["lambda:InvokeFunction"]?.resources ?? [])).toEqual([
      LAMBDA_ARN,
      `${LAMBDA_ARN}:*`,
    ]);
    expect(unique(grants["states:StartExecution"]?.resources ?? [])).toEqual([MACHINE_ARN]);
    const executions = ["arn:aws:states:eu-west-1:123456789012:execution:report:*"];
    expect(unique(grants["states:DescribeExecution"]?.resources ?? [])).toEqual(executions);
    expect(unique(grants["states:StopExecution"]?.resources ?? [])).toEqual(executions);
    expect(Object.keys(grants).sort()).toEqual([
      "lambda:InvokeFunction",
      "states:DescribeExecution",
      "states:StartExecution",
      "states:StopExecution",
    ]);

    // Exactly two roles: the worker function's and the ECS task role.
    const roles = new Set(grants["lambda:InvokeFunction"]?.roles);
    expect(roles.size).toBe(2);
    const workerFn = of("AWS::Lambda::Function").find(
      ([, f]) => f.Properties.FunctionName === "o-worker",
    );
    const [[, td]] = of("AWS::ECS::TaskDefinition") as [[string, Resource]];
    expect(roles).toEqual(
      new Set([
        roleOf({ Ref: workerFn?.[1].Properties.Role["Fn::GetAtt"][0] }),
        roleOf({ Ref: td.Properties.TaskRoleArn["Fn::GetAtt"][0] }),
      ]),
    );
  });

  it("keeps logs for logRetentionDays and tells every function the bus and instance retention", () => {
    for (const name of ["/o/tasks", "/o/api-access", "/o/ecs-workers", "/o/vpc-flow-logs"]) {
      t.hasResourceProperties("AWS::Logs::LogGroup", { LogGroupName: name, RetentionInDays: 14 });
    }
    const fns = of("AWS::Lambda::Function").filter(([, f]) =>
      String(f.Properties.FunctionName ?? "").startsWith("o-"),
    );
    expect(fns).toHaveLength(5);
    for (const [, f] of fns) {
      const vars = f.Properties.Environment.Variables;
      expect(vars[ENV.eventBus]).toEqual({ Ref: expect.stringMatching(/Bus/) });
      expect(vars[ENV.instanceRetentionDays]).toBe("30");
    }
    // CDK moves statements of a big policy into an overflow managed policy.
    const policies = [...of("AWS::IAM::Policy"), ...of("AWS::IAM::ManagedPolicy")];
    const busGrants = policies.filter(([, p]) =>
      p.Properties.PolicyDocument.Statement.some((s: { Action: unknown }) =>
        [s.Action].flat().includes("events:PutEvents"),
      ),
    );
    // Only the publishers: dispatcher (instance and task events), sweeper (misfires), and the
    // API and trigger functions (the triggers' loop and rate events).
    expect(busGrants).toHaveLength(4);
  });

  it("outputs what `shoal config from-stack` reads", () => {
    const outputs = t.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual(
      [
        "ApiAuth",
        "ApiUrl",
        "DashboardUrl",
        "EcsCluster",
        "EventBusName",
        "Prefix",
        "Region",
        "TaskLogGroup",
      ].sort(),
    );
    expect(outputs.ApiAuth?.Value).toBe("jwt");
    expect(outputs.Prefix?.Value).toBe("o");
    expect(outputs.Region?.Value).toEqual({ Ref: "AWS::Region" });
    expect(JSON.stringify(outputs.DashboardUrl?.Value)).toContain("#dashboards/dashboard/o");
  });

  it("finds no cdk-nag AwsSolutions error that is not suppressed with a reason", () => {
    const errors = Annotations.fromStack(stack).findError(
      "*",
      Match.stringLikeRegexp("AwsSolutions-.*"),
    );
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).slice(0, 160)}`)).toEqual([]);
  });
});

describe("option validation", () => {
  const build = (shoal: ShoalProps) => () => new ShoalStack(new App(), "Bad", { shoal });

  it("refuses JWT with a function URL", () => {
    expect(build({ apiMode: "functionUrl", jwt: OPTIONS.jwt })).toThrow(
      /jwt needs apiMode httpApi/,
    );
  });

  it("refuses a log retention CloudWatch does not offer, naming the valid values", () => {
    expect(build({ logRetentionDays: 10 })).toThrow(
      /logRetentionDays must be one of 1, 3, 5, 7, 14, 30/,
    );
    expect(RETENTION_DAYS).toContain(9999);
  });

  it("refuses a negative instance retention, a non-ARN and an ECS group that is also a Lambda group", () => {
    expect(build({ instanceRetentionDays: -1 })).toThrow(/instanceRetentionDays/);
    expect(() => taskTypeStatements(["etl"], [])).toThrow(/not a Lambda function ARN/);
    expect(() => taskTypeStatements([], [LAMBDA_ARN])).toThrow(/not a Step Functions/);
    expect(build({ workerGroups: ["default", "ecs"], ecsWorkers: {} })).toThrow(/both/);
    expect(build({ ecsWorkers: { cpu: 300 } })).toThrow(/ecsWorkers.cpu/);
  });

  it("grants qualified Lambda ARNs as given and derives executions of aliased state machines", () => {
    const [invoke, start, describe] = taskTypeStatements(
      [`${LAMBDA_ARN}:live`],
      [`${MACHINE_ARN}:prod`],
    ).map((s) => s.toStatementJson());
    expect(invoke.Resource).toBe(`${LAMBDA_ARN}:live`);
    expect(start.Resource).toBe(`${MACHINE_ARN}:prod`);
    expect(describe.Resource).toBe("arn:aws:states:eu-west-1:123456789012:execution:report:*");
  });

  it("spreads at most ten scaling steps up to maxTasks", () => {
    expect(depthSteps(1, 4)).toEqual([{ fromDepth: 1, tasks: 1 }]);
    const steps = depthSteps(50, 4);
    expect(steps).toHaveLength(10);
    expect(steps[0]).toEqual({ fromDepth: 1, tasks: 1 });
    expect(steps.at(-1)).toEqual({ fromDepth: 49 * 4 + 1, tasks: 50 });
    expect(() => depthSteps(0, 4)).toThrow(/maxTasks/);
  });
});

describe("worker capacity (workerConcurrency, workerBatchSize)", () => {
  it("is the stack's weights and one message per invocation by default", () => {
    expect(workerSettings({})).toEqual({ concurrency: WORKER_CONCURRENCY, batchSize: 1 });
  });

  it("takes some tiers and keeps the others' defaults", () => {
    expect(workerSettings({ workerConcurrency: { HIGHEST: 40, HIGH: 30, MEDIUM: 30 } })).toEqual({
      concurrency: { HIGHEST: 40, HIGH: 30, MEDIUM: 30, LOW: 3, LOWEST: 2 },
      batchSize: 1,
    });
  });

  it("names the prop and the rule of a value Lambda or the priorities do not allow", () => {
    const bad = (p: Parameters<typeof workerSettings>[0]) => () => workerSettings(p);
    expect(bad({ workerConcurrency: { URGENT: 5 } as never })).toThrow(
      "workerConcurrency: 'URGENT' is not a priority (one of HIGHEST, HIGH, MEDIUM, LOW, LOWEST)",
    );
    expect(bad({ workerConcurrency: { LOWEST: 1 } })).toThrow(
      "workerConcurrency.LOWEST must be an integer from 2 to 1000",
    );
    expect(bad({ workerConcurrency: { HIGHEST: 1001 } })).toThrow(/HIGHEST must be an integer/);
    expect(bad({ workerConcurrency: { MEDIUM: 2.5 } })).toThrow(/MEDIUM must be an integer/);
    // MEDIUM alone above HIGH would let a MEDIUM backlog take more slots than HIGH work.
    expect(bad({ workerConcurrency: { MEDIUM: 100 } })).toThrow(
      "workerConcurrency: HIGH (10) is below MEDIUM (100): under backlog a HIGH task would get fewer worker slots than a MEDIUM one; give HIGH at least 100",
    );
    expect(bad({ workerBatchSize: 0 })).toThrow(
      "workerBatchSize must be an integer from 1 to 10, got 0",
    );
    expect(bad({ workerBatchSize: 11 })).toThrow(/workerBatchSize/);
    expect(() => new ShoalStack(new App(), "Bad", { shoal: { workerBatchSize: 20 } })).toThrow(
      /workerBatchSize must be an integer from 1 to 10/,
    );
  });
});

describe("shoalPropsFromContext", () => {
  const parse = (ctx: Record<string, unknown>) => shoalPropsFromContext((k) => ctx[k]);

  it("keeps the defaults when no flag is given", () => {
    // Deletion protection is the construct's default (on, unless removalPolicy is DESTROY).
    expect(parse({})).toEqual({ prefix: "shoal", apiMode: "httpApi" });
  });

  it("reads every flag (strings from -c, lists comma-separated)", () => {
    expect(
      parse({
        prefix: "p",
        apiMode: "httpApi",
        deletionProtection: "false",
        removalPolicy: "destroy",
        workerGroups: "default, gpu",
        ecsWorkers: "true",
        ecsWorkerGroup: "long",
        ecsMaxTasks: "20",
        ecsCpu: "2048",
        ecsMemoryMiB: "4096",
        ecsConcurrency: "8",
        jwtIssuer: "https://issuer/",
        jwtAudience: "aud1,aud2",
        alarmEmail: "ops@example.com",
        logRetentionDays: "90",
        instanceRetentionDays: "0",
        lambdaTaskFunctions: `${LAMBDA_ARN},${LAMBDA_ARN}2`,
        stateMachines: MACHINE_ARN,
        workerConcurrency: "highest:200, HIGH:150,MEDIUM:100",
        workerBatchSize: "10",
      }),
    ).toEqual({
      prefix: "p",
      apiMode: "httpApi",
      deletionProtection: false,
      removalPolicy: RemovalPolicy.DESTROY,
      workerGroups: ["default", "gpu"],
      ecsWorkers: { group: "long", maxTasks: 20, cpu: 2048, memoryMiB: 4096, concurrency: 8 },
      jwt: { issuer: "https://issuer/", audience: ["aud1", "aud2"] },
      alarmEmail: "ops@example.com",
      logRetentionDays: 90,
      instanceRetentionDays: 0,
      lambdaTaskFunctions: [LAMBDA_ARN, `${LAMBDA_ARN}2`],
      stepFunctionsTaskStateMachines: [MACHINE_ARN],
      workerConcurrency: { HIGHEST: 200, HIGH: 150, MEDIUM: 100 },
      workerBatchSize: 10,
    });
    expect(parse({ ecsWorkers: true }).ecsWorkers).toEqual({});
    // cdk.json may hold the object itself.
    expect(parse({ workerConcurrency: { MEDIUM: 6 } }).workerConcurrency).toEqual({ MEDIUM: 6 });
  });

  it("names the flag of a malformed value", () => {
    expect(() => parse({ logRetentionDays: "a month" })).toThrow(/-c logRetentionDays/);
    expect(() => parse({ jwtIssuer: "https://issuer/" })).toThrow(/jwtAudience/);
    expect(() => parse({ ecsMaxTasks: "3" })).toThrow(/ecsWorkers=true/);
    expect(() => parse({ apiMode: "rest" })).toThrow(/-c apiMode/);
    expect(() => parse({ removalPolicy: "snapshot" })).toThrow(/-c removalPolicy/);
    expect(() => parse({ workerConcurrency: "MEDIUM=100" })).toThrow(
      "-c workerConcurrency must be TIER:number pairs separated by commas (HIGHEST:200,HIGH:150,MEDIUM:100), got 'MEDIUM=100'",
    );
    expect(() => parse({ workerBatchSize: "ten" })).toThrow(/-c workerBatchSize/);
    expect(
      () => new ShoalStack(new App(), "Bad", { shoal: parse({ logRetentionDays: "31" }) }),
    ).toThrow(/logRetentionDays must be one of/);
  });
});

describe("the repository's CDK app (cdk/app.ts) with a malformed flag", () => {
  it("says what is wrong in one line and exits 1, without a stack trace", async () => {
    const outdir = mkdtempSync(join(tmpdir(), "shoal-cdk-app-"));
    const r = await run(process.execPath, ["--import", "tsx", "cdk/app.ts"], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      // How the cdk CLI hands an app its -c flags and output directory.
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify({ workerConcurrency: "MEDIUM:100" }),
        CDK_OUTDIR: outdir,
        SHOAL_DEBUG: "",
      },
    }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      "error: workerConcurrency: HIGH (10) is below MEDIUM (100): under backlog a HIGH task would get fewer worker slots than a MEDIUM one; give HIGH at least 100",
    );
  }, 60_000);
});
