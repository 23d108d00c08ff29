/**
 * How the CLI's options read and parse: choice options show their values as typed
 * (`table|json`, lower case) and accept any case, sending the upper-case value the API wants;
 * `run --worker-group`; and the mapping of API error paths to flags. Against a stub of API v1
 * (test/helpers/stub-api.ts), in-process through `main()`.
 */
import { describe, expect, it } from "vitest";
import { flagOf } from "../../lib/cli/http.js";
import { invalid, useStubApi } from "../helpers/stub-api.js";

/** The idempotency key `shoal run` makes up for each invocation (lib/cli/commands/run.ts). */
const UUID = expect.stringMatching(
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
);

const stub = useStubApi();
const { shoal } = stub;

/** The help of `args`, with commander's line wrapping undone (one space between words). */
async function help(args: string[]): Promise<string> {
  const res = await shoal([...args, "--help"]);
  expect(res.code).toBe(0);
  return res.stdout.replace(/\s+/g, " ");
}

describe("choice options", () => {
  it("show the accepted values as typed, with the default in lower case", async () => {
    const instances = await help(["instances"]);
    expect(instances).toContain("-o, --output <format> output format: table|json (default: table)");
    expect(instances).toContain(
      "--state <state> only instances in this state: submitted|running|pausing|paused|stopping|stopped|success|failure",
    );
    expect(instances).toContain(
      "--type <type> only instances started this way (TYPE column): manual|schedule|backfill|trigger|sub_workflow",
    );
    expect(instances).not.toMatch(/"TABLE"|TABLE or|table or json/);

    const run = await help(["run"]);
    expect(run).toContain(
      "--priority <priority> instance priority: highest|high|medium|low|lowest",
    );
    expect(run).toContain(
      "--scope <scope> tasks covered with --start-task: downstream|only|upstream",
    );
    expect(run).toContain(
      "--failure-strategy <strategy> after a task fails for good: end|continue",
    );

    const create = await help(["schedule", "create"]);
    expect(create).toContain(
      "--misfire <policy> fires found late: skip|fire_once|fire_all (default: fire_once)",
    );
    expect(create).toContain(
      "--overlap <policy> while the previous run goes: parallel|serial_wait|serial_discard|serial_priority (default: parallel)",
    );
    // An update changes only what is given: no defaults.
    expect(await help(["schedule", "update"])).toContain(
      "--misfire <policy> fires found late: skip|fire_once|fire_all --misfire-threshold",
    );
    expect(await help(["schedule", "get"])).toContain(
      "-o, --output <format> output format: text|json (default: text)",
    );
    expect(await help(["get", "instance"])).toContain("output format: tree|json (default: tree)");
    const backfill = await help(["backfill"]);
    expect(backfill).toContain(
      "--order <order> oldest first, or newest first: asc|desc (default: asc)",
    );
    expect(backfill).toContain(
      "--priority <priority> run priority: highest|high|medium|low|lowest (default: low)",
    );
  });

  it("accept any case and send the upper-case value; a bad one lists them as typed (exit 2)", async () => {
    stub.reply = () => ({
      status: 202,
      body: { instanceId: "i-1", workflow: "etl", version: 1, state: "SUBMITTED" },
    });
    const res = await shoal([
      "run",
      "etl",
      "--priority",
      "High",
      "--scope",
      "only",
      "--start-task",
      "a",
    ]);
    expect(res).toMatchObject({ code: 0, stdout: "i-1\n" });
    expect(stub.sent()).toEqual({
      priority: "HIGH",
      taskScope: "ONLY",
      startTasks: ["a"],
      idempotencyKey: UUID,
    });

    const bad = await shoal(["run", "etl", "--priority", "urgent"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("must be one of highest|high|medium|low|lowest");
    expect(stub.requests).toHaveLength(1);
  });
});

describe("shoal run --worker-group", () => {
  it("sends workerGroup in the run body", async () => {
    stub.reply = () => ({
      status: 202,
      body: { instanceId: "i-2", workflow: "etl", version: 1, state: "SUBMITTED" },
    });
    expect((await shoal(["run", "etl", "--worker-group", "gpu"])).code).toBe(0);
    expect(stub.sent()).toEqual({ workerGroup: "gpu", idempotencyKey: UUID });
  });
});

describe("API errors name the flag", () => {
  it("maps a body path, and the paths below it, to the flag", () => {
    const flags = { params: "--param", startTasks: "--start-task", priority: "--priority" };
    expect(flagOf("priority", flags)).toBe("--priority");
    expect(flagOf("params.day", flags)).toBe("--param day");
    expect(flagOf("startTasks[2]", flags)).toBe("--start-task");
    expect(flagOf("workflow", flags)).toBeUndefined();
    expect(flagOf("prioritySomething", flags)).toBeUndefined();
  });

  it("rewrites the message and details of a 400 to run; says a lone detail once", async () => {
    stub.reply = () =>
      invalid("params.day: must be at most 4096 bytes", [
        { path: "params.day", message: "must be at most 4096 bytes" },
        { path: "priority", message: "must be one of HIGHEST, HIGH, MEDIUM, LOW, LOWEST" },
      ]);
    const res = await shoal(["run", "etl", "-p", "day=x"]);
    expect(res).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "error: --param day: must be at most 4096 bytes\n" +
        "  - --priority: must be one of HIGHEST, HIGH, MEDIUM, LOW, LOWEST\n",
    });
  });

  it("leaves a path no flag fills (an argument) as it is", async () => {
    stub.reply = () =>
      invalid("The task group is invalid.", [
        { path: "name", message: "must match ^[A-Za-z0-9_.-]{1,64}$" },
        { path: "capacity", message: "must be <= 1000" },
      ]);
    const res = await shoal(["task-group", "put", "g", "--capacity", "1"]);
    expect(res.stderr).toBe(
      "error: The task group is invalid.\n" +
        "  - name: must match ^[A-Za-z0-9_.-]{1,64}$\n" +
        "  - --capacity: must be <= 1000\n",
    );
  });
});
