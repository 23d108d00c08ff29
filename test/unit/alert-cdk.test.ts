/**
 * The construct's `alerts` prop, synthesized offline: the alerts function with its rules (Shoal's
 * instance and misfire events, failed task attempts, a one-minute schedule), a KMS-encrypted SNS
 * topic per e-mail channel with its subscriptions, least-privilege grants, the channels in the
 * function's SHOAL_ALERTS, and cdk-nag AwsSolutions clean. Channels from secrets: the function may
 * read exactly the secrets they name, and its environment holds the names only. Without the
 * prop: none of it.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
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
            "team-slack": { type: "slack", url: "${secret:alerts/team-slack}" },
            ops: {
              type: "webhook",
              url: "${secret:ssm:/alerts/ops-url}",
              headers: { Authorization: "Bearer ${secret:alerts/ops#token}" },
            },
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

  it("tells the API function the channels' names and types, and nothing more", () => {
    const api = Object.values(
      t.findResources("AWS::Lambda::Function", { Properties: { FunctionName: "a-api" } }),
    )[0];
    const vars = api?.Properties.Environment.Variables;
    expect(JSON.parse(vars.SHOAL_ALERT_CHANNELS)).toEqual({
      "ops-slack": "slack",
      "team-slack": "slack",
      ops: "webhook",
      oncall: "email",
    });
    // No URL, secret name or topic reaches the API function.
    expect(vars.SHOAL_ALERTS).toBeUndefined();
    expect(JSON.stringify(stack.resolve(vars))).not.toMatch(/hooks\.slack|secret:|sns/);
  });

  it("gives the function 5 minutes, time for a whole pass of sends, and no concurrency cap", () => {
    const fn = Object.values(
      t.findResources("AWS::Lambda::Function", { Properties: { FunctionName: "a-alerts" } }),
    )[0];
    expect(fn?.Properties.Timeout).toBe(300);
    // Claims are conditional writes: parallel invocations never send one attempt twice.
    expect(fn?.Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  it("grants the function exactly the secrets its channels name, and keeps only names in its environment", () => {
    const fn = Object.values(
      t.findResources("AWS::Lambda::Function", { Properties: { FunctionName: "a-alerts" } }),
    )[0];
    const env = JSON.stringify(stack.resolve(fn?.Properties.Environment.Variables.SHOAL_ALERTS));
    expect(env).toContain("${secret:alerts/team-slack}");
    expect(env).toContain("${secret:ssm:/alerts/ops-url}");
    expect(env).toContain("Bearer ${secret:alerts/ops#token}");
    const roleId = fn?.Properties.Role["Fn::GetAtt"][0] as string;
    const statements = Object.values(t.findResources("AWS::IAM::Policy"))
      .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>)
      .map((st) => JSON.stringify(stack.resolve(st)));
    const of = (action: string) => statements.filter((st) => st.includes(`"${action}"`));
    const sm = of("secretsmanager:GetSecretValue");
    expect(sm).toHaveLength(1);
    // Per secret (#token picks a field of alerts/ops), with the random suffix AWS appends.
    expect(sm[0]).toContain(":secret:alerts/team-slack-??????");
    expect(sm[0]).toContain(":secret:alerts/ops-??????");
    expect(sm[0]).not.toContain("ops#token");
    expect(sm[0]?.match(/:secret:/g)).toHaveLength(2);
    const ssm = of("ssm:GetParameter");
    expect(ssm).toHaveLength(1);
    expect(ssm[0]).toContain(":parameter/alerts/ops-url");
    expect(of("kms:Decrypt").some((st) => st.includes("kms:ViaService"))).toBe(true);
  });

  it("refuses a bad secret name or a reference in part of a URL at synthesis", () => {
    const synth = (url: string) => () =>
      new ShoalStack(new App(), "Bad", {
        shoal: { prefix: "b", alerts: { channels: { x: { type: "slack", url } } } },
      });
    // The same words as standalone's alerts file (lib/core/alert-channels.ts).
    expect(synth("${secret:bad name}")).toThrow(
      /alerts\.channels\.x\.url: \$\{secret:bad name\}: the name must be/,
    );
    expect(synth("https://hooks.slack.com/${secret:path}")).toThrow(
      "alerts.channels.x.url: a secret reference must be the whole URL: ${secret:NAME} (put the whole URL in the secret)",
    );
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
    // The API still knows there are no channels: every rule's channel gets a warning.
    const api = Object.values(
      plain.findResources("AWS::Lambda::Function", { Properties: { FunctionName: "p-api" } }),
    )[0];
    expect(api?.Properties.Environment.Variables.SHOAL_ALERT_CHANNELS).toBe("{}");
  }, 120_000);
});
