/**
 * The default CDK stack, synthesized once, offline (no AWS account, no Docker: esbuild bundles
 * the handlers): every table and index from lib/aws/resources.ts, queues with DLQs, functions on
 * Node 22 arm64 with SQS event sources that report batch item failures and priority-weighted
 * concurrency, the sweeper's one-minute rule, the HTTP API with IAM authorisation, IAM
 * statements without `*` actions, the alarms and dashboard, and cdk-nag AwsSolutions.
 * test/unit/cdk-options.test.ts covers the options.
 */
import { App, Aspects, type Stack } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { beforeAll, describe, expect, it } from "vitest";
import { WORKER_CONCURRENCY, WORKER_EPHEMERAL_STORAGE_MIB } from "../../cdk/shoal.js";
import { ShoalStack } from "../../cdk/shoal-stack.js";
import { ENV, METRICS, resourceNames, TABLE_ENV } from "../../lib/aws/config.js";
import { TABLES, TTL_ATTRIBUTE } from "../../lib/aws/resources.js";
import { PRIORITIES } from "../../lib/core/model.js";

describe("ShoalStack", () => {
  let stack: Stack;
  let t: Template;
  beforeAll(() => {
    const app = new App();
    stack = new ShoalStack(app, "Test", { shoal: { prefix: "t" } });
    Aspects.of(app).add(new AwsSolutionsChecks());
    t = Template.fromStack(stack);
  }, 120_000);

  it("declares every table of the shared description, on demand, with PITR and its indexes", () => {
    t.resourceCountIs("AWS::DynamoDB::Table", TABLES.length);
    for (const spec of TABLES) {
      t.hasResourceProperties("AWS::DynamoDB::Table", {
        TableName: Match.stringLikeRegexp(`^t-`),
        BillingMode: "PAY_PER_REQUEST",
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
        KeySchema: Match.arrayWith([{ AttributeName: spec.partitionKey.name, KeyType: "HASH" }]),
        ...(spec.indexes.length > 0
          ? {
              GlobalSecondaryIndexes: Match.arrayWith(
                spec.indexes.map((ix) => Match.objectLike({ IndexName: ix.name })),
              ),
            }
          : {}),
      });
    }
  });

  it("has the events FIFO queue, the signals queue and one task queue per priority, each with a DLQ", () => {
    t.hasResourceProperties("AWS::SQS::Queue", { QueueName: "t-events.fifo", FifoQueue: true });
    t.hasResourceProperties("AWS::SQS::Queue", { QueueName: "t-signals" });
    for (const p of PRIORITIES) {
      t.hasResourceProperties("AWS::SQS::Queue", {
        QueueName: `t-tasks-default-${p.toLowerCase()}`,
        VisibilityTimeout: 900,
        RedrivePolicy: Match.objectLike({ maxReceiveCount: 50 }),
      });
    }
    const queues = Object.values(t.findResources("AWS::SQS::Queue"));
    const dlqs = queues.filter((q) => /-dlq/.test(String(q.Properties?.QueueName)));
    expect(dlqs).toHaveLength(2 + PRIORITIES.length);
  });

  it("runs every handler on Node 22 arm64 with the table names in the shared variables", () => {
    const fns = Object.values(t.findResources("AWS::Lambda::Function")).filter((f) =>
      String(f.Properties?.FunctionName ?? "").startsWith("t-"),
    );
    expect(fns.map((f) => f.Properties.FunctionName).sort()).toEqual(
      ["t-api", "t-dispatcher", "t-sweeper", "t-trigger", "t-worker"].sort(),
    );
    for (const f of fns) {
      expect(f.Properties.Runtime).toBe("nodejs22.x");
      expect(f.Properties.Architectures).toEqual(["arm64"]);
      expect(Object.keys(f.Properties.Environment.Variables)).toEqual(
        expect.arrayContaining(Object.values(TABLE_ENV)),
      );
    }
  });

  it("gives the worker function 2 GiB of /tmp for work directories; the others keep the default", () => {
    const fns = Object.values(t.findResources("AWS::Lambda::Function"));
    const storage = (name: string) =>
      fns.find((f) => f.Properties?.FunctionName === name)?.Properties.EphemeralStorage;
    expect(WORKER_EPHEMERAL_STORAGE_MIB).toBe(2048);
    expect(storage("t-worker")).toEqual({ Size: 2048 });
    for (const name of ["t-api", "t-dispatcher", "t-sweeper", "t-trigger"]) {
      expect(storage(name)).toBeUndefined();
    }
  });

  it("logs every function to a log group of its own with the stack's retention and no fixed name", () => {
    const fns = Object.values(t.findResources("AWS::Lambda::Function"));
    const groups = t.findResources("AWS::Logs::LogGroup");
    expect(fns.length).toBe(5);
    for (const f of fns) {
      const ref = f.Properties?.LoggingConfig?.LogGroup?.Ref as string;
      const group = groups[ref];
      expect(group, `${f.Properties?.FunctionName}'s log group`).toBeDefined();
      expect(group?.Properties.RetentionInDays).toBe(30);
      expect(group?.Properties.LogGroupName).toBeUndefined();
    }
  });

  it("consumes the queues with batch item failures; worker concurrency weighted by priority", () => {
    const mappings = Object.values(t.findResources("AWS::Lambda::EventSourceMapping"));
    expect(mappings).toHaveLength(2 + PRIORITIES.length);
    for (const m of mappings) {
      expect(m.Properties.FunctionResponseTypes).toEqual(["ReportBatchItemFailures"]);
    }
    // Each tier's mapping, found through its queue's name, has that tier's weight.
    const resources = t.toJSON().Resources;
    const tierOf = (m: (typeof mappings)[number]) => {
      const queueId = m.Properties.EventSourceArn["Fn::GetAtt"][0];
      const name = String(resources[queueId].Properties.QueueName);
      return PRIORITIES.find((p) => name === `t-tasks-default-${p.toLowerCase()}`);
    };
    for (const p of PRIORITIES) {
      const tier = mappings.filter((m) => tierOf(m) === p);
      expect(tier).toHaveLength(1);
      expect(tier[0]?.Properties.ScalingConfig).toEqual({
        MaximumConcurrency: WORKER_CONCURRENCY[p],
      });
    }
    const weights = PRIORITIES.map((p) => WORKER_CONCURRENCY[p]);
    for (let i = 1; i < weights.length; i++) {
      expect(weights[i]).toBeLessThan(weights[i - 1] as number);
    }
  });

  it("fires the sweeper every minute and serves the API with IAM authorisation", () => {
    t.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(1 minute)" });
    t.hasResourceProperties("AWS::ApiGatewayV2::Route", {
      RouteKey: "ANY /{proxy+}",
      AuthorizationType: "AWS_IAM",
    });
  });

  it("sends the trigger handler every event put on the bus and Shoal's instance and misfire events", () => {
    const rules = Object.values(t.findResources("AWS::Events::Rule"))
      .map((r) => r.Properties)
      .filter((p) => p.EventBusName !== undefined);
    const patterns = rules.map((p) => p.EventPattern);
    expect(patterns).toContainEqual({ source: [{ "anything-but": ["shoal"] }] });
    expect(patterns).toContainEqual({
      source: ["shoal"],
      "detail-type": ["Shoal Workflow Instance State Change", "Shoal Schedule Misfire"],
    });
    for (const p of rules) {
      expect(JSON.stringify(p.Targets)).toMatch(/Fntrigger/);
    }
  });

  it("grants no '*' action and no '*' resource for data access", () => {
    for (const policy of Object.values(t.findResources("AWS::IAM::Policy"))) {
      for (const st of policy.Properties.PolicyDocument.Statement) {
        const actions = [st.Action].flat();
        expect(actions).not.toContain("*");
        expect(actions.some((a: string) => /^(dynamodb|sqs):\*$/.test(a))).toBe(false);
        if (actions.some((a: string) => a.startsWith("dynamodb:"))) {
          expect([st.Resource].flat()).not.toContain("*");
        }
      }
    }
  });

  it("alarms on every dead-letter queue, every function's errors and late schedules", () => {
    const alarms = Object.values(t.findResources("AWS::CloudWatch::Alarm"));
    const dlqAlarms = alarms.filter((a) =>
      String(a.Properties.AlarmDescription).startsWith("messages in Dlq-"),
    );
    expect(dlqAlarms).toHaveLength(2 + PRIORITIES.length);
    const errorAlarms = alarms.filter((a) =>
      String(a.Properties.AlarmDescription).startsWith("errors of "),
    );
    expect(errorAlarms).toHaveLength(5);
    const lateness = alarms.filter((a) => a.Properties.MetricName === METRICS.fireLatenessMs);
    expect(lateness).toHaveLength(1);
    expect(lateness[0]?.Properties.TreatMissingData).toBe("breaching");
    // Without alarmEmail: no topic, no actions.
    t.resourceCountIs("AWS::SNS::Topic", 0);
    for (const a of alarms) expect(a.Properties.AlarmActions).toBeUndefined();
  });

  it("has a dashboard, no ECS, and the outputs `shoal config from-stack` reads", () => {
    t.hasResourceProperties("AWS::CloudWatch::Dashboard", { DashboardName: "t" });
    t.resourceCountIs("AWS::ECS::Cluster", 0);
    t.resourceCountIs("AWS::EC2::VPC", 0);
    const outputs = t.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual(
      [
        "ApiAuth",
        "ApiUrl",
        "DashboardUrl",
        "EventBusName",
        "Prefix",
        "Region",
        "TaskLogGroup",
      ].sort(),
    );
    expect(outputs.ApiAuth?.Value).toBe("iam");
    t.hasResourceProperties("AWS::Logs::LogGroup", {
      LogGroupName: "/t/tasks",
      RetentionInDays: 30,
    });
  });

  it("keeps finished instances 90 days and tells every function the event bus", () => {
    for (const spec of TABLES.filter((s) => s.ttl)) {
      t.hasResourceProperties("AWS::DynamoDB::Table", {
        TableName: resourceNames("t").tables[spec.logical],
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      });
    }
    const fns = Object.values(t.findResources("AWS::Lambda::Function")).filter((f) =>
      String(f.Properties?.FunctionName ?? "").startsWith("t-"),
    );
    for (const f of fns) {
      expect(f.Properties.Environment.Variables[ENV.instanceRetentionDays]).toBe("90");
      expect(f.Properties.Environment.Variables[ENV.eventBus]).toBeDefined();
    }
  });

  it("finds no cdk-nag AwsSolutions error that is not suppressed with a reason", () => {
    const errors = Annotations.fromStack(stack).findError(
      "*",
      Match.stringLikeRegexp("AwsSolutions-.*"),
    );
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).slice(0, 120)}`)).toEqual([]);
  });
});
