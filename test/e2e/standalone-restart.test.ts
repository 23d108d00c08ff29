/**
 * `shoal worker`s and `shoal sweeper`s that outlive a standalone follow its restart: the
 * emulators listen on the ports of the last run over the same data dir (read from its
 * endpoints.env), so the endpoints those processes hold stay valid. A port taken meanwhile is
 * replaced by a free one, and standalone says so.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/poll.js";
import {
  api,
  putWorkflow,
  type RunningStandalone,
  type RunningWorker,
  startRun,
  startStandaloneProcess,
  startSweeperProcess,
  startWorkerProcess,
  waitFinal,
} from "../helpers/standalone.js";

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "shoal-restart-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** The emulator endpoints standalone wrote to its data dir. */
function endpoints(dataDir: string): { dynamodb: string; sqs: string } {
  const env = parseEnv(readFileSync(join(dataDir, "endpoints.env"), "utf8"));
  return { dynamodb: env.AWS_ENDPOINT_URL_DYNAMODB ?? "", sqs: env.AWS_ENDPOINT_URL_SQS ?? "" };
}

const ECHO = {
  tasks: [{ code: "a", type: "SHELL", command: "echo a" }],
};

describe("a standalone restarted on its data dir", () => {
  it("keeps its emulator endpoints: a `shoal worker` and a `shoal sweeper` started before go on", async () => {
    const dataDir = join(root, "follow");
    let sa: RunningStandalone | undefined;
    let worker: RunningWorker | undefined;
    let sweeper: RunningWorker | undefined;
    // No worker slots and no scheduler of its own: only the processes from before can run and fire.
    const start = () => startStandaloneProcess({ dataDir, workers: 0, args: ["--no-scheduler"] });
    try {
      sa = await start();
      const before = endpoints(dataDir);
      worker = startWorkerProcess(dataDir, ["--concurrency", "2"]);
      sweeper = startSweeperProcess(dataDir, ["--interval", "500"]);
      await Promise.all([worker.ready(), sweeper.ready()]);
      await putWorkflow(sa.url, "echo", ECHO);
      expect((await waitFinal(sa.url, await startRun(sa.url, "echo"))).state).toBe("SUCCESS");

      await sa.kill9();
      sa = await start();
      expect(endpoints(dataDir)).toEqual(before);
      const inst = await waitFinal(sa.url, await startRun(sa.url, "echo"), 60_000);
      expect(inst.state).toBe("SUCCESS");
      const url = sa.url;
      const created = await api(url, "POST", "/v1/schedules", {
        workflow: "echo",
        cron: "* * * * * *",
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await until(
        async () => {
          const r = await api(url, "GET", `/v1/schedules/${created.body.id}/fires`);
          return r.body.items?.some((f: { decision?: string }) => f.decision === "FIRED");
        },
        { timeoutMs: 60_000, what: "the sweeper from before the restart to fire the schedule" },
      );
      expect(worker.proc.exitCode).toBeNull();
      expect(sweeper.proc.exitCode).toBeNull();
    } finally {
      await sweeper?.stop();
      await worker?.stop();
      await sa?.stop();
    }
  }, 150_000);

  it("takes another port when the last one is taken, and says so", async () => {
    const dataDir = join(root, "taken");
    let sa: RunningStandalone | undefined;
    const squatter: Server = createServer();
    try {
      // The emulators' ports (the embedded backend's processes join through its files).
      sa = await startStandaloneProcess({ dataDir, workers: 1, args: ["--backend", "emulators"] });
      const before = endpoints(dataDir);
      await sa.stop();
      const port = Number(new URL(before.dynamodb).port);
      // Taken as soon as the last run's emulator let go of it.
      await until(
        () =>
          new Promise<boolean>((resolve) => {
            squatter.once("error", () => resolve(false));
            squatter.listen(port, "127.0.0.1", () => resolve(true));
          }),
        { timeoutMs: 15_000, what: `port ${port} to be free` },
      );
      sa = await startStandaloneProcess({
        dataDir,
        workers: 1,
        env: { SHOAL_QUIET: "" },
        args: ["--backend", "emulators"],
      });
      const after = endpoints(dataDir);
      expect(after.dynamodb).not.toBe(before.dynamodb);
      expect(after.sqs).toBe(before.sqs);
      expect(sa.output()).toContain(
        `port ${port} of the dynamodb emulator's last run is taken, so it listens on another`,
      );
      await putWorkflow(sa.url, "echo", ECHO);
      expect((await waitFinal(sa.url, await startRun(sa.url, "echo"))).state).toBe("SUCCESS");
    } finally {
      await sa?.stop();
      if (squatter.listening) await new Promise<void>((r) => squatter.close(() => r()));
    }
  }, 120_000);
});
