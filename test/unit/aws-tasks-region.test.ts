/**
 * STEP_FUNCTIONS and LAMBDA tasks call the region of their ARN, not the worker's AWS_REGION:
 * the real SDK clients of lib/aws/clients.ts against a local HTTP server standing in for Step
 * Functions (JSON 1.0 protocol) and Lambda (REST), which checks each request's SigV4 signature
 * and records its credential scope (`<date>/<region>/<service>/aws4_request`: the region the
 * client signed for). Without a configured endpoint, the host the SDK resolves is checked.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createAwsClients } from "../../lib/aws/clients.js";
import { awsConfigFromEnv } from "../../lib/aws/config.js";
import type { WorkerTaskDefinition } from "../../lib/core/model.js";
import { taskSchema } from "../../lib/core/validate-tasks.js";
import { callPlaceLine, callRegion } from "../../lib/tasks/aws-arn.js";
import { runLambda } from "../../lib/tasks/lambda.js";
import type { TaskClients, TaskRunContext } from "../../lib/tasks/plugin.js";
import { runStepFunctions } from "../../lib/tasks/step-functions.js";
import { ACCESS_KEY, receiveSigned, SECRET_KEY } from "../helpers/sigv4-verify.js";

const CREDENTIALS = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };
const EU_MACHINE = "arn:aws:states:eu-west-1:123456789012:stateMachine:orders";
const US_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:orders";
const EU_FUNCTION = "arn:aws:lambda:eu-west-1:210987654321:function:enrich";

/** What the fake service received: the call and the region its signature is for. */
interface Call {
  call: string;
  region: string | undefined;
  valid: boolean | undefined;
}
let calls: Call[] = [];
let server: Server;
let url: string;

function send(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { "content-type": "application/x-amz-json-1.0", ...headers });
  res.end(JSON.stringify(body));
}

/** Step Functions (X-Amz-Target: AWSStepFunctions.<Op>) and Lambda's Invoke, just enough. */
async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { body, verdict } = await receiveSigned(req);
  const target = String(req.headers["x-amz-target"] ?? "");
  const invoke = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(req.url ?? "");
  calls.push({
    call: invoke ? `Invoke ${decodeURIComponent(invoke[1] ?? "")}` : target,
    region: verdict.scope?.split("/")[1],
    valid: verdict.valid,
  });
  if (!verdict.valid) {
    return send(res, 403, { __type: "InvalidSignatureException", message: "bad signature" });
  }
  const input = body ? (JSON.parse(body) as Record<string, string>) : {};
  if (target === "AWSStepFunctions.StartExecution") {
    const arn = `${input.stateMachineArn?.replace(":stateMachine:", ":execution:")}:${input.name}`;
    return send(res, 200, { executionArn: arn, startDate: 1_700_000_000 });
  }
  if (target === "AWSStepFunctions.DescribeExecution") {
    return send(res, 200, {
      executionArn: input.executionArn,
      stateMachineArn: "x",
      status: "SUCCEEDED",
      startDate: 1_700_000_000,
      output: '{"ok": true}',
    });
  }
  if (invoke) {
    res.writeHead(200, { "content-type": "application/json", "x-amz-executed-version": "1" });
    return void res.end('{"ok": true}');
  }
  send(res, 400, { __type: "UnknownOperationException", message: target });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    handle(req, res).catch((err) => send(res, 500, { message: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  calls = [];
  // The machine's own AWS settings stay out: the SDK reads these itself.
  for (const key of Object.keys(process.env)) {
    if (key.startsWith("AWS_")) vi.stubEnv(key, undefined);
  }
  vi.stubEnv("AWS_CONFIG_FILE", "/nonexistent");
  vi.stubEnv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent");
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/** A worker's clients as the runtime builds them from its environment (AWS_REGION us-east-1). */
function workerClients(env: Record<string, string>) {
  return createAwsClients({
    ...awsConfigFromEnv({ AWS_REGION: "us-east-1", ...env }),
    credentials: CREDENTIALS,
  });
}

function run(task: Record<string, unknown>, clients: TaskClients) {
  const parsed = taskSchema.parse({ code: "t", ...task }) as WorkerTaskDefinition;
  const lines: string[] = [];
  const ctx: TaskRunContext = {
    task: { ...parsed, ...(parsed.type === "STEP_FUNCTIONS" ? { pollIntervalSeconds: 0.01 } : {}) },
    params: {},
    env: { SHOAL_INSTANCE_ID: "inst-1", SHOAL_TASK_CODE: "t", SHOAL_ATTEMPT: "1" },
    log: { write: (line) => lines.push(line), close: async () => {} },
    signal: new AbortController().signal,
    workDir: "/nonexistent",
    clients,
  };
  const plugin = parsed.type === "LAMBDA" ? runLambda : runStepFunctions;
  return plugin(ctx).then((result) => ({ result, lines }));
}

describe("ARN-addressed calls go to the ARN's region", () => {
  it("STEP_FUNCTIONS: an eu-west-1 state machine is signed for eu-west-1 while AWS_REGION is us-east-1, at AWS_ENDPOINT_URL_SFN", async () => {
    const clients = workerClients({ AWS_ENDPOINT_URL_SFN: url });
    const { result, lines } = await run(
      { type: "STEP_FUNCTIONS", stateMachineArn: EU_MACHINE },
      clients,
    );
    expect(result).toEqual({ state: "SUCCESS" });
    expect(calls.map((c) => c.call)).toEqual([
      "AWSStepFunctions.StartExecution",
      "AWSStepFunctions.DescribeExecution",
    ]);
    for (const c of calls) expect(c).toMatchObject({ region: "eu-west-1", valid: true });
    expect(lines).toContain(
      `shoal: starting execution shoal-inst-1-t-1 of ${EU_MACHINE} (Step Functions in eu-west-1)`,
    );
    // A state machine of the worker's own region: its own client, signed for us-east-1.
    calls = [];
    await run({ type: "STEP_FUNCTIONS", stateMachineArn: US_MACHINE }, clients);
    expect(calls.map((c) => c.region)).toEqual(["us-east-1", "us-east-1"]);
    clients.destroy();
  });

  it("LAMBDA: a function ARN's region is signed for (AWS_ENDPOINT_URL); a plain name stays in AWS_REGION", async () => {
    const clients = workerClients({ AWS_ENDPOINT_URL: url });
    const byArn = await run({ type: "LAMBDA", functionName: EU_FUNCTION, payload: "{}" }, clients);
    expect(byArn.result).toEqual({ state: "SUCCESS" });
    expect(byArn.lines[0]).toBe(
      `shoal: invoking Lambda function ${EU_FUNCTION} in eu-west-1, payload 2 bytes`,
    );
    const byName = await run({ type: "LAMBDA", functionName: "enrich", payload: "{}" }, clients);
    expect(byName.result).toEqual({ state: "SUCCESS" });
    const partial = "210987654321:function:enrich";
    await run({ type: "LAMBDA", functionName: partial, payload: "{}" }, clients);
    expect(calls).toEqual([
      { call: `Invoke ${EU_FUNCTION}`, region: "eu-west-1", valid: true },
      { call: "Invoke enrich", region: "us-east-1", valid: true },
      { call: `Invoke ${partial}`, region: "us-east-1", valid: true },
    ]);
    clients.destroy();
  });

  it("without a configured endpoint, the eu-west-1 client resolves states.eu-west-1.amazonaws.com", async () => {
    const clients = workerClients({});
    const hosts: string[] = [];
    // Stops each request once built (before it is sent), recording where it would go.
    clients.sfnIn("eu-west-1").middlewareStack.add(
      () => async (args) => {
        hosts.push((args.request as { hostname: string }).hostname);
        throw Object.assign(new Error("stopped by the test"), { name: "StoppedByTest" });
      },
      { step: "build" },
    );
    const { result } = await run({ type: "STEP_FUNCTIONS", stateMachineArn: EU_MACHINE }, clients);
    expect(result.error).toMatch(/StoppedByTest/);
    expect(hosts).toEqual(["states.eu-west-1.amazonaws.com"]);
    clients.destroy();
  });

  it("keeps at most 8 other regions' clients, the least recently used dropped first", () => {
    const clients = createAwsClients({ region: "us-east-1", endpoints: {} });
    expect(clients.sfnIn("us-east-1")).toBe(clients.sfn);
    expect(clients.sfnIn(undefined)).toBe(clients.sfn);
    expect(clients.lambdaIn(undefined)).toBe(clients.lambda);
    const first = clients.sfnIn("eu-west-1");
    expect(clients.sfnIn("eu-west-1")).toBe(first);
    const second = clients.sfnIn("eu-west-2");
    for (let i = 1; i <= 7; i++) {
      clients.sfnIn(`ap-south-${i}`);
      clients.sfnIn("eu-west-1"); // used again: the most recent
    }
    expect(clients.sfnIn("eu-west-1")).toBe(first);
    expect(clients.sfnIn("eu-west-2")).not.toBe(second);
    clients.destroy();
  });

  it("render and dry run say which region and account a task calls", () => {
    expect(callRegion(EU_MACHINE)).toBe("eu-west-1");
    expect(callRegion("enrich:live")).toBeUndefined();
    expect(callPlaceLine("Step Functions", EU_MACHINE)).toBe(
      "calls Step Functions in eu-west-1, account 123456789012 (from the ARN)",
    );
    expect(callPlaceLine("Lambda", "210987654321:function:enrich")).toBe(
      "calls Lambda in the worker's region (AWS_REGION), account 210987654321",
    );
    expect(callPlaceLine("Lambda", "enrich")).toBe(
      "calls Lambda in the worker's region (AWS_REGION)",
    );
  });
});
