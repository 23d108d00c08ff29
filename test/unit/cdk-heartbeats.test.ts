/**
 * What `shoal explain` needs from the deployed stack: the API knows which worker groups a Lambda
 * worker serves (no heartbeat comes from them) and which one the ECS service serves (scaled to 0
 * while idle), and the ECS workers may write their heartbeat in the leases table (else every ECS
 * group would look unserved). Also what every worker reads besides: the commands table, for the
 * halt marker it checks after each claim (lib/engine/halt-gate.ts).
 */
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { ShoalStack } from "../../cdk/shoal-stack.js";
import { ENV } from "../../lib/aws/config.js";

// biome-ignore lint/suspicious/noExplicitAny: synthesized CloudFormation is untyped JSON.
type Cfn = any;

describe("ShoalStack and worker heartbeats", () => {
  let t: Template;
  beforeAll(() => {
    const app = new App();
    const stack = new ShoalStack(app, "Beats", {
      shoal: { prefix: "hb", workerGroups: ["default", "gpu"], ecsWorkers: {} },
    });
    t = Template.fromStack(stack);
  }, 120_000);

  it("tells every function the Lambda-served worker groups", () => {
    const fns = Object.values(t.findResources("AWS::Lambda::Function")).filter((f: Cfn) =>
      String(f.Properties?.FunctionName ?? "").startsWith("hb-"),
    );
    expect(fns.length).toBeGreaterThan(0);
    for (const f of fns as Cfn[]) {
      expect(f.Properties.Environment.Variables[ENV.lambdaWorkerGroups]).toBe("default,gpu");
    }
  });

  it("tells every function and the ECS workers the ECS-served group (explain's wording)", () => {
    const fns = Object.values(t.findResources("AWS::Lambda::Function")).filter((f: Cfn) =>
      String(f.Properties?.FunctionName ?? "").startsWith("hb-"),
    );
    for (const f of fns as Cfn[]) {
      expect(f.Properties.Environment.Variables[ENV.ecsWorkerGroup]).toBe("ecs");
    }
    const task = Object.values(t.findResources("AWS::ECS::TaskDefinition"))[0] as Cfn;
    const env = task.Properties.ContainerDefinitions[0].Environment as Array<{
      Name: string;
      Value: unknown;
    }>;
    expect(env).toContainEqual({ Name: ENV.ecsWorkerGroup, Value: "ecs" });
  });

  it("a stack without ECS workers names no ECS group", () => {
    const app = new App();
    const stack = new ShoalStack(app, "NoEcs", {
      shoal: { prefix: "ne", workerGroups: ["default"] },
    });
    const fns = Object.values(Template.fromStack(stack).findResources("AWS::Lambda::Function"));
    expect(fns.length).toBeGreaterThan(0);
    for (const f of fns as Cfn[]) {
      expect(f.Properties.Environment?.Variables?.[ENV.ecsWorkerGroup]).toBeUndefined();
    }
  }, 120_000);

  /** The actions the role's policies allow on the table named `tableName`. */
  function actionsOn(roleId: string, tableName: string): string[] {
    const resources = t.toJSON().Resources as Record<string, Cfn>;
    const tableId = Object.keys(resources).find(
      (id) =>
        resources[id].Type === "AWS::DynamoDB::Table" &&
        resources[id].Properties.TableName === tableName,
    );
    expect(tableId).toBeDefined();
    const policies = Object.values(resources).filter(
      (r: Cfn) =>
        (r.Type === "AWS::IAM::Policy" || r.Type === "AWS::IAM::ManagedPolicy") &&
        JSON.stringify(r.Properties.Roles ?? []).includes(roleId),
    );
    const statements = policies.flatMap((p: Cfn) => p.Properties.PolicyDocument.Statement);
    const onTable = statements.filter((s: Cfn) =>
      JSON.stringify(s.Resource).includes(tableId as string),
    );
    return onTable.flatMap((s: Cfn) => [s.Action].flat());
  }

  /** The logical id of the ECS task role. */
  function taskRoleId(): string {
    const taskDef = Object.values(t.findResources("AWS::ECS::TaskDefinition"))[0] as Cfn;
    return taskDef.Properties.TaskRoleArn["Fn::GetAtt"][0];
  }

  it("lets the ECS task role write the leases table, where heartbeats live", () => {
    expect(actionsOn(taskRoleId(), "hb-leases")).toEqual(
      expect.arrayContaining(["dynamodb:UpdateItem", "dynamodb:GetItem"]),
    );
  });

  it("lets every worker read the commands table (halt markers), and not write it", () => {
    const lambdaRoles = Object.values(t.findResources("AWS::Lambda::Function"))
      .filter((f: Cfn) => /^hb-worker/.test(String(f.Properties?.FunctionName ?? "")))
      .map((f: Cfn) => f.Properties.Role["Fn::GetAtt"][0] as string);
    expect(lambdaRoles).toHaveLength(2); // default and gpu
    for (const role of [...lambdaRoles, taskRoleId()]) {
      const actions = actionsOn(role, "hb-commands");
      expect(actions).toContain("dynamodb:GetItem");
      expect(actions).not.toContain("dynamodb:PutItem");
      expect(actions).not.toContain("dynamodb:UpdateItem");
    }
  });
});
