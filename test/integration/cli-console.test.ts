/**
 * `shoal console` (lib/cli/console-proxy.ts, lib/cli/commands/console.ts) against a stand-in for
 * an IAM-authorised API Gateway: a node:http server that recomputes each request's SigV4
 * signature from what it received (test/helpers/sigv4-verify.ts, as the CLI's own signing tests
 * do). The proxy signs with the CLI's code and credentials from the environment; the browser is
 * played by node:http requests, which can send what a hostile page would (another Host, Origin,
 * Sec-Fetch-Site, cookies, an Authorization of its own).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type ConsoleProxy, startConsoleProxy } from "../../lib/cli/console-proxy.js";
import { defaultCredentials, iamAuthorization } from "../../lib/cli/signing.js";
import { runCli } from "../helpers/cli-run.js";
import { rawRequest } from "../helpers/raw-request.js";
import { ACCESS_KEY, SECRET_KEY, type Verdict, verifySigV4 } from "../helpers/sigv4-verify.js";

const BIN = fileURLToPath(new URL("../../bin/shoal.js", import.meta.url));
const INDEX = "<!doctype html><title>Shoal console (test build)</title>";

// ---- the API stand-in ---------------------------------------------------------------------------

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  verdict: Verdict;
}

const received: Received[] = [];

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks).toString("utf8");
  const verdict = await verifySigV4(req, body);
  received.push({
    method: req.method ?? "",
    url: req.url ?? "",
    headers: req.headers,
    body,
    verdict,
  });
  // API Gateway refuses a bad or missing signature with its own body, before Shoal runs.
  if (verdict.kind !== "sigv4" || !verdict.valid) return send(res, 403, { message: "Forbidden" });
  const path = (req.url ?? "").split("?")[0];
  if (path === "/v1/health") return send(res, 200, { status: "ok", version: "0.0.0-test" });
  if (path === "/v1/workflows" && req.method === "GET") {
    return send(res, 200, { items: [{ name: "etl-report", version: 1 }] });
  }
  if (path === "/v1/workflows/etl-report/runs" && req.method === "POST") {
    return send(res, 201, { instanceId: "i-1", sent: JSON.parse(body) });
  }
  if (path === "/v1/instances/i-1/stop") {
    return send(res, 409, {
      error: { code: "Conflict", message: "instance 'i-1' is already over" },
    });
  }
  send(res, 404, { error: { code: "NotFound", message: `no such route: ${path}` } });
}

// ---- harness ------------------------------------------------------------------------------------

let api: Server;
let endpoint: string;
let consoleDir: string;
let home: string;
let proxy: ConsoleProxy | undefined;

beforeAll(async () => {
  api = createServer((req, res) => {
    handle(req, res).catch((err) => send(res, 500, { error: { code: "X", message: String(err) } }));
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  // A stand-in for console/dist: the proxy serves whatever build it is given.
  consoleDir = mkdtempSync(join(tmpdir(), "shoal-console-proxy-"));
  mkdirSync(join(consoleDir, "assets"));
  writeFileSync(join(consoleDir, "index.html"), INDEX);
  writeFileSync(join(consoleDir, "assets", "app-1a2b.js"), "console.log(1)");
  home = mkdtempSync(join(tmpdir(), "shoal-console-home-"));
});

afterAll(async () => {
  await new Promise((resolve) => api.close(resolve));
  rmSync(consoleDir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

beforeEach(() => {
  received.length = 0;
  // Only the test's own settings: no AWS or Shoal settings of the machine, no ~/.aws, no IMDS.
  for (const key of Object.keys(process.env)) {
    if (/^(AWS_|SHOAL_)/.test(key)) vi.stubEnv(key, undefined);
  }
  vi.stubEnv("HOME", home);
  vi.stubEnv("SHOAL_CONFIG", join(home, "no-config.json"));
  vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true");
  vi.stubEnv("AWS_ACCESS_KEY_ID", ACCESS_KEY);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
});

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  vi.unstubAllEnvs();
});

/** A proxy signing for `target` (default the stand-in) with the CLI's SigV4 code, eu-west-1. */
async function startProxy(target = endpoint): Promise<ConsoleProxy> {
  proxy = await startConsoleProxy({
    endpoint: target,
    authorization: iamAuthorization({
      service: "execute-api",
      region: "eu-west-1",
      credentials: defaultCredentials({ endpoint: target }),
    }),
    port: 0,
    consoleDir,
  });
  return proxy;
}

/** The only request the API received. */
function only(): Received {
  expect(received).toHaveLength(1);
  return received[0] as Received;
}

// ---- tests --------------------------------------------------------------------------------------

describe("shoal console's proxy: /v1/ signed with the CLI's SigV4", () => {
  it("forwards a GET signed (query re-encoded as signed), without the browser's cookies or Authorization", async () => {
    const { port } = await startProxy();
    const res = await rawRequest(port, "GET", "/v1/workflows?name=etl+report&x=a%2Fb", {
      headers: {
        accept: "application/json",
        cookie: "session=browser-secret",
        authorization: "Bearer from-the-browser",
        "x-forwarded-for": "10.0.0.1",
      },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ items: [{ name: "etl-report", version: 1 }] });
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.headers["x-shoal-endpoint"]).toBe(endpoint);
    const got = only();
    expect(got.url).toBe("/v1/workflows?name=etl%20report&x=a%2Fb");
    expect(got.verdict).toMatchObject({ kind: "sigv4", valid: true, payloadHashOk: true });
    expect(got.verdict.scope).toMatch(/^\d{8}\/eu-west-1\/execute-api\/aws4_request$/);
    expect(got.headers.cookie).toBeUndefined();
    expect(got.headers["x-forwarded-for"]).toBeUndefined();
    expect(got.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
  });

  it("forwards a POST with its body signed (content-type included), from the console's own origin", async () => {
    const { port } = await startProxy();
    const body = JSON.stringify({ params: { day: "2026-11-25" }, priority: "HIGH" });
    const res = await rawRequest(port, "POST", "/v1/workflows/etl-report/runs", {
      headers: {
        "content-type": "application/json",
        origin: `http://127.0.0.1:${port}`,
        "sec-fetch-site": "same-origin",
      },
      body,
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({ instanceId: "i-1", sent: JSON.parse(body) });
    const got = only();
    expect(got.body).toBe(body);
    expect(got.verdict).toMatchObject({ kind: "sigv4", valid: true, payloadHashOk: true });
    expect(got.verdict.signedHeaders).toEqual(
      expect.arrayContaining(["content-type", "host", "x-amz-date", "x-amz-content-sha256"]),
    );
    expect(got.headers.origin).toBeUndefined();
  });

  it("serves the console's index.html at / and at its own paths (SPA fallback), and its assets", async () => {
    const { port } = await startProxy();
    for (const path of ["/", "/instances/x", "/instances/x?task=a&view=graph", "/workflows"]) {
      const res = await rawRequest(port, "GET", path);
      expect(res.status, path).toBe(200);
      expect(res.text, path).toBe(INDEX);
    }
    expect((await rawRequest(port, "GET", "/assets/app-1a2b.js")).text).toBe("console.log(1)");
    // A shared link opened from another site is a navigation to a page: it loads.
    const nav = await rawRequest(port, "GET", "/instances/x", {
      headers: { "sec-fetch-site": "cross-site" },
    });
    expect(nav.text).toBe(INDEX);
    expect(received).toHaveLength(0);
  });

  it("passes the API's error JSON on unchanged, and explains AWS's own refusal in the API's shape", async () => {
    const { port } = await startProxy();
    const conflict = await rawRequest(port, "POST", "/v1/instances/i-1/stop");
    expect(conflict.status).toBe(409);
    expect(conflict.json).toEqual({
      error: { code: "Conflict", message: "instance 'i-1' is already over" },
    });
    // Signed with the wrong secret: API Gateway's {"message":"Forbidden"} becomes an error the
    // console shows, naming the permission the CLI names.
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "not-the-secret");
    await proxy?.close();
    const other = await startProxy();
    const refused = await rawRequest(other.port, "GET", "/v1/workflows");
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe("AwsAccessDenied");
    expect(refused.json.error.message).toContain("execute-api:Invoke");
  });
});

describe("shoal console's proxy refuses what is not its own console", () => {
  it("refuses another Origin, a cross-site or same-site fetch, another Host: 403 JSON, nothing reaches the API", async () => {
    const { port } = await startProxy();
    const attempts: Array<[string, Record<string, string>]> = [
      ["Origin of another site", { origin: "https://evil.example" }],
      ["Origin of another local port", { origin: "http://127.0.0.1:3000" }],
      ["opaque Origin", { origin: "null" }],
      ["cross-site fetch", { "sec-fetch-site": "cross-site" }],
      ["same-site fetch (another port)", { "sec-fetch-site": "same-site" }],
      ["DNS rebinding", { host: `evil.example:${port}` }],
      ["another port's Host", { host: "127.0.0.1:1" }],
    ];
    for (const [what, headers] of attempts) {
      for (const [method, body] of [
        ["GET", undefined],
        ["POST", "{}"],
      ] as const) {
        const res = await rawRequest(port, method, "/v1/workflows/etl-report/runs", {
          headers: { "content-type": "application/json", ...headers },
          ...(body ? { body } : {}),
        });
        expect(res.status, `${what} ${method}`).toBe(403);
        expect(res.json.error.code, what).toBe("Forbidden");
        expect(typeof res.json.error.message).toBe("string");
      }
    }
    // DNS rebinding cannot read the console's files either.
    expect(
      (await rawRequest(port, "GET", "/", { headers: { host: `evil.example:${port}` } })).status,
    ).toBe(403);
    // localhost is the console's own name too.
    const local = await rawRequest(port, "GET", "/v1/health", {
      headers: { host: `localhost:${port}`, origin: `http://localhost:${port}` },
    });
    expect(local.status).toBe(200);
    expect(received.map((r) => r.url)).toEqual(["/v1/health"]);
  });

  it("refuses a body over the API's limit (5 MB) with a 413 before signing or sending it", async () => {
    const { port } = await startProxy();
    const big = Buffer.alloc(5 * 1024 * 1024 + 1, "a");
    const res = await rawRequest(port, "POST", "/v1/workflows/etl-report/runs", {
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe("PayloadTooLarge");
    // Without a content-length (chunked), the limit is found while reading.
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port, method: "POST", path: "/v1/workflows/etl-report/runs" },
        (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      for (let i = 0; i < 6; i++) req.write(Buffer.alloc(1024 * 1024, "b"));
      req.end();
    });
    expect(chunked).toBe(413);
    expect(received).toHaveLength(0);
  });
});

describe("shoal console's proxy when the API or the credentials are not there", () => {
  it("answers 502 in the API's error shape, naming the endpoint, when the API cannot be reached", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const { port } = await startProxy(gone);
    const res = await rawRequest(port, "GET", "/v1/workflows");
    expect(res.status).toBe(502);
    expect(res.json.error.code).toBe("BadGateway");
    expect(res.json.error.message).toContain(`cannot reach Shoal at ${gone}`);
  });

  it("answers 401 saying what to do when there are no AWS credentials, and sends nothing", async () => {
    vi.stubEnv("AWS_ACCESS_KEY_ID", undefined);
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", undefined);
    const { port } = await startProxy();
    const res = await rawRequest(port, "GET", "/v1/workflows");
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe("NoCredentials");
    expect(res.json.error.message).toContain("no AWS credentials found");
    expect(res.json.error.message).toContain("aws sso login");
    expect(res.json.error.message).toContain("AWS_PROFILE");
    expect(received).toHaveLength(0);
    // Credentials that appear later (`aws sso login`) are used without a restart.
    vi.stubEnv("AWS_ACCESS_KEY_ID", ACCESS_KEY);
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
    expect((await rawRequest(port, "GET", "/v1/workflows")).status).toBe(200);
  });
});

describe("the shoal console command", () => {
  it("says how to name an endpoint when none is known (exit 2)", async () => {
    const res = await runCli(["console"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("no Shoal endpoint to open the console for");
    expect(res.stderr).toContain("--endpoint");
    expect(res.stdout).toBe("");
  });

  it("names the port and --port when the port is taken (exit 1)", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const res = await runCli(["console", "--endpoint", endpoint, "--port", String(port)]);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(
        `error: port ${port} is in use: stop what listens there or pass --port\n`,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("runs as the real binary: prints its line, proxies signed requests, stops on Ctrl-C", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, SHOAL_CONSOLE_DIR: consoleDir };
    const child = spawn(
      process.execPath,
      [
        BIN,
        "console",
        "--endpoint",
        endpoint,
        "--auth",
        "iam",
        "--region",
        "eu-west-1",
        "--port",
        "0",
      ],
      { env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((resolve) =>
      child.once("exit", (code) => resolve(code)),
    );
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (c: Buffer) => {
          stdout += c.toString();
          if (stdout.includes("\n")) resolve(stdout);
        });
        child.once("exit", () => reject(new Error(`shoal console exited: ${stderr}`)));
      });
      const m =
        /^Shoal console for (\S+) at http:\/\/127\.0\.0\.1:(\d+)\/ \(Ctrl-C to stop\)\n$/.exec(
          line,
        );
      expect(m?.[1]).toBe(endpoint);
      const port = Number(m?.[2]);
      expect((await rawRequest(port, "GET", "/instances/x")).text).toBe(INDEX);
      const res = await rawRequest(port, "GET", "/v1/workflows");
      expect(res.status).toBe(200);
      const signed = received.filter((r) => r.url === "/v1/workflows");
      expect(signed).toHaveLength(1);
      expect(signed[0]?.verdict).toMatchObject({ kind: "sigv4", valid: true });
    } finally {
      child.kill("SIGINT");
    }
    expect(await exited).toBe(0);
    expect(stderr).toBe("");
  }, 60_000);
});
