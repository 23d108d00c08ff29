/**
 * The `shoal` verbs for task control and task groups (`force-success`, `attempts`,
 * `task-groups`, `task-group put|get|delete`) and the task tree's newer states and notes, run
 * in-process through `main()` against a stub of API v1 (node:http, port 0) that records every
 * request and answers with what each test scripts.
 */
import { describe, expect, it } from "vitest";
import type { Instance, TaskGroup, TaskInstance } from "../../lib/cli/api-types.js";
import { renderInstanceTree } from "../../lib/cli/tree.js";
import { conflict, notFound, useStubApi } from "../helpers/stub-api.js";

// ---- stub API (test/helpers/stub-api.ts) -----------------------------------------------------

const stub = useStubApi();
const { shoal, calls } = stub;

function ago(ms: number): string {
  return new Date(Date.now() - ms).toISOString();
}

const T0 = "2026-11-21T05:00:00.000Z";

// ---- force-success --------------------------------------------------------------------------

describe("shoal force-success", () => {
  it("POSTs without a body and prints the forced attempt", async () => {
    stub.reply = () => ({
      status: 200,
      body: {
        code: "load",
        type: "SHELL",
        state: "FORCED_SUCCESS",
        attempt: 2,
        error: "command exited with code 3",
      },
    });
    const res = await shoal(["force-success", "i-1", "load"]);
    expect(res).toEqual({ code: 0, stdout: "load attempt 2 FORCED_SUCCESS\n", stderr: "" });
    expect(calls()).toEqual(["POST /v1/instances/i-1/tasks/load/force-success"]);
    expect(stub.requests[0]).toMatchObject({ body: "", contentType: undefined });
  });

  it("encodes ids and codes as path segments", async () => {
    stub.reply = () => ({
      status: 200,
      body: { code: "a b", state: "FORCED_SUCCESS", attempt: 1 },
    });
    await shoal(["force-success", "i/1", "a b"]);
    expect(stub.requests[0]?.path).toBe("/v1/instances/i%2F1/tasks/a%20b/force-success");
  });

  it("passes a 409 through as one line with exit 1", async () => {
    const message = "instance 'i-1' is RUNNING; force-success needs a FAILURE or STOPPED instance";
    stub.reply = () => conflict(message);
    expect(await shoal(["force-success", "i-1", "load"])).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: ${message}\n`,
    });
  });

  it("needs both the instance and the task (exit 2, no request)", async () => {
    expect((await shoal(["force-success", "i-1"])).code).toBe(2);
    expect((await shoal(["force-success"])).code).toBe(2);
    expect(stub.requests).toHaveLength(0);
  });
});

// ---- attempts -------------------------------------------------------------------------------

describe("shoal attempts", () => {
  const attempts: TaskInstance[] = [
    {
      code: "load",
      type: "SHELL",
      state: "FAILURE",
      attempt: 1,
      worker: "vm:16587:30a5ca2e",
      submittedAt: T0,
      startedAt: T0,
      endedAt: "2026-11-21T05:00:01.500Z",
      exitCode: 3,
      error: "command exited with code 3",
    },
    {
      code: "load",
      type: "SHELL",
      state: "KILLED",
      attempt: 2,
      worker: "vm:16587:30a5ca2e",
      submittedAt: "2026-11-21T05:00:10.000Z",
      startedAt: "2026-11-21T05:00:10.000Z",
      endedAt: "2026-11-21T05:01:15.000Z",
      exitCode: 143,
      error: "killed on request",
      warning: "ran longer than its 1 min timeout",
    },
    { code: "load", type: "SHELL", state: "RUNNING", attempt: 3, startedAt: ago(3_000) },
  ];

  it("draws every attempt, oldest first, as a table", async () => {
    stub.reply = () => ({ status: 200, body: { items: attempts } });
    const res = await shoal(["attempts", "i-1", "load"]);
    expect(res.code).toBe(0);
    expect(calls()).toEqual(["GET /v1/instances/i-1/tasks/load/attempts"]);
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ATTEMPT\s+STATE\s+WORKER\s+STARTED\s+DURATION\s+EXIT\s+ERROR$/);
    expect(lines[1]).toMatch(
      /^1\s+FAILURE\s+vm:16587:30a5ca2e\s+2026-11-21T05:00:00Z\s+1\.5s\s+3\s+command exited with code 3$/,
    );
    expect(lines[2]).toMatch(
      /^2\s+KILLED\s+vm:16587:30a5ca2e\s+2026-11-21T05:00:10Z\s+1m 05s\s+143\s+killed on request; warning: ran longer than its 1 min timeout$/,
    );
    // Still running: no worker yet in the answer, the duration counts up, no exit code or error.
    expect(lines[3]).toMatch(/^3\s+RUNNING\s+-\s+\S+Z\s+[34]\.\ds\s+-\s+-$/);
    expect(lines).toHaveLength(4);
  });

  it("gives a paused or skipped attempt without an end no running duration", async () => {
    stub.reply = () => ({
      status: 200,
      body: { items: [{ code: "w", state: "PAUSED", attempt: 1, startedAt: ago(5_000) }] },
    });
    const res = await shoal(["attempts", "i-1", "w"]);
    expect(res.stdout.split("\n")[1]).toMatch(/^1\s+PAUSED\s+-\s+\S+Z\s+-\s+-\s+-$/);
  });

  it("prints the attempts as JSON with -o json", async () => {
    stub.reply = () => ({ status: 200, body: { items: attempts } });
    const res = await shoal(["attempts", "i-1", "load", "-o", "json"]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ items: attempts });
    expect(res.stdout).toContain('\n  "items": [');
  });

  it("says so on stderr when the task has not started", async () => {
    stub.reply = () => ({ status: 200, body: { items: [] } });
    expect(await shoal(["attempts", "i-1", "load"])).toEqual({
      code: 0,
      stdout: "",
      stderr: "no attempts: task load has not started in instance i-1\n",
    });
    expect(JSON.parse((await shoal(["attempts", "i-1", "load", "-o", "json"])).stdout)).toEqual({
      items: [],
    });
  });

  it("reports a 404 with exit 1 and bad usage with exit 2", async () => {
    stub.reply = () => notFound("instance 'i-9' does not exist");
    expect(await shoal(["attempts", "i-9", "load"])).toMatchObject({
      code: 1,
      stderr: "error: instance 'i-9' does not exist\n",
    });
    stub.requests = [];
    expect((await shoal(["attempts", "i-1"])).code).toBe(2);
    expect((await shoal(["attempts", "i-1", "load", "-o", "yaml"])).code).toBe(2);
    expect(stub.requests).toHaveLength(0);
  });
});

// ---- task groups ----------------------------------------------------------------------------

function group(name: string, fields: Partial<TaskGroup> = {}): TaskGroup {
  return {
    name,
    capacity: 4,
    used: 0,
    waiting: 0,
    createdAt: T0,
    updatedAt: T0,
    ...fields,
  };
}

describe("shoal task-group put", () => {
  it("creates a group: PUT with capacity and description, 201 → created", async () => {
    stub.reply = (req) => ({
      status: 201,
      body: group("etl-db", { ...JSON.parse(req.body), capacity: 4 }),
    });
    const res = await shoal([
      "task-group",
      "put",
      "etl-db",
      "--capacity",
      "4",
      "--description",
      "the warehouse takes 4 loads at once",
    ]);
    expect(res).toEqual({ code: 0, stdout: "etl-db capacity 4 (created)\n", stderr: "" });
    expect(calls()).toEqual(["PUT /v1/task-groups/etl-db"]);
    expect(stub.requests[0]?.contentType).toBe("application/json");
    expect(JSON.parse(stub.requests[0]?.body ?? "")).toEqual({
      capacity: 4,
      description: "the warehouse takes 4 loads at once",
    });
  });

  it("changes a group: no description in the body when none is given, 200 → updated", async () => {
    stub.reply = () => ({ status: 200, body: group("etl-db", { capacity: 10, used: 3 }) });
    const res = await shoal(["task-group", "put", "etl-db", "--capacity", "10"]);
    expect(res).toEqual({ code: 0, stdout: "etl-db capacity 10 (updated)\n", stderr: "" });
    expect(JSON.parse(stub.requests[0]?.body ?? "")).toEqual({ capacity: 10 });
  });

  it("accepts the capacity bounds 1 and 1000", async () => {
    stub.reply = (req) => ({ status: 201, body: group("g", JSON.parse(req.body)) });
    expect((await shoal(["task-group", "put", "g", "--capacity", "1"])).stdout).toBe(
      "g capacity 1 (created)\n",
    );
    expect((await shoal(["task-group", "put", "g", "--capacity", "1000"])).stdout).toBe(
      "g capacity 1000 (created)\n",
    );
  });

  it("rejects a capacity that is missing or not a whole number 1..1000 before any request", async () => {
    for (const bad of ["0", "1001", "2.5", "-1", "four", ""]) {
      const res = await shoal(["task-group", "put", "g", "--capacity", bad]);
      expect(res.code, bad).toBe(2);
      expect(res.stderr, bad).toContain("must be an integer from 1 to 1000");
    }
    const missing = await shoal(["task-group", "put", "g"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--capacity");
    expect((await shoal(["task-group", "put", "--capacity", "3"])).code).toBe(2);
    expect(stub.requests).toHaveLength(0);
  });

  it("prints an API 400 with its details and exits 1", async () => {
    stub.reply = () => ({
      status: 400,
      body: {
        error: {
          code: "ValidationError",
          message: "The task group is invalid.",
          details: [{ path: "name", message: "must match ^[A-Za-z0-9_.-]{1,64}$" }],
        },
      },
    });
    expect(await shoal(["task-group", "put", "bad name", "--capacity", "2"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: The task group is invalid.\n  - name: must match ^[A-Za-z0-9_.-]{1,64}$\n",
    });
    expect(stub.requests[0]?.path).toBe("/v1/task-groups/bad%20name");
  });
});

describe("shoal task-groups", () => {
  it("follows nextToken and draws one table", async () => {
    stub.reply = (req) =>
      req.query.get("nextToken") === "p2"
        ? { status: 200, body: { items: [group("zeta", { capacity: 1, used: 1, waiting: 7 })] } }
        : {
            status: 200,
            body: {
              items: [
                group("alpha", { capacity: 2, used: 1, description: "shared\n  database" }),
                group("beta", { capacity: 1000 }),
              ],
              nextToken: "p2",
            },
          };
    const res = await shoal(["task-groups"]);
    expect(res.code).toBe(0);
    expect(calls()).toEqual(["GET /v1/task-groups", "GET /v1/task-groups"]);
    expect(stub.requests.map((r) => r.query.toString())).toEqual([
      "limit=200",
      "limit=200&nextToken=p2",
    ]);
    expect(res.stdout).toBe(
      "NAME   CAPACITY  USED  WAITING  DESCRIPTION\n" +
        "alpha  2         1     0        shared database\n" +
        "beta   1000      0     0\n" +
        "zeta   1         1     7\n",
    );
  });

  it("prints JSON with -o json and hints at put when there are none", async () => {
    stub.reply = () => ({ status: 200, body: { items: [group("alpha")] } });
    const json = await shoal(["task-groups", "-o", "json"]);
    expect(JSON.parse(json.stdout)).toEqual({ items: [group("alpha")] });

    stub.reply = () => ({ status: 200, body: { items: [] } });
    expect(await shoal(["task-groups"])).toEqual({
      code: 0,
      stdout: "",
      stderr: "no task groups (create one with: shoal task-group put NAME --capacity N)\n",
    });
    expect((await shoal(["task-groups", "-o", "xml"])).code).toBe(2);
  });
});

describe("shoal task-group get", () => {
  const g = group("etl-db", {
    capacity: 4,
    used: 4,
    waiting: 2,
    description: "warehouse loads",
    updatedAt: "2026-11-21T06:30:00.125Z",
  });

  it("prints a few aligned lines, or JSON with -o json", async () => {
    stub.reply = () => ({ status: 200, body: g });
    const res = await shoal(["task-group", "get", "etl-db"]);
    expect(res).toEqual({
      code: 0,
      stderr: "",
      stdout:
        "name:        etl-db\n" +
        "capacity:    4\n" +
        "used:        4\n" +
        "waiting:     2\n" +
        "description: warehouse loads\n" +
        "created:     2026-11-21T05:00:00Z\n" +
        "updated:     2026-11-21T06:30:00Z\n",
    });
    expect(calls()).toEqual(["GET /v1/task-groups/etl-db"]);
    const json = await shoal(["task-group", "get", "etl-db", "--output", "JSON"]);
    expect(JSON.parse(json.stdout)).toEqual(g);
  });

  it("leaves out a missing description and reports a 404 with exit 1", async () => {
    stub.reply = () => ({ status: 200, body: group("plain") });
    expect((await shoal(["task-group", "get", "plain"])).stdout).not.toContain("description");
    stub.reply = () => notFound("task group 'nope' does not exist");
    expect(await shoal(["task-group", "get", "nope"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: task group 'nope' does not exist\n",
    });
  });
});

describe("shoal task-group delete", () => {
  it("sends DELETE and confirms on 204", async () => {
    stub.reply = () => ({ status: 204 });
    expect(await shoal(["task-group", "delete", "etl-db"])).toEqual({
      code: 0,
      stdout: "etl-db deleted\n",
      stderr: "",
    });
    expect(calls()).toEqual(["DELETE /v1/task-groups/etl-db"]);
    expect(stub.requests[0]?.body).toBe("");
  });

  it("passes a 409 through while slots are held", async () => {
    const message = "task group 'etl-db' has tasks holding a slot; wait until they finish";
    stub.reply = () => conflict(message);
    expect(await shoal(["task-group", "delete", "etl-db"])).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: ${message}\n`,
    });
  });

  it("needs a name, and an unknown subcommand is a usage error", async () => {
    expect((await shoal(["task-group", "delete"])).code).toBe(2);
    expect((await shoal(["task-group", "resize", "g"])).code).toBe(2);
    expect(stub.requests).toHaveLength(0);
  });
});

// ---- task tree: newer states and notes -------------------------------------------------------

describe("shoal get instance with control states", () => {
  const definition = [
    { code: "check", upstream: [] },
    { code: "fast", upstream: ["check"] },
    { code: "slow", upstream: ["check"] },
    { code: "child", upstream: ["fast"] },
    { code: "load", upstream: ["fast"] },
    { code: "report", upstream: ["load"] },
  ];
  const inst: Instance = {
    instanceId: "i-5",
    workflow: "branchy",
    version: 3,
    state: "PAUSING",
    createdAt: T0,
    startedAt: T0,
    tasks: [
      {
        code: "check",
        type: "SWITCH",
        state: "SUCCESS",
        attempt: 1,
        startedAt: T0,
        endedAt: "2026-11-21T05:00:00.200Z",
        branch: ["fast"],
      },
      {
        code: "fast",
        type: "SHELL",
        state: "FORCED_SUCCESS",
        attempt: 2,
        startedAt: "2026-11-21T05:00:01.000Z",
        endedAt: "2026-11-21T05:00:02.500Z",
        exitCode: 3,
        error: "command exited with code 3",
      },
      { code: "slow", type: "SHELL", state: "SKIPPED", attempt: 1, endedAt: T0 },
      {
        code: "child",
        type: "SUB_WORKFLOW",
        state: "PAUSED",
        attempt: 1,
        startedAt: "2026-11-21T05:00:03.000Z",
        subInstanceId: "c0ffee00-0000-5000-a000-000000000001",
      },
      { code: "load", type: "SHELL", state: "SUBMITTED", attempt: 1, taskGroup: "etl-db" },
    ],
  };

  it("shows branch, forced error, skip, pause, sub-instance and the awaited task group", async () => {
    stub.reply = (req) => {
      if (req.path === "/v1/instances/i-5") return { status: 200, body: inst };
      if (req.path === "/v1/workflows/branchy" && req.query.get("version") === "3") {
        return {
          status: 200,
          body: { name: "branchy", version: 3, releaseState: "ONLINE", tasks: definition },
        };
      }
      return notFound("no such route");
    };
    const res = await shoal(["get", "instance", "i-5"]);
    expect(res).toMatchObject({ code: 0, stderr: "" });
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^i-5 {2}branchy:3 {2}PAUSING {2}\S/);
    expect(lines.slice(1)).toEqual([
      "check            SUCCESS         attempt 1  0.2s  → fast",
      "├─ fast          FORCED_SUCCESS  attempt 2  1.5s  was: command exited with code 3",
      "│  ├─ child      PAUSED          attempt 1        sub-instance c0ffee00-0000-5000-a000-000000000001",
      "│  └─ load       SUBMITTED       attempt 1        waiting for task group etl-db",
      "│     └─ report  -",
      "└─ slow          SKIPPED",
    ]);
  });

  it("notes a warning, a branch taking nothing, and the task group only while SUBMITTED", () => {
    const lines = renderInstanceTree(
      {
        instanceId: "i-6",
        workflow: "w",
        version: 1,
        state: "PAUSED",
        tasks: [
          {
            code: "slowpoke",
            state: "RUNNING",
            attempt: 1,
            startedAt: "2026-11-21T05:00:00.000Z",
            taskGroup: "db",
            warning: "ran longer than its 1 min timeout",
          },
          { code: "gate", type: "CONDITIONS", state: "SUCCESS", attempt: 1, branch: [] },
        ],
      },
      [{ code: "slowpoke" }, { code: "gate" }],
      Date.parse("2026-11-21T05:02:00.000Z"),
    );
    expect(lines).toEqual([
      "i-6  w:1  PAUSED  -",
      "slowpoke  RUNNING  attempt 1  running 2m 00s  warning: ran longer than its 1 min timeout",
      "gate      SUCCESS  attempt 1                  → (none)",
    ]);
  });
});
