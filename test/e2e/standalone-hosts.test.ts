/**
 * `shoal standalone` has no authentication, so it must not be reachable from a web page: a page
 * of `attacker.example` whose name re-resolves to 127.0.0.1 (DNS rebinding) sends requests with
 * its own Host, a page of another origin sends its Origin. Through a real standalone and raw HTTP
 * requests (so the test sets Host and Origin as such pages would): each is refused with a 403
 * naming `--allowed-host`, and writes nothing (no workflow, no run, no task process: the marker
 * file the SHELL command would create never appears), on the API and on the AWS-protocol
 * endpoints standalone opens; the console's own requests, the CLI and Shoal's own clients keep
 * working; `--allowed-host` (or SHOAL_ALLOWED_HOSTS) admits its name and no other.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawAnswer, rawRequest } from "../helpers/raw-request.js";
import {
  api,
  cli,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

const ALLOWED = "shoal.test";

/** A workflow whose one task would leave `marker` behind if it ever ran. */
function pwn(marker: string) {
  return { tasks: [{ code: "pwn", type: "SHELL", command: `touch '${marker}'` }] };
}

const PROBE = { tasks: [{ code: "probe", type: "SHELL", command: "echo probe" }] };

/** The port of an endpoint that standalone wrote to its endpoints.env. */
function endpointPort(dataDir: string, key: string): number {
  const line = readFileSync(join(dataDir, "endpoints.env"), "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${key}=`));
  if (!line) throw new Error(`${key} is not in endpoints.env`);
  return Number(new URL(line.slice(key.length + 1).replace(/^["']|["']$/g, "")).port);
}

/**
 * One AWS JSON-protocol request (as the SDKs send it) to `port`, with `headers` on top. The
 * signature is a dummy: dynalite wants one, none of the three checks it.
 */
function awsCall(
  port: number,
  target: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  return rawRequest(port, "POST", "/", {
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": target,
      "x-amz-date": "20260101T000000Z",
      authorization:
        "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=00",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

function expectForbidden(res: RawAnswer, what: string): void {
  expect(res.status, what).toBe(403);
  expect(res.json?.error?.code, what).toBe("Forbidden");
  expect(res.json?.error?.message, what).toMatch(/is refused/);
}

describe("standalone answers only its own names and pages", () => {
  let dir: string;
  let sa: RunningStandalone;
  let port: number;
  let marker: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "shoal-hosts-"));
    marker = join(dir, "pwned");
    sa = await startStandaloneProcess({
      dataDir: dir,
      workers: 1,
      args: ["--allowed-host", ALLOWED],
    });
    port = Number(new URL(sa.url).port);
  });

  afterAll(async () => {
    await sa?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a foreign Host and a foreign Origin with a 403 naming --allowed-host: no workflow, no run, no process", async () => {
    // A workflow already there, which a hostile page would try to run.
    await putWorkflow(sa.url, "victim", pwn(marker));
    const hostile: Array<[string, Record<string, string>]> = [
      ["DNS rebinding", { host: `attacker.example:${port}` }],
      ["DNS rebinding, upper case", { host: `ATTACKER.example:${port}` }],
      ["a subdomain of the allowed name", { host: `evil.${ALLOWED}:${port}` }],
      ["a page of another site", { origin: "https://attacker.example" }],
      ["a page of another local port", { origin: "http://localhost:3000" }],
      ["an opaque origin (sandboxed page)", { origin: "null" }],
    ];
    for (const [what, headers] of hostile) {
      const put = await rawRequest(port, "PUT", "/v1/workflows/evil", {
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(pwn(marker)),
      });
      expectForbidden(put, `PUT from ${what}`);
      const run = await rawRequest(port, "POST", "/v1/workflows/victim/runs", {
        headers: { "content-type": "application/json", ...headers },
        body: "{}",
      });
      expectForbidden(run, `run from ${what}`);
    }
    const rebinding = await rawRequest(port, "PUT", "/v1/workflows/evil", {
      headers: { host: `attacker.example:${port}`, "content-type": "application/json" },
      body: JSON.stringify(pwn(marker)),
    });
    expect(rebinding.json.error.message).toContain("--allowed-host attacker.example");
    const csrf = await rawRequest(port, "POST", "/v1/workflows/victim/runs", {
      headers: { origin: "https://attacker.example", "content-type": "application/json" },
      body: "{}",
    });
    expect(csrf.json.error.message).toContain("--allowed-host attacker.example");
    // A DNS-rebinding page cannot read anything either: not the API, not the console.
    expectForbidden(
      await rawRequest(port, "GET", "/v1/workflows", {
        headers: { host: `attacker.example:${port}` },
      }),
      "GET",
    );
    expectForbidden(
      await rawRequest(port, "GET", "/", { headers: { host: `attacker.example:${port}` } }),
      "console",
    );

    // Nothing was written: no workflow `evil`, no instance of `victim`.
    const workflows = await api(sa.url, "GET", "/v1/workflows");
    expect(workflows.body.items.map((w: { name: string }) => w.name)).not.toContain("evil");
    const runs = await api(sa.url, "GET", "/v1/instances?workflow=victim");
    expect(runs.body.items).toEqual([]);
    // And no task process ran: a run started afterwards finishes, the marker never appeared.
    await putWorkflow(sa.url, "probe", PROBE);
    expect((await waitFinal(sa.url, await startRun(sa.url, "probe"), 60_000)).state).toBe(
      "SUCCESS",
    );
    expect(existsSync(marker)).toBe(false);
  });

  it("keeps answering the console's own pages and requests, and the CLI", async () => {
    await putWorkflow(sa.url, "probe", PROBE);
    for (const name of ["localhost", "127.0.0.1"]) {
      const own = { host: `${name}:${port}`, origin: `http://${name}:${port}` };
      const page = await rawRequest(port, "GET", "/", { headers: { host: own.host } });
      expect(page.status, name).toBe(200);
      expect(String(page.headers["content-type"])).toMatch(/text\/html/);
      // The console's Run button: a POST from its own origin.
      const run = await rawRequest(port, "POST", "/v1/workflows/probe/runs", {
        headers: { ...own, "content-type": "application/json", "sec-fetch-site": "same-origin" },
        body: "{}",
      });
      expect(run.status, `${name}: ${run.text}`).toBe(202);
    }
    // The CLI (no Origin; Host localhost:<port>).
    const done = await cli(["run", "probe", "--wait", "--endpoint", sa.url]);
    expect(done.code, done.stderr).toBe(0);
  });

  it("--allowed-host admits its name, on any port and from its pages, and no other name", async () => {
    // A reverse proxy that passes the name on, with or without a port.
    for (const host of [ALLOWED, `${ALLOWED}:${port}`, `${ALLOWED.toUpperCase()}.:443`]) {
      const health = await rawRequest(port, "GET", "/v1/health", { headers: { host } });
      expect(health.status, host).toBe(200);
    }
    const put = await rawRequest(port, "PUT", "/v1/workflows/via-proxy", {
      headers: { host: ALLOWED, origin: `https://${ALLOWED}`, "content-type": "application/json" },
      body: JSON.stringify(PROBE),
    });
    expect(put.status, put.text).toBe(201);
    expectForbidden(
      await rawRequest(port, "GET", "/v1/health", { headers: { host: `other.test:${port}` } }),
      "another name",
    );
    const other = await rawRequest(port, "PUT", "/v1/workflows/via-other", {
      headers: { host: ALLOWED, origin: "https://other.test", "content-type": "application/json" },
      body: JSON.stringify(PROBE),
    });
    expectForbidden(other, "another name's page");
    const names = (await api(sa.url, "GET", "/v1/workflows")).body.items.map(
      (w: { name: string }) => w.name,
    );
    expect(names).toContain("via-proxy");
    expect(names).not.toContain("via-other");
  });

  it("guards the embedded backend's AWS-protocol endpoint the same way", async () => {
    const aws = endpointPort(dir, "AWS_ENDPOINT_URL_DYNAMODB");
    const create = {
      TableName: "evil",
      AttributeDefinitions: [{ AttributeName: "k", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "k", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    };
    const hostile: Array<Record<string, string>> = [
      { host: `attacker.example:${aws}` },
      { origin: "https://attacker.example" },
    ];
    for (const headers of hostile) {
      const res = await awsCall(aws, "DynamoDB_20120810.CreateTable", create, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.json.__type).toBe("AccessDeniedException");
      expect(res.json.message).toContain("--allowed-host");
    }
    // Shoal's own clients (Host 127.0.0.1:<port>, as endpoints.env names it) and the allowed name.
    const tables = await awsCall(aws, "DynamoDB_20120810.ListTables", {});
    expect(tables.status).toBe(200);
    expect(tables.json.TableNames).not.toContain("evil");
    expect(tables.json.TableNames.length).toBeGreaterThan(0);
    const allowed = await awsCall(aws, "DynamoDB_20120810.ListTables", {}, { host: ALLOWED });
    expect(allowed.status).toBe(200);
  });
});

/** This machine's first address that is not loopback, if it has one. */
function outsideAddress(): string | undefined {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (!a.internal && a.family === "IPv4") return a.address;
  }
  return undefined;
}

/** Whether a TCP connection to `host:port` is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("standalone on the emulators backend", () => {
  it("gates dynalite and fauxqs, which listen on 127.0.0.1 only; SHOAL_ALLOWED_HOSTS reaches them; runs still succeed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-hosts-em-"));
    const sa = await startStandaloneProcess({
      dataDir: dir,
      workers: 1,
      args: ["--backend", "emulators"],
      env: { SHOAL_ALLOWED_HOSTS: ALLOWED },
    });
    try {
      const port = Number(new URL(sa.url).port);
      expect(
        (await rawRequest(port, "GET", "/v1/health", { headers: { host: ALLOWED } })).status,
      ).toBe(200);
      const ports = {
        dynamodb: endpointPort(dir, "AWS_ENDPOINT_URL_DYNAMODB"),
        sqs: endpointPort(dir, "AWS_ENDPOINT_URL_SQS"),
      };
      const list = {
        dynamodb: ["DynamoDB_20120810.ListTables", {}],
        sqs: ["AmazonSQS.ListQueues", {}],
      } as const;
      const purge = {
        dynamodb: ["DynamoDB_20120810.DeleteTable", { TableName: "shoal-workflows" }],
        sqs: ["AmazonSQS.CreateQueue", { QueueName: "evil" }],
      } as const;
      for (const which of ["dynamodb", "sqs"] as const) {
        const p = ports[which];
        const hostile: Array<Record<string, string>> = [
          { host: `attacker.example:${p}` },
          { origin: "https://attacker.example" },
        ];
        for (const headers of hostile) {
          const res = await awsCall(p, purge[which][0], purge[which][1], headers);
          expect(res.status, `${which} ${JSON.stringify(headers)}`).toBe(403);
          expect(res.json.__type).toBe("AccessDeniedException");
          expect(res.json.message).toContain("--allowed-host");
        }
        expect((await awsCall(p, list[which][0], list[which][1])).status, which).toBe(200);
        const allowed = await awsCall(p, list[which][0], list[which][1], { host: ALLOWED });
        expect(allowed.status, `${which} ${ALLOWED}`).toBe(200);
      }
      // fauxqs itself would listen on every interface: nothing outside reaches either emulator
      // (checked through this machine's own outside address; one without any has no outside).
      const outside = outsideAddress();
      if (outside) {
        expect(await accepts(outside, ports.sqs), `sqs on ${outside}`).toBe(false);
        expect(await accepts(outside, ports.dynamodb), `dynamodb on ${outside}`).toBe(false);
      }
      // The refused calls changed nothing, and the worker child still reaches both emulators.
      const queues = await awsCall(ports.sqs, "AmazonSQS.ListQueues", {});
      expect(JSON.stringify(queues.json)).not.toContain("evil");
      await putWorkflow(sa.url, "probe", PROBE);
      expect((await waitFinal(sa.url, await startRun(sa.url, "probe"), 60_000)).state).toBe(
        "SUCCESS",
      );
    } finally {
      await sa.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("shoal standalone's --allowed-host flag", () => {
  it("is in --help, and a bad name is a usage error before anything is written", async () => {
    const help = await cli(["standalone", "--help"]);
    expect(help.stdout).toMatch(/--allowed-host <name>/);
    expect(help.stdout).toContain("SHOAL_ALLOWED_HOSTS");
    const dir = join(mkdtempSync(join(tmpdir(), "shoal-hosts-bad-")), "data");
    const args = ["standalone", "--port", "0", "--data-dir", dir];
    const bad = await cli([...args, "--allowed-host", "shoal.test:8080"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--allowed-host.*without a port/);
    const env = await cli(args, {
      SHOAL_ALLOWED_HOSTS: "https://shoal.test",
    });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/SHOAL_ALLOWED_HOSTS: 'https:\/\/shoal\.test'.*not a URL/);
    expect(existsSync(dir)).toBe(false);
  });
});
