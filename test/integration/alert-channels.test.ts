/**
 * Alert rules naming a channel the deployment does not configure: the API (standalone's server on
 * the emulators, with the channels standalone would give it) stores the definition and answers a
 * warning that names the rule, the channel and where channels are configured; `shoal apply`
 * prints it; `shoal validate` asks the Shoal it points at (`GET /v1/alert-channels`) and warns
 * the same way, or says in a note that it could not check.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { apiServer, get, post, put, startApiServer, stopApiServer } from "../helpers/api-client.js";
import { runCli } from "../helpers/cli-run.js";

let dir: string;
let file: string;

const WHERE =
  "Channels are configured in standalone's --alerts FILE (or SHOAL_ALERTS), or the Shoal construct's alerts prop on AWS (docs/alerts.md)";
const definition = {
  tasks: [{ code: "load", type: "SHELL", command: "true" }],
  alerts: [
    { on: ["FAILURE"], channels: ["oncall", "ops-slak"] },
    { on: ["SUCCESS"], channels: ["ops-slack"] },
  ],
};

/** The warning for `alerts[0].channels[1]` ('ops-slak'), the deployment called `where`. */
const warning = (where: string) =>
  `alerts[0].channels[1]: alert rule alerts[0] names channel 'ops-slak', which ${where} does not configure (its channels: oncall, ops-slack; did you mean 'ops-slack'?): its alerts to it would fail at delivery. ${WHERE}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "shoal-alert-channels-"));
  file = join(dir, "nightly.yaml");
  await writeFile(file, stringify({ name: "nightly", ...definition }));
  await startApiServer();
}, 60_000);
afterAll(async () => {
  await stopApiServer();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  // The channels standalone gives its API (lib/standalone/standalone.ts: channelTypes).
  apiServer().rt.api.alertChannels = { "ops-slack": "slack", oncall: "email" };
  vi.stubEnv("SHOAL_CONFIG", join(dir, "no-config.json"));
  vi.stubEnv("SHOAL_ENDPOINT", apiServer().base);
  vi.stubEnv("SHOAL_AUTH", undefined);
  return () => vi.unstubAllEnvs();
});

describe("GET /v1/alert-channels", () => {
  it("lists the configured channels by name, with their types and nothing else", async () => {
    const r = await get("/v1/alert-channels");
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      items: [
        { name: "oncall", type: "email" },
        { name: "ops-slack", type: "slack" },
      ],
    });
  });

  it("answers 404 when the API was not told (an API function deployed without the list)", async () => {
    delete apiServer().rt.api.alertChannels;
    const r = await get("/v1/alert-channels");
    expect(r.status, r.text).toBe(404);
    expect(r.body.error.message).toMatch(/SHOAL_ALERT_CHANNELS/);
  });
});

describe("PUT /v1/workflows/{name} and shoal apply", () => {
  it("store the definition and warn at the rule's unknown channel", async () => {
    const r = await put("/v1/workflows/direct", definition);
    expect(r.status, r.text).toBe(201);
    expect(r.body.warnings).toEqual([
      {
        path: "alerts[0].channels[1]",
        message: warning("this Shoal").replace(/^alerts\[0\]\.channels\[1\]: /, ""),
      },
    ]);
    const cli = await runCli(["apply", "-f", file]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^nightly: version \d+ \((created|unchanged)\)\n$/);
    expect(cli.stderr).toBe(`warning: nightly: ${warning("this Shoal")}\n`);
  });

  it("say nothing about channels when the API does not know them", async () => {
    delete apiServer().rt.api.alertChannels;
    const r = await put("/v1/workflows/unknown-channels", definition);
    expect(r.status, r.text).toBe(201);
    expect(r.body.warnings).toBeUndefined();
  });
});

describe("POST /v1/schedules, PUT /v1/schedules/{id} and shoal schedule create", () => {
  it("store a schedule's rules and warn at an unknown channel", async () => {
    expect((await put("/v1/workflows/timed", definition)).status).toBe(201);
    const rules = [{ on: ["SCHEDULE_MISFIRE"], channels: ["oncal"] }];
    const created = await post("/v1/schedules", {
      workflow: "timed",
      cron: "0 2 * * *",
      alerts: rules,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.warnings).toEqual([
      {
        path: "alerts[0].channels[0]",
        message: expect.stringMatching(
          /^alert rule alerts\[0\] names channel 'oncal', which this Shoal does not configure \(its channels: oncall, ops-slack; did you mean 'oncall'\?\)/,
        ),
      },
    ]);
    const id = created.body.id as string;
    const {
      id: _id,
      createdAt: _c,
      updatedAt: _u,
      state: _s,
      nextFireTime: _n,
      warnings: _w,
      ...body
    } = created.body;
    const fixed = await put(`/v1/schedules/${id}`, {
      ...body,
      alerts: [{ on: ["FAILURE"], channels: ["oncall"] }],
    });
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.body.warnings).toBeUndefined();
    expect((await get(`/v1/schedules/${id}`)).body.warnings).toBeUndefined();

    const cli = await runCli([
      "schedule",
      "create",
      "timed",
      "--cron",
      "0 3 * * *",
      "--alerts",
      JSON.stringify(rules),
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stderr).toMatch(
      /^warning: --alerts alerts\[0\]\.channels\[0\]: alert rule alerts\[0\] names channel 'oncal', .*\(docs\/alerts\.md\)\n$/,
    );
  });
});

describe("shoal validate", () => {
  it("asks the Shoal it points at for its channels and warns as apply does", async () => {
    const r = await runCli(["validate", "-f", file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("1 workflow valid\n");
    expect(r.stderr).toBe(`warning: ${file}: ${warning(`the Shoal at ${apiServer().base}`)}\n`);
  });

  it("says in a note that channels were not checked when no Shoal answers, or with --offline", async () => {
    vi.stubEnv("SHOAL_ENDPOINT", "http://127.0.0.1:9");
    const unreachable = await runCli(["validate", "-f", file]);
    expect(unreachable.code, unreachable.stderr).toBe(0);
    expect(unreachable.stderr).toMatch(
      /^note: alert channels not checked: cannot reach Shoal at http:\/\/127\.0\.0\.1:9 .*\n$/,
    );
    vi.stubEnv("SHOAL_ENDPOINT", apiServer().base);
    const offline = await runCli(["validate", "--offline", "-f", file]);
    expect(offline.stderr).toBe("note: alert channels not checked: --offline\n");
    delete apiServer().rt.api.alertChannels;
    const older = await runCli(["validate", "-f", file]);
    expect(older.code).toBe(0);
    expect(older.stderr).toMatch(
      /^note: alert channels not checked: the Shoal at http:\/\/127\.0\.0\.1:\d+ does not list its channels/,
    );
  });

  it("does not ask anything for definitions without alert rules", async () => {
    vi.stubEnv("SHOAL_ENDPOINT", "not a url");
    const plain = join(dir, "plain.yaml");
    await writeFile(plain, stringify({ name: "plain", tasks: definition.tasks }));
    const r = await runCli(["validate", "-f", plain]);
    expect(r).toEqual({ code: 0, stdout: "1 workflow valid\n", stderr: "" });
  });
});
