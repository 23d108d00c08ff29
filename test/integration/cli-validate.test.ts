// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} in plain strings is Shoal's parameter syntax
/**
 * `shoal validate -f FILE…` against the API it stands in for: each bad document is also PUT to
 * the API (standalone's server on the emulators), and the command must print every detail of
 * the API's 400, path and message, as `FILE: path: message` (`FILE (document N)` in a file of
 * several). It runs with no reachable endpoint and a broken CLI config, since it needs neither.
 * Also: `GET /v1/schemas/workflow.json` through the real server (its answer checked against
 * the OpenAPI document by the harness) is schemas/workflow.json.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { createWorkflow, get, put, startApiServer, stopApiServer } from "../helpers/api-client.js";
import { runCli } from "../helpers/cli-run.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "shoal-validate-"));
  await startApiServer();
  await createWorkflow("child", { tasks: [{ code: "c", type: "SHELL", command: "true" }] });
}, 60_000);
afterAll(async () => {
  await stopApiServer();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  // Nothing to reach and a config that does not parse: validate must need neither.
  const config = join(dir, "broken-config.json");
  await writeFile(config, "{ not json");
  vi.stubEnv("SHOAL_CONFIG", config);
  vi.stubEnv("SHOAL_ENDPOINT", "not a url");
  vi.stubEnv("SHOAL_AUTH", "jwt");
  vi.stubEnv("SHOAL_TOKEN", undefined);
  return () => vi.unstubAllEnvs();
});

/** Writes `docs` as one YAML file (documents separated by ---) and returns its path. */
async function yamlFile(file: string, docs: readonly Record<string, unknown>[]): Promise<string> {
  const path = join(dir, file);
  await writeFile(path, docs.map((d) => stringify(d)).join("---\n"));
  return path;
}

/** The API's 400 for `doc` as `path: message` lines (`PUT /v1/workflows/{name}`). */
async function apiDetails(doc: Record<string, unknown>): Promise<string[]> {
  const { name, ...body } = doc;
  const r = await put(`/v1/workflows/${encodeURIComponent(String(name))}`, body);
  expect(r.status, r.text).toBe(400);
  const details = r.body.error.details as Array<{ path: string; message: string }>;
  expect(details.length).toBeGreaterThan(0);
  return details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message));
}

const shell = (code: string, extra: Record<string, unknown> = {}) => ({
  code,
  type: "SHELL",
  command: `echo ${code}`,
  ...extra,
});

/** Documents the API refuses, each for a different rule: schema, graph, logic tasks, server-free checks. */
const BAD: Record<string, Record<string, unknown>> = {
  unknownFields: { name: "bad-fields", colour: "red", tasks: [shell("a", { colour: "blue" })] },
  enums: {
    name: "bad-enums",
    priority: "URGENT",
    failureStrategy: "STOP",
    tasks: [shell("a", { timeoutStrategy: "KILL", retries: -1 })],
  },
  taskType: { name: "bad-type", tasks: [{ code: "a", type: "SHEL", command: "x" }] },
  graph: {
    name: "bad-graph",
    tasks: [
      shell("a", { upstream: ["b"] }),
      shell("b", { upstream: ["a"] }),
      shell("a"),
      shell("c", { upstream: ["nope"] }),
    ],
  },
  cycle: {
    name: "bad-cycle",
    tasks: [shell("a", { upstream: ["b"] }), shell("b", { upstream: ["a"] })],
  },
  branches: {
    name: "bad-branches",
    tasks: [
      shell("a"),
      { code: "c", type: "CONDITIONS", upstream: ["a"], successNext: ["x"], failedNext: [] },
    ],
  },
  selfSub: { name: "bad-self", tasks: [{ code: "s", type: "SUB_WORKFLOW", workflow: "bad-self" }] },
  name: { name: "bad name", tasks: [shell("a")] },
};

describe("shoal validate", () => {
  for (const [what, doc] of Object.entries(BAD)) {
    it(`prints the API's 400 details for ${what}, and exits 1`, async () => {
      const expected = await apiDetails(doc);
      const file = await yamlFile(`${what}.yaml`, [doc]);
      const r = await runCli(["validate", "-f", file]);
      expect(r.code, r.stderr).toBe(1);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toEqual([
        ...expected.map((d) => `error: ${file}: ${d}`),
        "error: 1 of 1 workflow invalid",
      ]);
      expect(r.stdout).toBe("");
    });
  }

  it("reports duplicate codes and unknown upstreams in the same round as the other problems, as the API does", async () => {
    // An Airflow-minded conversion: every kind of problem at once, none hidden behind another.
    const doc = {
      name: "first-round",
      tasks: [
        shell("extract", { depends_on: ["start"] }),
        shell("extract", { operator: "BashOperator" }),
        shell("load", { upstream: ["extrakt"], python_callable: "main" }),
        shell("report", { upstream: "load" }),
      ],
    };
    const expected = [
      "tasks[0].depends_on: unknown field 'depends_on' (did you mean 'upstream'? the codes of the tasks that run first)",
      "tasks[1].operator: unknown field 'operator' (did you mean 'type'? SHELL for a BashOperator, HTTP for an HttpOperator, LAMBDA for a LambdaInvokeFunctionOperator)",
      "tasks[2].python_callable: unknown field 'python_callable' (did you mean 'command'? of a SHELL task that runs the Python code as a script (python3 job.py): Shoal has no Python task type and calls no function)",
      "tasks[3].upstream: must be a list",
      "tasks[1].code: duplicate task code 'extract' (also tasks[0])",
      "tasks[2].upstream[0]: unknown task code 'extrakt'",
    ];
    expect(await apiDetails(doc)).toEqual(expected);
    const file = await yamlFile("first-round.yaml", [doc]);
    const r = await runCli(["validate", "-f", file]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([
      ...expected.map((d) => `error: ${file}: ${d}`),
      "error: 1 of 1 workflow invalid",
    ]);
  });

  it("numbers the documents of a file, goes through several files, and counts the invalid ones", async () => {
    const good = { name: "good-one", tasks: [shell("a"), shell("b", { upstream: ["a"] })] };
    const multi = await yamlFile("multi.yaml", [good, BAD.enums as Record<string, unknown>]);
    const single = await yamlFile("single.yaml", [BAD.taskType as Record<string, unknown>]);
    const r = await runCli(["validate", "-f", multi, "-f", single]);
    expect(r.code).toBe(1);
    const enums = (await apiDetails(BAD.enums as Record<string, unknown>)).map(
      (d) => `error: ${multi} (document 2): ${d}`,
    );
    const type = (await apiDetails(BAD.taskType as Record<string, unknown>)).map(
      (d) => `error: ${single}: ${d}`,
    );
    expect(r.stderr.trim().split("\n")).toEqual([
      ...enums,
      ...type,
      "error: 2 of 3 workflows invalid",
    ]);
  });

  it("passes the examples, with no endpoint and a broken config", async () => {
    const files = ["etl-report.yaml", "data-quality.yaml", "montage.yaml"].map(
      (f) => `${ROOT}examples/${f}`,
    );
    const r = await runCli(["validate", ...files.flatMap((f) => ["-f", f])]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("3 workflows valid\n");
    expect(r.code).toBe(0);
  });

  it("takes files as arguments too (a shell glob), and asks for one when given none", async () => {
    const files = ["etl-report.yaml", "data-quality.yaml", "montage.yaml"].map(
      (f) => `${ROOT}examples/${f}`,
    );
    const [first, ...rest] = files;
    const r = await runCli(["validate", "-f", first as string, ...rest]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${files.length} workflows valid`);
    const none = await runCli(["validate"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("name at least one file");
  });

  it("checks what the files say together: a name twice, a sub-workflow cycle among them", async () => {
    const a = { name: "ring-a", tasks: [{ code: "s", type: "SUB_WORKFLOW", workflow: "ring-b" }] };
    const b = { name: "ring-b", tasks: [{ code: "s", type: "SUB_WORKFLOW", workflow: "ring-a" }] };
    const f1 = await yamlFile("ring-a.yaml", [a]);
    const f2 = await yamlFile("ring.yaml", [b, { name: "ring-a", tasks: [shell("x")] }]);
    const r = await runCli(["validate", "-f", f1, "-f", f2]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `error: ${f2} (document 2): name: 'ring-a' is also the name of ${f1}\n`,
    );
    expect(r.stderr).toContain(
      `error: ${f1}: sub-workflow cycle in these files: ring-a -> ring-b -> ring-a\n`,
    );
    expect(r.stderr).toContain("error: 2 of 3 workflows invalid\n");
  });

  it("skips what needs the server (a SUB_WORKFLOW target elsewhere) and warns as the API does", async () => {
    const doc = {
      name: "parent",
      tasks: [
        { code: "run", type: "SUB_WORKFLOW", workflow: "not-in-these-files" },
        shell("echo", { command: "echo ${undefined_param}" }),
      ],
    };
    const r = await runCli(["validate", "-f", await yamlFile("parent.yaml", [doc])]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("1 workflow valid\n");
    // The API's PUT of the same definition (its target existing) warns the same way.
    const { name: _n, ...body } = {
      ...doc,
      tasks: [{ ...doc.tasks[0], workflow: "child" }, doc.tasks[1]],
    };
    const written = await put("/v1/workflows/parent", body);
    expect(written.status, written.text).toBe(201);
    for (const w of written.body.warnings as Array<{ path: string; message: string }>) {
      expect(r.stderr).toContain(`warning: ${join(dir, "parent.yaml")}: ${w.path}: ${w.message}\n`);
    }
    expect(r.stderr).toMatch(/^warning: /);
  });

  it("reports a document that does not read as apply does, and a missing file", async () => {
    const path = join(dir, "broken.yaml");
    await writeFile(path, "name: x\ntasks: [\n");
    const r = await runCli(["validate", "-f", path]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^error: ${path}: invalid YAML`));
    // A file that cannot be read does not stop the others from being checked.
    const nope = join(dir, "nope.yaml");
    const missing = await runCli(["validate", "-f", nope, "-f", path]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`error: cannot read ${nope}: no such file\n`);
    expect(missing.stderr).toContain(`error: ${path}: invalid YAML`);
    expect(missing.stderr).toContain("error: 2 of 2 workflows invalid\n");
  });
});

describe("GET /v1/schemas/workflow.json", () => {
  it("is schemas/workflow.json", async () => {
    const r = await get("/v1/schemas/workflow.json");
    expect(r.status).toBe(200);
    expect(r.contentType).toMatch(/^application\/json/);
    const file = JSON.parse(await readFile(`${ROOT}schemas/workflow.json`, "utf8"));
    expect(r.body).toEqual(file);
  });
});
