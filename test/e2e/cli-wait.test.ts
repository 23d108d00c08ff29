/**
 * The CLI's waits against a real `shoal standalone` (the CLI runs in-process through `main()`):
 * `run --wait` shows the API's own progress (a failure a CONDITIONS task handled counts as done,
 * not failed), `shoal wait` waits for any instance, and `rerun`, `recover-failed` and `resume`
 * take `--wait` with the same display and exit codes.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli-run.js";
import { until } from "../helpers/poll.js";
import {
  api,
  byCode,
  putWorkflow,
  type RunningStandalone,
  startRun,
  startStandaloneProcess,
  waitFinal,
} from "../helpers/standalone.js";

describe("CLI waits in shoal standalone", () => {
  let sa: RunningStandalone;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "shoal-cli-wait-"));
    sa = await startStandaloneProcess({ dataDir: join(dir, "data"), workers: 2 });
  });
  afterAll(async () => {
    await sa?.stop();
  });

  /** Runs `shoal --endpoint <standalone> ...args` in-process. */
  const shoal = (args: string[]) => runCli(args, { endpoint: sa.url });
  const get = async (id: string) => (await api(sa.url, "GET", `/v1/instances/${id}`)).body;
  /** `2/3 done, 1 active, 0 failed` from the API's progress, as the CLI words it. */
  const apiProgress = (p: { done: number; active: number; failed: number; total: number }) =>
    `${p.done}/${p.total} done, ${p.active} active, ${p.failed} failed`;
  /** A SHELL command failing the first time it runs and succeeding after (a flag file). */
  const failOnce = (name: string) => {
    const flag = join(dir, `${name}.flag`);
    return `if [ -f ${flag} ]; then echo ok; else touch ${flag}; exit 3; fi`;
  };

  it("run --wait shows the API's progress: a failure CONDITIONS handled is done, not failed", async () => {
    await putWorkflow(sa.url, "handled", {
      tasks: [
        { code: "check", type: "SHELL", command: "exit 3" },
        {
          code: "decide",
          type: "CONDITIONS",
          upstream: ["check"],
          successNext: ["publish"],
          failedNext: ["alert"],
        },
        { code: "publish", type: "SHELL", upstream: ["decide"], command: "echo publish" },
        { code: "alert", type: "SHELL", upstream: ["decide"], command: "echo alert" },
      ],
    });
    const res = await shoal(["run", "handled", "--wait", "--timeout", "60"]);
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split("\n");
    const id = lines[0] as string;
    const inst = await get(id);
    expect(inst.state).toBe("SUCCESS");
    expect(byCode(inst).check?.state).toBe("FAILURE");
    // The last progress line is the API's count, word for word: 0 failed.
    const last = lines.findLast((l) => l.startsWith("SUCCESS  ")) as string;
    expect(last).toBe(`SUCCESS  ${apiProgress(inst.progress)}`);
    expect(last).toBe("SUCCESS  4/4 done, 0 active, 0 failed");
    expect(res.stdout).toMatch(/^SUCCESS in \S+$/m);
    expect(res.stdout).toContain("failures handled by CONDITIONS: check");
    // Every progress line uses the API's words.
    for (const l of lines.slice(1, -2)) {
      expect(l).toMatch(/^[A-Z]+( {2}\d+\/4 done, \d+ active, \d+ failed)?$/);
    }
  });

  it("shoal wait waits for an instance it did not start; exit 1 on FAILURE", async () => {
    await putWorkflow(sa.url, "boom", {
      tasks: [{ code: "boom", type: "SHELL", command: "sleep 0.5; exit 2" }],
    });
    const id = await startRun(sa.url, "boom");
    const res = await shoal(["wait", id, "--timeout", "60"]);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^FAILURE {2}0\/1 done, 0 active, 1 failed$/m);
    expect(res.stdout).toMatch(/^FAILURE in \S+\nfailed tasks: boom \(see: shoal logs /m);
    // Finished already: the same answer at once.
    const again = await shoal(["wait", id]);
    expect(again.code).toBe(1);
    expect(again.stdout.split("\n")[0]).toBe("FAILURE  0/1 done, 0 active, 1 failed");
    // Unknown instance: the API's 404, exit 1.
    const unknown = await shoal(["wait", "00000000-0000-4000-8000-000000000000"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/does not exist/);
  });

  it("recover-failed --wait and rerun --wait wait for the new run, not the last one's end", async () => {
    await putWorkflow(sa.url, "flaky", {
      tasks: [
        { code: "first", type: "SHELL", command: "echo first" },
        { code: "second", type: "SHELL", upstream: ["first"], command: failOnce("recover") },
      ],
    });
    const id = await startRun(sa.url, "flaky");
    expect((await waitFinal(sa.url, id, 60_000)).state).toBe("FAILURE");
    // The old FAILURE must not end the wait: exit 0 means the new run was waited for.
    const recovered = await shoal(["recover-failed", id, "--wait", "--timeout", "60"]);
    expect(recovered.stderr).toBe("");
    expect(recovered.code).toBe(0);
    expect(recovered.stdout.split("\n")[0]).toBe(`${id} SUBMITTED`);
    expect(recovered.stdout).toMatch(/^SUCCESS {2}2\/2 done, 0 active, 0 failed\nSUCCESS in /m);
    expect(recovered.stdout).not.toMatch(/^FAILURE/m);
    expect((await get(id)).runs).toBe(2);

    await putWorkflow(sa.url, "flaky2", {
      tasks: [{ code: "only", type: "SHELL", command: failOnce("rerun") }],
    });
    const other = await startRun(sa.url, "flaky2");
    expect((await waitFinal(sa.url, other, 60_000)).state).toBe("FAILURE");
    const rerun = await shoal(["rerun", other, "-w"]);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toMatch(/^SUCCESS {2}1\/1 done, 0 active, 0 failed$/m);
    expect((await get(other)).runs).toBe(2);
  });

  it("resume --wait waits for the resumed instance to finish", async () => {
    const flag = join(dir, "release");
    await putWorkflow(sa.url, "pausable", {
      tasks: [
        {
          code: "slow",
          type: "SHELL",
          command: `while [ ! -f ${flag} ]; do sleep 0.1; done; echo done`,
        },
        { code: "next", type: "SHELL", upstream: ["slow"], command: "echo next" },
      ],
    });
    const id = await startRun(sa.url, "pausable");
    await until(async () => byCode(await get(id)).slow?.state === "RUNNING", {
      timeoutMs: 30_000,
      what: "slow RUNNING",
    });
    expect((await api(sa.url, "POST", `/v1/instances/${id}/pause`)).status).toBe(202);
    writeFileSync(flag, "");
    await until(async () => (await get(id)).state === "PAUSED", {
      timeoutMs: 30_000,
      what: "PAUSED",
    });
    const res = await shoal(["resume", id, "--wait", "--timeout", "60"]);
    expect(res.code).toBe(0);
    expect(res.stdout.split("\n")[0]).toBe(`${id} RUNNING`);
    expect(res.stdout).toMatch(/^SUCCESS {2}2\/2 done, 0 active, 0 failed\nSUCCESS in /m);
  });
});
