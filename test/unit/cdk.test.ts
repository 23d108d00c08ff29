/**
 * The CDK stack, synthesized offline (no AWS account, no Docker: esbuild bundles the handlers):
 * every table and index from lib/aws/resources.ts, queues with DLQs, functions on Node 22 arm64
 * with SQS event sources that report batch item failures, the sweeper's one-minute rule, the
 * HTTP API with IAM authorisation, and IAM statements without `*` actions.
 */
import { App, Aspects } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { beforeAll, describe, expect, it } from "vitest";
import { WORKER_CONCURRENCY } from "../../cdk/shoal.js";
import { ShoalStack } from "../../cdk/shoal-stack.js";
import { TABLE_ENV } from "../../lib/aws/config.js";
import { TABLES } from "../../lib/aws/resources.js";
import { PRIORITIES } from "../../lib/core/model.js";

describe("ShoalStack", () => {
  let t: Template;
  beforeAll(() => {
    const app = new App();
    t = Template.fromStack(new ShoalStack(app, "Test", { shoal: { prefix: "t" } }));
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

  it("consumes the queues with batch item failures; worker concurrency weighted by priority", () => {
    const mappings = Object.values(t.findResources("AWS::Lambda::EventSourceMapping"));
    expect(mappings).toHaveLength(2 + PRIORITIES.length);
    for (const m of mappings) {
      expect(m.Properties.FunctionResponseTypes).toEqual(["ReportBatchItemFailures"]);
    }
    const workerLimits = mappings
      .map((m) => m.Properties.ScalingConfig?.MaximumConcurrency)
      .filter((n) => n !== undefined);
    for (const p of PRIORITIES) expect(workerLimits).toContain(WORKER_CONCURRENCY[p]);
    expect(WORKER_CONCURRENCY.HIGHEST).toBeGreaterThan(WORKER_CONCURRENCY.LOWEST);
  });

  it("fires the sweeper every minute and serves the API with IAM authorisation", () => {
    t.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(1 minute)" });
    t.hasResourceProperties("AWS::ApiGatewayV2::Route", {
      RouteKey: "ANY /{proxy+}",
      AuthorizationType: "AWS_IAM",
    });
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

  it("alarms on every dead-letter queue", () => {
    const alarms = Object.values(t.findResources("AWS::CloudWatch::Alarm"));
    const dlqAlarms = alarms.filter((a) =>
      String(a.Properties.AlarmDescription).startsWith("messages in Dlq-"),
    );
    expect(dlqAlarms).toHaveLength(2 + PRIORITIES.length);
  });
});

describe("cdk-nag AwsSolutions", () => {
  it("finds nothing that is not suppressed with a reason in cdk/shoal.ts", () => {
    const app = new App();
    const stack = new ShoalStack(app, "Nag", { shoal: { prefix: "n" } });
    Aspects.of(app).add(new AwsSolutionsChecks());
    const errors = Annotations.fromStack(stack).findError(
      "*",
      Match.stringLikeRegexp("AwsSolutions-.*"),
    );
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).slice(0, 120)}`)).toEqual([]);
  }, 120_000);
});
