/**
 * The construct as a library: two Shoal deployments in one account and region (two constructs
 * in one stack, and two stacks) share no physical name, output key or export; cdk-nag
 * suppressions stay on Shoal's own resources (a user's bucket beside it keeps its findings);
 * `removalPolicy` decides what `cdk destroy` deletes. Synthesized offline (no Docker, no AWS).
 */
import { App, Aspects, RemovalPolicy, Stack } from "aws-cdk-lib";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { Bucket } from "aws-cdk-lib/aws-s3";
import { AwsSolutionsChecks } from "cdk-nag";
import { describe, expect, it } from "vitest";
import { Shoal, type ShoalProps } from "../../cdk/index.js";

// biome-ignore lint/suspicious/noExplicitAny: synthesized CloudFormation is untyped JSON.
type Cfn = any;

/** Every literal physical name of a template (`…Name`, `Family` properties), with its owner. */
function physicalNames(t: Cfn): string[] {
  const names: string[] = [];
  for (const [id, r] of Object.entries(t.Resources as Record<string, Cfn>)) {
    for (const [key, value] of Object.entries((r.Properties ?? {}) as Record<string, unknown>)) {
      if (typeof value === "string" && (/Name$/.test(key) || key === "Family")) {
        // Not account-wide: names scoped to a parent (an index, a stage, an inline policy of
        // its role) and the metrics an alarm watches.
        if (["AttributeName", "IndexName", "StageName", "MetricName"].includes(key)) continue;
        if (r.Type === "AWS::IAM::Policy" && key === "PolicyName") continue;
        names.push(`${r.Type}:${key}=${value} (${id})`);
      }
    }
  }
  return names;
}

const duplicates = (names: string[]) => {
  const seen = new Map<string, number>();
  for (const n of names) {
    const key = n.replace(/ \(.*\)$/, "");
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen].filter(([, c]) => c > 1).map(([k]) => k);
};

const FULL: ShoalProps = {
  ecsWorkers: {},
  alarmEmail: "ops@example.com",
  workerGroups: ["default", "gpu"],
};

describe("two Shoal deployments in one account and region", () => {
  it("in one stack: different prefixes and output prefixes, nothing collides", () => {
    const app = new App();
    const stack = new Stack(app, "Both");
    new Shoal(stack, "A", { ...FULL, prefix: "alpha" });
    new Shoal(stack, "B", { ...FULL, prefix: "beta", outputPrefix: "Beta" });
    const t = Template.fromStack(stack).toJSON();
    const names = physicalNames(t);
    expect(names.length).toBeGreaterThan(40);
    expect(duplicates(names)).toEqual([]);
    expect(Object.keys(t.Outputs)).toEqual(
      expect.arrayContaining(["ApiUrl", "Prefix", "BetaApiUrl", "BetaPrefix", "BetaEcsCluster"]),
    );
    expect(t.Outputs.Prefix.Value).toBe("alpha");
    expect(t.Outputs.BetaPrefix.Value).toBe("beta");
    const exports = Object.values(t.Outputs as Record<string, Cfn>).filter((o) => o.Export);
    expect(exports).toEqual([]);
  }, 120_000);

  it("in two stacks: every physical name differs", () => {
    const app = new App();
    const one = new Stack(app, "One");
    const two = new Stack(app, "Two");
    new Shoal(one, "Scheduler", { ...FULL, prefix: "one" });
    new Shoal(two, "Scheduler", { ...FULL, prefix: "two" });
    const names = [one, two].flatMap((s) => physicalNames(Template.fromStack(s).toJSON()));
    expect(duplicates(names)).toEqual([]);
  }, 120_000);

  it("says which prop to set when two constructs in one stack would share output keys", () => {
    const stack = new Stack(new App(), "Clash");
    new Shoal(stack, "A", { prefix: "a" });
    expect(() => new Shoal(stack, "B", { prefix: "b" })).toThrow(/own outputPrefix/);
  }, 60_000);
});

describe("cdk-nag suppressions", () => {
  it("cover Shoal's resources only: the user's own resources keep their findings", () => {
    const app = new App();
    const stack = new Stack(app, "Mine");
    new Shoal(stack, "Scheduler", { prefix: "mine", ecsWorkers: {} });
    new Bucket(stack, "Plain");
    Aspects.of(app).add(new AwsSolutionsChecks());
    app.synth();
    const errors = Annotations.fromStack(stack).findError(
      "*",
      Match.stringLikeRegexp("AwsSolutions-.*"),
    );
    const paths = [...new Set(errors.map((e) => e.id))];
    expect(paths.length).toBeGreaterThan(0);
    expect(
      paths.every((p) => p.startsWith("/Mine/Plain/")),
      paths.join("\n"),
    ).toBe(true);
  }, 120_000);
});

describe("removalPolicy", () => {
  const synth = (props: ShoalProps) => {
    const stack = new Stack(new App(), "Removal");
    new Shoal(stack, "Scheduler", { prefix: "rp", ecsWorkers: {}, ...props });
    return Template.fromStack(stack);
  };
  const namedLogGroups = (t: Template) =>
    Object.values(t.findResources("AWS::Logs::LogGroup")).filter(
      (g: Cfn) => typeof g.Properties?.LogGroupName === "string",
    ) as Cfn[];

  it("keeps the tables and named log groups by default, with deletion protection", () => {
    const t = synth({});
    for (const table of Object.values(t.findResources("AWS::DynamoDB::Table")) as Cfn[]) {
      expect(table.DeletionPolicy).toBe("Retain");
      expect(table.Properties.DeletionProtectionEnabled).toBe(true);
    }
    const groups = namedLogGroups(t);
    expect(groups.map((g) => g.Properties.LogGroupName).sort()).toEqual(
      ["/rp/api-access", "/rp/ecs-workers", "/rp/tasks", "/rp/vpc-flow-logs"].sort(),
    );
    for (const g of groups) expect(g.DeletionPolicy).toBe("Retain");
  }, 60_000);

  it("DESTROY deletes them, and turns deletion protection off unless set", () => {
    const t = synth({ removalPolicy: RemovalPolicy.DESTROY });
    for (const table of Object.values(t.findResources("AWS::DynamoDB::Table")) as Cfn[]) {
      expect(table.DeletionPolicy).toBe("Delete");
      expect(table.Properties.DeletionProtectionEnabled).toBe(false);
    }
    for (const g of namedLogGroups(t)) expect(g.DeletionPolicy).toBe("Delete");
    const kept = synth({ removalPolicy: RemovalPolicy.DESTROY, deletionProtection: true });
    for (const table of Object.values(kept.findResources("AWS::DynamoDB::Table")) as Cfn[]) {
      expect(table.Properties.DeletionProtectionEnabled).toBe(true);
    }
  }, 60_000);
});
