/**
 * The log endpoint and `shoal logs` on an instance run more than once: by default they read the
 * current round's attempt, never an earlier round's (a task the round has not reached reads as
 * empty, with a token while it may still run), and say why there is nothing to show. And the
 * instance reads of a version that can no longer be read say so. The dispatcher and worker are
 * driven by hand (test/helpers/api-engine.ts).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DeleteCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NOT_STARTED_TOKEN } from "../../lib/api/instances.js";
import { DefinitionCache } from "../../lib/engine/definitions.js";
import {
  apiServer,
  createWorkflow,
  expectError,
  get,
  startApiServer,
  startRun,
  stopApiServer,
} from "../helpers/api-client.js";
import { control, runNextTask, startInstance } from "../helpers/api-engine.js";
import { testClients } from "../helpers/aws-env.js";
import { runCli } from "../helpers/cli-run.js";

beforeAll(async () => {
  await startApiServer();
});
afterAll(stopApiServer);

const log = async (id: string, code: string, query = "") => {
  const r = await get(`/v1/instances/${id}/tasks/${code}/log${query}`);
  expect(r.status, r.text).toBe(200);
  return r.body as { lines: Array<{ message: string }>; nextToken?: string };
};
const messages = (page: { lines: Array<{ message: string }> }) =>
  page.lines.map((l) => l.message).filter((m) => !m.startsWith("shoal:"));

/** `first` → `final`, both echoing their round; `first` fails once `marker` exists. */
async function twoRounds(name: string): Promise<{ id: string; marker: string }> {
  const marker = join(mkdtempSync(join(tmpdir(), "shoal-log-rounds-")), "broken");
  await createWorkflow(name, {
    tasks: [
      { code: "first", type: "SHELL", command: `test ! -f ${marker}` },
      { code: "final", type: "SHELL", command: "echo final-ran", upstream: ["first"] },
    ],
  });
  const id = await startRun(name);
  await startInstance(id);
  await runNextTask(id);
  await runNextTask(id);
  return { id, marker };
}

describe("the log of the current round", () => {
  it("after rerun: not the previous round's log, a token until the task runs, then its own", async () => {
    const { id } = await twoRounds("log-rerun");
    expect(messages(await log(id, "final"))).toEqual(["final-ran"]);
    await control(id, "rerun");
    // `final` has not started in round 2: nothing, and a token for a follower.
    expect(await log(id, "final")).toEqual({ lines: [], nextToken: NOT_STARTED_TOKEN });
    // Round 1's attempt stays readable by number.
    expect(messages(await log(id, "final", "?attempt=1"))).toEqual(["final-ran"]);
    // `shoal logs` without --follow says why there is nothing (it printed round 1's log before).
    const cli = await runCli(["logs", id, "final"], { endpoint: apiServer().base });
    expect(cli).toEqual({
      code: 0,
      stdout: "",
      stderr: "waiting for upstream 'first' (DISPATCHED, attempt 2)\n",
    });
    await runNextTask(id);
    await runNextTask(id);
    // The follower's token reads round 2's attempt from its beginning.
    const next = await log(id, "final", `?nextToken=${NOT_STARTED_TOKEN}`);
    expect(messages(next)).toEqual(["final-ran"]);
    expect(next.lines[0]?.message).toMatch(/^shoal: SHELL task 'final' attempt 2 /);
  }, 30_000);

  it("a task the ended round never ran: empty and final, and the CLI says why", async () => {
    const { id, marker } = await twoRounds("log-never");
    writeFileSync(marker, "");
    await control(id, "rerun");
    await runNextTask(id); // `first` fails in round 2: the instance ends FAILURE
    expect((await get(`/v1/instances/${id}`)).body.state).toBe("FAILURE");
    expect(await log(id, "final")).toEqual({ lines: [] });
    const cli = await runCli(["logs", id, "final", "--follow"], { endpoint: apiServer().base });
    expect(cli).toEqual({
      code: 0,
      stdout: "",
      stderr: "did not run: upstream 'first' ended FAILURE\n",
    });
  }, 30_000);
});

describe("an instance whose definition version cannot be read", () => {
  it("attempts still list; logs, explain and unknown tasks say the definition is gone", async () => {
    await createWorkflow("vanishing", {
      tasks: [{ code: "tg1", type: "SHELL", command: "echo hi" }],
    });
    const id = await startRun("vanishing");
    await startInstance(id);
    await runNextTask(id);
    // The version item removed under the API (a workflow deleted before versions were kept),
    // with a cache that never saw it.
    await testClients().dynamo.send(
      new DeleteCommand({
        TableName: apiServer().aws.config.tables.workflows,
        Key: { name: "vanishing", version: 1 },
      }),
    );
    const api = apiServer().rt.api;
    const cache = api.definitions;
    api.definitions = new DefinitionCache(api.store);
    try {
      const attempts = await get(`/v1/instances/${id}/tasks/tg1/attempts`);
      expect(attempts.status).toBe(200);
      expect(attempts.body.items).toMatchObject([{ code: "tg1", state: "SUCCESS", attempt: 1 }]);
      const gone = /the definition of workflow 'vanishing' v1 is gone/;
      for (const path of [
        `/v1/instances/${id}/tasks/tg1/log`,
        `/v1/instances/${id}/tasks/tg1/explain`,
        `/v1/instances/${id}/tasks/nope/attempts`,
      ]) {
        expectError(await get(path), 404, "NotFound", { message: gone });
      }
      expect((await get(`/v1/instances/${id}/tasks/tg1/log`)).body.error.message).not.toMatch(
        /has no task/,
      );
    } finally {
      api.definitions = cache;
    }
  }, 30_000);
});
