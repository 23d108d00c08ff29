/**
 * The CDK construct as a team adopts it: examples/cdk-app (a CDK app of its own, with a bucket
 * and `new Shoal(this, "Scheduler", { … })` from `shoal/cdk`) copied to an empty directory,
 * the packed package and the CDK peers installed from npm, the app synthesized with node — no
 * repository, no AWS account and no Docker (CDK_DOCKER points at nothing) — with cdk-nag's
 * AwsSolutions checks. The template must hold the five functions with their code from the
 * package's own bundles, the ECS worker image built from the package, the tables, queues, the
 * API and the outputs, and no unsuppressed cdk-nag error. Prints the install time.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../../lib/aws/resources.js";
import { PRIORITIES } from "../../lib/core/model.js";
import { filesUnder, packedTarball } from "../helpers/packed-tarball.js";
import { REPO } from "../helpers/standalone.js";

const run = promisify(execFile);

// biome-ignore lint/suspicious/noExplicitAny: synthesized CloudFormation is untyped JSON.
type Cfn = any;

const HANDLERS = ["api", "dispatcher", "sweeper", "trigger", "worker"];

describe("examples/cdk-app with the packed package", () => {
  let project: string;
  let pkg: string;
  let out: string;
  let template: Cfn;
  let manifest: Cfn;
  let installMs: number;
  let synthMs: number;

  beforeAll(async () => {
    const tarball = await packedTarball();
    project = mkdtempSync(join(tmpdir(), "shoal-cdk-app-"));
    cpSync(join(REPO, "examples", "cdk-app"), project, {
      recursive: true,
      filter: (src) => !/[/\\](node_modules|cdk\.out)$/.test(src),
    });
    const pj = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
    pj.dependencies.shoal = `file:${tarball.file}`;
    writeFileSync(join(project, "package.json"), JSON.stringify(pj, null, 2));

    let started = performance.now();
    // Without devDependencies: the aws-cdk CLI is for deploying, not needed to synthesize.
    await run("npm", ["install", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund"], {
      cwd: project,
      maxBuffer: 16 * 1024 * 1024,
    });
    installMs = performance.now() - started;
    pkg = join(project, "node_modules", "shoal");

    out = join(project, "cdk.out");
    started = performance.now();
    await run(process.execPath, ["app.mjs"], {
      cwd: project,
      env: { ...process.env, CDK_OUTDIR: out, CDK_DOCKER: join(project, "no-docker-here") },
      maxBuffer: 16 * 1024 * 1024,
    });
    synthMs = performance.now() - started;
    template = JSON.parse(readFileSync(join(out, "Reports.template.json"), "utf8"));
    manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    console.log(
      `cdk-app: npm install of the tarball and peers ${(installMs / 1000).toFixed(1)} s, synth ${(synthMs / 1000).toFixed(1)} s`,
    );
  }, 600_000);

  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  const resources = (type: string): Cfn[] =>
    Object.values(template.Resources as Record<string, Cfn>).filter((r) => r.Type === type);
  const same = (a: string, b: string) => readFileSync(a).equals(readFileSync(b));

  it("has no cdk-nag error that is not suppressed with a reason", () => {
    const messages = Object.entries(manifest.artifacts.Reports.metadata ?? {}).flatMap(
      ([path, entries]) =>
        (entries as Array<{ type: string; data: unknown }>)
          .filter((e) => e.type === "aws:cdk:error")
          .map((e) => `${path}: ${String(e.data)}`),
    );
    expect(messages).toEqual([]);
    // cdk-nag ran (its report lists every check): Shoal's findings suppressed with reasons,
    // no error-level finding left on anything.
    const file = readdirSync(out).find((f) => /^AwsSolutions.*-Reports-NagReport\.csv$/.test(f));
    const report = readFileSync(join(out, String(file)), "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => (JSON.parse(`[${line}]`) as string[]).slice(0, 5));
    const suppressed = report.filter(([, , state]) => state === "Suppressed");
    expect(suppressed.length).toBeGreaterThan(0);
    for (const [, path, , reason] of suppressed) {
      expect(path).toMatch(/^Reports\/Scheduler\//);
      expect(reason?.length).toBeGreaterThanOrEqual(10);
    }
    const failing = report.filter(
      ([, , state, , level]) => state === "Non-Compliant" && level === "Error",
    );
    expect(failing).toEqual([]);
  });

  it("deploys the five functions with the package's own bundles as their code", () => {
    const fns = resources("AWS::Lambda::Function").filter((f) =>
      String(f.Properties.FunctionName ?? "").startsWith("reports-"),
    );
    expect(fns.map((f) => f.Properties.FunctionName).sort()).toEqual(
      HANDLERS.map((h) => `reports-${h}`),
    );
    for (const f of fns) {
      const handler = f.Properties.FunctionName.slice("reports-".length);
      expect(f.Properties).toMatchObject({
        Runtime: "nodejs22.x",
        Architectures: ["arm64"],
        Handler: "index.handler",
      });
      const hash = String(f.Properties.Code.S3Key).replace(/\.zip$/, "");
      const staged = join(out, `asset.${hash}`, "index.mjs");
      expect(same(staged, join(pkg, "dist", "lambda", handler, "index.mjs")), handler).toBe(true);
    }
    // The app's own setting reached the worker.
    const worker = fns.find((f) => f.Properties.FunctionName === "reports-worker");
    expect(Object.keys(worker.Properties.Environment.Variables)).toContain("REPORTS_BUCKET");
  });

  it("builds the ECS worker image from the package (staged only: no Docker at synthesis)", () => {
    const [task] = resources("AWS::ECS::TaskDefinition");
    const image = String(task.Properties.ContainerDefinitions[0].Image["Fn::Sub"]);
    const hash = /:([0-9a-f]{64})$/.exec(image)?.[1];
    const context = join(out, `asset.${hash}`);
    const shipped = join(pkg, "dist", "lambda", "ecs-worker");
    expect(filesUnder(context).sort()).toEqual(filesUnder(shipped).sort());
    for (const f of ["Dockerfile", "index.mjs"]) {
      expect(same(join(context, f), join(shipped, f)), f).toBe(true);
    }
  });

  it("declares the tables, the queues, the HTTP API and the outputs", () => {
    const tables = resources("AWS::DynamoDB::Table");
    expect(tables).toHaveLength(TABLES.length);
    for (const t of tables) {
      expect(t.Properties.TableName).toMatch(/^reports-/);
      expect(t.DeletionPolicy).toBe("Delete");
    }
    const queues = resources("AWS::SQS::Queue").map((q) => q.Properties.QueueName);
    expect(queues).toEqual(expect.arrayContaining(["reports-events.fifo", "reports-signals"]));
    for (const group of ["default", "ecs"]) {
      for (const p of PRIORITIES) {
        expect(queues).toContain(`reports-tasks-${group}-${p.toLowerCase()}`);
      }
    }
    expect(resources("AWS::ApiGatewayV2::Api")).toHaveLength(1);
    expect(resources("AWS::S3::Bucket")).toHaveLength(1);
    expect(Object.keys(template.Outputs)).toEqual(
      expect.arrayContaining([
        "ApiUrl",
        "ApiAuth",
        "Region",
        "Prefix",
        "EventBusName",
        "TaskLogGroup",
        "DashboardUrl",
        "EcsCluster",
        "ReportsBucket",
      ]),
    );
    expect(template.Outputs.Prefix.Value).toBe("reports");
  });
});
