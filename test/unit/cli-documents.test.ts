/**
 * Reading definition files for `shoal apply` (lib/cli/documents.ts): one bad document does not
 * hide the others, and a missing `name` says why it is needed (several documents, or stdin,
 * which has no file name to fall back on).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { loadWorkflowDocuments } from "../../lib/cli/documents.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "shoal-docs-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const TASKS = "tasks:\n  - { code: a, type: SHELL, command: x }\n";

/** Makes `process.stdin` read `text`. */
function stdin(text: string): void {
  vi.spyOn(process, "stdin", "get").mockReturnValue(
    Readable.from([Buffer.from(text)]) as unknown as typeof process.stdin,
  );
}

describe("loadWorkflowDocuments", () => {
  it("reads every document, with a problem for each one that is not a named workflow", async () => {
    const path = join(dir, "mixed.yaml");
    await writeFile(
      path,
      [
        `name: one\n${TASKS}`,
        "name: two\ntasks: [ { code: a\n",
        TASKS,
        "- a list\n",
        `name: five\n${TASKS}`,
      ].join("---\n"),
    );
    const file = await loadWorkflowDocuments(path);
    expect(file.count).toBe(5);
    expect(file.documents.map((d) => [d.name, d.position])).toEqual([
      ["one", 1],
      ["five", 5],
    ]);
    expect(file.problems.map((p) => p.position)).toEqual([2, 3, 4]);
    expect(file.problems[0]?.message).toMatch(
      new RegExp(`^${path} \\(document 2\\): invalid YAML: `),
    );
    expect(file.problems.slice(1).map((p) => p.message)).toEqual([
      `${path} (document 3): missing top-level \`name\` (required when a file holds several workflows)`,
      `${path} (document 4): expected a mapping with a workflow definition`,
    ]);
  });

  it("names a single document after its file", async () => {
    const path = join(dir, "solo.yaml");
    await writeFile(path, TASKS);
    const file = await loadWorkflowDocuments(path);
    expect(file).toMatchObject({ count: 1, problems: [], documents: [{ name: "solo" }] });
  });

  it("says stdin has no file name when its one document has no `name`", async () => {
    stdin(TASKS);
    const file = await loadWorkflowDocuments("-");
    expect(file.documents).toEqual([]);
    expect(file.problems).toEqual([
      {
        position: 1,
        message:
          "stdin: missing top-level `name` (a definition read from stdin has no file name to name it)",
      },
    ]);
  });

  it("reads a named document from stdin", async () => {
    stdin(`name: piped\n${TASKS}`);
    const file = await loadWorkflowDocuments("-");
    expect(file.documents.map((d) => d.name)).toEqual(["piped"]);
  });
});
