/**
 * The `shoal` CLI run in-process (`main()`) against the real HTTP API on the emulators
 * (test/helpers/api-client.ts): the backfill list (`GET /v1/backfills`, `shoal backfills`), the
 * instance list's TYPE and SCHEDULE TIME (`runType`, `scheduleTime`) and its `runType` filter,
 * `shoal schedule update`, API validation errors reported under the flag that filled the
 * field, and an endpoint given with the API's `/v1` (as the console shows it), also behind a
 * proxy's path prefix. No pollers run: instances are created by driving the dispatcher by hand (api-engine.ts).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  apiServer,
  createWorkflow,
  expectError,
  get,
  post,
  startApiServer,
  startRun,
  stopApiServer,
  twoTasks,
} from "../helpers/api-client.js";
import { startInstance } from "../helpers/api-engine.js";
import { runCli } from "../helpers/cli-run.js";
import { until } from "../helpers/poll.js";

beforeAll(async () => {
  await startApiServer();
  await createWorkflow("etl", twoTasks());
  await createWorkflow("other", twoTasks());
});

afterAll(stopApiServer);

/** Runs `shoal --endpoint <api> ...args` in-process: exit code and captured output. */
const shoal = (args: string[]) => runCli(args, { endpoint: apiServer().base });

/** Starts a backfill over `dates` through the API; returns its id. */
async function backfill(workflow: string, dates: string[]): Promise<string> {
  const r = await post(`/v1/workflows/${workflow}/backfill`, { dates });
  expect(r.status, r.text).toBe(202);
  // Distinct creation times, so "newest first" has one answer (the list sorts by ms, then id).
  const created = Date.now();
  await until(() => Date.now() > created + 1);
  return r.body.id as string;
}

describe("GET /v1/backfills and shoal backfills", () => {
  let first: string;
  let second: string;
  let third: string;
  beforeAll(async () => {
    first = await backfill("etl", ["2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z"]);
    second = await backfill("other", ["2026-02-01T00:00:00Z"]);
    third = await backfill("etl", ["2026-03-02T00:00:00Z", "2026-03-01T00:00:00Z"]);
    expect((await post(`/v1/backfills/${second}/pause`)).status).toBe(202);
  });

  it("lists newest first with the progress and nominal range, filtered and paged", async () => {
    const all = await get("/v1/backfills");
    expect(all.status, all.text).toBe(200);
    expect(all.body.items.map((b: { id: string }) => b.id)).toEqual([third, second, first]);
    expect(all.body.items[2]).toMatchObject({
      id: first,
      workflow: "etl",
      state: "RUNNING",
      mode: "SERIAL",
      total: 2,
      done: 0,
      firstTime: "2026-01-01T00:00:00.000Z",
      lastTime: "2026-01-03T00:00:00.000Z",
    });
    // The list shows what GET one shows.
    const one = await get(`/v1/backfills/${first}`);
    expect(all.body.items[2]).toEqual(one.body);

    const etl = await get("/v1/backfills?workflow=etl");
    expect(etl.body.items.map((b: { id: string }) => b.id)).toEqual([third, first]);
    const paused = await get("/v1/backfills?state=PAUSED");
    expect(paused.body.items.map((b: { id: string }) => b.id)).toEqual([second]);

    const page1 = await get("/v1/backfills?limit=2");
    expect(page1.body.items).toHaveLength(2);
    const page2 = await get(`/v1/backfills?limit=2&nextToken=${page1.body.nextToken}`);
    expect(page2.body.items.map((b: { id: string }) => b.id)).toEqual([first]);
    expect(page2.body.nextToken).toBeUndefined();
  });

  it("refuses a bad state, workflow, limit or token with 400 naming it", async () => {
    expectError(await get("/v1/backfills?state=DONE"), 400, "ValidationError", {
      path: "state",
      detail: /RUNNING, PAUSED, CANCELLED, SUCCESS, FAILURE/,
    });
    expectError(await get("/v1/backfills?workflow=-x"), 400, "ValidationError", {
      path: "workflow",
    });
    expectError(await get("/v1/backfills?limit=0"), 400, "ValidationError", { path: "limit" });
    expectError(await get("/v1/backfills?nextToken=nope"), 400, "ValidationError", {
      path: "nextToken",
    });
  });

  it("shoal backfills draws the table; filters; -o json", async () => {
    const res = await shoal(["backfills"]);
    expect(res).toMatchObject({ code: 0, stderr: "" });
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+WORKFLOW\s+STATE\s+MODE\s+DONE\s+NOMINAL TIMES\s+CREATED$/);
    expect(lines).toHaveLength(4);
    // DESC-ordered dates still show earliest … latest.
    expect(lines[1]).toMatch(
      new RegExp(
        `^${third}\\s+etl\\s+RUNNING\\s+SERIAL\\s+0/2\\s+2026-03-01T00:00:00Z … 2026-03-02T00:00:00Z\\s+\\d{4}-`,
      ),
    );
    expect(lines[2]).toMatch(
      new RegExp(
        `^${second}\\s+other\\s+PAUSED\\s+SERIAL\\s+0/1\\s+2026-02-01T00:00:00Z\\s+\\d{4}-`,
      ),
    );

    const paused = await shoal(["backfills", "--state", "paused"]);
    expect(paused.stdout.trimEnd().split("\n").slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${second}\\s`)),
    ]);
    const json = await shoal([
      "backfills",
      "list",
      "--workflow",
      "etl",
      "--limit",
      "1",
      "-o",
      "json",
    ]);
    const body = JSON.parse(json.stdout);
    expect(body.items.map((b: { id: string }) => b.id)).toEqual([third]);
    expect(typeof body.nextToken).toBe("string");

    const none = await shoal(["backfills", "--state", "cancelled"]);
    expect(none).toMatchObject({ code: 0, stdout: "" });
    expect(none.stderr).toMatch(/^no backfills \(start one with: shoal backfill /);
    expect((await shoal(["backfills", "--state", "done"])).code).toBe(2);
    // `backfills get` still shows one, now with its nominal times.
    const got = await shoal(["backfills", "get", first]);
    expect(got.stdout).toContain("times:    2026-01-01T00:00:00Z … 2026-01-03T00:00:00Z\n");
  });
});

describe("instance lists: TYPE, SCHEDULE TIME and the runType filter", () => {
  let manual: string;
  let backfilled: string;
  beforeAll(async () => {
    await createWorkflow("typed", twoTasks());
    manual = await startRun("typed");
    await startInstance(manual);
    const r = await post("/v1/workflows/typed/backfill", { dates: ["2026-05-01T06:00:00Z"] });
    expect(r.status, r.text).toBe(202);
    const b = await apiServer().rt.scheduling.backfills.getBackfill(r.body.id);
    backfilled = b?.running[0] as string;
    expect(backfilled).toBeTruthy();
    await startInstance(backfilled);
  });

  it("list items carry runType and scheduleTime; ?runType= filters", async () => {
    const list = await get("/v1/instances?workflow=typed");
    expect(list.status, list.text).toBe(200);
    const byId = Object.fromEntries(
      list.body.items.map((i: { instanceId: string }) => [i.instanceId, i]),
    );
    expect(byId[manual]).toMatchObject({ runType: "MANUAL" });
    expect(byId[manual].scheduleTime).toBeUndefined();
    expect(byId[backfilled]).toMatchObject({
      runType: "BACKFILL",
      scheduleTime: "2026-05-01T06:00:00.000Z",
    });
    // The detail view says the same.
    expect((await get(`/v1/instances/${backfilled}`)).body.runType).toBe("BACKFILL");

    const onlyBackfills = await get("/v1/instances?workflow=typed&runType=BACKFILL");
    expect(onlyBackfills.body.items.map((i: { instanceId: string }) => i.instanceId)).toEqual([
      backfilled,
    ]);
    expectError(await get("/v1/instances?runType=CRON"), 400, "ValidationError", {
      path: "runType",
      detail: /MANUAL, SCHEDULE, BACKFILL, TRIGGER, SUB_WORKFLOW/,
    });
  });

  it("shoal instances shows TYPE and SCHEDULE TIME, and --type filters", async () => {
    const res = await shoal(["instances", "--workflow", "typed"]);
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      /^INSTANCE\s+WORKFLOW\s+STATE\s+TYPE\s+SCHEDULE TIME\s+CREATED\s+DURATION$/,
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^${backfilled}\\s+typed:1\\s+RUNNING\\s+BACKFILL\\s+2026-05-01T06:00:00Z\\s`),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^${manual}\\s+typed:1\\s+RUNNING\\s+MANUAL\\s+-\\s`)),
    );
    const manualOnly = await shoal(["instances", "--workflow", "typed", "--type", "manual"]);
    expect(manualOnly.stdout.trimEnd().split("\n").slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${manual}\\s`)),
    ]);
  });
});

describe("API validation errors name the CLI flag", () => {
  it("shoal run: --start-task, --worker-group", async () => {
    const task = await shoal(["run", "etl", "--start-task", "nope"]);
    expect(task).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "error: --start-task: unknown task code 'nope'\n",
    });
    const group = await shoal(["run", "etl", "--worker-group", "no spaces"]);
    expect(group.code).toBe(1);
    expect(group.stderr).toMatch(/^error: --worker-group: must match \^\[A-Za-z0-9\]/);
    expect(group.stderr).not.toContain("workerGroup");
  });

  it("shoal schedule create: --worker-group (the API's rule, not checked before sending)", async () => {
    const res = await shoal([
      "schedule",
      "create",
      "etl",
      "--cron",
      "0 5 * * *",
      "--worker-group",
      "a b",
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: --worker-group: must match /);
    expect(res.stderr).not.toContain("workerGroup");
    // A field no flag fills keeps its name.
    const missing = await shoal(["schedule", "create", "gone", "--cron", "0 5 * * *"]);
    expect(missing.stderr).toMatch(/workflow: workflow 'gone' does not exist/);
  });
});

describe("shoal schedule update", () => {
  it("changes only the options given and prints the schedule", async () => {
    const created = await shoal([
      "schedule",
      "create",
      "etl",
      "--cron",
      "0 5 * * *",
      "--timezone",
      "Europe/Paris",
      "-p",
      "region=eu",
      "--misfire",
      "skip",
      "--overlap",
      "serial_wait",
      "--offline",
    ]);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.split("\n")[0] as string;

    const res = await shoal([
      "schedule",
      "update",
      id,
      "--cron",
      "30 6 * * *",
      "--priority",
      "high",
      "-p",
      "day=1",
    ]);
    expect(res, res.stderr).toMatchObject({ code: 0, stderr: "" });
    expect(res.stdout).toMatch(/^id: +\S+\n/);
    expect(res.stdout).toMatch(/^cron: +30 6 \* \* \*$/m);
    expect(res.stdout).toMatch(/^priority: +HIGH$/m);
    const s = (await get(`/v1/schedules/${id}`)).body;
    expect(s).toMatchObject({
      cron: "30 6 * * *",
      timezone: "Europe/Paris",
      params: { region: "eu", day: "1" },
      priority: "HIGH",
      misfirePolicy: "SKIP",
      overlapPolicy: "SERIAL_WAIT",
      state: "OFFLINE",
    });

    // A rate replaces the cron; the zone and the rest stay.
    expect((await shoal(["schedule", "update", id, "--rate", "5 minutes"])).code).toBe(0);
    const r = (await get(`/v1/schedules/${id}`)).body;
    expect(r.rate).toBe("5 minutes");
    expect(r.cron).toBeUndefined();
    expect(r).toMatchObject({ timezone: "Europe/Paris", priority: "HIGH", state: "OFFLINE" });
  });

  it("refuses nothing to change, two timings or a bad cron before sending (exit 2)", async () => {
    const created = await shoal(["schedule", "create", "etl", "--rate", "1 hour"]);
    const id = created.stdout.split("\n")[0] as string;
    const none = await shoal(["schedule", "update", id]);
    expect(none).toMatchObject({ code: 2, stderr: expect.stringMatching(/nothing to change/) });
    const two = await shoal([
      "schedule",
      "update",
      id,
      "--cron",
      "0 5 * * *",
      "--at",
      "2030-01-01T00:00:00Z",
    ]);
    expect(two.code).toBe(2);
    const bad = await shoal(["schedule", "update", id, "--cron", "0 0 30 2 *"]);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: --cron: /) });
    expect((await get(`/v1/schedules/${id}`)).body.rate).toBe("1 hour");
    const gone = await shoal([
      "schedule",
      "update",
      "00000000-0000-4000-8000-000000000000",
      "--priority",
      "low",
    ]);
    expect(gone.code).toBe(1);
  });
});

describe("an endpoint ending in /v1 (as the console's header shows the API)", () => {
  let dir: string;
  let proxy: ReturnType<typeof createServer>;
  let proxied: string;
  const seen: string[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "shoal-endpoint-"));
    // A reverse proxy serving Shoal under /shoal, as a company gateway might.
    const target = new URL(apiServer().base);
    proxy = createServer((req, res) => {
      seen.push(req.url ?? "");
      if (!req.url?.startsWith("/shoal/")) {
        res.writeHead(404).end("not under /shoal");
        return;
      }
      const up = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url.slice("/shoal".length),
          // As nginx does by default (`proxy_set_header Host $proxy_host`): the upstream's name,
          // which standalone answers (it refuses other Hosts: DNS rebinding).
          headers: { ...req.headers, host: target.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()));
    proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/shoal`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => proxy.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  /** `shoal workflows` with the endpoint given by `how`: it lists etl and other. */
  async function lists(how: { flag?: string; env?: string; file?: string }): Promise<void> {
    const config = join(dir, "config.json");
    await writeFile(config, JSON.stringify(how.file ? { endpoint: how.file } : {}));
    vi.stubEnv("SHOAL_CONFIG", config);
    vi.stubEnv("SHOAL_ENDPOINT", how.env);
    vi.stubEnv("SHOAL_AUTH", undefined);
    try {
      const r = await runCli(["workflows"], how.flag ? { endpoint: how.flag } : {});
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^etl\b/m);
      expect(r.stdout).toMatch(/^other\b/m);
    } finally {
      vi.unstubAllEnvs();
    }
  }

  it("works from --endpoint, SHOAL_ENDPOINT and the config file, with or without a slash", async () => {
    const base = apiServer().base;
    await lists({ flag: `${base}/v1` });
    await lists({ flag: `${base}/v1/` });
    await lists({ env: `${base}/v1` });
    await lists({ file: `${base}/v1/` });
  });

  it("keeps another path prefix: http://host/shoal/v1 is the API at http://host/shoal", async () => {
    seen.length = 0;
    await lists({ flag: `${proxied}/v1` });
    await lists({ flag: proxied });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((u) => u.startsWith("/shoal/v1/workflows"))).toBe(true);
  });

  it("config show names the base it uses", async () => {
    vi.stubEnv("SHOAL_CONFIG", join(dir, "none.json"));
    try {
      const r = await runCli(["config", "show"], { endpoint: `${proxied}/v1/` });
      expect(r.stdout).toMatch(new RegExp(`endpoint\\s+${proxied.replace(/[.]/g, "\\.")}\\s+flag`));
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
