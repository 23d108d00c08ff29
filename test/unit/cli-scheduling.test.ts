/**
 * The `shoal` verbs for schedules, backfills, triggers and events, run in-process through
 * `main()` against a stub of API v1 (node:http, port 0) that records every request and answers
 * with what each test scripts: method, path, query and body sent, output and exit code.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backfill, Schedule, ScheduleFire, Trigger } from "../../lib/cli/api-types.js";
import { invalid, notFound, useStubApi } from "../helpers/stub-api.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "shoal-cli-scheduling-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// ---- stub API (test/helpers/stub-api.ts) -----------------------------------------------------

const stub = useStubApi();
const { shoal, calls, sent } = stub;

/** Expects every run of `argv` to be a usage error (exit 2) that sent nothing. */
async function expectUsage(argv: string[], stderr?: string | RegExp) {
  const res = await shoal(argv);
  expect(res.code, argv.join(" ")).toBe(2);
  if (stderr !== undefined) expect(res.stderr).toMatch(stderr);
  expect(stub.requests, argv.join(" ")).toHaveLength(0);
}

const T0 = "2026-11-21T05:00:00.000Z";

function schedule(fields: Partial<Schedule> = {}): Schedule {
  return {
    id: "s-1",
    workflow: "etl",
    cron: "0 6 * * *",
    timezone: "Europe/Paris",
    params: {},
    misfirePolicy: "FIRE_ONCE",
    misfireThresholdSeconds: 60,
    maxCatchup: 100,
    overlapPolicy: "PARALLEL",
    state: "ONLINE",
    nextFireTime: T0,
    createdAt: T0,
    updatedAt: T0,
    ...fields,
  };
}

// ---- schedule create ------------------------------------------------------------------------

describe("shoal schedule create", () => {
  it("POSTs every option given and prints the id, then the next fire in the zone", async () => {
    stub.reply = () => ({ status: 201, body: schedule() });
    const res = await shoal([
      "schedule",
      "create",
      "etl",
      "--cron",
      "0 6 * * *",
      "--timezone",
      "Europe/Paris",
      "--start",
      "2026-01-01T00:00:00+01:00",
      "--end",
      "2027-01-01T00:00:00Z",
      "-p",
      "env=prod",
      "--param",
      "day=$[yyyyMMdd]",
      "--priority",
      "high",
      "--failure-strategy",
      "continue",
      "--worker-group",
      "gpu",
      "--misfire",
      "fire_all",
      "--misfire-threshold",
      "300",
      "--max-catchup",
      "5",
      "--overlap",
      "serial_wait",
    ]);
    expect(res).toEqual({
      code: 0,
      stdout: "s-1\nnext fire: 2026-11-21T05:00:00Z (2026-11-21 06:00:00 +01:00 Europe/Paris)\n",
      stderr: "",
    });
    expect(calls()).toEqual(["POST /v1/schedules"]);
    expect(sent()).toEqual({
      workflow: "etl",
      cron: "0 6 * * *",
      timezone: "Europe/Paris",
      startTime: "2025-12-31T23:00:00.000Z",
      endTime: "2027-01-01T00:00:00.000Z",
      params: { env: "prod", day: "$[yyyyMMdd]" },
      priority: "HIGH",
      failureStrategy: "CONTINUE",
      workerGroup: "gpu",
      misfirePolicy: "FIRE_ALL",
      misfireThresholdSeconds: 300,
      maxCatchup: 5,
      overlapPolicy: "SERIAL_WAIT",
    });
  });

  it("sends only what was given: a rate, OFFLINE; says why there is no next fire", async () => {
    stub.reply = () => ({
      status: 201,
      body: schedule({
        cron: undefined,
        rate: "5 minutes",
        nextFireTime: undefined,
        state: "OFFLINE",
      }),
    });
    const res = await shoal(["schedule", "create", "etl", "--rate", "5 minutes", "--offline"]);
    expect(sent()).toEqual({ workflow: "etl", rate: "5 minutes", state: "OFFLINE" });
    expect(res.stdout).toBe(
      "s-1\nnext fire: none (OFFLINE; start it with: shoal schedule online s-1)\n",
    );
  });

  it("sends --at as a UTC instant", async () => {
    stub.reply = () => ({ status: 201, body: schedule({ cron: undefined, at: T0 }) });
    await shoal(["schedule", "create", "etl", "--at", "2026-11-21T06:00:00+01:00"]);
    expect(sent()).toEqual({ workflow: "etl", at: T0 });
  });

  it("refuses a missing, doubled or invalid timing and bad values before any request (exit 2)", async () => {
    await expectUsage(["schedule", "create", "etl"], /one of --cron, --rate or --at/);
    await expectUsage(
      ["schedule", "create", "etl", "--cron", "* * * * *", "--rate", "1 minute"],
      /only one of --cron, --rate or --at \(got --cron, --rate\)/,
    );
    await expectUsage(["schedule", "create", "etl", "--cron", "0 5 * *"], /--cron: cron needs 5/);
    await expectUsage(
      ["schedule", "create", "etl", "--cron", "0 5 * * *", "--timezone", "Mars/Base"],
      /--timezone: unknown time zone 'Mars\/Base'/,
    );
    await expectUsage(["schedule", "create", "etl", "--rate", "5 minutez"], /--rate: rate/);
    await expectUsage(["schedule", "create", "etl", "--at", "2026-11-21T06:00:00"], /with a zone/);
    await expectUsage(["schedule", "create", "etl", "--at", "tomorrow"]);
    await expectUsage(["schedule", "create", "etl", "--cron", "* * * * *", "--misfire", "LATER"]);
    await expectUsage(["schedule", "create", "etl", "--cron", "* * * * *", "--max-catchup", "0"]);
    await expectUsage(["schedule", "create", "etl", "--cron", "* * * * *", "-p", "novalue"]);
    await expectUsage(["schedule", "create", "--cron", "* * * * *"]);
  });

  it("passes a 400 through with its details (exit 1)", async () => {
    stub.reply = () =>
      invalid("The schedule is invalid.", [
        { path: "workflow", message: "workflow 'nope' does not exist" },
      ]);
    expect(await shoal(["schedule", "create", "nope", "--cron", "0 5 * * *"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: The schedule is invalid.\n  - workflow: workflow 'nope' does not exist\n",
    });
  });
});

// ---- schedules / schedule get ---------------------------------------------------------------

describe("shoal schedules", () => {
  it("follows nextToken and draws the table", async () => {
    stub.reply = (req) =>
      req.query.get("nextToken") === "p2"
        ? {
            status: 200,
            body: {
              items: [
                schedule({
                  id: "s-2",
                  cron: undefined,
                  at: T0,
                  timezone: "UTC",
                  nextFireTime: undefined,
                  state: "OFFLINE",
                }),
              ],
            },
          }
        : { status: 200, body: { items: [schedule()], nextToken: "p2" } };
    const res = await shoal(["schedules", "--workflow", "etl"]);
    expect(res.code).toBe(0);
    expect(calls()).toEqual(["GET /v1/schedules", "GET /v1/schedules"]);
    expect(stub.requests[0]?.query.get("workflow")).toBe("etl");
    expect(stub.requests[0]?.query.get("limit")).toBe("200");
    expect(stub.requests[1]?.query.get("nextToken")).toBe("p2");
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+WORKFLOW\s+EXPRESSION\s+TZ\s+STATE\s+NEXT FIRE\s+OVERLAP$/);
    expect(lines[1]).toMatch(
      /^s-1\s+etl\s+cron\(0 6 \* \* \*\)\s+Europe\/Paris\s+ONLINE\s+2026-11-21T05:00:00Z\s+PARALLEL$/,
    );
    expect(lines[2]).toMatch(
      /^s-2\s+etl\s+at\(2026-11-21T05:00:00Z\)\s+UTC\s+OFFLINE\s+-\s+PARALLEL$/,
    );
    expect(lines).toHaveLength(3);
  });

  it("prints JSON with -o json, and an empty list on stderr", async () => {
    stub.reply = () => ({ status: 200, body: { items: [schedule()] } });
    const json = await shoal(["schedules", "-o", "json"]);
    expect(JSON.parse(json.stdout)).toEqual({ items: [schedule()] });
    stub.reply = () => ({ status: 200, body: { items: [] } });
    expect(await shoal(["schedules"])).toEqual({
      code: 0,
      stdout: "",
      stderr: "no schedules (create one with: shoal schedule create WORKFLOW --cron EXPR)\n",
    });
  });
});

describe("shoal schedule get", () => {
  it("prints the set fields aligned, or JSON", async () => {
    const s = schedule({
      params: { env: "prod" },
      priority: "HIGH",
      overlapPolicy: "SERIAL_WAIT",
      queued: ["2026-11-20T05:00:00.000Z"],
    });
    stub.reply = () => ({ status: 200, body: s });
    const res = await shoal(["schedule", "get", "s-1"]);
    expect(calls()).toEqual(["GET /v1/schedules/s-1"]);
    expect(res.stdout).toBe(
      [
        "id:           s-1",
        "workflow:     etl",
        "cron:         0 6 * * *",
        "timezone:     Europe/Paris",
        "state:        ONLINE",
        "next fire:    2026-11-21T05:00:00Z (2026-11-21 06:00:00 +01:00 Europe/Paris)",
        "misfire:      FIRE_ONCE (late by more than 60s)",
        "max catch-up: 100",
        "overlap:      SERIAL_WAIT",
        "priority:     HIGH",
        "params:       env=prod",
        "queued:       2026-11-20T05:00:00Z",
        "created:      2026-11-21T05:00:00Z",
        "updated:      2026-11-21T05:00:00Z",
        "",
      ].join("\n"),
    );
    expect(JSON.parse((await shoal(["schedule", "get", "s-1", "-o", "json"])).stdout)).toEqual(s);
  });

  it("passes a 404 through (exit 1) and encodes the id", async () => {
    stub.reply = () => notFound("schedule 'a/b' does not exist");
    expect(await shoal(["schedule", "get", "a/b"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: schedule 'a/b' does not exist\n",
    });
    expect(stub.requests[0]?.path).toBe("/v1/schedules/a%2Fb");
  });
});

// ---- preview / fires ------------------------------------------------------------------------

describe("shoal schedule preview", () => {
  it("prints each time with the wall clock of the schedule's zone (DST shown by the offset)", async () => {
    stub.reply = (req) =>
      req.path.endsWith("/preview")
        ? {
            status: 200,
            body: { items: ["2026-03-28T05:00:00.000Z", "2026-03-29T04:00:00.000Z"] },
          }
        : { status: 200, body: schedule() };
    const res = await shoal(["schedule", "preview", "s-1", "--count", "2"]);
    expect(calls()).toEqual(["GET /v1/schedules/s-1", "GET /v1/schedules/s-1/preview"]);
    expect(stub.requests[1]?.query.get("count")).toBe("2");
    expect(res).toEqual({
      code: 0,
      stdout:
        "2026-03-28T05:00:00Z  2026-03-28 06:00:00 +01:00 Europe/Paris\n" +
        "2026-03-29T04:00:00Z  2026-03-29 06:00:00 +02:00 Europe/Paris\n",
      stderr: "",
    });
  });

  it("leaves out count unless given, and refuses a bad one (exit 2)", async () => {
    stub.reply = (req) =>
      req.path.endsWith("/preview")
        ? { status: 200, body: { items: [] } }
        : { status: 200, body: schedule({ nextFireTime: undefined }) };
    const res = await shoal(["schedule", "preview", "s-1"]);
    expect(stub.requests[1]?.query.has("count")).toBe(false);
    expect(res.stderr).toBe("no further fire time (schedule s-1 is exhausted)\n");
    stub.requests = [];
    await expectUsage(["schedule", "preview", "s-1", "--count", "0"]);
  });
});

describe("shoal schedule fires", () => {
  const fire = (n: number, fields: Partial<ScheduleFire> = {}): ScheduleFire => ({
    nominalTime: `2026-11-2${n}T05:00:00.000Z`,
    actualTime: `2026-11-2${n}T05:00:01.250Z`,
    latenessMs: 1250,
    decision: "FIRED",
    instanceId: `i-${n}`,
    ...fields,
  });

  it("follows nextToken up to --limit, with the range in the query", async () => {
    stub.reply = (req) =>
      req.query.get("nextToken") === "p2"
        ? { status: 200, body: { items: [fire(2), fire(3)], nextToken: "p3" } }
        : { status: 200, body: { items: [fire(1)], nextToken: "p2" } };
    const res = await shoal([
      "schedule",
      "fires",
      "s-1",
      "--from",
      "2026-11-21T00:00:00Z",
      "--to",
      "2026-11-24T00:00:00Z",
      "--limit",
      "3",
    ]);
    expect(calls()).toEqual(["GET /v1/schedules/s-1/fires", "GET /v1/schedules/s-1/fires"]);
    const q = stub.requests[0]?.query;
    expect(q?.get("from")).toBe("2026-11-21T00:00:00.000Z");
    expect(q?.get("to")).toBe("2026-11-24T00:00:00.000Z");
    expect(q?.get("limit")).toBe("3");
    expect(stub.requests[1]?.query.get("limit")).toBe("2");
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NOMINAL\s+ACTUAL\s+LATENESS\s+DECISION\s+INSTANCE$/);
    expect(lines[1]).toMatch(/^2026-11-21T05:00:00Z\s+2026-11-21T05:00:01Z\s+1\.3s\s+FIRED\s+i-1$/);
    expect(lines).toHaveLength(4);
    expect(res.stderr).toBe("(more fires: raise --limit or narrow with --from/--to)\n");
  });

  it("shows a decision without an instance, and JSON with the next token", async () => {
    const skipped = fire(1, {
      decision: "SKIPPED_MISFIRE",
      instanceId: undefined,
      latenessMs: 7_200_000,
    });
    stub.reply = () => ({ status: 200, body: { items: [skipped], nextToken: "p2" } });
    const table = await shoal(["schedule", "fires", "s-1", "--limit", "1"]);
    expect(table.stdout.split("\n")[1]).toMatch(/\s2h 00m 00s\s+SKIPPED_MISFIRE\s+-$/);
    const json = await shoal(["schedule", "fires", "s-1", "--limit", "1", "-o", "json"]);
    expect(JSON.parse(json.stdout)).toEqual({
      items: [JSON.parse(JSON.stringify(skipped))],
      nextToken: "p2",
    });
  });

  it("refuses a time without a zone (exit 2)", async () => {
    await expectUsage(["schedule", "fires", "s-1", "--from", "2026-11-21"], /--from/);
  });
});

// ---- online / offline / delete --------------------------------------------------------------

describe("shoal schedule online|offline|delete", () => {
  it("POSTs the state change without a body and prints the new state", async () => {
    stub.reply = (req) => ({
      status: 200,
      body: req.path.endsWith("/online")
        ? schedule()
        : schedule({ state: "OFFLINE", nextFireTime: undefined }),
    });
    expect((await shoal(["schedule", "online", "s-1"])).stdout).toBe(
      "s-1 ONLINE (next fire: 2026-11-21T05:00:00Z (2026-11-21 06:00:00 +01:00 Europe/Paris))\n",
    );
    expect((await shoal(["schedule", "offline", "s-1"])).stdout).toBe("s-1 OFFLINE\n");
    expect(calls()).toEqual(["POST /v1/schedules/s-1/online", "POST /v1/schedules/s-1/offline"]);
    expect(stub.requests.map((r) => r.body)).toEqual(["", ""]);
  });

  it("DELETEs and confirms; a 404 exits 1", async () => {
    stub.reply = () => ({ status: 204 });
    expect(await shoal(["schedule", "delete", "s-1"])).toEqual({
      code: 0,
      stdout: "s-1 deleted\n",
      stderr: "",
    });
    expect(calls()).toEqual(["DELETE /v1/schedules/s-1"]);
    stub.reply = () => notFound("schedule 's-9' does not exist");
    expect((await shoal(["schedule", "delete", "s-9"])).code).toBe(1);
    stub.requests = [];
    await expectUsage(["schedule", "delete"]);
  });
});

// ---- backfill -------------------------------------------------------------------------------

function backfill(fields: Partial<Backfill> = {}): Backfill {
  return {
    id: "b-1",
    workflow: "etl",
    state: "RUNNING",
    mode: "SERIAL",
    parallelism: 1,
    priority: "LOW",
    total: 3,
    done: 0,
    running: 1,
    failed: 0,
    pending: 2,
    createdAt: T0,
    updatedAt: T0,
    ...fields,
  };
}

describe("shoal backfill", () => {
  it("POSTs a range along a cron and prints the backfill id", async () => {
    stub.reply = () => ({ status: 202, body: backfill() });
    const res = await shoal([
      "backfill",
      "etl",
      "--from",
      "2026-11-01T00:00:00Z",
      "--to",
      "2026-11-03T00:00:00Z",
      "--cron",
      "0 0 * * *",
      "--timezone",
      "Europe/Paris",
      "--order",
      "desc",
      "--priority",
      "lowest",
      "-p",
      "env=prod",
      "--failure-strategy",
      "end",
    ]);
    expect(res).toEqual({ code: 0, stdout: "b-1\n", stderr: "" });
    expect(calls()).toEqual(["POST /v1/workflows/etl/backfill"]);
    expect(sent()).toEqual({
      from: "2026-11-01T00:00:00.000Z",
      to: "2026-11-03T00:00:00.000Z",
      cron: "0 0 * * *",
      timezone: "Europe/Paris",
      order: "DESC",
      priority: "LOWEST",
      params: { env: "prod" },
      failureStrategy: "END",
    });
  });

  it("sends --timezone with --date: the zone of the runs' time parameters", async () => {
    stub.reply = () => ({ status: 202, body: backfill() });
    const res = await shoal([
      "backfill",
      "etl",
      "--date",
      "2026-11-01T23:30:00Z",
      "--timezone",
      "Europe/Paris",
    ]);
    expect(res.code).toBe(0);
    expect(sent()).toEqual({ dates: ["2026-11-01T23:30:00.000Z"], timezone: "Europe/Paris" });
  });

  it("sends dates (repeatable, comma-separated); --parallelism means PARALLEL", async () => {
    stub.reply = () => ({ status: 202, body: backfill({ mode: "PARALLEL", parallelism: 4 }) });
    await shoal([
      "backfill",
      "etl",
      "--date",
      "2026-11-01T00:00:00Z,2026-11-02T00:00:00Z",
      "--date",
      "2026-11-05T00:00:00+01:00",
      "--parallelism",
      "4",
    ]);
    expect(sent()).toEqual({
      dates: ["2026-11-01T00:00:00.000Z", "2026-11-02T00:00:00.000Z", "2026-11-04T23:00:00.000Z"],
      mode: "PARALLEL",
      parallelism: 4,
    });
  });

  it("--dry-run prints the nominal times and their count", async () => {
    stub.reply = () => ({
      status: 200,
      body: { nominalTimes: ["2026-11-01T00:00:00.000Z", "2026-11-02T00:00:00.000Z"] },
    });
    const res = await shoal([
      "backfill",
      "etl",
      "--from",
      "2026-11-01T00:00:00Z",
      "--to",
      "2026-11-02T00:00:00Z",
      "--dry-run",
    ]);
    expect(sent()).toMatchObject({ dryRun: true });
    expect(res).toEqual({
      code: 0,
      stdout: "2026-11-01T00:00:00Z\n2026-11-02T00:00:00Z\n",
      stderr: "2 nominal times (dry run: nothing started)\n",
    });
  });

  it("--wait polls until SUCCESS, printing progress when it changes (exit 0)", async () => {
    let polls = 0;
    stub.reply = (req) => {
      if (req.method === "POST") return { status: 202, body: backfill() };
      polls++;
      return {
        status: 200,
        body:
          polls < 2
            ? backfill({ done: 1, pending: 1 })
            : backfill({
                state: "SUCCESS",
                done: 3,
                running: 0,
                pending: 0,
                updatedAt: "2026-11-21T05:04:05.000Z",
              }),
      };
    };
    const res = await shoal(["backfill", "etl", "--date", T0, "-w"]);
    expect(calls()).toEqual([
      "POST /v1/workflows/etl/backfill",
      "GET /v1/backfills/b-1",
      "GET /v1/backfills/b-1",
    ]);
    expect(res).toEqual({
      code: 0,
      stdout: [
        "b-1",
        "RUNNING  0/3 done, 1 running, 0 failed, 2 pending",
        "RUNNING  1/3 done, 1 running, 0 failed, 1 pending",
        "SUCCESS  3/3 done, 0 running, 0 failed, 0 pending",
        "SUCCESS in 4m 05s",
        "",
      ].join("\n"),
      stderr: "",
    });
  });

  it("--wait exits 1 on FAILURE and on CANCELLED", async () => {
    stub.reply = () => ({
      status: 202,
      body: backfill({ state: "FAILURE", done: 2, failed: 1, running: 0, pending: 0 }),
    });
    const failed = await shoal(["backfill", "etl", "--date", T0, "--wait"]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(
      "FAILURE in 0.0s\n1 run failed (see: shoal instances --workflow etl --state FAILURE)\n",
    );
    stub.reply = () => ({ status: 202, body: backfill({ state: "CANCELLED" }) });
    expect((await shoal(["backfill", "etl", "--date", T0, "--wait"])).code).toBe(1);
  });

  it("refuses contradictory or missing options before any request (exit 2)", async () => {
    const range = ["--from", "2026-11-01T00:00:00Z", "--to", "2026-11-02T00:00:00Z"];
    await expectUsage(["backfill", "etl"], /--from ISO --to ISO, or --date/);
    await expectUsage(["backfill", "etl", ...range, "--date", T0], /not both/);
    await expectUsage(["backfill", "etl", "--from", "2026-11-01T00:00:00Z"], /--to is required/);
    await expectUsage(
      ["backfill", "etl", "--from", "2026-11-02T00:00:00Z", "--to", "2026-11-01T00:00:00Z"],
      /--to must not be before --from/,
    );
    await expectUsage(["backfill", "etl", "--date", T0, "--cron", "0 0 * * *"], /--date/);
    await expectUsage(["backfill", "etl", ...range, "--timezone", "UTC"], /--timezone applies/);
    await expectUsage(["backfill", "etl", ...range, "--cron", "0 0 *"], /--cron: cron needs/);
    await expectUsage(
      ["backfill", "etl", ...range, "--mode", "serial", "--parallelism", "2"],
      /--parallelism needs --mode PARALLEL/,
    );
    await expectUsage(["backfill", "etl", ...range, "--parallelism", "101"]);
    await expectUsage(["backfill", "etl", ...range, "--dry-run", "--wait"], /nothing to --wait/);
    await expectUsage(["backfill", "etl", "--date", "2026-11-01"], /with a zone/);
    await expectUsage(["backfill", "etl", ...range, "--order", "RANDOM"]);
  });

  it("passes a 400 (naming the flag of the field) and a 404 through (exit 1)", async () => {
    stub.reply = () =>
      invalid("The backfill is invalid.", [
        { path: "cron", message: "workflow 'etl' has no cron schedule; give a cron" },
      ]);
    const range = ["--from", "2026-11-01T00:00:00Z", "--to", "2026-11-02T00:00:00Z"];
    expect(await shoal(["backfill", "etl", ...range])).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "error: The backfill is invalid.\n  - --cron: workflow 'etl' has no cron schedule; give a cron\n",
    });
    stub.reply = () => notFound("workflow 'nope' does not exist");
    expect((await shoal(["backfill", "nope", ...range])).stderr).toBe(
      "error: workflow 'nope' does not exist\n",
    );
  });
});

describe("shoal backfills", () => {
  it("get prints the progress aligned, or JSON", async () => {
    const b = backfill({ mode: "PARALLEL", parallelism: 4, done: 1, failed: 1, pending: 0 });
    stub.reply = () => ({ status: 200, body: b });
    const res = await shoal(["backfills", "get", "b-1"]);
    expect(calls()).toEqual(["GET /v1/backfills/b-1"]);
    expect(res.stdout).toBe(
      [
        "id:       b-1",
        "workflow: etl",
        "state:    RUNNING",
        "mode:     PARALLEL (4 at once)",
        "priority: LOW",
        "done:     1/3",
        "running:  1",
        "failed:   1",
        "pending:  0",
        "created:  2026-11-21T05:00:00Z",
        "updated:  2026-11-21T05:00:00Z",
        "",
      ].join("\n"),
    );
    expect(JSON.parse((await shoal(["backfills", "get", "b-1", "-o", "json"])).stdout)).toEqual(b);
  });

  it("pause, resume and cancel POST without a body and print the new state", async () => {
    const to: Record<string, string> = { pause: "PAUSED", resume: "RUNNING", cancel: "CANCELLED" };
    stub.reply = (req) => ({
      status: 202,
      body: backfill({ state: (to[req.path.split("/").pop() ?? ""] ?? "?") as Backfill["state"] }),
    });
    for (const verb of ["pause", "resume", "cancel"]) {
      expect((await shoal(["backfills", verb, "b-1"])).stdout).toBe(`b-1 ${to[verb]}\n`);
    }
    expect(calls()).toEqual([
      "POST /v1/backfills/b-1/pause",
      "POST /v1/backfills/b-1/resume",
      "POST /v1/backfills/b-1/cancel",
    ]);
    expect(stub.requests.map((r) => r.body)).toEqual(["", "", ""]);
  });

  it("passes a 409 and a 404 through (exit 1)", async () => {
    stub.reply = () => ({
      status: 409,
      body: { error: { code: "Conflict", message: "backfill 'b-1' is SUCCESS; it cannot pause" } },
    });
    expect(await shoal(["backfills", "pause", "b-1"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: backfill 'b-1' is SUCCESS; it cannot pause\n",
    });
    stub.reply = () => notFound("backfill 'b-9' does not exist");
    expect((await shoal(["backfills", "get", "b-9"])).code).toBe(1);
  });
});

// ---- triggers -------------------------------------------------------------------------------

function trigger(fields: Partial<Trigger> = {}): Trigger {
  return {
    id: "t-1",
    workflow: "etl",
    eventPattern: { source: ["com.example.orders"], "detail-type": ["OrderPlaced"] },
    params: { order: "$.detail.id" },
    debounceSeconds: 0,
    state: "ONLINE",
    createdAt: T0,
    refusedRuns: 0,
    loopStops: 0,
    ...fields,
  };
}

describe("shoal trigger create", () => {
  it("POSTs the pattern as an object, the JSONPath params and the debounce; prints the id", async () => {
    stub.reply = () => ({ status: 201, body: trigger() });
    const res = await shoal([
      "trigger",
      "create",
      "etl",
      "--pattern",
      '{"source": ["com.example.orders"]}',
      "-p",
      "order=$.detail.id",
      "--param",
      "region=$.region",
      "--debounce",
      "30",
    ]);
    expect(res).toEqual({ code: 0, stdout: "t-1\n", stderr: "" });
    expect(calls()).toEqual(["POST /v1/triggers"]);
    expect(sent()).toEqual({
      workflow: "etl",
      eventPattern: { source: ["com.example.orders"] },
      params: { order: "$.detail.id", region: "$.region" },
      debounceSeconds: 30,
    });
  });

  it("creates it OFFLINE with --offline, and prints the API's warnings on stderr", async () => {
    stub.reply = () => ({
      status: 201,
      body: {
        ...trigger({ state: "OFFLINE" }),
        warnings: [{ path: "eventPattern", message: "matches the events of the runs …" }],
      },
    });
    const res = await shoal([
      "trigger",
      "create",
      "etl",
      "--pattern",
      '{"source": ["shoal"]}',
      "--offline",
    ]);
    expect(res).toEqual({
      code: 0,
      stdout: "t-1\n",
      stderr: "warning: eventPattern: matches the events of the runs …\n",
    });
    expect(sent()).toMatchObject({ state: "OFFLINE" });
  });

  it("online and offline POST the verb and print the state", async () => {
    stub.reply = (req) => ({
      status: 200,
      body: trigger({ state: req.path.endsWith("/offline") ? "OFFLINE" : "ONLINE" }),
    });
    expect((await shoal(["trigger", "offline", "t-1"])).stdout).toBe("t-1 OFFLINE\n");
    expect((await shoal(["trigger", "online", "t-1"])).stdout).toBe("t-1 ONLINE\n");
    expect(calls()).toEqual(["POST /v1/triggers/t-1/offline", "POST /v1/triggers/t-1/online"]);
  });

  it("reads the pattern from @file", async () => {
    const file = join(dir, "pattern.json");
    await writeFile(file, '{\n  "detail-type": ["OrderPlaced"]\n}\n', "utf8");
    stub.reply = () => ({ status: 201, body: trigger() });
    await shoal(["trigger", "create", "etl", "--pattern", `@${file}`]);
    expect(sent()).toEqual({ workflow: "etl", eventPattern: { "detail-type": ["OrderPlaced"] } });
  });

  it("refuses a bad pattern, path or debounce before any request (exit 2)", async () => {
    const create = ["trigger", "create", "etl"];
    await expectUsage([...create], /--pattern/);
    await expectUsage([...create, "--pattern", "{source: x}"], /--pattern: not valid JSON/);
    await expectUsage([...create, "--pattern", '["x"]'], /--pattern: must be a JSON object/);
    await expectUsage(
      [...create, "--pattern", `@${join(dir, "nope.json")}`],
      /--pattern: cannot read .*nope\.json: no such file/,
    );
    await expectUsage([...create, "--pattern", '{"source": "x"}'], /--pattern: source: must be/);
    await expectUsage(
      [...create, "--pattern", '{"source": ["x"]}', "-p", "order=detail.id"],
      /--param order: JSONPath "detail.id" is not valid/,
    );
    await expectUsage([...create, "--pattern", '{"source": ["x"]}', "--debounce", "-1"]);
  });

  it("passes a 400 through (exit 1)", async () => {
    stub.reply = () =>
      invalid("The trigger is invalid.", [
        { path: "workflow", message: "workflow 'nope' does not exist" },
      ]);
    const res = await shoal(["trigger", "create", "nope", "--pattern", '{"source": ["x"]}']);
    expect(res).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: The trigger is invalid.\n  - workflow: workflow 'nope' does not exist\n",
    });
  });
});

describe("shoal triggers and trigger get|delete", () => {
  it("lists triggers as a table (following nextToken) and as JSON", async () => {
    stub.reply = (req) =>
      req.query.get("nextToken") === "p2"
        ? {
            status: 200,
            body: {
              items: [
                trigger({
                  id: "t-2",
                  params: {},
                  debounceSeconds: 60,
                  lastFiredAt: "2026-11-21T06:00:00.000Z",
                  refusedRuns: 3,
                  loopStops: 1,
                }),
              ],
            },
          }
        : { status: 200, body: { items: [trigger()], nextToken: "p2" } };
    const res = await shoal(["triggers"]);
    expect(calls()).toEqual(["GET /v1/triggers", "GET /v1/triggers"]);
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      /^ID\s+WORKFLOW\s+STATE\s+PATTERN\s+PARAMS\s+DEBOUNCE\s+LAST FIRED\s+REFUSED$/,
    );
    expect(lines[1]).toMatch(
      /^t-1\s+etl\s+ONLINE\s+\{"source":\["com\.example\.orders"\],"detail-type":\["OrderPlace…\s+order=\$\.detail\.id\s+-\s+-\s+-$/,
    );
    expect(lines[2]).toMatch(
      /^t-2\s+etl\s+ONLINE\s+\{.*…\s+-\s+60s\s+2026-11-21T06:00:00Z\s+3 over rate, 1 loop$/,
    );
    stub.reply = () => ({ status: 200, body: { items: [trigger()] } });
    expect(JSON.parse((await shoal(["triggers", "-o", "json"])).stdout)).toEqual({
      items: [trigger()],
    });
    stub.reply = () => ({ status: 200, body: { items: [] } });
    expect((await shoal(["triggers"])).stderr).toMatch(/^no triggers/);
  });

  it("get prints the fields and the pattern indented, or JSON", async () => {
    stub.reply = () => ({ status: 200, body: trigger({ debounceSeconds: 30 }) });
    const res = await shoal(["trigger", "get", "t-1"]);
    expect(calls()).toEqual(["GET /v1/triggers/t-1"]);
    expect(res.stdout).toBe(
      [
        "id:       t-1",
        "workflow: etl",
        "state:    ONLINE",
        "params:   order=$.detail.id",
        "debounce: 30s",
        "created:  2026-11-21T05:00:00Z",
        "pattern:",
        "  {",
        '    "source": [',
        '      "com.example.orders"',
        "    ],",
        '    "detail-type": [',
        '      "OrderPlaced"',
        "    ]",
        "  }",
        "",
      ].join("\n"),
    );
    const json = await shoal(["trigger", "get", "t-1", "-o", "json"]);
    expect(JSON.parse(json.stdout)).toEqual(trigger({ debounceSeconds: 30 }));
  });

  it("delete DELETEs and confirms; a 404 exits 1", async () => {
    stub.reply = () => ({ status: 204 });
    expect((await shoal(["trigger", "delete", "t-1"])).stdout).toBe("t-1 deleted\n");
    expect(calls()).toEqual(["DELETE /v1/triggers/t-1"]);
    stub.reply = () => notFound("trigger 't-9' does not exist");
    expect(await shoal(["trigger", "get", "t-9"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: trigger 't-9' does not exist\n",
    });
  });
});

// ---- events put -----------------------------------------------------------------------------

describe("shoal events put", () => {
  const answer = {
    FailedEntryCount: 0,
    Entries: [
      {
        EventId: "e-1",
        Triggers: [
          { triggerId: "t-1", instanceId: "i-1" },
          { triggerId: "t-2", skipped: "debounced (60s)" },
        ],
      },
    ],
  };

  it("sends one PutEvents entry with Detail as a JSON string; prints the runs started", async () => {
    stub.reply = () => ({ status: 200, body: answer });
    const res = await shoal([
      "events",
      "put",
      "--source",
      "com.example.orders",
      "--detail-type",
      "OrderPlaced",
      "--detail",
      '{ "id": "o-42" }',
    ]);
    expect(calls()).toEqual(["POST /v1/events"]);
    expect(sent()).toEqual({
      Entries: [
        { Source: "com.example.orders", DetailType: "OrderPlaced", Detail: '{"id":"o-42"}' },
      ],
    });
    expect(res).toEqual({
      code: 0,
      stdout: "e-1\n  trigger t-1  started i-1\n  trigger t-2  skipped: debounced (60s)\n",
      stderr: "",
    });
    const json = await shoal([
      "events",
      "put",
      "--source",
      "s",
      "--detail-type",
      "t",
      "--detail",
      "{}",
      "-o",
      "json",
    ]);
    expect(JSON.parse(json.stdout)).toEqual(answer);
  });

  it("reads the detail from @file and says when no trigger matched", async () => {
    const file = join(dir, "detail.json");
    await writeFile(file, '{"id": "o-43"}\n', "utf8");
    stub.reply = () => ({
      status: 200,
      body: { FailedEntryCount: 0, Entries: [{ EventId: "e-2", Triggers: [] }] },
    });
    const res = await shoal([
      "events",
      "put",
      "--source",
      "s",
      "--detail-type",
      "t",
      "--detail",
      `@${file}`,
    ]);
    expect(
      JSON.parse((sent() as { Entries: Array<{ Detail: string }> }).Entries[0]?.Detail ?? ""),
    ).toEqual({
      id: "o-43",
    });
    expect(res.stdout).toBe("e-2\n  no trigger matched\n");
  });

  it("exits 1 when an entry failed", async () => {
    stub.reply = () => ({
      status: 200,
      body: {
        FailedEntryCount: 1,
        Entries: [{ ErrorCode: "InternalFailure", ErrorMessage: "try again" }],
      },
    });
    const res = await shoal([
      "events",
      "put",
      "--source",
      "s",
      "--detail-type",
      "t",
      "--detail",
      "{}",
    ]);
    expect(res).toEqual({ code: 1, stdout: "failed: InternalFailure: try again\n", stderr: "" });
  });

  it("refuses a missing option or a detail that is not a JSON object (exit 2)", async () => {
    const put = ["events", "put", "--source", "s", "--detail-type", "t"];
    await expectUsage([...put], /--detail/);
    await expectUsage(["events", "put", "--detail-type", "t", "--detail", "{}"], /--source/);
    await expectUsage([...put, "--detail", "not json"], /--detail: not valid JSON/);
    await expectUsage([...put, "--detail", '"text"'], /--detail: must be a JSON object/);
  });

  it("passes a 400 through (exit 1), naming the flags", async () => {
    stub.reply = () =>
      invalid("The request is invalid.", [
        { path: "Entries[0].Source", message: "must be at most 256 characters" },
        { path: "Entries[0].DetailType", message: "must not be empty" },
      ]);
    const res = await shoal([
      "events",
      "put",
      "--source",
      "s",
      "--detail-type",
      "t",
      "--detail",
      "{}",
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      "error: The request is invalid.\n" +
        "  - --source: must be at most 256 characters\n" +
        "  - --detail-type: must not be empty\n",
    );
  });
});
