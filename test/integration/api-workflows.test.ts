/**
 * HTTP API v1, workflow endpoints end to end over real HTTP (harness: test/helpers/api-client.ts):
 * health, creating and versioning a workflow, reading and listing workflows, and release state.
 * The PUT requests that must be refused are in api-workflows-rejects.test.ts.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  allWorkflows,
  changesNothing,
  createWorkflow,
  del,
  expectError,
  get,
  oneTask,
  post,
  put,
  startApiServer,
  stopApiServer,
  twoTasks,
} from "../helpers/api-client.js";

const PKG = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

beforeAll(async () => {
  await startApiServer();
});

afterAll(stopApiServer);

describe("openapi", () => {
  it("GET /v1/openapi.json → 200 with the OpenAPI 3.1 document", async () => {
    const r = await get("/v1/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe("3.1.0");
    expect(Object.keys(r.body.paths)).toContain("/v1/workflows/{name}/runs");
  });
});

describe("health", () => {
  it("GET /v1/health → 200 with status and the package version", async () => {
    const r = await get("/v1/health");
    expect(r.status).toBe(200);
    expect(r.contentType).toMatch(/^application\/json/);
    expect(r.body).toEqual({ status: "ok", version: PKG.version });
  });

  it("a trailing slash reaches the same endpoint", async () => {
    const r = await get("/v1/health/");
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("ok");
  });
});

describe("PUT /v1/workflows/{name}", () => {
  it("201 for a new workflow, 200 for an identical body, 201 with version 2 on a change", async () => {
    const first = await put("/v1/workflows/etl", twoTasks());
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ name: "etl", version: 1, releaseState: "ONLINE" });
    expect(first.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const same = await put("/v1/workflows/etl", twoTasks());
    expect(same.status, same.text).toBe(200);
    expect(same.body).toMatchObject({ name: "etl", version: 1, releaseState: "ONLINE" });
    expect(same.body.createdAt).toBe(first.body.createdAt);

    // The same definition with its defaults spelled out is still the same definition.
    const explicit = twoTasks();
    const withDefaults = {
      ...explicit,
      priority: "MEDIUM",
      failureStrategy: "END",
      params: {},
      tasks: explicit.tasks.map((t) => ({ upstream: [], retries: 0, priority: "MEDIUM", ...t })),
    };
    const same2 = await put("/v1/workflows/etl", withDefaults);
    expect(same2.status, same2.text).toBe(200);
    expect(same2.body.version).toBe(1);

    const changed = await put("/v1/workflows/etl", twoTasks("echo changed"));
    expect(changed.status, changed.text).toBe(201);
    expect(changed.body).toMatchObject({ name: "etl", version: 2, releaseState: "ONLINE" });

    const latest = await get("/v1/workflows/etl");
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({ name: "etl", version: 2, releaseState: "ONLINE" });
    expect(latest.body.tasks[0]).toMatchObject({ code: "extract", command: "echo changed" });
  });

  it("accepts YAML with content-type application/yaml", async () => {
    const yaml = [
      "description: from yaml",
      "tasks:",
      "  - code: a",
      "    type: SHELL",
      "    command: echo a",
      "  - code: b",
      "    type: SHELL",
      "    upstream: [a]",
      "    command: echo b",
      "",
    ].join("\n");
    const r = await put("/v1/workflows/from-yaml", undefined, {
      raw: yaml,
      contentType: "application/yaml",
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ name: "from-yaml", version: 1 });
    const g = await get("/v1/workflows/from-yaml");
    expect(g.status).toBe(200);
    expect(g.body).toMatchObject({ description: "from yaml", name: "from-yaml", version: 1 });
    expect(g.body.tasks.map((t: { code: string }) => t.code)).toEqual(["a", "b"]);
    // The same definition as JSON is the same version.
    const again = await put("/v1/workflows/from-yaml", {
      description: "from yaml",
      tasks: [
        { code: "a", type: "SHELL", command: "echo a" },
        { code: "b", type: "SHELL", upstream: ["a"], command: "echo b" },
      ],
    });
    expect(again.status, again.text).toBe(200);
    expect(again.body.version).toBe(1);
  });

  it("accepts application/json with a charset parameter", async () => {
    const r = await put("/v1/workflows/charset", oneTask(), {
      contentType: "application/json; charset=utf-8",
    });
    expect(r.status, r.text).toBe(201);
  });
});

describe("GET /v1/workflows[/{name}]", () => {
  beforeAll(async () => {
    await createWorkflow("versions", oneTask("echo v1"));
    await createWorkflow("versions", oneTask("echo v2"));
  });

  it("404 for an unknown workflow, naming it", async () => {
    expectError(await get("/v1/workflows/nope"), 404, "NotFound", { message: /nope/ });
  });

  it("?version=N: 200 for an older version, 404 for one that does not exist, 400 for junk", async () => {
    const v1 = await get("/v1/workflows/versions?version=1");
    expect(v1.status, v1.text).toBe(200);
    expect(v1.body).toMatchObject({ name: "versions", version: 1, releaseState: "ONLINE" });
    expect(v1.body.tasks[0].command).toBe("echo v1");
    const latest = await get("/v1/workflows/versions");
    expect(latest.body.version).toBe(2);
    expect(latest.body.tasks[0].command).toBe("echo v2");

    expectError(await get("/v1/workflows/versions?version=99"), 404, "NotFound", {
      message: /99/,
    });
    expectError(await get("/v1/workflows/nope?version=1"), 404, "NotFound", { message: /nope/ });
    for (const bad of ["abc", "0", "-1", "1.5"]) {
      expectError(await get(`/v1/workflows/versions?version=${bad}`), 400, "ValidationError", {
        path: "version",
      });
    }
  });

  it("400 for a bad name", async () => {
    expectError(await get("/v1/workflows/-bad"), 400, "ValidationError", { path: "name" });
  });

  it("list: 400 for limit out of 1..200 or not a number", async () => {
    for (const bad of ["0", "201", "x", "-1", "2.5"]) {
      expectError(await get(`/v1/workflows?limit=${bad}`), 400, "ValidationError", {
        path: "limit",
        detail: /1 to 200/,
      });
    }
    expect((await get("/v1/workflows?limit=200")).status).toBe(200);
    expect((await get("/v1/workflows?limit=1")).status).toBe(200);
  });

  it("list: 400 for a nextToken it did not hand out", async () => {
    expectError(await get("/v1/workflows?nextToken=garbage"), 400, "ValidationError", {
      path: "nextToken",
    });
    expectError(await get("/v1/workflows?nextToken=%7B%7D"), 400, "ValidationError", {
      path: "nextToken",
    });
  });

  // Regression: this once failed (see git history for the bug it pinned).
  it("list: 400 (not 500) for a well-formed token that is not a key", async () => {
    for (const token of ["e30", Buffer.from('{"a":1}').toString("base64url")]) {
      expectError(await get(`/v1/workflows?nextToken=${token}`), 400, "ValidationError", {
        path: "nextToken",
      });
    }
  });

  it("list: limit=1 pages through every workflow with working nextTokens", async () => {
    const all = (await allWorkflows()) as Array<{ name: string }>;
    expect(all.length).toBeGreaterThanOrEqual(3);
    const seen: string[] = [];
    let token: string | undefined;
    for (let i = 0; i < all.length + 2; i++) {
      const r = await get(
        `/v1/workflows?limit=1${token ? `&nextToken=${encodeURIComponent(token)}` : ""}`,
      );
      expect(r.status, r.text).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(1);
      seen.push(...r.body.items.map((w: { name: string }) => w.name));
      token = r.body.nextToken;
      if (i === 0) expect(typeof token).toBe("string");
      if (!token) break;
    }
    expect(token).toBeUndefined();
    expect(seen).toEqual(all.map((w) => w.name));
    const versions = all.find((w) => w.name === "versions");
    expect(versions).toMatchObject({ name: "versions", version: 2, releaseState: "ONLINE" });
  });

  // docs/api.md "Conventions": "A response has `items` and, when more items exist, `nextToken`."
  // Regression: this once failed (see git history for the bug it pinned).
  it("list: no nextToken when the page holds the last items", async () => {
    const all = await allWorkflows();
    const r = await get(`/v1/workflows?limit=${all.length}`);
    expect(r.status).toBe(200);
    expect(r.body.items.length).toBe(all.length);
    expect(r.body.nextToken).toBeUndefined();
  });
});

describe("POST /v1/workflows/{name}/release", () => {
  beforeAll(async () => {
    await createWorkflow("rel", oneTask());
  });

  it("400 for a bad state, an unknown field, or a body that is not an object", async () => {
    await changesNothing(async () => {
      expectError(
        await post("/v1/workflows/rel/release", { state: "LIVE" }),
        400,
        "ValidationError",
        {
          path: "state",
          detail: /ONLINE or OFFLINE/,
        },
      );
      expectError(await post("/v1/workflows/rel/release", {}), 400, "ValidationError", {
        path: "state",
      });
      expectError(
        await post("/v1/workflows/rel/release", { state: "OFFLINE", force: true }),
        400,
        "ValidationError",
        { message: /force/, detail: /unknown field 'force'/ },
      );
      expectError(await post("/v1/workflows/rel/release", ["OFFLINE"]), 400, "ValidationError");
      expectError(await post("/v1/workflows/rel/release"), 400, "ValidationError");
      expectError(
        await post("/v1/workflows/rel/release", undefined, { raw: "{state:" }),
        400,
        "ValidationError",
        { message: /not valid JSON/ },
      );
      expectError(
        await post("/v1/workflows/rel/release", undefined, {
          raw: "state: OFFLINE",
          contentType: "application/yaml",
        }),
        415,
        "UnsupportedMediaType",
      );
    });
    expect((await get("/v1/workflows/rel")).body.releaseState).toBe("ONLINE");
  });

  it("404 for an unknown workflow", async () => {
    await changesNothing(async () => {
      expectError(
        await post("/v1/workflows/ghost/release", { state: "OFFLINE" }),
        404,
        "NotFound",
        {
          message: /ghost/,
        },
      );
    });
    expect((await get("/v1/workflows/ghost")).status).toBe(404);
  });

  it("OFFLINE refuses runs with 409 (nothing started); ONLINE again runs with 202", async () => {
    const off = await post("/v1/workflows/rel/release", { state: "OFFLINE" });
    expect(off.status, off.text).toBe(200);
    expect(off.body).toMatchObject({ name: "rel", version: 1, releaseState: "OFFLINE" });
    expect((await get("/v1/workflows/rel")).body.releaseState).toBe("OFFLINE");

    await changesNothing(async () => {
      expectError(await post("/v1/workflows/rel/runs", {}), 409, "Conflict", {
        message: /OFFLINE/,
      });
      expectError(
        await post("/v1/workflows/rel/runs", { idempotencyKey: "offline-key" }),
        409,
        "Conflict",
      );
    });
    const listed = await get("/v1/instances?workflow=rel");
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([]);

    const on = await post("/v1/workflows/rel/release", { state: "ONLINE" });
    expect(on.status, on.text).toBe(200);
    expect(on.body.releaseState).toBe("ONLINE");
    const run = await post("/v1/workflows/rel/runs", {});
    expect(run.status, run.text).toBe(202);
    expect(run.body).toMatchObject({ workflow: "rel", version: 1, state: "SUBMITTED" });
  });

  it("a new definition with releaseState OFFLINE starts OFFLINE", async () => {
    const r = await put("/v1/workflows/born-offline", { ...oneTask(), releaseState: "OFFLINE" });
    expect(r.status, r.text).toBe(201);
    expect(r.body.releaseState).toBe("OFFLINE");
    expectError(await post("/v1/workflows/born-offline/runs", {}), 409, "Conflict");
  });
});

describe("PUT /v1/workflows/{name}: change and warnings", () => {
  it("says whether the workflow was CREATED, UPDATED or UNCHANGED", async () => {
    const first = await put("/v1/workflows/changes", oneTask("echo 1"));
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ version: 1, change: "CREATED" });
    const same = await put("/v1/workflows/changes", oneTask("echo 1"));
    expect(same.status, same.text).toBe(200);
    expect(same.body).toMatchObject({ version: 1, change: "UNCHANGED" });
    const next = await put("/v1/workflows/changes", oneTask("echo 2"));
    expect(next.status, next.text).toBe(201);
    expect(next.body).toMatchObject({ version: 2, change: "UPDATED" });
    // A deleted workflow's name continues its versions, but the workflow is new again.
    expect((await del("/v1/workflows/changes")).status).toBe(204);
    const again = await put("/v1/workflows/changes", oneTask("echo 2"));
    expect(again.status, again.text).toBe(201);
    expect(again.body).toMatchObject({ version: 3, change: "CREATED" });
  });

  it("says previousReleaseState when the body's releaseState changed the workflow's", async () => {
    expect((await put("/v1/workflows/flips", oneTask("echo 1"))).body).not.toHaveProperty(
      "previousReleaseState",
    );
    expect((await post("/v1/workflows/flips/release", { state: "OFFLINE" })).status).toBe(200);
    // The same body without a releaseState: unchanged, still OFFLINE, nothing to say.
    const same = await put("/v1/workflows/flips", oneTask("echo 1"));
    expect(same.body).toMatchObject({ change: "UNCHANGED", releaseState: "OFFLINE" });
    expect(same.body).not.toHaveProperty("previousReleaseState");
    // The same definition with ONLINE: unchanged, but it took the workflow online.
    const online = await put("/v1/workflows/flips", {
      ...oneTask("echo 1"),
      releaseState: "ONLINE",
    });
    expect(online.status, online.text).toBe(200);
    expect(online.body).toMatchObject({
      version: 1,
      change: "UNCHANGED",
      releaseState: "ONLINE",
      previousReleaseState: "OFFLINE",
    });
    const again = await put("/v1/workflows/flips", {
      ...oneTask("echo 1"),
      releaseState: "ONLINE",
    });
    expect(again.body).not.toHaveProperty("previousReleaseState");
    // A new version that takes it offline says so too.
    const next = await put("/v1/workflows/flips", {
      ...oneTask("echo 2"),
      releaseState: "OFFLINE",
    });
    expect(next.status, next.text).toBe(201);
    expect(next.body).toMatchObject({
      version: 2,
      change: "UPDATED",
      releaseState: "OFFLINE",
      previousReleaseState: "ONLINE",
    });
  });

  it("answers 2xx with a warning for each reference nothing can set, and none otherwise", async () => {
    const body = {
      params: { bizdate: "$[yyyyMMdd-1]" },
      tasks: [
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Shoal's parameter syntax
        { code: "a", type: "SHELL", command: "echo ${bizdate} '${setValue(rows=1)}'" },
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Shoal's parameter syntax
        { code: "b", type: "SHELL", upstream: ["a"], command: "echo ${rows} ${bizdat}" },
      ],
    };
    const r = await put("/v1/workflows/warned", body);
    expect(r.status, r.text).toBe(201);
    expect(r.body.warnings).toEqual([
      {
        path: "tasks[1].command",
        message: expect.stringMatching(/^\$\{bizdat\} is not .*\(did you mean \$\{bizdate\}\?\)$/),
      },
    ]);
    const same = await put("/v1/workflows/warned", body);
    expect(same.status, same.text).toBe(200);
    expect(same.body.warnings).toEqual(r.body.warnings);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Shoal's parameter syntax
    const clean = await put("/v1/workflows/clean", oneTask("echo ${system.biz.date}"));
    expect(clean.status, clean.text).toBe(201);
    expect(clean.body.warnings).toBeUndefined();
  });
});

describe("PUT /v1/workflows/{name}: many warnings", () => {
  it("lists at most 100 warnings, then says how many more there are", async () => {
    const tasks = Array.from({ length: 150 }, (_, i) => ({
      code: `t${i}`,
      type: "SHELL",
      command: `echo \${nope${i}}`,
    }));
    const r = await put("/v1/workflows/many-warnings", { tasks });
    expect(r.status, r.text).toBe(201);
    expect(r.body.warnings).toHaveLength(101);
    expect(r.body.warnings[99].path).toBe("tasks[99].command");
    expect(r.body.warnings[100]).toEqual({ path: "", message: "50 more warnings are not listed" });
  });
});
