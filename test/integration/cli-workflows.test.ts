// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} in plain strings is the syntax under test
/**
 * The workflow verbs of the `shoal` CLI (apply -f, get workflow -o yaml, release, delete
 * workflow), run in-process through `main()` against the real HTTP API on the emulators
 * (test/helpers/api-client.ts).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { apiServer, get, startApiServer, stopApiServer } from "../helpers/api-client.js";
import { runCli } from "../helpers/cli-run.js";

let dir: string;

beforeAll(async () => {
  await startApiServer();
  dir = await mkdtemp(join(tmpdir(), "shoal-cli-wf-"));
});

afterAll(async () => {
  await stopApiServer();
  await rm(dir, { recursive: true, force: true });
});

const shoal = (args: string[]) => runCli(args, { endpoint: apiServer().base });

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text, "utf8");
  return path;
}

const status = async (name: string) => (await get(`/v1/workflows/${name}`)).status;

/** A YAML document: `name` with one SHELL task, and a SUB_WORKFLOW task per child. */
function doc(name: string, children: string[] = [], command = "echo hi"): string {
  const subs = children.map(
    (c) => `  - { code: run-${c}, type: SUB_WORKFLOW, workflow: ${c}, upstream: [main] }\n`,
  );
  return `name: ${name}\ntasks:\n  - { code: main, type: SHELL, command: "${command}" }\n${subs.join("")}`;
}

describe("shoal apply -f with several documents", () => {
  it("applies children before their parents, then says created, updated or unchanged", async () => {
    const path = await file(
      "family.yaml",
      [doc("p1", ["c1"]), doc("c1"), doc("solo")].join("---\n"),
    );
    const first = await shoal(["apply", "-f", path]);
    expect(first).toEqual({
      code: 0,
      stdout: "c1: version 1 (created)\np1: version 1 (created)\nsolo: version 1 (created)\n",
      stderr: "",
    });
    await writeFile(
      path,
      [doc("p1", ["c1"]), doc("c1", [], "echo changed"), doc("solo")].join("---\n"),
    );
    const second = await shoal(["apply", "-f", path]);
    expect(second).toMatchObject({
      code: 0,
      stdout: "c1: version 2 (updated)\np1: version 1 (unchanged)\nsolo: version 1 (unchanged)\n",
    });
  });

  it("writes nothing when one document is invalid, and reports every error of every document", async () => {
    const path = await file(
      "broken.yaml",
      [
        doc("ok-1"),
        "name: bad-1\ntasks:\n  - { code: a, taskType: SHELL, rawScript: echo, failRetryTimes: 3 }\n",
        doc("ok-2"),
        "name: bad-2\ntasks:\n  - { code: a, type: SHELL, command: x, upstream: [nope] }\n",
      ].join("---\n"),
    );
    const res = await shoal(["apply", "-f", path]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toBe(
      [
        "error: bad-1: tasks[0].type: type must be SHELL, HTTP, LAMBDA, STEP_FUNCTIONS, CONDITIONS, SWITCH, SUB_WORKFLOW or DEPENDENT",
        "error: bad-1: tasks[0].taskType: unknown field 'taskType' (did you mean 'type'?)",
        "error: bad-1: tasks[0].rawScript: unknown field 'rawScript' (did you mean 'command'?)",
        "error: bad-1: tasks[0].failRetryTimes: unknown field 'failRetryTimes' (did you mean 'retries'?)",
        "error: bad-2: tasks[0].upstream[0]: unknown task code 'nope'",
        "error: nothing applied: 2 of 4 workflows have errors",
        "",
      ].join("\n"),
    );
    for (const name of ["ok-1", "bad-1", "ok-2", "bad-2"]) expect(await status(name)).toBe(404);
  });

  it("checks SUB_WORKFLOW targets against the file and the server before writing", async () => {
    await shoal(["apply", "-f", await file("exists.yaml", doc("on-server"))]);
    const path = await file(
      "targets.yaml",
      [doc("uses-server", ["on-server"]), doc("uses-ghost", ["ghost"])].join("---\n"),
    );
    const res = await shoal(["apply", "-f", path]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      "error: uses-ghost: tasks[1].workflow: workflow 'ghost' does not exist (not in this file, not on the server)\n" +
        "error: nothing applied: 1 of 2 workflows have errors\n",
    );
    expect(await status("uses-server")).toBe(404);
  });

  it("refuses a cycle of sub-workflows and two documents with one name", async () => {
    const cycle = await file("cycle.yaml", [doc("x1", ["x2"]), doc("x2", ["x1"])].join("---\n"));
    const res = await shoal(["apply", "-f", cycle]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      "error: x1: sub-workflow cycle in this file: x1 -> x2 -> x1\n" +
        "error: nothing applied: 2 of 2 workflows have errors\n",
    );
    expect(await status("x1")).toBe(404);
    const twice = await file("twice.yaml", [doc("dup"), doc("dup")].join("---\n"));
    const dup = await shoal(["apply", "-f", twice]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("error: dup: document 2 has the same name as document 1\n");
    expect(await status("dup")).toBe(404);
  });

  it("refuses a sub-workflow cycle closed through the server, as the API does", async () => {
    // On the server: cyc-parent runs cyc-child.
    await shoal(["apply", "-f", await file("cyc-child.yaml", doc("cyc-child"))]);
    await shoal(["apply", "-f", await file("cyc-parent.yaml", doc("cyc-parent", ["cyc-child"]))]);
    const closing = await file("cyc-closing.yaml", doc("cyc-child", ["cyc-parent"]));
    const res = await shoal(["apply", "-f", closing]);
    expect(res).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "error: cyc-child: tasks[1].workflow: sub-workflow cycle: cyc-child -> cyc-parent -> cyc-child (cyc-parent as on the server); its runs would nest until they fail\n",
    });
    expect((await get("/v1/workflows/cyc-child")).body.version).toBe(1);
    // Through a workflow of the file: cyc-mid (new) runs cyc-parent, which runs cyc-child.
    const through = await file(
      "cyc-through.yaml",
      [doc("cyc-child", ["cyc-mid"]), doc("cyc-mid", ["cyc-parent"])].join("---\n"),
    );
    const res2 = await shoal(["apply", "-f", through]);
    expect(res2.code).toBe(1);
    expect(res2.stderr).toBe(
      "error: cyc-mid: tasks[1].workflow: sub-workflow cycle: cyc-mid -> cyc-parent -> cyc-child -> cyc-mid (cyc-parent as on the server); its runs would nest until they fail\n" +
        "error: nothing applied: 1 of 2 workflows have errors\n",
    );
    expect(await status("cyc-mid")).toBe(404);
    // A file that also changes cyc-parent so that it no longer runs cyc-child is no cycle.
    const fixed = await file(
      "cyc-fixed.yaml",
      [doc("cyc-child", ["cyc-parent"]), doc("cyc-parent")].join("---\n"),
    );
    expect(await shoal(["apply", "-f", fixed])).toMatchObject({
      code: 0,
      stdout: "cyc-parent: version 2 (updated)\ncyc-child: version 2 (updated)\n",
    });
  });

  it("reports every unreadable document along with the others' errors", async () => {
    const path = await file(
      "unreadable.yaml",
      [
        "name: ur-1\ntasks:\n  - { code: a, type: SHEL, command: x }\n",
        "name: ur-2\ntasks: [ { code: a\n",
        "tasks:\n  - { code: a, type: SHELL, command: x }\n",
        "name: ur-4\ntasks:\n  - { code: a, type: SUB_WORKFLOW, workflow: ur-ghost }\n",
        doc("ur-5"),
      ].join("---\n"),
    );
    const res = await shoal(["apply", "-f", path]);
    expect(res.code).toBe(1);
    const lines = res.stderr.trimEnd().split("\n");
    expect(lines[0]).toBe(
      "error: ur-1: tasks[0].type: type must be SHELL, HTTP, LAMBDA, STEP_FUNCTIONS, CONDITIONS, SWITCH, SUB_WORKFLOW or DEPENDENT (did you mean SHELL?)",
    );
    expect(lines[1]).toMatch(new RegExp(`^error: ${path} \\(document 2\\): invalid YAML: `));
    expect(lines.slice(-3)).toEqual([
      `error: ${path} (document 3): missing top-level \`name\` (required when a file holds several workflows)`,
      "error: ur-4: tasks[0].workflow: workflow 'ur-ghost' does not exist (not on the server, not in a document of this file that could be read)",
      "error: nothing applied: 4 of 5 workflows have errors",
    ]);
    expect(await status("ur-5")).toBe(404);
  });

  it("words schema problems plainly, with DolphinScheduler's forms named", async () => {
    const path = await file(
      "plain.yaml",
      [
        "name: plain",
        "tasks:",
        "  - { type: SHELL, command: x }",
        "  - { code: 1234567890, type: SHELL, command: x }",
        "  - { code: c, type: SHELL, command: x, params: [{ prop: dt, value: '1' }] }",
        "  - null",
        "",
      ].join("\n"),
    );
    const res = await shoal(["apply", "-f", path]);
    expect(res).toEqual({
      code: 1,
      stdout: "",
      stderr: [
        "error: plain: tasks[0].code: is required",
        "error: plain: tasks[1].code: must be a string (DolphinScheduler's numeric task codes: use the task's name)",
        "error: plain: tasks[2].params: must be a map of name: value (DolphinScheduler's localParams list of {prop, value} becomes {prop: value})",
        "error: plain: tasks[3]: must be an object",
        "",
      ].join("\n"),
    });
    await shoal(["apply", "-f", await file("keyed.yaml", doc("keyed"))]);
    expect(await shoal(["run", "keyed", "--idempotency-key", ""])).toMatchObject({
      code: 1,
      stderr: "error: --idempotency-key: must not be empty\n",
    });
  });

  it("stops at a document the API refuses, naming those not applied", async () => {
    // Valid by the validators, but over the stored size limit (incompressible commands).
    const random = () =>
      Buffer.from(crypto.getRandomValues(new Uint8Array(45_000))).toString("base64");
    const huge = Array.from(
      { length: 16 },
      (_, i) => `  - { code: t${i}, type: SHELL, command: "echo ${random()}" }\n`,
    );
    const path = await file(
      "huge.yaml",
      [doc("before-huge"), `name: huge\ntasks:\n${huge.join("")}`, doc("after-huge")].join("---\n"),
    );
    const res = await shoal(["apply", "-f", path]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("before-huge: version 1 (created)\n");
    expect(res.stderr).toMatch(/^error: huge: .*\nerror: not applied: after-huge\n$/s);
    expect(await status("huge")).toBe(404);
    expect(await status("after-huge")).toBe(404);
  });

  it("prints the API's warnings and still succeeds", async () => {
    const path = await file(
      "warned.yaml",
      "name: warned\nparams: { bizdate: '$[yyyyMMdd-1]' }\ntasks:\n  - { code: a, type: SHELL, command: 'echo ${bizdat}' }\n",
    );
    const res = await shoal(["apply", "-f", path]);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("warned: version 1 (created)\n");
    expect(res.stderr).toMatch(
      /^warning: warned: tasks\[0\]\.command: \$\{bizdat\} is not .*\(did you mean \$\{bizdate\}\?\)\n$/,
    );
  });
});

describe("shoal get workflow -o yaml|json", () => {
  it("prints YAML that apply -f takes back unchanged", async () => {
    const source = await file(
      "round.yaml",
      [
        "name: round",
        "description: 'a: colon, and #hash'",
        "params: { n: '007', flag: 'true', empty: '' }",
        "tasks:",
        "  - code: a",
        "    type: SHELL",
        "    command: |",
        "      echo one",
        "      echo 'two'",
        "  - { code: b, type: HTTP, upstream: [a], url: 'http://127.0.0.1:9/x', outputs: { id: $.id } }",
        "",
      ].join("\n"),
    );
    expect((await shoal(["apply", "-f", source])).code).toBe(0);
    const yaml = await shoal(["get", "workflow", "round", "-o", "yaml"]);
    expect(yaml.code).toBe(0);
    const json = await shoal(["get", "workflow", "round", "-o", "json"]);
    // The YAML is the JSON without the release state (the workflow's now, not the version's).
    const { releaseState, ...version } = JSON.parse(json.stdout);
    expect(releaseState).toBe("ONLINE");
    expect(parse(yaml.stdout)).toEqual(version);
    expect(JSON.parse((await shoal(["get", "workflow", "round"])).stdout)).toEqual(
      JSON.parse(json.stdout),
    );
    const back = await file("round-back.yaml", yaml.stdout);
    expect(await shoal(["apply", "-f", back])).toMatchObject({
      code: 0,
      stdout: "round: version 1 (unchanged)\n",
    });
    const v1 = await shoal(["get", "workflow", "round", "--version", "1", "-o", "YAML"]);
    expect(v1.stdout).toBe(yaml.stdout);
  });

  it("applying the printed YAML leaves an OFFLINE workflow OFFLINE; a releaseState that changes it is said", async () => {
    await shoal(["apply", "-f", await file("pr.yaml", doc("pr"))]);
    const printed = await shoal(["get", "workflow", "pr", "-o", "yaml"]);
    expect(printed.stdout).not.toContain("releaseState");
    const back = await file("pr-back.yaml", printed.stdout);
    expect((await shoal(["release", "pr", "offline"])).code).toBe(0);
    expect(await shoal(["apply", "-f", back])).toEqual({
      code: 0,
      stdout: "pr: version 1 (unchanged)\n",
      stderr: "",
    });
    expect((await get("/v1/workflows/pr")).body.releaseState).toBe("OFFLINE");
    // A file that says ONLINE takes it online, and apply says so.
    const online = await file("pr-online.yaml", `${doc("pr")}releaseState: ONLINE\n`);
    expect(await shoal(["apply", "-f", online])).toMatchObject({
      code: 0,
      stdout: "pr: version 1 (unchanged; released ONLINE)\n",
    });
    expect((await get("/v1/workflows/pr")).body.releaseState).toBe("ONLINE");
    expect((await shoal(["apply", "-f", online])).stdout).toBe("pr: version 1 (unchanged)\n");
    const offline = await file(
      "pr-offline.yaml",
      `${doc("pr", [], "echo v2")}releaseState: OFFLINE\n`,
    );
    expect((await shoal(["apply", "-f", offline])).stdout).toBe(
      "pr: version 2 (updated; released OFFLINE)\n",
    );
  });

  it("refuses another format as a usage error", async () => {
    const res = await shoal(["get", "workflow", "round", "-o", "xml"]);
    expect(res.code).toBe(2);
  });
});

describe("shoal release and shoal delete workflow", () => {
  it("takes a workflow offline and online again", async () => {
    await shoal(["apply", "-f", await file("rel.yaml", doc("rel"))]);
    expect(await shoal(["release", "rel", "offline"])).toEqual({
      code: 0,
      stdout: "rel: OFFLINE (version 1)\n",
      stderr: "",
    });
    expect((await get("/v1/workflows/rel")).body.releaseState).toBe("OFFLINE");
    expect((await shoal(["release", "rel", "ONLINE"])).stdout).toBe("rel: ONLINE (version 1)\n");
    expect((await get("/v1/workflows/rel")).body.releaseState).toBe("ONLINE");
    expect((await shoal(["release", "rel", "paused"])).code).toBe(2);
    expect(await shoal(["release", "ghost", "online"])).toMatchObject({
      code: 1,
      stderr: "error: workflow 'ghost' does not exist\n",
    });
  });

  it("deletes a workflow, and prints the API's refusal while an instance is unfinished", async () => {
    await shoal(["apply", "-f", await file("del.yaml", doc("del", [], "echo 1"))]);
    await shoal(["apply", "-f", await file("del.yaml", doc("del", [], "echo 2"))]);
    expect(await shoal(["delete", "workflow", "del"])).toEqual({
      code: 0,
      stdout: "del deleted (latest version 2)\n",
      stderr: "",
    });
    expect(await status("del")).toBe(404);
    expect(await shoal(["delete", "workflow", "del"])).toMatchObject({
      code: 1,
      stderr: "error: workflow 'del' does not exist\n",
    });

    await shoal(["apply", "-f", await file("busy.yaml", doc("busy"))]);
    expect((await shoal(["run", "busy"])).code).toBe(0);
    expect(await shoal(["delete", "workflow", "busy"])).toMatchObject({
      code: 1,
      stderr: "error: workflow 'busy' has instances that are not finished; stop them first\n",
    });
    expect(await status("busy")).toBe(200);
  });
});
