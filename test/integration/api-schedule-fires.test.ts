/**
 * The fire ledger is an audit record: `GET /v1/schedules/{id}/fires` keeps answering after its
 * schedule was deleted (docs/scheduling.md "Online, offline, edit, delete"), while an id that
 * never fired anything stays a 404. A real schedule sweeper decides the fires.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiServer,
  createWorkflow,
  del,
  expectError,
  get,
  oneTask,
  post,
  startApiServer,
  stopApiServer,
} from "../helpers/api-client.js";
import { runCli } from "../helpers/cli-run.js";
import { until } from "../helpers/poll.js";

beforeAll(async () => {
  await startApiServer();
});
afterAll(stopApiServer);

describe("the fire ledger of a deleted schedule", () => {
  it("stays readable after DELETE; an unknown schedule is a 404", async () => {
    await createWorkflow("ledgered", oneTask("true"));
    const created = await post("/v1/schedules", { workflow: "ledgered", cron: "* * * * * *" });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const sweeper = apiServer().rt.scheduleSweeper("fires-test", 1000);
    try {
      await until(
        async () => {
          await sweeper.sweep();
          const r = await get(`/v1/schedules/${id}/fires`);
          return r.body.items?.length > 0 ? r : undefined;
        },
        { what: "a recorded fire" },
      );
    } finally {
      await sweeper.stop();
    }
    const before = (await get(`/v1/schedules/${id}/fires`)).body.items;
    expect((await del(`/v1/schedules/${id}`)).status).toBe(204);
    expectError(await get(`/v1/schedules/${id}`), 404, "NotFound");

    const after = await get(`/v1/schedules/${id}/fires`);
    expect(after.status).toBe(200);
    expect(after.body.items).toEqual(before);
    expect(after.body.scheduleDeleted).toBe(true);
    expect(after.body.items[0]).toMatchObject({ decision: "FIRED" });

    // The CLI reads it too, and says whose ledger it is.
    const { code, stdout, stderr } = await runCli(["schedule", "fires", id], {
      endpoint: apiServer().base,
    });
    expect(code).toBe(0);
    expect(stdout).toContain("FIRED");
    expect(stderr).toContain(`schedule ${id} was deleted; its fire ledger is kept`);

    expectError(
      await get("/v1/schedules/00000000-0000-4000-8000-000000000000/fires"),
      404,
      "NotFound",
      { message: /does not exist/ },
    );
    expectError(await get("/v1/schedules/not!an!id/fires"), 404, "NotFound");
  }, 30_000);
});
