/**
 * `shoal apply` refuses, before it sends anything, a command or parameter value holding NUL or
 * an unpaired surrogate (the API's own rule: lib/core/schema-parts.ts processText).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli-run.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "shoal-apply-hostile-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("shoal apply", () => {
  it("refuses NUL and unpaired surrogates locally, naming each field, and exits 1", async () => {
    const path = join(dir, "bad.yaml");
    // YAML double-quoted escapes: \0 is NUL, \uD800 a high surrogate alone.
    await writeFile(
      path,
      'name: bad\nparams: { x: "a\\uD800" }\ntasks:\n  - { code: a, type: SHELL, command: "echo \\0" }\n',
    );
    // Nothing listens on port 9: had apply sent anything, it would fail to connect instead.
    const res = await runCli(["apply", "-f", path], { endpoint: "http://127.0.0.1:9" });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      "bad: tasks[0].command: must not contain NUL or unpaired surrogate characters",
    );
    expect(res.stderr).toContain(
      "bad: params.x: must not contain NUL or unpaired surrogate characters",
    );
  });
});
