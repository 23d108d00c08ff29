/**
 * The CDK construct as a team adopts it: examples/cdk-app (a CDK app of its own, with a bucket
 * and `new Shoal(this, "Scheduler", { … })` from `shoal/cdk`) copied to an empty directory,
 * the packed package and the CDK peers installed from npm, the app synthesized with node — no
 * repository, no AWS account and no Docker (CDK_DOCKER points at nothing) — with cdk-nag's
 * AwsSolutions checks. The template must hold the five functions with their code from the
 * package's own bundles, the ECS worker image built from the package, the tables, queues, the
 * API and the outputs, and no unsuppressed cdk-nag error. Then, in the same install, the
 * CommonJS app `cdk init app --language typescript` creates (no "type": "module", so
 * `import { Shoal } from "shoal/cdk"` becomes a require()), as today's template runs it (tsc
 * with NodeNext, then tsx) and as earlier ones did (`module: commonjs`, TypeScript 5, ts-node).
 * Prints the install and synthesis times.
 */
import { execFile } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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

/**
 * What `cdk init app --language typescript` writes (aws-cdk's init template, minus jest): a
 * CommonJS package (no "type": "module"), so `import { Shoal } from "shoal/cdk"` runs as a
 * require() (Node 22.12+ loads the ES module). Today's template: tsconfig NodeNext and cdk.json
 * `npx tsc && npx tsx bin/<name>.ts`, TypeScript 7 (tsc and tsx come from the repository, the
 * template's devDependencies). Before it (apps created up to 2025): tsconfig `module: commonjs`
 * (TypeScript 5's `node10` resolution, which ignores `exports`) and
 * `npx ts-node --prefer-ts-exts bin/<name>.ts`, which type-checks as it runs. Both take
 * aws-cdk-lib, constructs and shoal from the install the first app made in the parent directory.
 */
function commonjsApp(era: "tsx" | "ts-node"): Record<string, string> {
  const compilerOptions =
    era === "tsx"
      ? { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["es2022"] }
      : { target: "ES2020", module: "commonjs", lib: ["es2020", "dom"] };
  return {
    "package.json": JSON.stringify({
      name: "billing",
      version: "0.1.0",
      scripts: { build: "tsc", cdk: "cdk" },
      // Only the ts-node era's tools are installed here: the app's own dependencies (aws-cdk-lib,
      // constructs, shoal) resolve from the parent directory's node_modules.
      ...(era === "ts-node"
        ? {
            devDependencies: {
              "@types/node": "^22.0.0",
              "ts-node": "^10.9.2",
              typescript: "~5.9.3",
            },
          }
        : {}),
    }),
    "cdk.json": JSON.stringify({
      app:
        era === "tsx"
          ? "npx tsc && npx tsx bin/billing.ts"
          : "npx ts-node --prefer-ts-exts bin/billing.ts",
    }),
    "tsconfig.json": JSON.stringify({
      compilerOptions: {
        ...compilerOptions,
        declaration: true,
        strict: true,
        noImplicitReturns: true,
        inlineSourceMap: true,
        experimentalDecorators: true,
        strictPropertyInitialization: false,
        ...(era === "tsx"
          ? { skipLibCheck: true, noEmit: true, isolatedModules: true, types: [] }
          : { typeRoots: ["./node_modules/@types"] }),
      },
      exclude: ["node_modules", "cdk.out"],
    }),
    "bin/billing.ts": [
      "#!/usr/bin/env node",
      `import * as cdk from 'aws-cdk-lib${era === "tsx" ? "/core" : ""}';`,
      "import { BillingStack } from '../lib/billing-stack';",
      "",
      "const app = new cdk.App();",
      "new BillingStack(app, 'BillingStack');",
      "",
    ].join("\n"),
    "lib/billing-stack.ts": [
      `import * as cdk from 'aws-cdk-lib${era === "tsx" ? "/core" : ""}';`,
      "import { Construct } from 'constructs';",
      "import { Shoal } from 'shoal/cdk';",
      "",
      "export class BillingStack extends cdk.Stack {",
      "  constructor(scope: Construct, id: string, props?: cdk.StackProps) {",
      "    super(scope, id, props);",
      "    const scheduler = new Shoal(this, 'Scheduler', { prefix: 'billing', workerGroups: ['default', 'pdf'] });",
      "    new cdk.CfnOutput(this, 'WorkerName', { value: scheduler.functions['worker-pdf']!.functionName });",
      "  }",
      "}",
      "",
    ].join("\n"),
  };
}

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

  /** Writes the app in `<project>/<dir>`, runs `commands` there, returns its function names. */
  async function synthCommonjs(
    dir: string,
    era: "tsx" | "ts-node",
    commands: Array<[string, string[]]>,
  ): Promise<{ functions: string[]; prefix: string }> {
    const app = join(project, dir);
    for (const [file, text] of Object.entries(commonjsApp(era))) {
      mkdirSync(dirname(join(app, file)), { recursive: true });
      writeFileSync(join(app, file), text);
    }
    const cjsOut = join(app, "cdk.out");
    const started = performance.now();
    for (const [command, args] of commands) {
      await run(command, args, {
        cwd: app,
        env: { ...process.env, CDK_OUTDIR: cjsOut, CDK_DOCKER: join(project, "no-docker-here") },
        maxBuffer: 16 * 1024 * 1024,
      });
    }
    console.log(
      `cdk-app: CommonJS app (${era}) set up, type-checked and synthesized in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const billing: Cfn = JSON.parse(
      readFileSync(join(cjsOut, "BillingStack.template.json"), "utf8"),
    );
    const functions = Object.values(billing.Resources as Record<string, Cfn>)
      .filter((r) => r.Type === "AWS::Lambda::Function")
      .map((f) => String(f.Properties.FunctionName))
      .filter((n) => n.startsWith("billing-"))
      .sort();
    return { functions, prefix: billing.Outputs.Prefix.Value };
  }
  const BILLING_FUNCTIONS = [...HANDLERS.map((h) => `billing-${h}`), "billing-worker-pdf"].sort();

  it("loads in a CommonJS TypeScript app as `cdk init` creates it (tsc, then tsx)", async () => {
    const bin = (name: string) => join(REPO, "node_modules", ".bin", name);
    // `tsc` type-checks through the `types` condition, `tsx` runs the require() of shoal/cdk.
    const synth = await synthCommonjs("billing", "tsx", [
      [bin("tsc"), ["-p", "."]],
      [bin("tsx"), ["bin/billing.ts"]],
    ]);
    expect(synth).toEqual({ functions: BILLING_FUNCTIONS, prefix: "billing" });
  }, 120_000);

  it("loads in an older `cdk init` app: module commonjs, TypeScript 5 and ts-node", async () => {
    const synth = await synthCommonjs("billing-ts-node", "ts-node", [
      ["npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"]],
      [join("node_modules", ".bin", "ts-node"), ["--prefer-ts-exts", "bin/billing.ts"]],
    ]);
    expect(synth).toEqual({ functions: BILLING_FUNCTIONS, prefix: "billing" });
  }, 180_000);
});
