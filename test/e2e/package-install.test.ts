/**
 * The package as a user gets it: `npm pack` → `npm install` of the tarball into an empty
 * directory → `npx shoal standalone` with the examples → `npx shoal run … --wait` SUCCESS, with
 * no repository in sight (the project directory holds only the install, and the package carries
 * no TypeScript sources and no tsx: the compiled CLI runs). Prints the tarball size and the time
 * from `npm install` to the first SUCCESS, the figures the issue asks to record.
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filesUnder, type PackedTarball, packedTarball } from "../helpers/packed-tarball.js";
import { type RunningStandalone, startStandaloneProcess } from "../helpers/standalone.js";

const run = promisify(execFile);

/** An older Node than Shoal needs, when this machine has one (Debian's is 20). */
const OLD_NODE = ["/usr/bin/node", "/usr/local/bin/node"].find((p) => {
  if (!existsSync(p)) return false;
  try {
    const v = /^v(\d+)\.(\d+)/.exec(execFileSync(p, ["--version"], { encoding: "utf8" }));
    return v !== null && (Number(v[1]) < 22 || (Number(v[1]) === 22 && Number(v[2]) < 12));
  } catch {
    return false;
  }
});

describe("the packed package, installed into an empty directory", () => {
  let tarball: PackedTarball;
  let project: string;
  let pkg: string;
  let standalone: RunningStandalone | undefined;
  let installStarted: number;
  let installMs: number;

  beforeAll(async () => {
    tarball = await packedTarball();
    project = mkdtempSync(join(tmpdir(), "shoal-user-"));
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "adopting-shoal", private: true, type: "module" }),
    );
    installStarted = performance.now();
    await run("npm", ["install", tarball.file, "--no-audit", "--no-fund", "--prefer-offline"], {
      cwd: project,
      maxBuffer: 16 * 1024 * 1024,
    });
    installMs = performance.now() - installStarted;
    pkg = join(project, "node_modules", "shoal");
  }, 600_000);

  afterAll(async () => {
    await standalone?.stop();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it("holds the compiled code, the console, examples, schemas and notices, and no sources", () => {
    const files = filesUnder(pkg);
    for (const f of [
      "bin/shoal.js",
      "dist/lib/cli/main.js",
      "dist/lib/index.d.ts",
      "console/dist/index.html",
      "examples/etl-report.yaml",
      "schemas/workflow.json",
      "LICENSE",
      "THIRD-PARTY-NOTICES.txt",
      "CHANGELOG.md",
      "README.md",
    ])
      expect(files, f).toContain(f);
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
    expect(files.filter((f) => f.startsWith("test/") || f.endsWith(".map"))).toEqual([]);
    // tsx is a development dependency only: the installed CLI runs compiled JavaScript.
    expect(existsSync(join(project, "node_modules", "tsx"))).toBe(false);
    // The WfCommons traces (LGPL data for the benches and tests) stay in the repository.
    expect(files.filter((f) => f.startsWith("examples/wfcommons/"))).toEqual([]);
  });

  it("loads the main entry with import and with require (a CommonJS program)", async () => {
    const program =
      'const s = require("shoal"); const d = s.parseWorkflowDefinition({ tasks: [{ code: "a", type: "SHELL", command: "echo" }] }); console.log(s.VERSION, d.tasks[0].workerGroup);';
    writeFileSync(join(project, "check.cjs"), program);
    const cjs = await run(process.execPath, ["check.cjs"], { cwd: project });
    expect(cjs.stdout.trim()).toMatch(/^\d+\.\d+\.\d+ default$/);
    writeFileSync(
      join(project, "check.mjs"),
      'import { workflowSchema, VERSION } from "shoal"; import schema from "shoal/schemas/workflow.json" with { type: "json" }; console.log(VERSION, typeof workflowSchema.parse, schema.$id);',
    );
    const esm = await run(process.execPath, ["check.mjs"], { cwd: project });
    expect(esm.stdout).toMatch(/function https:\/\/cdn\.jsdelivr\.net\/npm\/shoal@/);
  });

  it("runs standalone from the installed bin with the examples, and a workflow to SUCCESS through npx", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "shoal-user-data-"));
    standalone = await startStandaloneProcess({
      dataDir,
      examples: true,
      cwd: project,
      bin: join(project, "node_modules", ".bin", "shoal"),
    });
    const { stdout } = await run(
      "npx",
      ["shoal", "run", "etl-report", "--wait", "--endpoint", standalone.url],
      { cwd: project, timeout: 180_000 },
    );
    const firstSuccessMs = performance.now() - installStarted;
    expect(stdout).toMatch(/SUCCESS/);
    const page = await fetch(`${standalone.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<div id="root">/);
    const health = (await (await fetch(`${standalone.url}/v1/health`)).json()) as {
      version?: string;
    };
    const version = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version;
    expect(health.version).toBe(version);
    process.stdout.write(
      `package: tarball ${(tarball.bytes / 1024).toFixed(0)} KiB (pack ${(tarball.packMs / 1000).toFixed(1)} s), ` +
        `npm install ${(installMs / 1000).toFixed(1)} s, install → first SUCCESS ${(firstSuccessMs / 1000).toFixed(1)} s\n`,
    );
    rmSync(dataDir, { recursive: true, force: true });
  }, 300_000);

  it.runIf(OLD_NODE)("tells an older Node what it needs, from the compiled bin", async () => {
    const err = await run(OLD_NODE ?? "", [join(pkg, "bin", "shoal.js"), "--version"]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(err).toMatchObject({ code: 1 });
    expect((err as { stderr: string }).stderr).toMatch(
      /shoal needs Node\.js >= 22\.12 \(found 2\d\./,
    );
  });
});
