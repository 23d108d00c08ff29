// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is Shoal's parameter syntax, not a JS template
/**
 * What a DolphinScheduler user expects, through a real `shoal standalone`, its HTTP API and the
 * CLI: time parameters in the zone of the schedule, backfill or workflow that starts a run
 * (sub-workflows included); SWITCH conditions that compare numbers as numbers; a dry run that
 * walks past a SWITCH on an OUT parameter and logs what each task would run; `shoal render`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DateTime } from "luxon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  byCode,
  cli,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

describe("zones, dry runs and render in shoal standalone", () => {
  let sa: RunningStandalone;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-zones-"));
    sa = await startStandaloneProcess({ dataDir: join(dir, "data"), workers: 4 });
    await putWorkflow(sa.url, "child-dates", {
      tasks: [{ code: "echo", type: "SHELL", command: "echo child=$[yyyyMMdd]" }],
    });
    await putWorkflow(sa.url, "dates", {
      tasks: [
        {
          code: "echo",
          type: "SHELL",
          command: "echo day=$[yyyyMMdd] biz=${system.biz.date} at=$[HH:mm]",
        },
        { code: "child", type: "SUB_WORKFLOW", workflow: "child-dates", upstream: ["echo"] },
      ],
    });
    await putWorkflow(sa.url, "branchy", {
      params: { token: "s3cr3t-token" },
      tasks: [
        { code: "count", type: "SHELL", command: "echo '${setValue(rows=5)}'" },
        {
          code: "pick",
          type: "SWITCH",
          upstream: ["count"],
          params: { threshold: "100" },
          cases: [{ condition: "rows > threshold", next: "big" }],
          defaultNext: "small",
        },
        {
          code: "big",
          type: "SHELL",
          upstream: ["pick"],
          command: "echo big rows=${rows} day=$[yyyyMMdd]",
        },
        {
          code: "small",
          type: "SHELL",
          upstream: ["pick"],
          command: "echo small rows=${rows} biz=${system.biz.date}",
        },
        {
          code: "notify",
          type: "HTTP",
          upstream: ["big", "small"],
          url: "http://127.0.0.1:9/hook",
          method: "POST",
          headers: { Authorization: "Bearer ${token}" },
          body: '{"rows": "${rows}"}',
        },
      ],
    });
  });
  afterAll(async () => {
    await sa?.stop();
  });

  async function logOf(id: string, code: string): Promise<string[]> {
    const r = await api(sa.url, "GET", `/v1/instances/${id}/tasks/${code}/log`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.lines.map((l: { message: string }) => l.message);
  }

  it("a backfill in Europe/Paris gives its runs (and their sub-workflows) Paris dates", async () => {
    // 23:30 UTC on 1 November is 00:30 on 2 November in Paris.
    const r = await api(sa.url, "POST", "/v1/workflows/dates/backfill", {
      dates: ["2026-11-01T23:30:00Z"],
      timezone: "Europe/Paris",
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.timezone).toBe("Europe/Paris");
    const id = await until(
      async () =>
        (await api(sa.url, "GET", "/v1/instances?workflow=dates")).body.items?.[0]?.instanceId,
      { what: "the backfill's instance" },
    );
    const inst = await waitFinal(sa.url, id, 60_000);
    expect(inst.state).toBe("SUCCESS");
    expect(inst.timezone).toBe("Europe/Paris");
    expect(await logOf(id, "echo")).toContain("day=20261102 biz=20261101 at=00:30");
    const childId = byCode(inst).child?.subInstanceId as string;
    const child = await waitFinal(sa.url, childId, 60_000);
    expect(child.timezone).toBe("Europe/Paris");
    expect(await logOf(childId, "echo")).toContain("child=20261102");

    // A DEPENDENT task of a Paris run counts Paris days: 2 November in Paris holds that run
    // (in UTC it is 1 November, and the task would wait until its timeout).
    await putWorkflow(sa.url, "dep-paris", {
      tasks: [
        {
          code: "wait",
          type: "DEPENDENT",
          timeoutSeconds: 30,
          checkIntervalSeconds: 1,
          dependence: {
            groups: [{ items: [{ workflow: "dates", cycle: "day", dateValue: "today" }] }],
          },
        },
      ],
    });
    const dep = await api(sa.url, "POST", "/v1/workflows/dep-paris/backfill", {
      dates: ["2026-11-02T10:00:00Z"],
      timezone: "Europe/Paris",
    });
    expect(dep.status, JSON.stringify(dep.body)).toBe(202);
    const depId = await until(
      async () =>
        (await api(sa.url, "GET", "/v1/instances?workflow=dep-paris")).body.items?.[0]?.instanceId,
      { what: "the dependent backfill's instance" },
    );
    const depInst = await waitFinal(sa.url, depId, 60_000);
    expect(byCode(depInst).wait).toMatchObject({ state: "SUCCESS" });
  });

  it("a schedule in Europe/Paris, and a workflow's own timezone, set the zone of a run", async () => {
    const at = new Date(Date.now() + 1_500).toISOString();
    const s = await api(sa.url, "POST", "/v1/schedules", {
      workflow: "dates",
      at,
      timezone: "Europe/Paris",
    });
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    const scheduled = await until(
      async () => {
        const items = (await api(sa.url, "GET", "/v1/instances?workflow=dates")).body.items ?? [];
        return items.find((i: { scheduleTime?: string }) => i.scheduleTime === at);
      },
      { timeoutMs: 30_000, what: "the scheduled run" },
    );
    const inst = await waitFinal(sa.url, scheduled.instanceId, 60_000);
    expect(inst.timezone).toBe("Europe/Paris");
    const local = DateTime.fromISO(at, { zone: "Europe/Paris" });
    expect(await logOf(inst.instanceId, "echo")).toContain(
      `day=${local.toFormat("yyyyMMdd")} biz=${local.minus({ days: 1 }).toFormat("yyyyMMdd")} at=${local.toFormat("HH:mm")}`,
    );

    // A manual run of a workflow that declares its zone; without one, UTC.
    await putWorkflow(sa.url, "kolkata", {
      timezone: "Asia/Kolkata",
      tasks: [{ code: "t", type: "SHELL", command: "echo at=$[HH:mm]" }],
    });
    const k = await waitFinal(sa.url, await startRun(sa.url, "kolkata"), 60_000);
    expect(k.timezone).toBe("Asia/Kolkata");
    const kolkata = DateTime.fromISO(k.createdAt, { zone: "Asia/Kolkata" }).toFormat("HH:mm");
    expect(await logOf(k.instanceId, "t")).toContain(`at=${kolkata}`);
    const bad = await api(sa.url, "PUT", "/v1/workflows/kolkata", {
      timezone: "Mars/Olympus",
      tasks: [{ code: "t", type: "SHELL", command: "true" }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("timezone");
  });

  it("a SWITCH compares OUT parameters as numbers: 5 > 100 is false", async () => {
    const inst = await waitFinal(sa.url, await startRun(sa.url, "branchy"), 60_000);
    // The HTTP hook is unreachable: the real run fails there, after the branch.
    expect(byCode(inst).pick).toMatchObject({ state: "SUCCESS", branch: ["small"] });
    expect(byCode(inst).big?.state).toBe("SKIPPED");
    expect(await logOf(inst.instanceId, "small")).toContain(
      `small rows=5 biz=${DateTime.fromISO(inst.createdAt, { zone: "UTC" }).minus({ days: 1 }).toFormat("yyyyMMdd")}`,
    );
  });

  it("a dry run takes every branch a SWITCH on an OUT parameter may take and logs what each task would run", async () => {
    const inst = await waitFinal(
      sa.url,
      await startRun(sa.url, "branchy", { dryRun: true }),
      60_000,
    );
    expect(inst.state).toBe("SUCCESS");
    const tasks = byCode(inst);
    expect(tasks.pick).toMatchObject({ state: "SUCCESS", branch: ["big", "small"] });
    expect(tasks.pick?.warning).toContain("reads OUT parameter rows of task count");
    for (const code of ["count", "big", "small", "notify"]) {
      expect(tasks[code]?.state, code).toBe("SUCCESS");
    }
    const day = DateTime.fromISO(inst.createdAt, { zone: "UTC" }).toFormat("yyyyMMdd");
    const big = await logOf(inst.instanceId, "big");
    expect(big).toContain("shoal: dry run: what task 'big' would run");
    expect(big).toContain(`  echo big rows=\${rows} day='${day}'`);
    expect(big).toContain("shoal: dry run, nothing executed");
    const notify = await logOf(inst.instanceId, "notify");
    expect(notify).toContain("  POST http://127.0.0.1:9/hook");
    expect(notify).toContain("  Authorization: ****");
    expect(notify).toContain("  token = ****");
    expect(notify.join("\n")).not.toContain("s3cr3t");
  });

  it("shoal render prints a workflow's task as a new run would render it", async () => {
    const r = await cli([
      "render",
      "dates",
      "echo",
      "--schedule-time",
      "2026-11-01T23:30:00Z",
      "--timezone",
      "Europe/Paris",
      "--endpoint",
      sa.url,
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("task echo (SHELL) of workflow dates v1 (a new run)");
    expect(r.stdout).toContain("base time 2026-11-01T23:30:00.000Z, time zone Europe/Paris");
    expect(r.stdout).toContain("  echo day='20261102' biz='20261101' at='00:30'");
    const withParams = await cli([
      "render",
      "branchy",
      "big",
      "-p",
      "rows=7",
      "--endpoint",
      sa.url,
    ]);
    expect(withParams.code).toBe(0);
    expect(withParams.stdout).toMatch(/ {2}echo big rows='7' day='\d{8}'/);
  });

  it("shoal render prints an instance's task as it ran or would run, OUT parameters included", async () => {
    const inst = await waitFinal(sa.url, await startRun(sa.url, "branchy"), 60_000);
    // `big` was skipped: it renders as it would have run, with the OUT parameter `count` set.
    const r = await cli(["render", inst.instanceId, "big", "--endpoint", sa.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`task big (SHELL) of instance ${inst.instanceId}`);
    expect(r.stdout).toMatch(/ {2}echo big rows='5' day='\d{8}'/);
    const json = await cli(["render", inst.instanceId, "pick", "-o", "json", "--endpoint", sa.url]);
    expect(JSON.parse(json.stdout).rendered).toEqual({
      type: "SWITCH",
      cases: [{ condition: "rows > threshold", next: "big", value: false }],
      defaultNext: "small",
    });
  });

  it("bad targets, codes and fields give clear errors", async () => {
    const noWorkflow = await cli(["render", "nosuch", "t", "--endpoint", sa.url]);
    expect(noWorkflow.code).toBe(1);
    expect(noWorkflow.stderr).toContain("error: workflow 'nosuch' does not exist");
    const noTask = await cli(["render", "dates", "nosuch", "--endpoint", sa.url]);
    expect(noTask.code).toBe(1);
    expect(noTask.stderr).toContain("task 'nosuch' is not in workflow 'dates' version 1");
    const ghost = "00000000-0000-4000-8000-000000000000";
    const noInstance = await cli(["render", ghost, "t", "--endpoint", sa.url]);
    expect(noInstance.code).toBe(1);
    expect(noInstance.stderr).toContain(`'${ghost}' is neither an instance nor a workflow`);
    const usage = await cli(["render", "dates", "echo", "--attempt", "2", "--endpoint", sa.url]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--attempt needs an instance id");
    const badZone = await api(sa.url, "POST", "/v1/workflows/dates/tasks/echo/render", {
      timezone: "Mars/Olympus",
    });
    expect(badZone.status).toBe(400);
    expect(badZone.body.error.details[0].path).toBe("timezone");
    const badQuery = await api(sa.url, "GET", "/v1/workflows/dates/tasks/echo/render?rows=5");
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error.details[0].path).toBe("rows");
    const badAttempt = await api(sa.url, "GET", `/v1/instances/${ghost}/tasks/t/render?attempt=0`);
    expect(badAttempt.status).toBe(400);
    expect(badAttempt.body.error.details[0].path).toBe("attempt");
    const missing = await api(sa.url, "GET", `/v1/instances/${ghost}/tasks/t/render`);
    expect(missing.status).toBe(404);
  });
});
