// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is Shoal's parameter syntax, not a JS template
/**
 * Parameters through the HTTP API of a real `shoal standalone`: precedence, OUT parameters from
 * SHELL (setValue lines) and HTTP (JSON paths), built-in time parameters, shell quoting that no
 * value can break out of, and the OUT size limit.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  api,
  byCode,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

describe("parameters in shoal standalone", () => {
  let sa: RunningStandalone;
  let dir: string;
  let hook: Server;
  let hookUrl: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "shoal-params-"));
    sa = await startStandaloneProcess({ dataDir: join(dir, "data"), workers: 4 });
    hook = createServer((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ data: { id: "job-42", path: req.url } }));
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await sa?.stop();
    hook?.close();
  });

  async function run(name: string, def: unknown, body: unknown = {}) {
    await putWorkflow(sa.url, name, def);
    return waitFinal(sa.url, await startRun(sa.url, name, body), 60_000);
  }
  async function logOf(id: string, code: string): Promise<string[]> {
    const r = await api(sa.url, "GET", `/v1/instances/${id}/tasks/${code}/log`);
    return r.body.lines.map((l: { message: string }) => l.message);
  }

  it("startup > local > upstream OUT > global, in commands and environment variables", async () => {
    const inst = await run(
      "precedence",
      {
        params: { a: "global", b: "global", c: "global", d: "global" },
        tasks: [
          {
            code: "produce",
            type: "SHELL",
            command:
              "echo '${setValue(b=out)}'; echo '${setValue(c=out)}'; echo '${setValue(d=out)}'",
          },
          {
            code: "consume",
            type: "SHELL",
            upstream: ["produce"],
            params: { c: "local", d: "local" },
            command: 'echo "a=${a} b=${b} c=${c} d=${d} env=$d"',
          },
        ],
      },
      { params: { d: "startup" } },
    );
    expect(inst.state).toBe("SUCCESS");
    expect(byCode(inst).produce?.outputs).toEqual({ b: "out", c: "out", d: "out" });
    expect(await logOf(inst.instanceId, "consume")).toContain(
      "a=global b=out c=local d=startup env=startup",
    );
  });

  it("a parameter value can never inject a command, whatever the quoting around it", async () => {
    const pwned = join(dir, "pwned");
    const evil = `x'; touch ${pwned}; echo '$(touch ${pwned})\`touch ${pwned}\`"; touch ${pwned}; "`;
    const inst = await run(
      "injection",
      {
        tasks: [
          {
            code: "echoes",
            type: "SHELL",
            command: "echo ${v}; echo '${v}'; echo \"${v}\"",
          },
        ],
      },
      { params: { v: evil } },
    );
    expect(inst.state).toBe("SUCCESS");
    expect(existsSync(pwned)).toBe(false);
    const lines = await logOf(inst.instanceId, "echoes");
    expect(lines.filter((l) => l === evil)).toHaveLength(3);
  });

  it("built-in time parameters follow the instance's base time", async () => {
    const inst = await run("times", {
      params: { day: "$[yyyyMMdd]" },
      tasks: [
        {
          code: "dates",
          type: "SHELL",
          command:
            "echo today=${day} yesterday=$[yyyyMMdd-1] month=$[add_months(yyyyMM,-1)] dt=${system.datetime}",
        },
      ],
    });
    expect(inst.state).toBe("SUCCESS");
    const base = new Date(inst.createdAt);
    const ymd = (d: Date) => d.toISOString().slice(0, 10).replaceAll("-", "");
    const yesterday = new Date(base.getTime() - 86_400_000);
    const line = (await logOf(inst.instanceId, "dates")).find((l) => l.startsWith("today="));
    expect(line).toMatch(
      new RegExp(
        `^today=${ymd(base)} yesterday=${ymd(yesterday)} month=\\d{6} dt=${ymd(base)}\\d{6}$`,
      ),
    );
  });

  it("an HTTP task takes OUT parameters from its JSON response", async () => {
    const inst = await run("http-out", {
      tasks: [
        {
          code: "call",
          type: "HTTP",
          url: `${hookUrl}/jobs/\${kind}`,
          params: { kind: "nightly" },
          outputs: { jobId: "$.data.id", called: "$.data.path" },
        },
        { code: "use", type: "SHELL", upstream: ["call"], command: "echo job=${jobId} ${called}" },
      ],
    });
    expect(inst.state).toBe("SUCCESS");
    expect(byCode(inst).call?.outputs).toEqual({ jobId: "job-42", called: "/jobs/nightly" });
    expect(await logOf(inst.instanceId, "use")).toContain("job=job-42 /jobs/nightly");
  });

  it("an OUT value over the size limit fails the task with a clear error", async () => {
    const inst = await run("too-big", {
      tasks: [
        {
          code: "big",
          type: "SHELL",
          command: "printf '${setValue(blob=%s)}\\n' \"$(head -c 5000 /dev/zero | tr '\\0' x)\"",
        },
      ],
    });
    expect(inst.state).toBe("FAILURE");
    expect(byCode(inst).big?.error).toMatch(/blob.*4096/);
  });
});
