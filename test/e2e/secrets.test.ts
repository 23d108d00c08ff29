// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${…} is Shoal's reference syntax, not a JS template
/**
 * Secrets in a real `shoal standalone` (docs/secrets.md): tasks read `${secret:NAME}` from a
 * 0600 secrets file and from SHOAL_SECRET_* variables of the worker; the task succeeds with the
 * right value, its log shows `***`, and no DynamoDB item, API answer, event, rendering or process
 * command line ever holds a value. A 0644 file is refused at start; a missing secret fails the
 * attempt naming it; an OUT parameter that would hold a secret is refused. The task messages
 * on SQS are read as they are (in a worker group no worker polls, until one joins): they hold
 * the references, never a value.
 */
import { createHash, randomUUID } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, ListTablesCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import { ListQueuesCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnvFileEntries } from "../../lib/standalone/env-file.js";
import { until } from "../helpers/poll.js";
import {
  api,
  byCode,
  cli,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  startWorkerProcess,
  waitFinal,
} from "../helpers/standalone.js";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** The forms a value could take when stored or sent: as is, JSON-escaped, URL-encoded. */
function forms(v: string): string[] {
  return [v, JSON.stringify(v).slice(1, -1), encodeURIComponent(v)];
}

describe("secrets in shoal standalone", () => {
  const id = randomUUID().replaceAll("-", "");
  /** In the file; has quotes, `$` and spaces, so quoting matters. */
  const PW = `p'w"d $HOME ${id.slice(0, 12)}`;
  /** A field of a JSON secret in the file. */
  const TOKEN = `tok-${id.slice(12, 24)}`;
  /** From the worker's environment. */
  const FROM_ENV = `env-${id.slice(24)}`;
  const VALUES = [PW, TOKEN, FROM_ENV];

  let sa: RunningStandalone;
  let dir: string;
  let dataDir: string;
  let secretsFile: string;
  let hook: Server;
  let hookUrl: string;
  const received: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "shoal-secrets-"));
    dataDir = join(dir, "data");
    secretsFile = join(dir, "secrets.yaml");
    writeFileSync(
      secretsFile,
      `db-password: ${JSON.stringify(PW)}\napi/config:\n  token: ${TOKEN}\n  user: app\n`,
      { mode: 0o600 },
    );
    // An API that echoes what it was sent (as some do, in error messages).
    hook = createServer((req, res) => {
      received.push(String(req.headers.authorization));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ youSent: req.headers.authorization, path: req.url }));
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
    sa = await startStandaloneProcess({
      dataDir,
      workers: 4,
      args: ["--secrets-file", secretsFile],
      env: { SHOAL_SECRET_FROM_ENV: FROM_ENV },
    });
  });
  afterAll(async () => {
    await sa?.stop();
    hook?.close();
  });

  async function logOf(instanceId: string, code: string): Promise<string[]> {
    const r = await api(sa.url, "GET", `/v1/instances/${instanceId}/tasks/${code}/log`);
    return r.body.lines.map((l: { message: string }) => l.message);
  }

  /** Command lines of every process on the machine (Linux /proc). */
  function commandLines(): string[] {
    const out: string[] = [];
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        out.push(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " "));
      } catch {}
    }
    return out;
  }

  let instanceId: string;

  it("a task uses secrets from the file and the environment; it succeeds and its log shows ***", async () => {
    await putWorkflow(sa.url, "uses-secrets", {
      tasks: [
        {
          code: "shell",
          type: "SHELL",
          secrets: { API_TOKEN: "api/config#token" },
          command: [
            // The value reaches the command (compared by hash: the command holds no value).
            `test "$(printf %s ${"${secret:db-password}"} | sha256sum | cut -c1-64)" = ${sha256(PW)}`,
            `test "$(printf %s "$API_TOKEN" | sha256sum | cut -c1-64)" = ${sha256(TOKEN)}`,
            `test "$(printf %s '${"${secret:from-env}"}' | sha256sum | cut -c1-64)" = ${sha256(FROM_ENV)}`,
            'echo "pw is ${secret:db-password}, token $API_TOKEN, env ${secret:from-env}"',
            // Half a value, then the rest in another write: masked across the chunks.
            `printf '%s' "$API_TOKEN" | cut -c1-6 | tr -d '\\n'; sleep 0.3; printf '%s\\n' "$API_TOKEN" | cut -c7-`,
            'echo "${secret:db-password}" >&2',
            "sleep 2",
          ].join("\n"),
        },
        {
          code: "http",
          type: "HTTP",
          upstream: ["shell"],
          url: `${hookUrl}/hook?key=\${secret:from-env}`,
          method: "POST",
          headers: { authorization: "Bearer ${secret:api/config#token}" },
        },
      ],
    });
    instanceId = await startRun(sa.url, "uses-secrets");
    // While the task runs, no process's command line holds a value.
    let sawTask = false;
    for (;;) {
      const lines = commandLines();
      sawTask ||= lines.some((l) => l.includes("sha256sum") || l.includes("sleep 2"));
      for (const v of VALUES) expect(lines.filter((l) => l.includes(v))).toEqual([]);
      const r = await api(sa.url, "GET", `/v1/instances/${instanceId}`);
      if (["SUCCESS", "FAILURE", "STOPPED"].includes(r.body.state)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(sawTask).toBe(true);
    const inst = await waitFinal(sa.url, instanceId);
    expect(inst.state, JSON.stringify(inst.tasks)).toBe("SUCCESS");
    const shell = await logOf(instanceId, "shell");
    expect(shell).toContain("pw is ***, token ***, env ***");
    expect(shell).toContain("***");
    expect(shell.filter((l) => l === "***")).toHaveLength(2); // split write, and stderr
    const http = await logOf(instanceId, "http");
    expect(http.join("\n")).toContain('"youSent":"Bearer ***"');
    expect(http.join("\n")).toContain("/hook?key=***");
    expect(received).toEqual([`Bearer ${TOKEN}`]);
    for (const l of [...shell, ...http]) for (const v of VALUES) expect(l).not.toContain(v);
  });

  it("no DynamoDB item, API answer, event or rendering holds a value", async () => {
    const answers: unknown[] = [];
    for (const path of [
      `/v1/instances/${instanceId}`,
      `/v1/instances?workflow=uses-secrets`,
      `/v1/workflows/uses-secrets`,
      `/v1/instances/${instanceId}/tasks/shell/attempts`,
      `/v1/instances/${instanceId}/tasks/shell/render`,
      `/v1/instances/${instanceId}/tasks/http/render`,
      `/v1/instances/${instanceId}/tasks/shell/log`,
      `/v1/instances/${instanceId}/tasks/http/log`,
      "/v1/events/recent?limit=1000",
    ]) {
      const r = await api(sa.url, "GET", path);
      expect(r.status, path).toBe(200);
      answers.push(r.body);
    }
    // The rendering shows the reference, as written.
    expect(JSON.stringify(answers)).toContain("${secret:db-password}");
    // Every item of every table of the emulator.
    const env = readEnvFileEntries(join(dataDir, "endpoints.env"));
    const ddb = new DynamoDBClient({
      region: "us-east-1",
      endpoint: env.AWS_ENDPOINT_URL_DYNAMODB,
      credentials: { accessKeyId: "x", secretAccessKey: "x" },
    });
    const items: unknown[] = [];
    const tables = (await ddb.send(new ListTablesCommand({}))).TableNames ?? [];
    expect(tables.length).toBeGreaterThan(5);
    for (const TableName of tables) {
      let ExclusiveStartKey: Record<string, unknown> | undefined;
      do {
        // biome-ignore lint/suspicious/noExplicitAny: raw scan pages
        const page: any = await ddb.send(new ScanCommand({ TableName, ExclusiveStartKey } as any));
        items.push(...(page.Items ?? []));
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
    }
    ddb.destroy();
    expect(items.length).toBeGreaterThan(3);
    const everything = JSON.stringify([answers, items]);
    expect(everything).toContain(instanceId);
    for (const v of VALUES) for (const f of forms(v)) expect(everything).not.toContain(f);
  });

  it("the task messages on SQS hold the references, never a value", async () => {
    // Worker group `peek` has no worker yet: the dispatcher's messages wait in its queue, where
    // the test reads them (visibility timeout 0: they stay there), then a worker joins and runs
    // those very messages with the secrets.
    await putWorkflow(sa.url, "peek-secrets", {
      tasks: [
        {
          code: "shell",
          type: "SHELL",
          workerGroup: "peek",
          secrets: { API_TOKEN: "api/config#token" },
          command: `test "$(printf %s ${"${secret:db-password}"} | sha256sum | cut -c1-64)" = ${sha256(PW)} && test -n "$API_TOKEN"`,
        },
        {
          code: "http",
          type: "HTTP",
          workerGroup: "peek",
          url: `${hookUrl}/peek`,
          method: "POST",
          headers: { authorization: "Bearer ${secret:api/config#token}" },
          body: '{"pw": "${secret:db-password}"}',
        },
      ],
    });
    const id = await startRun(sa.url, "peek-secrets");
    const env = readEnvFileEntries(join(dataDir, "endpoints.env"));
    const sqs = new SQSClient({
      region: "us-east-1",
      endpoint: env.AWS_ENDPOINT_URL_SQS,
      credentials: { accessKeyId: "x", secretAccessKey: "x" },
    });
    const bodies = new Map<string, string>();
    try {
      await until(
        async () => {
          const urls = (await sqs.send(new ListQueuesCommand({}))).QueueUrls ?? [];
          for (const QueueUrl of urls.filter((u) => u.includes("peek"))) {
            const r = await sqs.send(
              new ReceiveMessageCommand({
                QueueUrl,
                MaxNumberOfMessages: 10,
                VisibilityTimeout: 0,
                WaitTimeSeconds: 0,
              }),
            );
            for (const m of r.Messages ?? []) {
              const body = JSON.parse(m.Body ?? "{}");
              if (body.instanceId === id) bodies.set(body.code, m.Body ?? "");
            }
          }
          return bodies.size === 2;
        },
        { what: "the task messages of peek-secrets in worker group peek's queue" },
      );
    } finally {
      sqs.destroy();
    }
    const shellMsg = JSON.parse(bodies.get("shell") ?? "{}");
    expect(shellMsg.task.command).toContain("${secret:db-password}");
    expect(shellMsg.task.secrets).toEqual({ API_TOKEN: "api/config#token" });
    const httpMsg = JSON.parse(bodies.get("http") ?? "{}");
    expect(httpMsg.task.headers.authorization).toBe("Bearer ${secret:api/config#token}");
    const sent = [...bodies.values()].join("\n");
    for (const v of VALUES) for (const f of forms(v)) expect(sent).not.toContain(f);
    // The same messages, run by a worker that joins: the values reached the tasks.
    const worker = startWorkerProcess(dataDir, ["--group", "peek", "--concurrency", "2"]);
    try {
      const inst = await waitFinal(sa.url, id, 60_000);
      expect(inst.state, JSON.stringify(inst.tasks)).toBe("SUCCESS");
    } finally {
      await worker.stop();
    }
    expect(received).toContain(`Bearer ${TOKEN}`);
  });

  it("a dry run shows the reference, never a value", async () => {
    const dry = await waitFinal(sa.url, await startRun(sa.url, "uses-secrets", { dryRun: true }));
    expect(dry.state).toBe("SUCCESS");
    const log = (await logOf(dry.instanceId, "shell")).join("\n");
    expect(log).toContain("${secret:db-password}");
    for (const v of VALUES) for (const f of forms(v)) expect(log).not.toContain(f);
  });

  it("a missing secret fails the attempt, naming it, and is retried like any failure", async () => {
    await putWorkflow(sa.url, "missing-secret", {
      tasks: [{ code: "t", type: "SHELL", retries: 1, command: "echo ${secret:no-such-secret}" }],
    });
    const inst = await waitFinal(sa.url, await startRun(sa.url, "missing-secret"));
    expect(inst.state).toBe("FAILURE");
    const t = byCode(inst).t;
    expect(t?.attempt).toBe(2);
    const expected = `secret 'no-such-secret' not found (looked in: environment variable SHOAL_SECRET_NO_SUCH_SECRET, secrets file ${secretsFile})`;
    expect(t?.error).toBe(expected);
    expect(await logOf(inst.instanceId, "t")).toContain(`shoal: ${expected}`);
  });

  it("an OUT parameter that would hold a secret is refused, and nothing is stored", async () => {
    await putWorkflow(sa.url, "leaky-out", {
      tasks: [
        {
          code: "t",
          type: "SHELL",
          secrets: { PW: "db-password" },
          command: "echo \"\\${setValue(copy=$PW)}\"; echo '${setValue(fine=ok)}'",
        },
      ],
    });
    const inst = await waitFinal(sa.url, await startRun(sa.url, "leaky-out"));
    expect(inst.state).toBe("FAILURE");
    const t = byCode(inst).t;
    expect(t?.error).toBe(
      "OUT parameter 'copy' would hold a secret value; secrets are never stored as parameters (pass the secret's name instead)",
    );
    expect(t?.outputs).toBeUndefined();
    expect(JSON.stringify(inst)).not.toContain(PW);
  });

  it("a bad name is a 400 naming the field and the rule", async () => {
    const r = await api(sa.url, "PUT", "/v1/workflows/bad-secret", {
      tasks: [{ code: "t", type: "SHELL", command: "echo ${secret:has space}" }],
    });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain("tasks[0].command");
    expect(JSON.stringify(r.body)).toContain("must be a Secrets Manager name");
  });

  it("a secrets file others can read is refused at start, naming it, its mode and the fix", async () => {
    const open = join(dir, "open.yaml");
    writeFileSync(open, "a: b\n");
    chmodSync(open, 0o644);
    const res = await cli(
      [
        "standalone",
        "--no-examples",
        "--port",
        "0",
        "--data-dir",
        join(dir, "refused"),
        "--secrets-file",
        open,
      ],
      { SHOAL_QUIET: "true" },
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(
      `secrets file ${open} has mode 0644, which lets other users read or change it; it must be 0600 or stricter: run chmod 600 ${open}`,
    );
  });
});
