/**
 * The `shoal` CLI against a deployed Shoal: SigV4 signing, JWT, settings resolution, the
 * config file and `config from-stack`. A node:http server on 127.0.0.1 stands in for API
 * Gateway: it recomputes each request's SigV4 signature itself, from what it received
 * (test/helpers/sigv4-verify.ts), and refuses a mismatch the way AWS does. CloudFormation is aws-sdk-client-mock.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CloudFormationClient,
  CloudFormationServiceException,
  DescribeStacksCommand,
} from "@aws-sdk/client-cloudformation";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  apiBase,
  configFilePath,
  parseConfigFile,
  resolveSettings,
} from "../../lib/cli/cli-config.js";
import { toConfig } from "../../lib/cli/commands/config.js";
import { detectAwsHost, encodeQuery } from "../../lib/cli/signing.js";
import { DEFAULT_ENDPOINT } from "../../lib/standalone/defaults.js";
import { runCli } from "../helpers/cli-run.js";
import { ACCESS_KEY, SECRET_KEY, type Verdict, verifySigV4 } from "../helpers/sigv4-verify.js";

const SESSION_TOKEN = "FwoGZXIvYXdzEXAMPLE//token+with/odd=chars";

// ---- a stand-in for API Gateway ---------------------------------------------------------------

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  verdict: Verdict;
}

const state = { received: [] as Received[], forbid: false };

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks).toString("utf8");
  const verdict = await verifySigV4(req, body);
  state.received.push({
    method: req.method ?? "",
    url: req.url ?? "",
    headers: req.headers,
    body,
    verdict,
  });
  // API Gateway's own answers: not the API's {error:{…}} shape.
  if (state.forbid) return send(res, 403, { message: "Forbidden" });
  if (verdict.kind === "sigv4" && !verdict.valid) {
    return send(res, 403, {
      message: "The request signature we calculated does not match the signature you provided.",
    });
  }
  const url = new URL(req.url ?? "/", "http://stub");
  const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const [v1, kind, name, sub] = parts;
  if (v1 === "v1" && kind === "workflows" && !name && req.method === "GET") {
    return send(res, 200, {
      items: [{ name: "etl-report", version: 1, releaseState: "ONLINE", description: "nightly" }],
    });
  }
  if (v1 === "v1" && kind === "workflows" && name && !sub && req.method === "GET") {
    return send(res, 200, { name, version: 1, releaseState: "ONLINE", tasks: [] });
  }
  if (v1 === "v1" && kind === "workflows" && name && sub === "runs" && req.method === "POST") {
    return send(res, 201, { instanceId: "i-1", workflow: name, version: 1, state: "RUNNING" });
  }
  if (v1 === "v1" && kind === "instances" && !name && req.method === "GET") {
    return send(res, 200, { items: [] });
  }
  send(res, 404, { error: { code: "NotFound", message: "no such route", details: [] } });
}

// ---- harness ----------------------------------------------------------------------------------

let server: Server;
let endpoint: string;
let dir: string;
let home: string;
let configPath: string;
const cf = mockClient(CloudFormationClient);

beforeAll(async () => {
  server = createServer((req, res) => {
    handle(req, res).catch((err) =>
      send(res, 500, { error: { code: "Internal", message: String(err) } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), "shoal-cli-aws-"));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
  cf.restore();
});

let n = 0;
beforeEach(async () => {
  state.received = [];
  state.forbid = false;
  cf.reset();
  // A clean environment: no AWS or Shoal settings of the machine running the tests, an empty
  // home (no ~/.aws), no instance metadata service to ask.
  for (const key of Object.keys(process.env)) {
    if (/^(AWS_|SHOAL_)/.test(key) || key === "XDG_CONFIG_HOME") vi.stubEnv(key, undefined);
  }
  home = join(dir, `home-${++n}`);
  await mkdir(home);
  configPath = join(home, "shoal-config.json");
  vi.stubEnv("HOME", home);
  vi.stubEnv("SHOAL_CONFIG", configPath);
  vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true");
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function staticCredentials(opts: { session?: boolean } = {}): void {
  vi.stubEnv("AWS_ACCESS_KEY_ID", ACCESS_KEY);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
  if (opts.session) vi.stubEnv("AWS_SESSION_TOKEN", SESSION_TOKEN);
}

/** `shoal --endpoint <stub> --auth iam --region eu-west-1 ...args`. */
function signedShoal(args: string[]) {
  return shoal(["--endpoint", endpoint, "--auth", "iam", "--region", "eu-west-1", ...args]);
}

/** Runs the CLI in-process; returns exit code and captured output. */
const shoal = (args: string[]) => runCli(args);

function only(): Received {
  expect(state.received).toHaveLength(1);
  return state.received[0] as Received;
}

// ---- tests ------------------------------------------------------------------------------------

describe("SigV4 signing (auth iam)", () => {
  it("signs a GET with a query: the server's own recomputation matches, scope eu-west-1/execute-api", async () => {
    staticCredentials();
    const res = await signedShoal(["workflows"]);
    expect(res).toMatchObject({ code: 0, stderr: "" });
    expect(res.stdout).toContain("etl-report");
    const got = only();
    expect(got.url).toBe("/v1/workflows?limit=200");
    expect(got.verdict).toMatchObject({ kind: "sigv4", valid: true, payloadHashOk: true });
    expect(got.verdict.scope).toMatch(/^\d{8}\/eu-west-1\/execute-api\/aws4_request$/);
    expect(got.verdict.signedHeaders).toEqual(
      expect.arrayContaining(["host", "x-amz-date", "x-amz-content-sha256"]),
    );
  });

  it("signs path segments and query values that need escaping", async () => {
    staticCredentials();
    const flags = ["--endpoint", endpoint, "--auth", "iam", "--region", "eu-west-1"];
    expect((await shoal([...flags, "get", "workflow", "etl report (v2)*"])).code).toBe(0);
    expect(
      (await shoal([...flags, "instances", "--workflow", "a b+c/d=e&f~g!'()*", "--limit", "7"]))
        .code,
    ).toBe(0);
    const [get, list] = state.received;
    expect(get?.url).toBe("/v1/workflows/etl%20report%20(v2)*");
    expect(list?.url).toBe("/v1/instances?workflow=a%20b%2Bc%2Fd%3De%26f~g%21%27%28%29%2A&limit=7");
    for (const r of state.received) expect(r.verdict).toMatchObject({ kind: "sigv4", valid: true });
  });

  it("signs a POST with a JSON body (content-type signed, body hashed), session token included", async () => {
    staticCredentials({ session: true });
    const res = await shoal([
      "run",
      "etl-report",
      "-p",
      "day=2026-11-21 05:00 Zürich ✓",
      "--endpoint",
      endpoint,
      "--auth",
      "iam",
      "--region",
      "eu-west-1",
    ]);
    expect(res).toMatchObject({ code: 0, stdout: "i-1\n", stderr: "" });
    const got = only();
    expect(got.method).toBe("POST");
    expect(JSON.parse(got.body)).toEqual({
      idempotencyKey: expect.any(String),
      params: { day: "2026-11-21 05:00 Zürich ✓" },
    });
    expect(got.headers["x-amz-security-token"]).toBe(SESSION_TOKEN);
    expect(got.verdict).toMatchObject({ kind: "sigv4", valid: true, payloadHashOk: true });
    expect(got.verdict.signedHeaders).toEqual(
      expect.arrayContaining(["content-type", "host", "x-amz-security-token"]),
    );
  });

  it("takes endpoint, auth, region and a service override from the config file", async () => {
    staticCredentials();
    await writeFile(
      configPath,
      JSON.stringify({ endpoint, auth: "iam", region: "eu-west-1", service: "lambda" }),
    );
    const res = await shoal(["workflows"]);
    expect(res.code).toBe(0);
    expect(only().verdict).toMatchObject({ kind: "sigv4", valid: true });
    expect(only().verdict.scope).toMatch(/\/eu-west-1\/lambda\/aws4_request$/);
  });

  it("a signature that does not match is refused: the server really checks", async () => {
    vi.stubEnv("AWS_ACCESS_KEY_ID", ACCESS_KEY);
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "not-the-secret");
    const res = await signedShoal(["workflows"]);
    expect(res.code).toBe(1);
    expect(only().verdict).toMatchObject({ kind: "sigv4", valid: false });
    expect(res.stderr).toContain("refused by AWS IAM");
    expect(res.stderr).toContain("The request signature we calculated does not match");
  });

  it("no credentials anywhere: exit 1 with what to set, and nothing is sent", async () => {
    const res = await signedShoal(["workflows"]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain(
      `error: no AWS credentials found for signing requests to ${endpoint}: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or run \`aws sso login\``,
    );
    expect(state.received).toHaveLength(0);
  });

  it("a profile that does not exist: the same error, with the SDK's reason", async () => {
    const res = await signedShoal(["--profile", "nope", "workflows"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("no AWS credentials found for signing requests");
    expect(state.received).toHaveLength(0);
  });

  it("no region for an IAM endpoint: usage error naming --region", async () => {
    staticCredentials();
    const res = await shoal(["--endpoint", endpoint, "--auth", "iam", "workflows"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("no AWS region for signing requests");
    expect(res.stderr).toContain("--region");
    expect(state.received).toHaveLength(0);
  });

  it("a 403 from AWS ({message: Forbidden}) says IAM refused and names execute-api:Invoke", async () => {
    staticCredentials();
    state.forbid = true;
    const res = await signedShoal(["workflows"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("the request was refused by AWS IAM (HTTP 403: Forbidden)");
    expect(res.stderr).toContain("execute-api:Invoke");
  });

  it("the same 403 behind a function URL names lambda:InvokeFunctionUrl", async () => {
    staticCredentials();
    state.forbid = true;
    await writeFile(
      configPath,
      JSON.stringify({ endpoint, auth: "iam", region: "eu-west-1", service: "lambda" }),
    );
    const res = await shoal(["workflows"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("lambda:InvokeFunctionUrl");
  });
});

describe("auth none and jwt", () => {
  it("localhost defaults to no auth: no Authorization header, no credentials needed", async () => {
    const res = await shoal(["--endpoint", endpoint, "workflows"]);
    expect(res.code).toBe(0);
    expect(only().verdict.kind).toBe("none");
    expect(only().headers["x-amz-date"]).toBeUndefined();
  });

  it("--auth none sends no Authorization header even with credentials around", async () => {
    staticCredentials();
    const res = await shoal(["--endpoint", endpoint, "--auth", "none", "workflows"]);
    expect(res.code).toBe(0);
    expect(only().verdict.kind).toBe("none");
  });

  it("auth jwt sends SHOAL_TOKEN as a bearer token", async () => {
    vi.stubEnv("SHOAL_TOKEN", "eyJhbGciOi.test.token");
    const res = await shoal(["--endpoint", endpoint, "--auth", "jwt", "workflows"]);
    expect(res.code).toBe(0);
    expect(only().headers.authorization).toBe("Bearer eyJhbGciOi.test.token");
  });

  it("auth jwt from SHOAL_AUTH without SHOAL_TOKEN is a usage error", async () => {
    vi.stubEnv("SHOAL_AUTH", "jwt");
    const res = await shoal(["--endpoint", endpoint, "workflows"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("set SHOAL_TOKEN");
    expect(state.received).toHaveLength(0);
  });

  it("an unknown --auth or SHOAL_AUTH is a usage error", async () => {
    expect((await shoal(["--endpoint", endpoint, "--auth", "kerberos", "workflows"])).code).toBe(2);
    vi.stubEnv("SHOAL_AUTH", "kerberos");
    const res = await shoal(["--endpoint", endpoint, "workflows"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("SHOAL_AUTH is 'kerberos'");
  });
});

describe("host detection", () => {
  it("recognises API Gateway, function URLs (AWS and LocalStack), and nothing else", () => {
    expect(detectAwsHost("https://abc123.execute-api.eu-west-1.amazonaws.com")).toEqual({
      service: "execute-api",
      region: "eu-west-1",
      kind: "api-gateway",
      id: "abc123",
    });
    expect(detectAwsHost("https://xyz.lambda-url.us-east-2.on.aws/")).toMatchObject({
      service: "lambda",
      region: "us-east-2",
    });
    expect(
      detectAwsHost("http://xyz.lambda-url.us-east-1.localhost.localstack.cloud:4566/"),
    ).toMatchObject({ service: "lambda", region: "us-east-1" });
    expect(detectAwsHost("http://localhost:8080")).toBeUndefined();
    expect(detectAwsHost("https://shoal.example.com")).toBeUndefined();
    expect(detectAwsHost("not a url")).toBeUndefined();
  });

  it("drops a last /v1 of the endpoint (the console shows the API so), keeping any other prefix", () => {
    expect(apiBase("http://host:8080/v1")).toBe("http://host:8080");
    expect(apiBase("http://host:8080/v1/")).toBe("http://host:8080");
    expect(apiBase("http://host:8080//")).toBe("http://host:8080");
    expect(apiBase("http://host/shoal/v1")).toBe("http://host/shoal");
    expect(apiBase("https://abc.execute-api.eu-west-1.amazonaws.com/prod/v1/")).toBe(
      "https://abc.execute-api.eu-west-1.amazonaws.com/prod",
    );
    for (const kept of ["http://host/v10", "http://host/v1x", "http://v1", "http://host/shoal"]) {
      expect(apiBase(kept)).toBe(kept);
    }
    expect(apiBase("not a url/v1")).toBe("not a url/v1");
    // The file's settings still belong to its endpoint when the other spelling adds /v1.
    const file = {
      path: "/cfg.json",
      config: {
        endpoint: "https://a1.execute-api.eu-west-1.amazonaws.com",
        auth: "jwt" as const,
      },
    };
    const s = resolveSettings(
      {},
      { SHOAL_ENDPOINT: "https://a1.execute-api.eu-west-1.amazonaws.com/v1/" },
      file,
    );
    expect(s.endpoint.value).toBe("https://a1.execute-api.eu-west-1.amazonaws.com");
    expect(s.file.applies).toBe(true);
    expect(s.auth).toMatchObject({ value: "jwt", source: "file" });
  });

  it("infers auth, service and region from the endpoint", () => {
    const file = { path: "/none" };
    const api = resolveSettings(
      { endpoint: "https://abc.execute-api.ap-south-1.amazonaws.com" },
      // The host's region wins over an unrelated AWS_REGION: another scope is always refused.
      { AWS_REGION: "us-east-1" },
      file,
    );
    expect(api.auth).toMatchObject({ value: "iam", source: "default" });
    expect(api.service).toMatchObject({ value: "execute-api", source: "endpoint" });
    expect(api.region).toMatchObject({ value: "ap-south-1", source: "endpoint" });
    const url = resolveSettings({ endpoint: "https://u.lambda-url.eu-north-1.on.aws/" }, {}, file);
    expect(url.auth.value).toBe("iam");
    expect(url.service.value).toBe("lambda");
    expect(url.region?.value).toBe("eu-north-1");
    const local = resolveSettings({}, {}, file);
    expect(local.endpoint).toMatchObject({ value: DEFAULT_ENDPOINT, source: "default" });
    expect(local.auth).toMatchObject({ value: "none", source: "default" });
    expect(local.region).toBeUndefined();
  });

  it("encodes queries as SigV4 canonicalises them", () => {
    expect(encodeQuery({ a: "x y", b: undefined, c: 3, "d e": "(*)" })).toBe(
      "?a=x%20y&c=3&d%20e=%28%2A%29",
    );
    expect(encodeQuery({})).toBe("");
  });
});

describe("config from-stack", () => {
  const outputs = (extra: Array<{ OutputKey: string; OutputValue: string }> = []) => [
    { OutputKey: "ApiUrl", OutputValue: `${endpoint}/` },
    { OutputKey: "ApiAuth", OutputValue: "iam" },
    { OutputKey: "Region", OutputValue: "eu-west-1" },
    { OutputKey: "EventBusName", OutputValue: "shoal-bus" },
    ...extra,
  ];

  it("saves the stack's outputs (0600) and later commands use them, signed", async () => {
    staticCredentials();
    cf.on(DescribeStacksCommand, { StackName: "Shoal" }).resolves({
      Stacks: [
        {
          StackName: "Shoal",
          StackStatus: "CREATE_COMPLETE",
          CreationTime: new Date(),
          Outputs: outputs([
            { OutputKey: "Prefix", OutputValue: "shoal" },
            { OutputKey: "TaskLogGroup", OutputValue: "/shoal/tasks" },
            { OutputKey: "DashboardUrl", OutputValue: "https://console.aws/dash" },
            { OutputKey: "Unrelated", OutputValue: "x" },
          ]),
        },
      ],
    });
    const res = await shoal(["config", "from-stack", "Shoal", "--region", "eu-west-1"]);
    expect(res).toMatchObject({ code: 0, stderr: "" });
    expect(res.stdout).toContain(`saved stack Shoal (eu-west-1) to ${configPath}`);
    expect(res.stdout).toMatch(new RegExp(`endpoint\\s+${endpoint}\\n`));
    expect(res.stdout).toMatch(/auth\s+iam\n/);
    expect(res.stdout).toMatch(/region\s+eu-west-1\n/);
    expect(cf.commandCalls(DescribeStacksCommand)).toHaveLength(1);

    expect(JSON.parse(await readFile(configPath, "utf8"))).toEqual({
      endpoint,
      auth: "iam",
      region: "eu-west-1",
      stack: "Shoal",
      prefix: "shoal",
      eventBus: "shoal-bus",
      taskLogGroup: "/shoal/tasks",
      dashboardUrl: "https://console.aws/dash",
    });
    expect((await stat(configPath)).mode & 0o777).toBe(0o600);

    const list = await shoal(["workflows"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("etl-report");
    expect(only().verdict).toMatchObject({ kind: "sigv4", valid: true });
    expect(only().verdict.scope).toMatch(/\/eu-west-1\/execute-api\/aws4_request$/);
  });

  it("saves --profile, and writes into a new directory under XDG_CONFIG_HOME", async () => {
    vi.stubEnv("SHOAL_CONFIG", undefined);
    vi.stubEnv("XDG_CONFIG_HOME", join(home, "xdg"));
    cf.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: "Shoal",
          StackStatus: "CREATE_COMPLETE",
          CreationTime: new Date(),
          Outputs: [
            { OutputKey: "ApiUrl", OutputValue: "https://a1.execute-api.us-west-2.amazonaws.com/" },
          ],
        },
      ],
    });
    const res = await shoal([
      "config",
      "from-stack",
      "Shoal",
      "--region",
      "us-west-2",
      "--profile",
      "prod",
    ]);
    expect(res.code).toBe(0);
    const path = join(home, "xdg", "shoal", "config.json");
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({
      endpoint: "https://a1.execute-api.us-west-2.amazonaws.com",
      auth: "iam",
      region: "us-west-2",
      profile: "prod",
      stack: "Shoal",
    });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("a missing stack: exit 1, stack S not found in R", async () => {
    cf.on(DescribeStacksCommand).rejects(
      new CloudFormationServiceException({
        name: "ValidationError",
        message: "Stack with id Nope does not exist",
        $fault: "client",
        $metadata: { httpStatusCode: 400 },
      }),
    );
    const res = await shoal(["config", "from-stack", "Nope", "--region", "eu-west-1"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe("error: stack Nope not found in eu-west-1\n");
    expect(existsSync(configPath)).toBe(false);
  });

  it("the region comes from AWS_REGION too; without any region it is a usage error", async () => {
    vi.stubEnv("AWS_REGION", "ca-central-1");
    cf.on(DescribeStacksCommand).resolves({ Stacks: [] });
    const res = await shoal(["config", "from-stack", "Gone"]);
    expect(res).toMatchObject({ code: 1, stderr: "error: stack Gone not found in ca-central-1\n" });
    vi.stubEnv("AWS_REGION", undefined);
    const none = await shoal(["config", "from-stack", "Gone"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--region");
  });

  it("a stack without ApiUrl is not a Shoal stack: exit 1, nothing written", async () => {
    cf.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: "Other",
          StackStatus: "CREATE_COMPLETE",
          CreationTime: new Date(),
          Outputs: [{ OutputKey: "BucketName", OutputValue: "b" }],
        },
      ],
    });
    const res = await shoal(["config", "from-stack", "Other", "--region", "eu-west-1"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      "stack Other in eu-west-1 has no ApiUrl output: it is not a Shoal stack",
    );
    expect(existsSync(configPath)).toBe(false);
  });

  it("toConfig: ApiAuth is optional (inferred from the host), an invalid one is an error", () => {
    const where = { stack: "S", region: "eu-west-1" };
    expect(toConfig(new Map([["ApiUrl", "http://localhost:8080/"]]), where)).toEqual({
      endpoint: "http://localhost:8080",
      auth: "none",
      region: "eu-west-1",
      stack: "S",
    });
    expect(() =>
      toConfig(
        new Map([
          ["ApiUrl", "https://x"],
          ["ApiAuth", "cognito"],
        ]),
        where,
      ),
    ).toThrow(/ApiAuth is 'cognito'/);
  });

  it("says when SHOAL_ENDPOINT will override what was saved", async () => {
    vi.stubEnv("SHOAL_ENDPOINT", "http://127.0.0.1:1");
    cf.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: "Shoal",
          StackStatus: "CREATE_COMPLETE",
          CreationTime: new Date(),
          Outputs: outputs(),
        },
      ],
    });
    const res = await shoal(["config", "from-stack", "Shoal", "--region", "eu-west-1"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain("note: SHOAL_ENDPOINT is set and takes precedence");
  });
});

describe("precedence and config show", () => {
  type Shown = Record<string, { value: string; source: string; origin: string } | null> & {
    file: { path: string; exists: boolean; applies: boolean };
  };
  async function show(args: string[] = []): Promise<Shown> {
    const res = await shoal(["config", "show", "-o", "json", ...args]);
    expect(res).toMatchObject({ code: 0, stderr: "" });
    return JSON.parse(res.stdout) as Shown;
  }

  it("flag over env over file over default, each named", async () => {
    await writeFile(
      configPath,
      JSON.stringify({ endpoint: "http://file.example:1", auth: "jwt", region: "eu-central-1" }),
    );
    let s = await show();
    expect(s.endpoint).toEqual({
      value: "http://file.example:1",
      source: "file",
      origin: configPath,
    });
    expect(s.auth).toMatchObject({ value: "jwt", source: "file" });
    expect(s.region).toMatchObject({ value: "eu-central-1", source: "file" });
    expect(s.profile).toBeNull();

    vi.stubEnv("SHOAL_ENDPOINT", "http://file.example:1/");
    vi.stubEnv("SHOAL_AUTH", "none");
    vi.stubEnv("AWS_DEFAULT_REGION", "sa-east-1");
    vi.stubEnv("AWS_PROFILE", "dev");
    s = await show();
    // The base requests go to: trailing slashes (and a last /v1) dropped.
    expect(s.endpoint).toMatchObject({
      value: "http://file.example:1",
      source: "env",
      origin: "SHOAL_ENDPOINT",
    });
    expect(s.auth).toMatchObject({ value: "none", source: "env", origin: "SHOAL_AUTH" });
    expect(s.region).toMatchObject({
      value: "sa-east-1",
      source: "env",
      origin: "AWS_DEFAULT_REGION",
    });
    expect(s.profile).toMatchObject({ value: "dev", source: "env" });

    vi.stubEnv("AWS_REGION", "us-east-2");
    expect((await show()).region).toMatchObject({ value: "us-east-2", origin: "AWS_REGION" });

    s = await show([
      "--endpoint",
      "http://flag.example:2",
      "--auth",
      "iam",
      "--region",
      "ap-east-1",
      "--profile",
      "ops",
    ]);
    expect(s.endpoint).toMatchObject({
      value: "http://flag.example:2",
      source: "flag",
      origin: "--endpoint",
    });
    expect(s.auth).toMatchObject({ value: "iam", source: "flag" });
    expect(s.region).toMatchObject({ value: "ap-east-1", source: "flag", origin: "--region" });
    expect(s.profile).toMatchObject({ value: "ops", source: "flag" });
  });

  it("the file's auth and region belong to its endpoint: another --endpoint sets them aside", async () => {
    await writeFile(
      configPath,
      JSON.stringify({
        endpoint: "https://a1.execute-api.eu-west-1.amazonaws.com",
        auth: "iam",
        region: "eu-west-1",
      }),
    );
    const s = await show(["--endpoint", endpoint]);
    expect(s.file).toEqual({ path: configPath, exists: true, applies: false });
    expect(s.auth).toMatchObject({ value: "none", source: "default" });
    expect(s.region).toBeNull();
    // And so a local standalone keeps working unsigned, with no credentials around.
    const res = await shoal(["--endpoint", endpoint, "workflows"]);
    expect(res.code).toBe(0);
    expect(only().verdict.kind).toBe("none");
  });

  it("prints a table with sources, never the token", async () => {
    vi.stubEnv("SHOAL_TOKEN", "very-secret-token");
    await writeFile(
      configPath,
      JSON.stringify({
        endpoint: "https://a1.execute-api.eu-west-1.amazonaws.com",
        auth: "iam",
        region: "eu-west-1",
        stack: "Shoal",
      }),
    );
    const res = await shoal(["config", "show"]);
    expect(res.code).toBe(0);
    expect(res.stdout).not.toContain("very-secret-token");
    expect(res.stdout).toMatch(
      /endpoint\s+https:\/\/a1\.execute-api\.eu-west-1\.amazonaws\.com\s+file\n/,
    );
    expect(res.stdout).toMatch(/auth\s+iam\s+file\n/);
    expect(res.stdout).toMatch(/region\s+eu-west-1\s+endpoint \(host name\)\n/);
    expect(res.stdout).toMatch(/token\s+\(set\)\s+env \(SHOAL_TOKEN\)\n/);
    expect(res.stdout).toMatch(/stack\s+Shoal\s+file\n/);
    expect(res.stdout).toContain(`config file: ${configPath}\n`);
  });
});

describe("config file", () => {
  it("path: SHOAL_CONFIG, else XDG_CONFIG_HOME, else ~/.config", () => {
    expect(configFilePath({ SHOAL_CONFIG: "/x/c.json", XDG_CONFIG_HOME: "/y" })).toBe("/x/c.json");
    expect(configFilePath({ XDG_CONFIG_HOME: "/y", HOME: "/h" })).toBe("/y/shoal/config.json");
    expect(configFilePath({ HOME: "/h" })).toBe("/h/.config/shoal/config.json");
  });

  it("an invalid file is an error naming the file; `config clear` still removes it", async () => {
    await writeFile(configPath, "{ not json");
    const res = await shoal(["workflows"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`error: config file ${configPath} is not valid JSON`);
    // Commands that do not talk to the API do not read it.
    expect((await shoal(["--help"])).code).toBe(0);
    const clear = await shoal(["config", "clear"]);
    expect(clear).toMatchObject({ code: 0, stdout: `removed ${configPath}\n` });
    expect(existsSync(configPath)).toBe(false);
    expect((await shoal(["config", "clear"])).stdout).toBe(`no config file at ${configPath}\n`);
  });

  it("validates keys: types, auth and service values, the endpoint URL", () => {
    expect(() => parseConfigFile("[]", "/c")).toThrow("config file /c must hold a JSON object");
    expect(() => parseConfigFile('{"region":1}', "/c")).toThrow('"region" must be a string');
    expect(() => parseConfigFile('{"auth":"basic"}', "/c")).toThrow(/"auth" is 'basic'/);
    expect(() => parseConfigFile('{"service":"s3"}', "/c")).toThrow('"service" must be');
    expect(() => parseConfigFile('{"endpoint":"ftp://x"}', "/c")).toThrow("http(s) URL");
    expect(parseConfigFile('{"endpoint":"https://x","auth":"IAM","future":1}', "/c")).toEqual({
      endpoint: "https://x",
      auth: "iam",
    });
  });

  it("an unreadable file is an error naming the file", async () => {
    await mkdir(configPath); // a directory where the file should be: EISDIR
    const res = await shoal(["workflows"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`error: cannot read config file ${configPath}: EISDIR`);
  });
});
