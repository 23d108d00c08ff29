// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/**
 * The worker with secrets, on the emulators (the real store and queues): what a plugin reports
 * is masked before it is stored (the error, a warning), an HTTP output that would hold a secret
 * is refused, and no item of the attempt holds a value.
 */
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SQSRecord } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Worker } from "../../lib/engine/worker.js";
import type { TaskMessage } from "../../lib/queue/messages.js";
import { createRuntime, type Runtime } from "../../lib/runtime/runtime.js";
import { EnvSecretSource } from "../../lib/secrets/env-source.js";
import { type TestAws, useTestAws } from "../helpers/aws-env.js";
import { until } from "../helpers/poll.js";
import { callApi } from "../helpers/runtime-api.js";
import { runtimeWorker } from "../helpers/runtime-worker.js";
import { deleteRecords, receiveRecords } from "../helpers/sqs.js";

const TOKEN = `tok-${Math.random().toString(36).slice(2)}-x`;

describe("the worker with secrets", () => {
  let aws: TestAws;
  let rt: Runtime;
  let worker: Worker;
  /** A worker with the real SHELL plugin; `alue` is inside the text `setValue`. */
  let shellWorker: Worker;
  let echo: Server;
  let echoUrl: string;
  const api = (method: string, path: string, body?: unknown) => callApi(rt.api, method, path, body);
  const drainEvents = async () => {
    const r = await receiveRecords(aws.eventsUrl, { waitSeconds: 0 });
    if (r.length) {
      await rt.dispatcher.handleBatch(r);
      await deleteRecords(aws.eventsUrl, r);
    }
    return r.length;
  };

  /** Runs a one-task workflow through the worker; the task instance as the API shows it. */
  async function runOne(workflow: string, task: unknown, by: () => Worker = () => worker) {
    expect((await api("PUT", `/v1/workflows/${workflow}`, { tasks: [task] })).status).toBe(201);
    const id = (await api("POST", `/v1/workflows/${workflow}/runs`, {})).body.instanceId as string;
    await until(async () => (await drainEvents()) > 0, { what: "the start command" });
    const url = aws.taskUrls[2] as string;
    const msg: SQSRecord = await until(
      async () => {
        const r = await receiveRecords(url, { waitSeconds: 0 });
        await deleteRecords(url, r);
        return r.find((x) => (JSON.parse(x.body) as TaskMessage).instanceId === id);
      },
      { what: `the task message of ${id}` },
    );
    await by().handleRecord(msg);
    const item = await rt.engine.store.getTaskInstance(id, "t", 1);
    const log = (await api("GET", `/v1/instances/${id}/tasks/t/log`)).body.lines.map(
      (l: { message: string }) => l.message,
    ) as string[];
    return { id, item, log };
  }

  beforeAll(async () => {
    aws = await useTestAws();
    const dir = mkdtempSync(join(tmpdir(), "shoal-secret-worker-"));
    rt = createRuntime({ ...aws.config, dataDir: dir, leaseMs: 5_000, leaseRenewMs: 200 });
    echo = createServer((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ echo: String(req.headers["x-token"]), ok: "yes" }));
    });
    await new Promise<void>((r) => echo.listen(0, "127.0.0.1", () => r()));
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    worker = runtimeWorker(rt, dir, {
      secrets: new EnvSecretSource({ SHOAL_SECRET_TOKEN: TOKEN }),
      // SHELL: a plugin that reports the value it was given, in a warning and in its error.
      plugins: {
        SHELL: async (ctx) => {
          ctx.warn?.(`warned about ${ctx.env.TOK}`);
          // The warning is written in the background: it is stored while the task runs.
          await until(
            async () =>
              (await rt.engine.store.getTaskInstance(ctx.env.SHOAL_INSTANCE_ID ?? "", "t", 1))
                ?.warning,
            { what: "the warning stored" },
          );
          ctx.log.write(`plugin line ${ctx.env.TOK}`);
          throw new Error(`it broke with ${ctx.env.TOK}`);
        },
      },
    });
    shellWorker = runtimeWorker(rt, mkdtempSync(join(tmpdir(), "shoal-secret-shell-")), {
      secrets: new EnvSecretSource({ SHOAL_SECRET_PART: "alue", SHOAL_SECRET_TINY: "ab" }),
    });
  });
  afterAll(() => echo?.close());

  it("masks the error, the warning and the log lines a plugin writes", async () => {
    const { item, log } = await runOne("masked-report", {
      code: "t",
      type: "SHELL",
      command: "true",
      secrets: { TOK: "token" },
    });
    expect(item?.state).toBe("FAILURE");
    expect(item?.error).toBe("it broke with ***");
    expect(log).toContain("plugin line ***");
    expect(log).toContain("shoal: task failed to run: it broke with ***");
    expect(item?.warning).toBe("warned about ***");
    expect(JSON.stringify([item, log])).not.toContain(TOKEN);
  });

  it("refuses an HTTP output that would hold a secret; the header got the value", async () => {
    const { item, log } = await runOne("leaky-output", {
      code: "t",
      type: "HTTP",
      url: `${echoUrl}/x`,
      headers: { "x-token": "${secret:token}" },
      outputs: { copy: "$.echo", ok: "$.ok" },
    });
    expect(item?.state).toBe("FAILURE");
    expect(item?.error).toBe(
      "OUT parameter 'copy' would hold a secret value; secrets are never stored as parameters (pass the secret's name instead)",
    );
    expect(item?.outputs).toBeUndefined();
    expect(log.join("\n")).toContain('{"echo":"***","ok":"yes"}');
    expect(JSON.stringify([item, log])).not.toContain(TOKEN);
  });

  it("reads OUT parameters from the raw output: a value inside `setValue` does not lose them", async () => {
    const { item, log } = await runOne(
      "out-beside-secret",
      {
        code: "t",
        type: "SHELL",
        secrets: { P: "part" },
        command: "echo '${setValue(fine=ok)}'; echo \"copy is $P\"",
      },
      () => shellWorker,
    );
    expect(item?.state, item?.error).toBe("SUCCESS");
    expect(item?.outputs).toEqual({ fine: "ok" });
    expect(log).toContain("${setV***(fine=ok)}");
    expect(log).toContain("copy is ***");
  });

  it("still refuses an OUT value holding the secret, read from the raw line", async () => {
    const { item } = await runOne(
      "out-holds-secret",
      {
        code: "t",
        type: "SHELL",
        secrets: { P: "part" },
        command: "echo \"\\${setValue(copy=v-$P)}\"; echo '${setValue(fine=ok)}'",
      },
      () => shellWorker,
    );
    expect(item?.state).toBe("FAILURE");
    expect(item?.error).toBe(
      "OUT parameter 'copy' would hold a secret value; secrets are never stored as parameters (pass the secret's name instead)",
    );
    expect(item?.outputs).toBeUndefined();
  });

  it("fails the attempt for a value shorter than 4 characters, naming the secret", async () => {
    const { item, log } = await runOne(
      "tiny-secret",
      { code: "t", type: "SHELL", command: "echo ${secret:tiny}" },
      () => shellWorker,
    );
    const expected = "secret 'tiny' is shorter than 4 characters; it cannot be masked reliably";
    expect(item?.state).toBe("FAILURE");
    expect(item?.error).toBe(expected);
    expect(log).toContain(`shoal: ${expected}`);
  });
});
