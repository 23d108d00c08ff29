/**
 * The `shoal` CLI against a stub of API v1 (node:http, port 0). The CLI runs in-process
 * through `main()`; one test spawns bin/shoal.js to check the real entry point.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { main } from "../../lib/cli/main.js";
import { runCli } from "../helpers/cli-run.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HAS_WFCOMMONS = existsSync(join(ROOT, "lib/import/wfcommons.ts"));

// ---- stub API -------------------------------------------------------------------------------

interface StubInstance {
  id: string;
  workflow: string;
  version: number;
  polls: number;
}

const state = {
  workflows: new Map<string, string[]>(), // name → JSON bodies, index = version - 1
  instances: new Map<string, StubInstance>(),
  runBodies: [] as unknown[],
  putContentTypes: [] as string[],
  logFollowPolls: 0,
};

function send(res: ServerResponse, status: number, body?: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body === undefined ? "" : JSON.stringify(body));
}

interface Detail {
  path: string;
  message: string;
}

function fail(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  details: Detail[] = [],
) {
  send(res, status, { error: { code, message, details } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function definition(name: string, version?: number) {
  const versions = state.workflows.get(name);
  const v = version ?? versions?.length ?? 0;
  const body = versions?.[v - 1];
  if (body === undefined) return undefined;
  return { ...JSON.parse(body), name, version: v, releaseState: "ONLINE", createdAt: T0 };
}

const T0 = "2026-11-21T05:00:00.000Z";

/**
 * Instance snapshot by poll count: RUNNING twice, then the outcome (FAILURE for "*fail*"; for
 * "*handled*" the last task fails but the instance succeeds, as after a CONDITIONS branch).
 */
function snapshot(inst: StubInstance) {
  inst.polls++;
  const codes: string[] = (definition(inst.workflow, inst.version)?.tasks ?? []).map(
    (t: { code: string }) => t.code,
  );
  const handled = inst.workflow.includes("handled");
  const failing = inst.workflow.includes("fail") || handled;
  const done = inst.polls >= 3;
  const tasks = codes.slice(0, Math.min(inst.polls, codes.length)).map((code, i) => {
    let taskState = i < inst.polls - 1 ? "SUCCESS" : "RUNNING";
    if (done) taskState = failing && i === codes.length - 1 ? "FAILURE" : "SUCCESS";
    return { code, type: "SHELL", state: taskState, attempt: 1 };
  });
  // The API's progress (lib/core/progress.ts): a failure CONDITIONS handled counts as done.
  const count = (s: string) => tasks.filter((t) => t.state === s).length;
  const progress = {
    done: count("SUCCESS") + (handled ? count("FAILURE") : 0),
    active: count("RUNNING"),
    failed: handled ? 0 : count("FAILURE"),
    total: codes.length,
  };
  return {
    instanceId: inst.id,
    workflow: inst.workflow,
    version: inst.version,
    state: done ? (failing && !handled ? "FAILURE" : "SUCCESS") : "RUNNING",
    priority: "MEDIUM",
    createdAt: T0,
    startedAt: T0,
    ...(done ? { endedAt: "2026-11-21T05:00:12.300Z" } : {}),
    progress,
    tasks,
  };
}

/** Log pages: [l1 l2] → [l3] → (running: no lines, same token) → [l4] and no token (finished). */
function logPage(token: string | null) {
  const line = (n: number) => ({ timestamp: `2026-11-21T05:00:0${n}.000Z`, message: `line ${n}` });
  if (!token) return { lines: [line(1), line(2)], nextToken: "t1" };
  if (token === "t1") return { lines: [line(3)], nextToken: "t2" };
  state.logFollowPolls++;
  if (state.logFollowPolls < 2) return { lines: [], nextToken: "t2" };
  return { lines: [line(4)] };
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://stub");
  const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const [v1, kind, id, sub, code, leaf] = parts;
  if (v1 !== "v1") return fail(res, 404, "NotFound", "no such route");

  if (kind === "workflows" && id && !sub && req.method === "PUT") {
    state.putContentTypes.push(req.headers["content-type"] ?? "");
    const body = JSON.parse(await readBody(req));
    if ("name" in body) {
      return fail(res, 400, "ValidationError", "The workflow definition is invalid.", [
        { path: "name", message: "unknown field" },
      ]);
    }
    const codes = new Set((body.tasks ?? []).map((t: { code: string }) => t.code));
    const details: Detail[] = [];
    (body.tasks ?? []).forEach((t: { upstream?: string[] }, i: number) => {
      (t.upstream ?? []).forEach((u, j) => {
        if (!codes.has(u)) {
          details.push({ path: `tasks[${i}].upstream[${j}]`, message: `unknown task code '${u}'` });
        }
      });
    });
    if (details.length > 0) {
      return fail(res, 400, "ValidationError", "The workflow definition is invalid.", details);
    }
    const versions = state.workflows.get(id) ?? [];
    const text = JSON.stringify(body);
    const unchanged = versions.at(-1) === text;
    if (!unchanged) versions.push(text);
    state.workflows.set(id, versions);
    const out = { name: id, version: versions.length, releaseState: "ONLINE", createdAt: T0 };
    return send(res, unchanged ? 200 : 201, out);
  }
  if (kind === "workflows" && !id && req.method === "GET") {
    const items = [...state.workflows.keys()].map((name) => {
      const d = definition(name);
      return { name, version: d.version, releaseState: "ONLINE", description: d.description };
    });
    return send(res, 200, { items });
  }
  if (kind === "workflows" && id && !sub && req.method === "GET") {
    const v = url.searchParams.get("version");
    const d = definition(id, v ? Number(v) : undefined);
    return d ? send(res, 200, d) : fail(res, 404, "NotFound", `workflow '${id}' does not exist`);
  }
  if (kind === "workflows" && id && sub === "runs" && req.method === "POST") {
    const d = definition(id);
    if (!d) return fail(res, 404, "NotFound", `workflow '${id}' does not exist`);
    state.runBodies.push(JSON.parse((await readBody(req)) || "{}"));
    const inst = {
      id: `i-${state.instances.size + 1}`,
      workflow: id,
      version: d.version,
      polls: 0,
    };
    state.instances.set(inst.id, inst);
    return send(res, 202, {
      instanceId: inst.id,
      workflow: id,
      version: d.version,
      state: "SUBMITTED",
    });
  }
  if (kind === "instances" && !id && req.method === "GET") {
    const items = [...state.instances.values()].map((i) => {
      const { tasks: _tasks, ...summary } = snapshot({ ...i });
      return summary;
    });
    return send(res, 200, { items });
  }
  const inst = id ? state.instances.get(id) : undefined;
  if (kind === "instances" && id && !inst) {
    return fail(res, 404, "NotFound", `instance '${id}' does not exist`);
  }
  if (inst && !sub && req.method === "GET") return send(res, 200, snapshot(inst));
  if (inst && sub === "stop" && req.method === "POST") {
    return send(res, 202, { instanceId: inst.id, state: "STOPPING" });
  }
  if (inst && sub === "tasks" && code && leaf === "log") {
    return send(res, 200, logPage(url.searchParams.get("nextToken")));
  }
  return fail(res, 404, "NotFound", "no such route");
}

// ---- harness --------------------------------------------------------------------------------

let server: Server;
let endpoint: string;
let dir: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    handle(req, res).catch((err) => fail(res, 500, "Internal", String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), "shoal-cli-"));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  state.workflows.clear();
  state.instances.clear();
  state.runBodies = [];
  state.putContentTypes = [];
  state.logFollowPolls = 0;
});

/** Runs the CLI in-process against the stub; returns exit code and captured output. */
function shoal(args: string[], opts: { endpoint?: string; tty?: boolean } = {}) {
  return runCli(args, { endpoint: opts.endpoint ?? endpoint, ...(opts.tty ? { tty: true } : {}) });
}

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text, "utf8");
  return path;
}

const ETL = `description: nightly report
tasks:
  - { code: extract, type: SHELL, upstream: [], command: "echo e" }
  - { code: load, type: SHELL, upstream: [extract], command: "echo l" }
  - { code: report, type: SHELL, upstream: [load], command: "echo r" }
`;

// ---- tests ----------------------------------------------------------------------------------

describe("shoal apply", () => {
  it("creates, then reports unchanged; names a one-document file after itself", async () => {
    const path = await file("etl-report.yaml", ETL);
    const first = await shoal(["apply", "-f", path]);
    expect(first).toMatchObject({ code: 0, stdout: "etl-report: version 1 (created)\n" });
    const again = await shoal(["apply", "-f", path]);
    expect(again).toMatchObject({ code: 0, stdout: "etl-report: version 1 (unchanged)\n" });
    expect(state.putContentTypes[0]).toBe("application/json");
  });

  it("applies every document of a multi-document file, stripping `name`", async () => {
    const path = await file(
      "many.yaml",
      `name: a\ntasks: [{ code: x, type: SHELL, upstream: [], command: "true" }]\n---\n` +
        `name: b\ntasks: [{ code: y, type: SHELL, upstream: [], command: "true" }]\n---\n`,
    );
    const res = await shoal(["apply", "-f", path]);
    expect(res).toMatchObject({
      code: 0,
      stdout: "a: version 1 (created)\nb: version 1 (created)\n",
    });
  });

  it("accepts JSON", async () => {
    const path = await file(
      "j.json",
      JSON.stringify({
        name: "j",
        tasks: [{ code: "x", type: "SHELL", upstream: [], command: "true" }],
      }),
    );
    expect(await shoal(["apply", "-f", path])).toMatchObject({
      code: 0,
      stdout: "j: version 1 (created)\n",
    });
  });

  // apply checks every document with the API's validators before it sends anything.
  it("prints each problem of an invalid definition, sends nothing and exits 1", async () => {
    const path = await file(
      "bad.yaml",
      `name: bad\ntasks:\n  - { code: extract, type: SHELL, upstream: [], command: x }\n` +
        `  - { code: load, type: SHELL, upstream: [lod], command: x }\n`,
    );
    const res = await shoal(["apply", "-f", path]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe("error: bad: tasks[1].upstream[0]: unknown task code 'lod'\n");
    expect(state.putContentTypes).toEqual([]);
  });

  it("asks for `name` when a file holds several documents", async () => {
    const path = await file("noname.yaml", `tasks: []\n---\ntasks: []\n`);
    const res = await shoal(["apply", "-f", path]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("missing top-level `name`");
  });

  it("reports a missing file without a stack trace", async () => {
    const res = await shoal(["apply", "-f", join(dir, "nope.yaml")]);
    expect(res).toMatchObject({
      code: 1,
      stderr: `error: cannot read ${join(dir, "nope.yaml")}: no such file\n`,
    });
  });
});

describe("shoal run", () => {
  beforeEach(async () => {
    await shoal(["apply", "-f", await file("etl.yaml", `name: etl\n${ETL}`)]);
    await shoal(["apply", "-f", await file("etl-fail.yaml", `name: etl-fail\n${ETL}`)]);
    await shoal(["apply", "-f", await file("etl-handled.yaml", `name: etl-handled\n${ETL}`)]);
  });

  it("prints the instance id and sends the run options", async () => {
    const res = await shoal([
      "run",
      "etl",
      "--param",
      "day=2026-11-20",
      "-p",
      "region=eu",
      "--start-task",
      "load",
      "--scope",
      "downstream",
      "--priority",
      "HIGH",
      "--failure-strategy",
      "CONTINUE",
      "--dry-run",
      "--idempotency-key",
      "k1",
    ]);
    expect(res).toMatchObject({ code: 0, stdout: "i-1\n" });
    expect(state.runBodies[0]).toEqual({
      params: { day: "2026-11-20", region: "eu" },
      startTasks: ["load"],
      taskScope: "DOWNSTREAM",
      priority: "HIGH",
      failureStrategy: "CONTINUE",
      dryRun: true,
      idempotencyKey: "k1",
    });
  });

  it("sends a key of its own with each run, so a 503 can be retried without a second instance", async () => {
    expect((await shoal(["run", "etl"])).code).toBe(0);
    expect((await shoal(["run", "etl"])).code).toBe(0);
    const keys = state.runBodies.map((b) => (b as { idempotencyKey?: string }).idempotencyKey);
    expect(keys).toHaveLength(2);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it("--wait shows progress when it changes and exits 0 on SUCCESS", async () => {
    const res = await shoal(["run", "etl", "--wait"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(
      "i-1\n" +
        "RUNNING  0/3 done, 1 active, 0 failed\n" +
        "RUNNING  1/3 done, 1 active, 0 failed\n" +
        "SUCCESS  3/3 done, 0 active, 0 failed\n" +
        "SUCCESS in 12.3s\n",
    );
  });

  it("--wait exits 1 on FAILURE and names the failed tasks", async () => {
    const res = await shoal(["run", "etl-fail", "--wait"]);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain("FAILURE  2/3 done, 0 active, 1 failed\nFAILURE in 12.3s\n");
    expect(res.stdout).toContain("failed tasks: report");
  });

  it("--wait on SUCCESS names failures a CONDITIONS task handled, not as failed tasks", async () => {
    const res = await shoal(["run", "etl-handled", "--wait"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("SUCCESS  3/3 done, 0 active, 0 failed\n");
    expect(res.stdout).toContain("failures handled by CONDITIONS: report");
    expect(res.stdout).not.toContain("failed tasks:");
  });

  it("redraws the progress line in place on a TTY", async () => {
    const res = await shoal(["run", "etl", "--wait"], { tty: true });
    expect(res.stdout).toContain("\rRUNNING  0/3 done, 1 active, 0 failed\x1b[K\r");
    expect(res.stdout.endsWith("\x1b[K\nSUCCESS in 12.3s\n")).toBe(true);
  });

  it("--timeout gives up with exit 1", async () => {
    const res = await shoal(["run", "etl", "--timeout", "0.2"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^error: timed out after 0.2s waiting for instance i-1 \(state RUNNING\)/,
    );
  });

  it("reports a 404 and exits 1", async () => {
    const res = await shoal(["run", "nope"]);
    expect(res).toMatchObject({ code: 1, stderr: "error: workflow 'nope' does not exist\n" });
  });

  it("treats bad options as usage errors (exit 2)", async () => {
    expect((await shoal(["run", "etl", "--param", "novalue"])).code).toBe(2);
    expect((await shoal(["run", "etl", "--scope", "SIDEWAYS"])).code).toBe(2);
    expect((await shoal(["run"])).code).toBe(2);
    expect((await shoal(["standalone", "--port", "70000"])).stderr).toContain("from 0 to 65535");
    expect((await shoal(["frobnicate"])).code).toBe(2);
    expect(state.runBodies).toHaveLength(0);
  });
});

describe("instances, get, stop", () => {
  beforeEach(async () => {
    await shoal(["apply", "-f", await file("etl.yaml", `name: etl\n${ETL}`)]);
    await shoal(["run", "etl"]);
  });

  it("lists instances as a table and as JSON", async () => {
    const table = await shoal(["instances"]);
    expect(table.code).toBe(0);
    const [header, row] = table.stdout.split("\n");
    expect(header).toMatch(
      /^INSTANCE\s+WORKFLOW\s+STATE\s+TYPE\s+SCHEDULE TIME\s+CREATED\s+DURATION$/,
    );
    // This stub's items have no runType or scheduleTime: `-`.
    expect(row).toMatch(/^i-1\s+etl:1\s+RUNNING\s+-\s+-\s+2026-11-21T05:00:00Z\s+\S+/);
    const json = await shoal(["instances", "--output", "json"]);
    expect(JSON.parse(json.stdout).items[0].instanceId).toBe("i-1");
  });

  it("prints an instance and a workflow as JSON", async () => {
    const inst = await shoal(["get", "instance", "i-1", "-o", "json"]);
    expect(JSON.parse(inst.stdout)).toMatchObject({ instanceId: "i-1", state: "RUNNING" });
    expect(inst.stdout).toContain('\n  "instanceId": "i-1"');
    const long = await shoal(["get", "instance", "i-1", "--output", "JSON"]);
    expect(JSON.parse(long.stdout)).toMatchObject({ instanceId: "i-1" });
    const wf = await shoal(["get", "workflow", "etl", "--version", "1"]);
    expect(JSON.parse(wf.stdout)).toMatchObject({ name: "etl", version: 1 });
    const list = await shoal(["workflows"]);
    expect(list.stdout).toMatch(
      /^NAME\s+VERSION\s+RELEASE\s+DESCRIPTION\netl\s+1\s+ONLINE\s+nightly report\n$/,
    );
  });

  it("draws an instance's task tree by default", async () => {
    const res = await shoal(["get", "instance", "i-1"]);
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^i-1 {2}etl:1 {2}RUNNING {2}\d.*s$/);
    expect(lines.slice(1)).toEqual([
      "extract       RUNNING  attempt 1",
      "└─ load       -",
      "   └─ report  -",
    ]);
  });

  it("stops an instance", async () => {
    expect(await shoal(["stop", "i-1"])).toMatchObject({ code: 0, stdout: "i-1 STOPPING\n" });
    expect(await shoal(["stop", "i-9"])).toMatchObject({
      code: 1,
      stderr: "error: instance 'i-9' does not exist\n",
    });
  });

  it("accepts --endpoint after the subcommand too", async () => {
    const res = await main(["get", "instance", "i-1", "--endpoint", endpoint], {
      stdout: { write: () => true },
      stderr: { write: () => true },
    });
    expect(res).toBe(0);
  });
});

describe("shoal logs", () => {
  beforeEach(async () => {
    await shoal(["apply", "-f", await file("etl.yaml", `name: etl\n${ETL}`)]);
    await shoal(["run", "etl"]);
  });

  it("pages through nextToken and stops at a page without new lines", async () => {
    const res = await shoal(["logs", "i-1", "extract"]);
    expect(res).toMatchObject({
      code: 0,
      stdout:
        "2026-11-21T05:00:01.000Z line 1\n2026-11-21T05:00:02.000Z line 2\n2026-11-21T05:00:03.000Z line 3\n",
    });
  });

  it("--follow keeps polling until the answer has no nextToken", async () => {
    const res = await shoal(["logs", "i-1", "extract", "--follow"]);
    expect(res.code).toBe(0);
    expect(res.stdout.trimEnd().split("\n").at(-1)).toBe("2026-11-21T05:00:04.000Z line 4");
    expect(state.logFollowPolls).toBe(2);
  });
});

describe("errors", () => {
  it("explains an unreachable endpoint", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const dead = `http://127.0.0.1:${port}`;
    const res = await shoal(["workflows"], { endpoint: dead });
    expect(res).toMatchObject({
      code: 1,
      stderr: `error: cannot reach Shoal at ${dead} (is \`shoal standalone\` running? set --endpoint or SHOAL_ENDPOINT)\n`,
    });
  });

  it("rejects a malformed endpoint as a usage error", async () => {
    const res = await shoal(["workflows"], { endpoint: "localhost:8080" });
    expect(res.code).toBe(2);
  });
});

describe("shoal import wfcommons", () => {
  it.skipIf(!HAS_WFCOMMONS)("writes YAML with --output", async () => {
    const trace = {
      name: "tiny",
      schemaVersion: "1.5",
      workflow: {
        specification: {
          tasks: [
            { id: "a", parents: [] },
            { id: "b", parents: ["a"] },
          ],
        },
        execution: {
          tasks: [
            { id: "a", runtimeInSeconds: 2 },
            { id: "b", runtimeInSeconds: 3 },
          ],
        },
      },
    };
    const input = await file("tiny.json", JSON.stringify(trace));
    const output = join(dir, "tiny.yaml");
    const res = await shoal([
      "import",
      "wfcommons",
      input,
      "--name",
      "tiny",
      "--time-scale",
      "0.5",
      "--output",
      output,
    ]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("2 tasks, critical path 2.5 s");
    const doc = parse(await readFile(output, "utf8"));
    expect(doc.name).toBe("tiny");
    expect(doc.tasks).toHaveLength(2);
    expect(doc.tasks[1]).toMatchObject({ code: "b", type: "SHELL", upstream: ["a"] });

    // The written file applies as-is, and without --output the import PUTs it directly.
    expect(await shoal(["apply", "-f", output])).toMatchObject({
      stdout: "tiny: version 1 (created)\n",
    });
    const put = await shoal([
      "import",
      "wfcommons",
      input,
      "--name",
      "tiny",
      "--time-scale",
      "0.5",
    ]);
    expect(put.stdout).toBe("tiny: version 1 (unchanged) — 2 tasks, critical path 2.5 s\n");
  });

  it.skipIf(!HAS_WFCOMMONS)("reports a bad trace with exit 1", async () => {
    const input = await file("bad-trace.json", JSON.stringify({ workflow: {} }));
    const res = await shoal([
      "import",
      "wfcommons",
      input,
      "--name",
      "x",
      "--output",
      join(dir, "x.yaml"),
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: .*bad-trace\.json: /);
  });
});

describe("bin/shoal.js", () => {
  it("prints the version, also through a symlink like node_modules/.bin", async () => {
    const direct = spawnSync(process.execPath, [join(ROOT, "bin/shoal.js"), "--version"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(direct.stderr).toBe("");
    expect(direct.status).toBe(0);
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8"));
    expect(direct.stdout.trim()).toBe(pkg.version);

    const link = join(dir, "shoal");
    await symlink(join(ROOT, "bin/shoal.js"), link);
    const linked = spawnSync(process.execPath, [link, "--version"], { cwd: dir, encoding: "utf8" });
    expect(linked.status).toBe(0);
    expect(linked.stdout.trim()).toBe(pkg.version);
  }, 30_000);
});
