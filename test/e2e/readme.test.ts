/**
 * The README's workflow file runs as it is: copied out of the README, applied with the CLI and
 * run with `shoal run --wait` against a real standalone (only its port differs from the
 * README's 8080, since tests take a free port).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cli,
  REPO,
  type RunningStandalone,
  startStandaloneProcess,
} from "../helpers/standalone.js";

describe("the README's example", () => {
  let sa: RunningStandalone;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "shoal-readme-"));
    sa = await startStandaloneProcess({ dataDir: join(dir, "data"), workers: 2 });
  });
  afterAll(async () => {
    await sa?.stop();
  });

  it("the workflow file applies and runs to SUCCESS", async () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    const yaml = /A workflow file:\s*```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(yaml, "the README's workflow file").toBeDefined();
    const file = join(dir, "hello.yaml");
    writeFileSync(file, (yaml as string).replaceAll("127.0.0.1:8080", new URL(sa.url).host));
    const env = { SHOAL_ENDPOINT: sa.url };
    const applied = await cli(["apply", "-f", file], env);
    expect(applied.code, applied.stderr).toBe(0);
    const run = await cli(["run", "hello", "--wait", "--timeout", "60"], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toContain("SUCCESS");
  }, 90_000);
});
