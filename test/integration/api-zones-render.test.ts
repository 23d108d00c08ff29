/**
 * Zones and render through the HTTP API and the CLI on the emulators: a schedule without a
 * `timezone` takes its workflow's (stored, so cron and time parameters agree); zone
 * abbreviations are refused everywhere with the zone meant; render refuses attempts that do not
 * exist and schedule times outside years 1970..9999; CLI errors name flags, not body fields.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiServer,
  createWorkflow,
  expectError,
  get,
  oneTask,
  post,
  put,
  startApiServer,
  startRun,
  stopApiServer,
} from "../helpers/api-client.js";
import { startInstance } from "../helpers/api-engine.js";
import { runCli } from "../helpers/cli-run.js";

beforeAll(async () => {
  await startApiServer();
  await createWorkflow("paris", { timezone: "Europe/Paris", ...oneTask("echo $[yyyyMMdd]") });
  await createWorkflow("plain", oneTask());
});
afterAll(stopApiServer);

const cli = (args: string[]) => runCli(args, { endpoint: apiServer().base });

describe("a schedule's zone", () => {
  it("is the workflow's timezone when the body gives none, else UTC, stored explicitly", async () => {
    const paris = await post("/v1/schedules", { workflow: "paris", cron: "30 0 * * *" });
    expect(paris.status, paris.text).toBe(201);
    expect(paris.body.timezone).toBe("Europe/Paris");
    // The cron is read in that zone too: 00:30 in Paris.
    const preview = await get(`/v1/schedules/${paris.body.id}/preview?count=1`);
    expect(preview.body.items[0]).toMatch(/T2[23]:30:00(\.000)?Z$/);
    expect((await get(`/v1/schedules/${paris.body.id}`)).body.timezone).toBe("Europe/Paris");

    const plain = await post("/v1/schedules", { workflow: "plain", rate: "1 hour" });
    expect(plain.body.timezone).toBe("UTC");
    const given = await post("/v1/schedules", {
      workflow: "paris",
      cron: "0 1 * * *",
      timezone: "Asia/Kolkata",
    });
    expect(given.body.timezone).toBe("Asia/Kolkata");

    // A PUT without it takes the workflow's latest version's zone again.
    await createWorkflow("paris", { timezone: "America/New_York", ...oneTask() });
    const replaced = await put(`/v1/schedules/${given.body.id}`, {
      workflow: "paris",
      cron: "0 1 * * *",
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.timezone).toBe("America/New_York");
    // The schedule created before keeps the zone it was stored with.
    expect((await get(`/v1/schedules/${paris.body.id}`)).body.timezone).toBe("Europe/Paris");
  });
});

describe("zone abbreviations", () => {
  const bst =
    /'BST' is an abbreviation \(Intl reads it as Asia\/Dhaka\); did you mean Europe\/London\?/;

  it("are refused by workflows, schedules, backfills and render, naming the zone meant", async () => {
    expectError(
      await put("/v1/workflows/zoned", { timezone: "BST", ...oneTask() }),
      400,
      "ValidationError",
      { path: "timezone", detail: bst },
    );
    expectError(
      await post("/v1/schedules", { workflow: "plain", cron: "0 1 * * *", timezone: "BST" }),
      400,
      "ValidationError",
      { path: "timezone", detail: bst },
    );
    expectError(
      await post("/v1/workflows/plain/backfill", {
        dates: ["2026-11-01T23:30:00Z"],
        timezone: "BST",
      }),
      400,
      "ValidationError",
      { path: "timezone", detail: bst },
    );
    expectError(
      await post("/v1/workflows/plain/backfill", {
        from: "2026-11-01T00:00:00Z",
        to: "2026-11-02T00:00:00Z",
        cron: "0 1 * * *",
        timezone: "BST",
      }),
      400,
      "ValidationError",
      { path: "timezone", detail: bst },
    );
    expectError(
      await post("/v1/workflows/plain/tasks/only/render", { timezone: "BST" }),
      400,
      "ValidationError",
      { path: "timezone", detail: bst },
    );
  });
});

describe("render", () => {
  it("404s an attempt beyond the next one, 400s a schedule time outside 1970..9999", async () => {
    const id = await startRun("plain");
    await startInstance(id);
    const path = `/v1/instances/${id}/tasks/only/render`;
    expect((await get(`${path}?attempt=1`)).status).toBe(200);
    const next = await get(`${path}?attempt=2`);
    expect(next.status, next.text).toBe(200);
    expect(next.body.params["system.task.instance.attempt"]).toBe("2");
    for (const attempt of ["3", "99999999999"]) {
      expectError(await get(`${path}?attempt=${attempt}`), 404, "NotFound", {
        message: new RegExp(
          `^task 'only' of instance '${id}' has no attempt ${attempt}: its current attempt is 1 \\(attempts 1 to 2 can be rendered, 2 being the next one\\)$`,
        ),
      });
    }

    const wf = "/v1/workflows/plain/tasks/only/render";
    for (const t of ["0000-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "+010000-01-01T00:00:00Z"]) {
      const r = await post(wf, { scheduleTime: t });
      expect(r.status, `${t}: ${r.text}`).toBe(400);
      expect(r.body.error.details[0].path).toBe("scheduleTime");
    }
    expectError(await post(wf, { scheduleTime: "0000-01-01T00:00:00Z" }), 400, "ValidationError", {
      path: "scheduleTime",
      detail: /^must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z$/,
    });
    expectError(
      await get(`${wf}?scheduleTime=${encodeURIComponent("0000-01-01T00:00:00Z")}`),
      400,
      "ValidationError",
      { path: "scheduleTime" },
    );
    for (const t of ["1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]) {
      expect((await post(wf, { scheduleTime: t })).status, t).toBe(200);
    }
  });
});

describe("CLI errors name the flag", () => {
  it("shoal render: -p, --timezone and --schedule-time", async () => {
    const param = await cli(["render", "plain", "only", "-p", "1x=2"]);
    expect(param.code).toBe(1);
    expect(param.stderr).toMatch(/^error: --param 1x: /);
    const zone = await cli(["render", "plain", "only", "--timezone", "Mars/X"]);
    expect(zone.code).toBe(1);
    expect(zone.stderr).toBe(
      "error: --timezone: must be an IANA time zone name such as Europe/Paris or UTC\n",
    );
    const abbreviation = await cli(["render", "plain", "only", "--timezone", "IST"]);
    expect(abbreviation.stderr).toContain("error: --timezone: must be an IANA time zone name");
    expect(abbreviation.stderr).toContain("did you mean Asia/Kolkata (India) or Europe/Dublin");
    const year0 = await cli(["render", "plain", "only", "--schedule-time", "0000-01-01T00:00:00Z"]);
    expect(year0.code).toBe(1);
    expect(year0.stderr).toBe(
      "error: --schedule-time: must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z\n",
    );
  });

  it("shoal events put: --source and --detail-type", async () => {
    const source = await cli([
      "events",
      "put",
      "--source",
      "",
      "--detail-type",
      "T",
      "--detail",
      "{}",
    ]);
    expect(source.code).toBe(1);
    expect(source.stderr).toBe("error: --source: must not be empty\n");
    const type = await cli([
      "events",
      "put",
      "--source",
      "s",
      "--detail-type",
      "",
      "--detail",
      "{}",
    ]);
    expect(type.stderr).toBe("error: --detail-type: must not be empty\n");
  });
});
