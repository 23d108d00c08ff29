// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/**
 * `${secret:…}` is resolved only where a task definition uses it (command, URL, headers, body):
 * parameter values that start runs — a run's, a schedule's, a backfill's — are refused with a
 * 400 naming the parameter, so nobody expects them to resolve (docs/secrets.md).
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import {
  createWorkflow,
  expectError,
  oneTask,
  post,
  startApiServer,
  stopApiServer,
} from "../helpers/api-client.js";

beforeAll(async () => {
  await startApiServer();
  await createWorkflow("uses-params", oneTask("echo $x"));
});

afterAll(stopApiServer);

const withSecret = { x: "${secret:prod/db}" };

describe("secret references in parameters that start runs", () => {
  it("are refused in a run's params", async () => {
    const res = await post("/v1/workflows/uses-params/runs", { params: withSecret });
    expectError(res, 400, "ValidationError", { path: "params.x", detail: /secret/ });
  });

  it("are refused in a schedule's params", async () => {
    const res = await post("/v1/schedules", {
      workflow: "uses-params",
      cron: "0 0 * * *",
      params: withSecret,
    });
    expectError(res, 400, "ValidationError", { path: "params.x", detail: /secret/ });
  });

  it("are refused in a backfill's params", async () => {
    const res = await post("/v1/workflows/uses-params/backfill", {
      dates: ["2026-01-01T00:00:00Z"],
      params: withSecret,
    });
    expectError(res, 400, "ValidationError", { path: "params.x", detail: /secret/ });
  });
});
