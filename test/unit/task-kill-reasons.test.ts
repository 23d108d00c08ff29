/**
 * A killed task says why: the worker aborts the plugin with the kill's reason (lib/engine/
 * halts.ts writes it next to `killRequested`) and the SHELL and HTTP plugins record it as the
 * attempt's error; a kill without a reason still reads "killed on request". The end-to-end view
 * (END, workflow timeout, stop through a real standalone) is in test/e2e/control.test.ts.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAwsClients } from "../../lib/aws/clients.js";
import type { WorkerTaskDefinition } from "../../lib/core/model.js";
import { runHttp } from "../../lib/tasks/http.js";
import { killError, type TaskRunContext } from "../../lib/tasks/plugin.js";
import { runShell } from "../../lib/tasks/shell.js";
import { until } from "../helpers/poll.js";

/** The plugins' AWS clients (SHELL and HTTP use none). */
const CLIENTS = createAwsClients({ region: "us-east-1", endpoints: {} });

function context(task: WorkerTaskDefinition, workDir = tmpdir()) {
  const lines: string[] = [];
  const kill = new AbortController();
  const ctx: TaskRunContext = {
    task,
    params: {},
    env: {},
    log: { write: (line) => lines.push(line), close: async () => {} },
    signal: kill.signal,
    workDir,
    clients: CLIENTS,
  };
  return { ctx, lines, kill };
}

const shell = (command: string) =>
  ({ code: "t", type: "SHELL", command, upstream: [] }) as unknown as WorkerTaskDefinition;

describe("the reason of a kill", () => {
  it("is the abort's reason when it is a sentence, else 'killed on request'", () => {
    const a = new AbortController();
    a.abort("killed: the instance was stopped");
    expect(killError(a.signal)).toBe("killed: the instance was stopped");
    const b = new AbortController();
    b.abort();
    expect(killError(b.signal)).toBe("killed on request");
  });

  it("SHELL: becomes the attempt's error and the log says it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shoal-kill-"));
    const started = join(dir, "started");
    const { ctx, lines, kill } = context(shell(`touch ${started}; sleep 30`), dir);
    const running = runShell(ctx);
    await until(() => existsSync(started), { what: "the task to start" });
    kill.abort("killed: task 'x' failed and the failure strategy is END");
    const r = await running;
    expect(r).toMatchObject({
      state: "KILLED",
      error: "killed: task 'x' failed and the failure strategy is END",
    });
    expect(lines).toContain(
      "shoal: killed: task 'x' failed and the failure strategy is END; terminating the process group",
    );
  });

  describe("HTTP", () => {
    let server: Server;
    let url: string;
    let onRequest = () => {};
    beforeAll(async () => {
      server = createServer(() => onRequest()); // never answers
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    it("becomes the attempt's error", async () => {
      const task = {
        code: "h",
        type: "HTTP",
        method: "GET",
        url,
        expectStatus: [200, 299],
        upstream: [],
      } as unknown as WorkerTaskDefinition;
      const { ctx, kill } = context(task);
      onRequest = () => kill.abort("killed: the workflow timed out after 60s");
      const running = runHttp(ctx);
      expect(await running).toEqual({
        state: "KILLED",
        error: "killed: the workflow timed out after 60s",
      });
    });
  });
});
