/**
 * Hostile input the API must refuse at the door (harness: test/helpers/api-client.ts): NUL and
 * unpaired surrogates in commands and parameter values (accepted, they would fail every run),
 * and a backfill range so large that listing its nominal times would hold the event loop.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BACKFILL_TIMES } from "../../lib/api/backfills.js";
import { handleApiRequest } from "../../lib/api/router.js";
import type { Runtime } from "../../lib/runtime/runtime.js";
import { httpApiEvent } from "../../lib/standalone/lambda-events.js";
import {
  changesNothing,
  createWorkflow,
  expectError,
  oneTask,
  post,
  put,
  rejectsOnBoth,
  startApiServer,
  stopApiServer,
  twoTasks,
} from "../helpers/api-client.js";

let rt: Runtime;

beforeAll(async () => {
  ({ rt } = await startApiServer());
  await createWorkflow("base", twoTasks());
});

afterAll(stopApiServer);

const RULE = /must not contain NUL or unpaired surrogate characters/;
/** Characters no process can take: NUL, a high and a low surrogate each alone. */
const HOSTILE: Array<[string, string]> = [
  ["NUL", "echo a\u0000b"],
  ["a lone high surrogate", "echo \ud800"],
  ["a lone low surrogate", "echo \udc00x"],
];

describe("NUL and unpaired surrogates", () => {
  for (const [what, text] of HOSTILE) {
    it(`PUT /v1/workflows refuses ${what} in a command, naming the field`, async () => {
      await rejectsOnBoth((n) => put(`/v1/workflows/${n}`, oneTask(text)), 400, "ValidationError", {
        path: "tasks[0].command",
        detail: RULE,
      });
    });

    it(`PUT /v1/workflows refuses ${what} in a workflow or task parameter value`, async () => {
      await rejectsOnBoth(
        (n) => put(`/v1/workflows/${n}`, { ...oneTask("echo ok"), params: { x: text } }),
        400,
        "ValidationError",
        { path: "params.x", detail: RULE },
      );
      const task = { code: "only", type: "SHELL", command: "echo ok", params: { y: text } };
      await rejectsOnBoth(
        (n) => put(`/v1/workflows/${n}`, { tasks: [task] }),
        400,
        "ValidationError",
        { path: "tasks[0].params.y", detail: RULE },
      );
    });

    it(`POST /v1/workflows/{name}/runs refuses ${what} in a parameter value`, async () => {
      await changesNothing(async () => {
        expectError(
          await post("/v1/workflows/base/runs", { params: { x: text } }),
          400,
          "ValidationError",
          {
            path: "params.x",
            detail: RULE,
          },
        );
      });
    });
  }

  it("accepts paired surrogates (an emoji) and other control characters (a tab)", async () => {
    const r = await put("/v1/workflows/emoji", oneTask("echo '\ud83d\ude00'\t"));
    expect([200, 201], r.text).toContain(r.status);
  });
});

describe("POST /v1/workflows/{name}/backfill over a huge range", () => {
  it("answers 413 quickly for a per-second cron over 30 years", async () => {
    const event = (body: unknown) =>
      httpApiEvent({
        method: "POST",
        path: "/v1/workflows/base/backfill",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        sourceIp: "",
        requestId: "r",
        timeEpoch: Date.now(),
      });
    // Warms the path (the store's first read, the cron parser) on a small dry run.
    const small = await handleApiRequest(
      rt.api,
      event({
        from: "2024-01-01T00:00:00Z",
        to: "2024-01-01T00:00:05Z",
        cron: "* * * * * *",
        dryRun: true,
      }),
    );
    expect(small.statusCode, small.body).toBe(200);
    await changesNothing(async () => {
      const started = performance.now();
      const r = await handleApiRequest(
        rt.api,
        event({ from: "1995-01-01T00:00:00Z", to: "2025-01-01T00:00:00Z", cron: "* * * * * *" }),
      );
      const took = performance.now() - started;
      expect(r.statusCode, r.body).toBe(413);
      const err = JSON.parse(r.body ?? "{}").error;
      expect(err.code).toBe("PayloadTooLarge");
      expect(err.message).toContain(`more than ${MAX_BACKFILL_TIMES} nominal times`);
      expect(took).toBeLessThan(100);
    });
  });

  it("still lists a range just under the limit", async () => {
    // 10,000 seconds: exactly MAX_BACKFILL_TIMES nominal times, from inclusive.
    const r = await post("/v1/workflows/base/backfill", {
      from: "2024-01-01T00:00:00Z",
      to: "2024-01-01T02:46:39Z",
      cron: "* * * * * *",
      dryRun: true,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.nominalTimes).toHaveLength(MAX_BACKFILL_TIMES);
  });
});
