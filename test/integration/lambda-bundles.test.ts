// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is Shoal's parameter syntax, not a JS template
/**
 * The Lambda bundles exactly as `cdk deploy` ships them (the code assets the stack synthesizes:
 * esbuild ESM bundles of cdk/bundles.ts, built afresh from the sources when the stack is
 * synthesized from the repository), run against the embedded emulators the way Lambda runs
 * them: the api bundle behind an HTTP server (payload 2.0 events), the dispatcher and worker
 * bundles fed SQS events by pollers (as event source mappings do), the trigger bundle given an
 * EventBridge event, the sweeper bundle a scheduled event; and the ECS worker image's bundle
 * (its Docker build context as staged) run as the container runs it. Catches what only
 * bundling breaks (module paths, `require` in ESM, files read next to the sources) before a
 * deploy would.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { App } from "aws-cdk-lib";
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  SQSBatchResponse,
  SQSEvent,
} from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ShoalStack } from "../../cdk/shoal-stack.js";
import { startHttpServer } from "../../lib/standalone/http-server.js";
import { QueuePoller } from "../../lib/standalone/poller.js";
import { lambdaEnvironment, type TestAws, testClients, useTestAws } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";
import { api, REPO } from "../helpers/standalone.js";

// biome-ignore lint/suspicious/noExplicitAny: a bundle's exports are untyped
type Bundle = { handler: (event: any) => Promise<any> };

describe("the Lambda bundles of the stack, on the emulators", () => {
  let aws: TestAws;
  let outdir: string;
  let server: Server;
  let base: string;
  const pollers: QueuePoller[] = [];
  const bundles: Record<string, Bundle> = {};
  let ecsContext = "";
  let ecsWorker: ChildProcess | undefined;

  beforeAll(async () => {
    aws = await useTestAws({ dataDir: mkdtempSync(join(tmpdir(), "shoal-bundles-")) });
    // The bundles read their configuration from the environment, as on Lambda.
    Object.assign(process.env, lambdaEnvironment(aws));
    // Inside the repository, so the bundles resolve @aws-sdk/* (external, as in the Lambda
    // runtime) from its node_modules.
    outdir = join(REPO, "cdk.out", `bundles-${randomUUID().slice(0, 8)}`);
    const app = new App({ outdir });
    new ShoalStack(app, "Bundles", { shoal: { prefix: aws.config.prefix, ecsWorkers: {} } });
    const template = app.synth().getStackByName("Bundles").template as {
      Resources: Record<
        string,
        {
          Type: string;
          Properties: {
            FunctionName?: string;
            Code?: { S3Key?: string };
            ContainerDefinitions?: Array<{ Image: { "Fn::Sub": string } }>;
          };
        }
      >;
    };
    // The worker image's Docker build context, staged as asset.<hash>/ (its tag is the hash).
    for (const r of Object.values(template.Resources)) {
      const image = r.Properties.ContainerDefinitions?.[0]?.Image["Fn::Sub"];
      const hash = image && /:([0-9a-f]{64})$/.exec(image)?.[1];
      if (hash) ecsContext = join(outdir, `asset.${hash}`);
    }
    for (const r of Object.values(template.Resources)) {
      if (r.Type !== "AWS::Lambda::Function" || !r.Properties.FunctionName) continue;
      const name = r.Properties.FunctionName.slice(aws.config.prefix.length + 1);
      // The code asset is staged as asset.<hash>/ (its S3 key is <hash>.zip).
      const hash = String(r.Properties.Code?.S3Key).replace(/\.zip$/, "");
      const path = join(outdir, `asset.${hash}`, "index.mjs");
      bundles[name] = (await import(pathToFileURL(path).href)) as Bundle;
    }
    const started = await startHttpServer(
      0,
      (e: APIGatewayProxyEventV2) =>
        bundles.api?.handler(e) as Promise<APIGatewayProxyStructuredResultV2>,
    );
    server = started.server;
    base = `http://127.0.0.1:${started.port}`;
    const onError = (e: unknown) => console.error("poller:", e);
    pollers.push(
      new QueuePoller({
        sqs: testClients().sqs,
        queueUrls: [aws.eventsUrl],
        slots: 10,
        batchSize: 10,
        waitSeconds: 1,
        region: "us-east-1",
        fifo: true,
        handler: (e: SQSEvent) => bundles.dispatcher?.handler(e) as Promise<SQSBatchResponse>,
        onError,
      }),
      new QueuePoller({
        sqs: testClients().sqs,
        queueUrls: aws.taskUrls,
        slots: 2,
        batchSize: 1,
        waitSeconds: 1,
        region: "us-east-1",
        receiveVisibilitySeconds: 30,
        handler: (e: SQSEvent) => bundles.worker?.handler(e) as Promise<SQSBatchResponse>,
        onError,
      }),
    );
    for (const p of pollers) p.start();
  }, 180_000);

  afterAll(async () => {
    if (ecsWorker && ecsWorker.exitCode === null) {
      ecsWorker.kill("SIGTERM");
      await once(ecsWorker, "exit");
    }
    for (const p of pollers) await p.stop();
    await new Promise<void>((r) => {
      server?.closeAllConnections();
      server ? server.close(() => r()) : r();
    });
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  it("bundles every handler", () => {
    expect(Object.keys(bundles).sort()).toEqual([
      "api",
      "dispatcher",
      "sweeper",
      "trigger",
      "worker",
    ]);
  });

  it("runs a workflow through the api, dispatcher and worker bundles", async () => {
    const put = await api(base, "PUT", "/v1/workflows/bundled", {
      params: { who: "lambda" },
      tasks: [
        { code: "hello", type: "SHELL", command: "echo hello ${who}; echo '${setValue(n=3)}'" },
        {
          code: "gate",
          type: "SWITCH",
          upstream: ["hello"],
          cases: [{ condition: "int(n) == 3", next: "yes" }],
          defaultNext: "no",
        },
        { code: "yes", type: "SHELL", upstream: ["gate"], command: "echo took ${n}" },
        { code: "no", type: "SHELL", upstream: ["gate"], command: "exit 1" },
      ],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const run = await api(base, "POST", "/v1/workflows/bundled/runs", {});
    expect(run.status).toBe(202);
    const id = run.body.instanceId as string;
    const done = await until(
      async () => {
        const r = await api(base, "GET", `/v1/instances/${id}`);
        return ["SUCCESS", "FAILURE", "STOPPED"].includes(r.body.state) ? r.body : undefined;
      },
      { timeoutMs: 60_000, what: "the bundled run to finish" },
    );
    expect(done.state).toBe("SUCCESS");
    const states = Object.fromEntries(
      (done.tasks as Array<{ code: string; state: string }>).map((t) => [t.code, t.state]),
    );
    expect(states).toEqual({ hello: "SUCCESS", gate: "SUCCESS", yes: "SUCCESS", no: "SKIPPED" });
    const log = await api(base, "GET", `/v1/instances/${id}/tasks/hello/log`);
    expect(log.body.lines.map((l: { message: string }) => l.message)).toContain("hello lambda");
  }, 90_000);

  it("starts a run from an EventBridge event through the trigger bundle", async () => {
    await api(base, "PUT", "/v1/workflows/on-order", {
      params: { order: "" },
      tasks: [{ code: "t", type: "SHELL", command: "echo order ${order}" }],
    });
    const t = await api(base, "POST", "/v1/triggers", {
      workflow: "on-order",
      eventPattern: { source: ["acme.orders"] },
      params: { order: "$.detail.id" },
    });
    expect(t.status).toBe(201);
    const outcome = await bundles.trigger?.handler({
      version: "0",
      id: randomUUID(),
      "detail-type": "Order Placed",
      source: "acme.orders",
      account: "123456789012",
      time: new Date().toISOString(),
      region: "us-east-1",
      resources: [],
      detail: { id: "o-42" },
    });
    expect(outcome).toHaveLength(1);
    const instanceId = outcome[0].instanceId as string;
    const inst = await until(
      async () => {
        const r = await api(base, "GET", `/v1/instances/${instanceId}`);
        return r.body.state === "SUCCESS" ? r.body : undefined;
      },
      { timeoutMs: 60_000, what: "the triggered run" },
    );
    expect(inst.params).toMatchObject({ order: "o-42" });
  }, 90_000);

  it("sweeps once through the sweeper bundle", async () => {
    const report = await bundles.sweeper?.handler({
      source: "aws.events",
      "detail-type": "Scheduled Event",
    });
    expect(report.schedules).toMatchObject({ fired: 0, maxLatenessMs: 0 });
  }, 60_000);

  it("runs a task on the ECS worker image's bundle, started as its Dockerfile starts it", async () => {
    expect(readdirSync(ecsContext)).toEqual(expect.arrayContaining(["Dockerfile", "index.mjs"]));
    const dockerfile = readFileSync(join(ecsContext, "Dockerfile"), "utf8");
    const entry = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
    const [cmd, ...args] = JSON.parse(entry ?? "[]") as string[];
    expect(cmd).toBe("node");
    // Outside the repository: the image has no node_modules, the bundle must need none.
    const root = mkdtempSync(join(tmpdir(), "shoal-ecs-image-"));
    cpSync(ecsContext, join(root, "app"), { recursive: true });
    ecsWorker = spawn(process.execPath, [...args, "--group", "ecs", "--concurrency", "2"], {
      cwd: join(root, "app"),
      // The queues of group "ecs" exist on AWS (the stack); on the emulators the worker makes them.
      env: { ...process.env, SHOAL_AUTO_CREATE_QUEUES: "true" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    ecsWorker.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    await until(async () => /group 'ecs'/.test(out) || undefined, {
      timeoutMs: 30_000,
      what: "the ECS worker bundle to start",
    });
    await api(base, "PUT", "/v1/workflows/on-ecs", {
      tasks: [{ code: "long", type: "SHELL", workerGroup: "ecs", command: "echo on ecs" }],
    });
    const run = await api(base, "POST", "/v1/workflows/on-ecs/runs", {});
    expect(run.status).toBe(202);
    const id = run.body.instanceId as string;
    const done = await until(
      async () => {
        const r = await api(base, "GET", `/v1/instances/${id}`);
        return ["SUCCESS", "FAILURE", "STOPPED"].includes(r.body.state) ? r.body : undefined;
      },
      { timeoutMs: 60_000, what: "the run on the ECS worker" },
    );
    expect(done.state).toBe("SUCCESS");
    const log = await api(base, "GET", `/v1/instances/${id}/tasks/long/log`);
    expect(log.body.lines.map((l: { message: string }) => l.message)).toContain("on ecs");
    rmSync(root, { recursive: true, force: true });
  }, 90_000);
});
