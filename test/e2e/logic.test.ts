// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is Shoal's parameter syntax, not a JS template
/**
 * Logic tasks through the HTTP API of a real `shoal standalone`: CONDITIONS, SWITCH,
 * SUB_WORKFLOW (result mirrored, stop cascading to the child) and DEPENDENT.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { until } from "../helpers/poll.js";
import {
  api,
  byCode,
  type E2eTask,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

type Task = E2eTask;

describe("logic tasks in shoal standalone", () => {
  let sa: RunningStandalone;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "shoal-logic-"));
    sa = await startStandaloneProcess({ dataDir: join(dir, "data"), workers: 4 });
  });
  afterAll(async () => {
    await sa?.stop();
  });

  const put = (name: string, def: unknown) => putWorkflow(sa.url, name, def);
  const run = async (name: string, body: unknown = {}) =>
    waitFinal(sa.url, await startRun(sa.url, name, body), 60_000);

  it("CONDITIONS follows failedNext when its upstream failed; the other branch is SKIPPED", async () => {
    const def = (cmd: string) => ({
      tasks: [
        { code: "check", type: "SHELL", command: cmd },
        {
          code: "decide",
          type: "CONDITIONS",
          upstream: ["check"],
          successNext: ["publish"],
          failedNext: ["alert"],
        },
        { code: "publish", type: "SHELL", command: "echo publish", upstream: ["decide"] },
        { code: "announce", type: "SHELL", command: "echo announce", upstream: ["publish"] },
        { code: "alert", type: "SHELL", command: "echo alert", upstream: ["decide"] },
      ],
    });
    await put("cond-fail", def("exit 1"));
    const bad = await run("cond-fail");
    // The failure is handled by the CONDITIONS task: the instance succeeds.
    expect(bad.state).toBe("SUCCESS");
    const b = byCode(bad);
    expect(b.check?.state).toBe("FAILURE");
    expect(b.decide).toMatchObject({ state: "SUCCESS", branch: ["alert"] });
    expect(b.alert?.state).toBe("SUCCESS");
    expect(b.publish?.state).toBe("SKIPPED");
    expect(b.announce?.state).toBe("SKIPPED");

    await put("cond-ok", def("true"));
    const good = byCode(await run("cond-ok"));
    expect(good.publish?.state).toBe("SUCCESS");
    expect(good.announce?.state).toBe("SUCCESS");
    expect(good.alert?.state).toBe("SKIPPED");
  });

  it("rejects a CONDITIONS branch that does not list the task upstream", async () => {
    const r = await api(sa.url, "PUT", "/v1/workflows/cond-bad", {
      tasks: [
        { code: "a", type: "SHELL", command: "true" },
        { code: "c", type: "CONDITIONS", upstream: ["a"], successNext: ["x"], failedNext: [] },
        { code: "x", type: "SHELL", command: "true" },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.details[0]).toMatchObject({ path: "tasks[1].successNext[0]" });
  });

  it("SWITCH follows the first true case over parameters, else the default", async () => {
    await put("switcher", {
      params: { region: "us" },
      tasks: [
        {
          code: "route",
          type: "SWITCH",
          cases: [
            { condition: 'region == "eu"', next: "eu" },
            { condition: "int(size) > 100", next: "big" },
          ],
          defaultNext: "other",
          params: { size: "5" },
        },
        { code: "eu", type: "SHELL", command: "echo eu", upstream: ["route"] },
        { code: "big", type: "SHELL", command: "echo big", upstream: ["route"] },
        { code: "other", type: "SHELL", command: "echo other", upstream: ["route"] },
      ],
    });
    const eu = byCode(await run("switcher", { params: { region: "eu" } }));
    expect(eu.route?.branch).toEqual(["eu"]);
    expect([eu.eu?.state, eu.big?.state, eu.other?.state]).toEqual([
      "SUCCESS",
      "SKIPPED",
      "SKIPPED",
    ]);
    const big = byCode(await run("switcher", { params: { size: "500" } }));
    expect(big.big?.state).toBe("SUCCESS");
    const other = byCode(await run("switcher"));
    expect(other.other?.state).toBe("SUCCESS");
    expect(other.route?.branch).toEqual(["other"]);
    // A bad expression is a 400 naming the case.
    const bad = await api(sa.url, "PUT", "/v1/workflows/switch-bad", {
      tasks: [
        { code: "s", type: "SWITCH", cases: [{ condition: "region ==", next: "x" }] },
        { code: "x", type: "SHELL", command: "true", upstream: ["s"] },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe("tasks[0].cases[0].condition");
  });

  it("SUB_WORKFLOW runs the child with the task's parameters and mirrors its result", async () => {
    await put("child", {
      params: { who: "nobody" },
      tasks: [{ code: "greet", type: "SHELL", command: 'echo "hello $who"; test "$who" != fail' }],
    });
    await put("parent", {
      tasks: [
        { code: "sub", type: "SUB_WORKFLOW", workflow: "child", params: { who: "${person}" } },
        { code: "after", type: "SHELL", command: "echo after", upstream: ["sub"] },
      ],
    });
    const ok = await run("parent", { params: { person: "ada" } });
    expect(ok.state).toBe("SUCCESS");
    const sub = byCode(ok).sub as Task;
    expect(sub.state).toBe("SUCCESS");
    const child = (await api(sa.url, "GET", `/v1/instances/${sub.subInstanceId}`)).body;
    expect(child.state).toBe("SUCCESS");
    expect(child.params).toEqual({ who: "ada" });
    expect(child.parent).toMatchObject({ instanceId: ok.instanceId, code: "sub" });
    const log = await api(sa.url, "GET", `/v1/instances/${sub.subInstanceId}/tasks/greet/log`);
    expect(log.body.lines.map((l: { message: string }) => l.message)).toContain("hello ada");

    const failed = await run("parent", { params: { person: "fail" } });
    expect(failed.state).toBe("FAILURE");
    expect(byCode(failed).sub?.state).toBe("FAILURE");
    expect(byCode(failed).after).toBeUndefined();
  });

  it("a failed SUB_WORKFLOW is retried after its interval with a new child", async () => {
    const marker = join(dir, "child-ran-once");
    await put("flaky-child", {
      tasks: [
        {
          code: "once",
          type: "SHELL",
          command: `if [ -f ${marker} ]; then exit 0; fi; touch ${marker}; exit 1`,
        },
      ],
    });
    await put("retrying-parent", {
      tasks: [
        {
          code: "sub",
          type: "SUB_WORKFLOW",
          workflow: "flaky-child",
          retries: 1,
          retryIntervalSeconds: 2,
        },
      ],
    });
    const started = await api(sa.url, "POST", "/v1/workflows/retrying-parent/runs", {});
    const id = started.body.instanceId as string;
    // While it waits for its retry interval, the retry shows as a waiting attempt (not as a task
    // that never started).
    const waiting = await until(
      async () => {
        const sub = byCode((await api(sa.url, "GET", `/v1/instances/${id}`)).body).sub;
        return sub?.attempt === 2 ? sub : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: "the retry's attempt" },
    );
    expect(waiting.state).toBe("SUBMITTED");
    const done = await waitFinal(sa.url, id, 30_000);
    expect(done.state).toBe("SUCCESS");
    const attempts = (
      await api(sa.url, "GET", `/v1/instances/${done.instanceId}/tasks/sub/attempts`)
    ).body.items as Array<Task & { startedAt: string; endedAt: string }>;
    expect(attempts.map((a) => a.state)).toEqual(["FAILURE", "SUCCESS"]);
    expect(attempts[0]?.subInstanceId).not.toBe(attempts[1]?.subInstanceId);
    const gap = Date.parse(attempts[1]?.startedAt ?? "") - Date.parse(attempts[0]?.endedAt ?? "");
    expect(gap).toBeGreaterThanOrEqual(1_900);
  }, 60_000);

  it("stopping the parent stops the child", async () => {
    await put("slow-child", { tasks: [{ code: "wait", type: "SHELL", command: "sleep 60" }] });
    await put("slow-parent", {
      tasks: [{ code: "sub", type: "SUB_WORKFLOW", workflow: "slow-child" }],
    });
    const r = await api(sa.url, "POST", "/v1/workflows/slow-parent/runs", {});
    const id = r.body.instanceId as string;
    const childId = await until(
      async () => {
        const sub = byCode((await api(sa.url, "GET", `/v1/instances/${id}`)).body).sub;
        if (!sub?.subInstanceId) return undefined;
        const child = (await api(sa.url, "GET", `/v1/instances/${sub.subInstanceId}`)).body;
        return byCode(child).wait?.state === "RUNNING" ? sub.subInstanceId : undefined;
      },
      { timeoutMs: 30_000, what: "the child's task to run" },
    );
    expect((await api(sa.url, "POST", `/v1/instances/${id}/stop`)).status).toBe(202);
    const parent = await waitFinal(sa.url, id, 30_000);
    expect(parent.state).toBe("STOPPED");
    const child = await waitFinal(sa.url, childId, 30_000);
    expect(child.state).toBe("STOPPED");
    expect(byCode(child).wait?.state).toBe("KILLED");
  }, 60_000);

  it("pausing the parent pauses the child; resume continues both where they were", async () => {
    const flag = join(dir, "release-child");
    await put("pausable-child", {
      tasks: [
        { code: "first", type: "SHELL", command: `while [ ! -f ${flag} ]; do sleep 0.1; done` },
        { code: "second", type: "SHELL", command: "echo second", upstream: ["first"] },
      ],
    });
    await put("pausable-parent", {
      tasks: [
        { code: "sub", type: "SUB_WORKFLOW", workflow: "pausable-child" },
        { code: "after", type: "SHELL", command: "echo after", upstream: ["sub"] },
      ],
    });
    const id = (await api(sa.url, "POST", "/v1/workflows/pausable-parent/runs", {})).body
      .instanceId as string;
    const childId = await until(
      async () => {
        const sub = byCode((await api(sa.url, "GET", `/v1/instances/${id}`)).body).sub;
        if (!sub?.subInstanceId) return undefined;
        const child = (await api(sa.url, "GET", `/v1/instances/${sub.subInstanceId}`)).body;
        return byCode(child).first?.state === "RUNNING" ? sub.subInstanceId : undefined;
      },
      { timeoutMs: 30_000, what: "the child's first task to run" },
    );
    expect((await api(sa.url, "POST", `/v1/instances/${id}/pause`)).status).toBe(202);
    const state = async (i: string) => (await api(sa.url, "GET", `/v1/instances/${i}`)).body;
    // The pause has reached the child before its running task is let go.
    await until(async () => (await state(childId)).state === "PAUSING", {
      timeoutMs: 30_000,
      what: "the child to be pausing",
    });
    const { writeFileSync } = await import("node:fs");
    writeFileSync(flag, "");
    const pausedChild = await until(
      async () => ((await state(childId)).state === "PAUSED" ? state(childId) : undefined),
      { timeoutMs: 30_000, what: "the child to pause" },
    );
    expect(byCode(pausedChild).second).toBeUndefined();
    await until(async () => (await state(id)).state === "PAUSED", {
      timeoutMs: 30_000,
      what: "the parent to pause",
    });
    expect((await api(sa.url, "POST", `/v1/instances/${id}/resume`)).status).toBe(202);
    const done = await waitFinal(sa.url, id, 30_000);
    expect(done.state).toBe("SUCCESS");
    expect(byCode(done).sub?.subInstanceId).toBe(childId); // the same child, resumed
    const child = await waitFinal(sa.url, childId, 30_000);
    expect(byCode(child).second?.state).toBe("SUCCESS");
    expect(byCode(child).first?.attempt).toBe(1);
  }, 90_000);

  it("a dry run passes logic tasks through their states without running anything", async () => {
    await put("dry-logic", {
      tasks: [
        { code: "x", type: "SHELL", command: "exit 1" },
        { code: "c", type: "CONDITIONS", upstream: ["x"], successNext: ["y"], failedNext: ["z"] },
        { code: "y", type: "SHELL", command: "exit 1", upstream: ["c"] },
        { code: "z", type: "SHELL", command: "exit 1", upstream: ["c"] },
      ],
    });
    const done = await run("dry-logic", { dryRun: true });
    expect(done.state).toBe("SUCCESS");
    const t = byCode(done);
    expect([t.x?.state, t.c?.state, t.y?.state, t.z?.state]).toEqual([
      "SUCCESS",
      "SUCCESS",
      "SUCCESS",
      "SKIPPED",
    ]);
  });

  it("examples/data-quality.yaml takes the branch its OUT value and parameters choose", async () => {
    const { name: _n, ...def } = parse(
      readFileSync(new URL("../../examples/data-quality.yaml", import.meta.url), "utf8"),
    );
    await put("data-quality", def);
    const good = byCode(await run("data-quality"));
    expect(good.count?.state).toBe("SUCCESS");
    expect(good.gate?.branch).toEqual(["publish"]);
    expect([good.publish?.state, good.quarantine?.state]).toEqual(["SUCCESS", "SKIPPED"]);
    expect([good.done?.state, good.alert?.state]).toEqual(["SUCCESS", "SKIPPED"]);
    const strict = await run("data-quality", { params: { threshold: "1000" } });
    expect(strict.state).toBe("SUCCESS"); // the failure is handled by the CONDITIONS task
    const s = byCode(strict);
    expect([s.publish?.state, s.quarantine?.state]).toEqual(["SKIPPED", "FAILURE"]);
    expect([s.done?.state, s.alert?.state]).toEqual(["SKIPPED", "SUCCESS"]);
    const log = await api(sa.url, "GET", `/v1/instances/${strict.instanceId}/tasks/quarantine/log`);
    expect(log.body.lines.map((l: { message: string }) => l.message).join("\n")).toMatch(
      /only 150 rows of \d{8}, fewer than 1000: quarantined/,
    );
  });

  it("a SUB_WORKFLOW must name another existing workflow", async () => {
    const r = await api(sa.url, "PUT", "/v1/workflows/orphan", {
      tasks: [{ code: "s", type: "SUB_WORKFLOW", workflow: "no-such-workflow" }],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.details[0]).toMatchObject({ path: "tasks[0].workflow" });
  });

  it("DEPENDENT waits for today's instance of another workflow, then succeeds or fails", async () => {
    await put("upstream-daily", {
      tasks: [{ code: "load", type: "SHELL", command: 'test "$ok" = yes' }],
    });
    await put("downstream-daily", {
      tasks: [
        {
          code: "wait-load",
          type: "DEPENDENT",
          checkIntervalSeconds: 1,
          timeoutSeconds: 60,
          dependence: {
            relation: "AND",
            groups: [
              {
                relation: "AND",
                items: [{ workflow: "upstream-daily", cycle: "day", dateValue: "today" }],
              },
            ],
          },
        },
        { code: "report", type: "SHELL", command: "echo report", upstream: ["wait-load"] },
      ],
    });
    // Nothing ran today yet: the DEPENDENT task waits (RUNNING).
    const d = await api(sa.url, "POST", "/v1/workflows/downstream-daily/runs", {});
    const id = d.body.instanceId as string;
    await until(
      async () =>
        byCode((await api(sa.url, "GET", `/v1/instances/${id}`)).body)["wait-load"]?.state ===
        "RUNNING",
      { timeoutMs: 30_000, what: "the DEPENDENT task to wait" },
    );
    const up = await run("upstream-daily", { params: { ok: "yes" } });
    expect(up.state).toBe("SUCCESS");
    const done = await waitFinal(sa.url, id, 60_000);
    expect(done.state).toBe("SUCCESS");
    expect(byCode(done).report?.state).toBe("SUCCESS");
  }, 90_000);

  it("DEPENDENT fails at its timeout while the dependency never ran", async () => {
    await put("never-runs", { tasks: [{ code: "x", type: "SHELL", command: "true" }] });
    await put("waits-in-vain", {
      tasks: [
        {
          code: "dep",
          type: "DEPENDENT",
          checkIntervalSeconds: 1,
          timeoutSeconds: 2,
          dependence: {
            groups: [
              { items: [{ workflow: "never-runs", cycle: "hour", dateValue: "currentHour" }] },
            ],
          },
        },
      ],
    });
    const done = await run("waits-in-vain");
    expect(done.state).toBe("FAILURE");
    expect(byCode(done).dep?.error).toMatch(/not met within 2s/);
  }, 60_000);
});
