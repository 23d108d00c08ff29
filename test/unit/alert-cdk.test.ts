/**
 * The construct's `alerts` prop, synthesized offline: the alerts function with its rules (Shoal's
 * instance and misfire events, failed task attempts, a one-minute schedule), a KMS-encrypted SNS
 * topic per e-mail channel with its subscriptions, least-privilege grants, the channels in the
 * function's SHOAL_ALERTS, and cdk-nag AwsSolutions clean. Without the prop: none of it.
 */
import { App, Aspects, type Stack } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { beforeAll, describe, expect, it } from "vitest";
import { ShoalStack } from "../../cdk/shoal-stack.js";
import { alertsConfigSchema } from "../../lib/alerts/channels.js";

describe("Shoal alerts on AWS", () => {
  let stack: Stack;
  let t: Template;
  beforeAll(() => {
    const app = new App();
    stack = new ShoalStack(app, "Alerts", {
      shoal: {
        prefix: "a",
        alerts: {
          channels: {
            "ops-slack": { type: "slack", url: "https://hooks.slack.com/services/T/B/x" },
            oncall: { type: "email", addresses: ["oncall@example.com", "lead@example.com"] },
          },
          consoleUrl: "https://shoal.example.com",
        },
      },
    });
    Aspects.of(app).add(new AwsSolutionsChecks());
    t = Template.fromStack(stack);
  }, 120_000);

  it("declares the alerts function with the channels in its environment", () => {
    const fns = t.findResources("AWS::Lambda::Function", {
      Properties: { FunctionName: "a-alerts" },
    });
    const fn = Object.values(fns)[0];
    expect(fn).toBeDefined();
    const env = fn?.Properties.Environment.Variables.SHOAL_ALERTS;
    // A JSON document whose topic ARN is resolved at deploy time.
    const text = JSON.stringify(stack.resolve(env));
    expect(text).toContain("ops-slack");
    expect(text).toContain("https://shoal.example.com");
    expect(text).toContain('\\"type\\":\\"email\\"');
  });

  it("routes instance, misfire and failed-task events and a one-minute schedule to it", () => {
    t.hasResourceProperties("AWS::Events::Rule", {
      EventPattern: {
        source: ["shoal"],
        "detail-type": ["Shoal Workflow Instance State Change", "Shoal Schedule Misfire"],
      },
    });
    t.hasResourceProperties("AWS::Events::Rule", {
      EventPattern: {
        source: ["shoal"],
        "detail-type": ["Shoal Task Instance State Change"],
        detail: { state: ["FAILURE"] },
      },
    });
    t.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(1 minute)",
      Description: "Sends alert deliveries that are due (retries)",
    });
  });

  it("has one encrypted topic per e-mail channel, with its subscriptions", () => {
    t.hasResourceProperties("AWS::SNS::Topic", {
      TopicName: "a-alerts-oncall",
      KmsMasterKeyId: Match.anyValue(),
    });
    t.resourceCountIs("AWS::SNS::Subscription", 2);
    t.hasResourceProperties("AWS::KMS::Key", { EnableKeyRotation: true });
  });

  it("finds no cdk-nag AwsSolutions error that is not suppressed with a reason", () => {
    const errors = Annotations.fromStack(stack).findError(
      "*",
      Match.stringLikeRegexp("AwsSolutions-.*"),
    );
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).slice(0, 160)}`)).toEqual([]);
  });

  it("a configuration the function reads back", () => {
    const doc = {
      channels: { x: { type: "email", topicArn: "arn:aws:sns:us-east-1:123456789012:a-alerts-x" } },
    };
    expect(alertsConfigSchema.parse(doc).channels.x?.type).toBe("email");
  });

  it("adds nothing without the prop", () => {
    const plain = Template.fromStack(
      new ShoalStack(new App(), "Plain", { shoal: { prefix: "p" } }),
    );
    expect(
      Object.keys(
        plain.findResources("AWS::Lambda::Function", {
          Properties: { FunctionName: "p-alerts" },
        }),
      ),
    ).toEqual([]);
  }, 120_000);
});
