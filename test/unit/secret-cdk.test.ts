/**
 * The construct's `taskSecrets` (cdk/secrets.ts): workers (Lambda functions and the ECS task
 * role) may read exactly the listed secrets and parameters, KMS only through those services,
 * nothing else may, and cdk-nag stays clean. Synthesized offline.
 */
import { App, Aspects, type Stack } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { beforeAll, describe, expect, it } from "vitest";
import { secretResources } from "../../cdk/secrets.js";
import { ShoalStack } from "../../cdk/shoal-stack.js";

// biome-ignore lint/suspicious/noExplicitAny: synthesized CloudFormation is untyped JSON.
type Cfn = any;

const ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:shared/api-AbCdEf";

describe("taskSecrets", () => {
  let stack: Stack;
  let t: Template;

  beforeAll(() => {
    const app = new App();
    stack = new ShoalStack(app, "Secrets", {
      shoal: {
        prefix: "s",
        ecsWorkers: { maxTasks: 2 },
        taskSecrets: ["prod/db", "team/*", ARN, "ssm:/prod/db/pw", "ssm:/prod/app/*"],
      },
    });
    Aspects.of(app).add(new AwsSolutionsChecks());
    t = Template.fromStack(stack);
  }, 120_000);

  /** Every statement of every policy, with the roles it is attached to. */
  function statements(): Array<{ roles: string; s: Cfn }> {
    const policies = {
      ...t.findResources("AWS::IAM::Policy"),
      ...t.findResources("AWS::IAM::ManagedPolicy"),
    };
    return Object.values(policies).flatMap((p: Cfn) =>
      p.Properties.PolicyDocument.Statement.map((s: Cfn) => ({
        roles: JSON.stringify(p.Properties.Roles ?? []),
        s,
      })),
    );
  }
  const withAction = (action: string) =>
    statements().filter(({ s }) => [s.Action].flat().includes(action));

  it("lets the workers, and only them, read the listed secrets", () => {
    const sm = withAction("secretsmanager:GetSecretValue");
    // The Lambda worker and the ECS task role.
    expect(sm.map((x) => x.roles).join(" ")).toMatch(/worker/i);
    expect(sm.map((x) => x.roles).join(" ")).toMatch(/TaskRole/);
    for (const { roles } of sm) expect(roles).not.toMatch(/Api|Dispatcher|Sweeper|Trigger/);
    const resources = JSON.stringify(sm[0]?.s.Resource);
    expect(resources).toContain(":secret:prod/db-??????");
    expect(resources).toContain(":secret:team/*");
    expect(resources).toContain(ARN);
    const ssm = withAction("ssm:GetParameter");
    expect([ssm[0]?.s.Action].flat()).toEqual(["ssm:GetParameter", "ssm:GetParameters"]);
    expect(JSON.stringify(ssm[0]?.s.Resource)).toContain(":parameter/prod/db/pw");
    expect(JSON.stringify(ssm[0]?.s.Resource)).toContain(":parameter/prod/app/*");
  });

  it("allows kms:Decrypt only through Secrets Manager and SSM", () => {
    const kms = withAction("kms:Decrypt").filter(({ s }) => s.Condition?.StringEquals);
    expect(kms.length).toBeGreaterThan(0);
    for (const { s } of kms) {
      expect(JSON.stringify(s.Condition.StringEquals["kms:ViaService"])).toMatch(
        /secretsmanager\..*ssm\./,
      );
    }
  });

  it("finds no cdk-nag AwsSolutions error that is not suppressed with a reason", () => {
    const errors = Annotations.fromStack(stack).findError(
      "*",
      Match.stringLikeRegexp("AwsSolutions-.*"),
    );
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).slice(0, 200)}`)).toEqual([]);
  });

  it("grants nothing by default, and refuses what is not a name", () => {
    const app = new App();
    const stack2 = new ShoalStack(app, "NoSecrets", { shoal: { prefix: "n" } });
    expect(JSON.stringify(Template.fromStack(stack2).toJSON())).not.toContain(
      "secretsmanager:GetSecretValue",
    );
    expect(() => secretResources(stack2, ["has space"])).toThrow(/not a Secrets Manager name/);
    expect(() => secretResources(stack2, ["arn:aws:s3:::b"])).toThrow(/not a Secrets Manager/);
  }, 120_000);
});
