/**
 * The CLI's live and drawn views against a stub of API v1 (node:http, port 0), run in-process
 * through `main()`: `shoal instances --watch` and the task tree of `shoal get instance`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Instance, WorkflowTaskRef } from "../../lib/cli/api-types.js";
import { main } from "../../lib/cli/main.js";
import { renderInstanceTree, topologicalOrder } from "../../lib/cli/tree.js";

// ---- stub API -------------------------------------------------------------------------------

const T0 = "2026-11-21T05:00:00.000Z";
const CLEAR = "\x1b[2J\x1b[H";

const stub = {
  /** `name:version` → task definitions. */
  workflows: new Map<string, WorkflowTaskRef[]>(),
  /** Full instances, newest first (the list answers in this order). */
  instances: [] as Instance[],
  listQueries: [] as URLSearchParams[],
  detailGets: [] as string[],
  workflowGets: [] as string[],
  /** Called with the 1-based number of every list request before it is answered. */
  onList: undefined as ((n: number) => void) | undefined,
  /** List requests (1-based) answered with a 500. */
  failLists: new Set<number>(),
};

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function notFound(res: ServerResponse, message: string): void {
  send(res, 404, { error: { code: "NotFound", message, details: [] } });
}

function handle(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? "/", "http://stub");
  const [v1, kind, id, sub] = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  if (v1 !== "v1" || req.method !== "GET" || sub) return notFound(res, "no such route");
  if (kind === "workflows" && id) {
    const version = Number(url.searchParams.get("version") ?? 1);
    stub.workflowGets.push(`${id}:${version}`);
    const tasks = stub.workflows.get(`${id}:${version}`);
    if (!tasks) return notFound(res, `workflow '${id}' version ${version} does not exist`);
    return send(res, 200, { name: id, version, releaseState: "ONLINE", createdAt: T0, tasks });
  }
  if (kind === "instances" && !id) {
    stub.listQueries.push(url.searchParams);
    const n = stub.listQueries.length;
    stub.onList?.(n);
    if (stub.failLists.has(n)) {
      // A 500: a 503 the client itself sends again (lib/cli/http.ts), the watch would not see.
      return send(res, 500, {
        error: { code: "InternalError", message: "try again", details: [] },
      });
    }
    const workflow = url.searchParams.get("workflow");
    const state = url.searchParams.get("state");
    const limit = Number(url.searchParams.get("limit") ?? 50);
    const items = stub.instances
      .filter((i) => (!workflow || i.workflow === workflow) && (!state || i.state === state))
      .slice(0, limit)
      .map(({ tasks: _t, progress: _p, ...summary }) => summary);
    return send(res, 200, { items });
  }
  if (kind === "instances" && id) {
    stub.detailGets.push(id);
    const inst = stub.instances.find((i) => i.instanceId === id);
    return inst ? send(res, 200, inst) : notFound(res, `instance '${id}' does not exist`);
  }
  notFound(res, "no such route");
}

let server: Server;
let endpoint: string;

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  stub.workflows.clear();
  stub.instances = [];
  stub.listQueries = [];
  stub.detailGets = [];
  stub.workflowGets = [];
  stub.onList = undefined;
  stub.failLists = new Set();
});

/**
 * Runs the CLI in-process; `onWrite` sees stdout after every write. A watch ends when the test
 * aborts `stop` (the hook `main` offers instead of SIGINT).
 */
async function shoal(
  args: string[],
  opts: { tty?: boolean; endpoint?: string; onWrite?: (stdout: string) => void } = {},
) {
  const stop = new AbortController();
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: {
      write: (s: string) => {
        stdout += s;
        opts.onWrite?.(stdout);
        return true;
      },
      isTTY: opts.tty ?? false,
    },
    stderr: { write: (s: string) => (stderr += s) },
    signal: stop.signal,
  };
  const running = main(["--endpoint", opts.endpoint ?? endpoint, ...args], io);
  return { stop, done: running.then((code) => ({ code, stdout, stderr })) };
}

async function run(args: string[], opts: Parameters<typeof shoal>[1] = {}) {
  return (await shoal(args, opts)).done;
}

function ago(ms: number): string {
  return new Date(Date.now() - ms).toISOString();
}

function instance(n: number, fields: Partial<Instance> = {}): Instance {
  return {
    instanceId: `i-${n}`,
    workflow: "etl",
    version: 1,
    state: "RUNNING",
    priority: "MEDIUM",
    createdAt: T0,
    startedAt: T0,
    progress: { done: 1, active: 1, failed: 0, total: 4 },
    tasks: [],
    ...fields,
  };
}

// ---- get instance ---------------------------------------------------------------------------

describe("shoal get instance", () => {
  beforeEach(() => {
    stub.workflows.set("diamond:1", [
      { code: "a", upstream: [] },
      { code: "b", upstream: ["a"] },
      { code: "c", upstream: ["a"] },
      { code: "d", upstream: ["b", "c"] },
    ]);
    stub.instances = [
      instance(7, {
        workflow: "diamond",
        startedAt: ago(90_000),
        tasks: [
          {
            code: "a",
            state: "SUCCESS",
            attempt: 1,
            startedAt: "2026-11-21T05:00:00.000Z",
            endedAt: "2026-11-21T05:00:12.300Z",
          },
          {
            code: "b",
            state: "FAILURE",
            attempt: 2,
            startedAt: "2026-11-21T05:00:20.000Z",
            endedAt: "2026-11-21T05:00:21.500Z",
            error: "command exited with code 3",
          },
          { code: "c", state: "RUNNING", attempt: 1, startedAt: ago(4_200) },
        ],
      }),
    ];
  });

  it("draws the DAG as a tree in topological order with each task's latest attempt", async () => {
    const res = await run(["get", "instance", "i-7"]);
    expect(res).toMatchObject({ code: 0, stderr: "" });
    const lines = res.stdout.trimEnd().split("\n");
    // The header carries the API's progress, worded as `run --wait` and `instances --watch` do.
    expect(lines[0]).toMatch(
      /^i-7 {2}diamond:1 {2}RUNNING {2}1\/4 done, 1 active, 0 failed {2}1m 3\ds$/,
    );
    expect(lines.slice(1)).toEqual([
      "a        SUCCESS  attempt 1  12.3s",
      "├─ b     FAILURE  attempt 2  1.5s        command exited with code 3",
      "│  └─ d  -                               (also after: c)",
      expect.stringMatching(/^└─ c {5}RUNNING {2}attempt 1 {2}running [45]s$/),
    ]);
    expect(stub.workflowGets).toEqual(["diamond:1"]);
  });

  it("still prints the raw JSON with -o json / --output json", async () => {
    for (const flags of [
      ["-o", "json"],
      ["--output", "JSON"],
    ]) {
      const res = await run(["get", "instance", "i-7", ...flags]);
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout)).toEqual(stub.instances[0]);
      expect(res.stdout).toContain('\n  "instanceId": "i-7"');
    }
    expect(stub.workflowGets).toEqual([]);
    expect((await run(["get", "instance", "i-7", "-o", "yaml"])).code).toBe(2);
  });

  it("lists the tasks flat, with a note, when the workflow version is gone", async () => {
    stub.workflows.clear();
    const res = await run(["get", "instance", "i-7"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/^note: diamond:1 is gone .*; tasks shown without their DAG\n$/);
    expect(res.stdout.split("\n").slice(1, 4)).toEqual([
      "a  SUCCESS  attempt 1  12.3s",
      "b  FAILURE  attempt 2  1.5s        command exited with code 3",
      expect.stringMatching(/^c {2}RUNNING {2}attempt 1 {2}running [45]s$/),
    ]);
  });

  it("reports an unknown instance with exit 1", async () => {
    expect(await run(["get", "instance", "i-404"])).toMatchObject({
      code: 1,
      stderr: "error: instance 'i-404' does not exist\n",
    });
  });

  it("draws a 1,695-task DAG quickly", async () => {
    // Layers of 113 tasks; each task waits for three tasks of the layer above.
    const width = 113;
    const tasks: WorkflowTaskRef[] = Array.from({ length: 1695 }, (_, i) => {
      const layer = Math.floor(i / width);
      const up =
        layer === 0 ? [] : [0, 1, 2].map((k) => `t${(layer - 1) * width + ((i + k) % width)}`);
      return { code: `t${i}`, upstream: up };
    });
    stub.workflows.set("big:1", tasks);
    stub.instances = [
      instance(9, {
        workflow: "big",
        tasks: tasks.slice(0, 900).map((t) => ({ code: t.code, state: "SUCCESS", attempt: 1 })),
      }),
    ];
    const t0 = performance.now();
    const res = await run(["get", "instance", "i-9"]);
    expect(performance.now() - t0).toBeLessThan(2_000);
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(1 + 1695);
    expect(new Set(lines.slice(1).map((l) => /t\d+/.exec(l)?.[0])).size).toBe(1695);
  });
});

describe("tree drawing", () => {
  it("orders tasks after all their upstreams whatever the definition order", () => {
    const order = topologicalOrder([
      { code: "d", upstream: ["b", "c"] },
      { code: "c", upstream: ["a"] },
      { code: "b", upstream: ["a", "ghost"] },
      { code: "a" },
    ]).map((t) => t.code);
    expect(order[0]).toBe("a");
    expect(order.at(-1)).toBe("d");
    expect(order).toHaveLength(4);
  });

  it("keeps a 10,000-task chain's lines short and linear to build", () => {
    const chain = Array.from({ length: 10_000 }, (_, i) => ({
      code: `t${i}`,
      upstream: i === 0 ? [] : [`t${i - 1}`],
    }));
    const t0 = performance.now();
    const lines = renderInstanceTree(instance(1, { tasks: [] }), chain);
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(lines).toHaveLength(10_001);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(200);
    expect(lines.at(-1)).toMatch(/└─ t9999 {2}- {2}\(level 9999\)$/);
  });
});

// ---- instances --watch ----------------------------------------------------------------------

const HEADER =
  /^INSTANCE\s+WORKFLOW\s+STATE\s+PROGRESS\s+TYPE\s+SCHEDULE TIME\s+CREATED\s+DURATION$/m;

describe("shoal instances --watch", () => {
  it("prints a table per change on a non-TTY and stops with exit 0 when aborted", async () => {
    stub.instances = [instance(2), instance(1, { state: "SUCCESS", endedAt: ago(1_000) })];
    let frames = 0;
    const cli = await shoal(["instances", "--watch", "--interval", "0.02"], {
      onWrite: () => {
        frames++;
        const current = stub.instances[0] as Instance;
        // The stub's state moves on after each frame: more progress, then the end.
        if (frames === 1) current.progress = { done: 3, active: 1, failed: 0, total: 4 };
        if (frames === 2) Object.assign(current, { state: "SUCCESS", endedAt: ago(0) });
      },
    });
    // Unchanged lists (4 and 5) print nothing; the 6th request is cut short by the abort.
    stub.onList = (n) => {
      if (n === 6) cli.stop.abort();
    };
    const res = await cli.done;
    expect(res.code).toBe(0);
    expect(res.stdout).not.toContain("\x1b[");
    const shown = res.stdout.trimEnd().split("\n\n");
    expect(shown).toHaveLength(3);
    for (const frame of shown) expect(frame).toMatch(HEADER);
    expect(shown[0]).toMatch(/^Every 0\.02s {2}\d{4}-\d\d-\d\dT[\d:]+Z\n/);
    // PROGRESS is the API's progress, in the words of `run --wait`; TYPE and SCHEDULE TIME
    // are absent from this stub's items.
    expect(shown[0]).toMatch(
      /^i-2\s+etl:1\s+RUNNING\s+1\/4 done, 1 active, 0 failed\s+-\s+-\s+2026-11-21T05:00:00Z\s+\S+/m,
    );
    expect(shown[0]).toMatch(/^i-1\s+etl:1\s+SUCCESS\s+-\s+/m);
    expect(shown[1]).toMatch(/^i-2\s+etl:1\s+RUNNING\s+3\/4 done, 1 active, 0 failed\s+/m);
    expect(shown[2]).toMatch(/^i-2\s+etl:1\s+SUCCESS\s+-\s+/m);
    // Progress is asked for while unfinished only.
    expect(stub.detailGets).toEqual(["i-2", "i-2"]);
  });

  it("passes --workflow, --state and --limit to every list request", async () => {
    stub.instances = [
      instance(3, { workflow: "other" }),
      instance(2),
      instance(1, { state: "FAILURE" }),
    ];
    const cli = await shoal(
      ["instances", "-w", "--workflow", "etl", "--state", "running", "--limit", "7"],
      { onWrite: () => cli.stop.abort() },
    );
    const res = await cli.done;
    expect(res.code).toBe(0);
    expect(Object.fromEntries(stub.listQueries[0] ?? [])).toEqual({
      workflow: "etl",
      state: "RUNNING",
      limit: "7",
    });
    const rows = res.stdout.trimEnd().split("\n").slice(2);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(/^i-2\s+etl:1\s+RUNNING\s+1\/4\s/);
  });

  it("asks for the progress of the 20 newest unfinished instances only", async () => {
    stub.instances = Array.from({ length: 25 }, (_, k) => instance(25 - k));
    const cli = await shoal(["instances", "--watch"], { onWrite: () => cli.stop.abort() });
    const res = await cli.done;
    expect(res.code).toBe(0);
    expect(stub.detailGets.toSorted()).toEqual(
      Array.from({ length: 20 }, (_, k) => `i-${25 - k}`).toSorted(),
    );
    expect(res.stdout).toMatch(/^i-6\s+etl:1\s+RUNNING\s+1\/4\s/m);
    expect(res.stdout).toMatch(/^i-5\s+etl:1\s+RUNNING\s+-\s/m);
  });

  it("clears and redraws every interval on a TTY", async () => {
    stub.instances = [instance(1)];
    const cli = await shoal(["instances", "--interval", "0.02"], { tty: true });
    stub.onList = (n) => {
      if (n === 3) cli.stop.abort();
    };
    const res = await cli.done;
    expect(res.code).toBe(0);
    const draws = res.stdout.split(CLEAR);
    expect(draws[0]).toBe("");
    expect(draws).toHaveLength(3);
    expect(draws[1]).toContain("(Ctrl-C to stop)");
    expect(draws[2]).toMatch(HEADER);
  });

  it("reports a failed refresh on stderr and keeps going", async () => {
    stub.instances = [instance(1)];
    stub.failLists = new Set([2]);
    const cli = await shoal(["instances", "--watch", "--interval", "0.02"]);
    stub.onList = (n) => {
      if (n === 4) cli.stop.abort();
    };
    const res = await cli.done;
    expect(res).toMatchObject({ code: 0, stderr: "error: try again (retrying)\n" });
    expect(res.stdout.match(/^INSTANCE/gm)).toHaveLength(1);
  });

  it("fails fast before the first frame and rejects --output json", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const dead = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise((resolve) => probe.close(resolve));
    const down = await run(["instances", "--watch"], { endpoint: dead });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^error: cannot reach Shoal at /);
    const json = await run(["instances", "--watch", "-o", "json"]);
    expect(json.code).toBe(2);
    expect(json.stderr).toContain("--watch draws a table");
    expect((await run(["instances", "--interval", "0"])).code).toBe(2);
  });
});
