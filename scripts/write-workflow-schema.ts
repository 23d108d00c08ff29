/**
 * Writes schemas/workflow.json, the JSON Schema of a workflow file (lib/api/schemas/
 * workflow-file.ts), and puts the schema's comment lines at the top of every example
 * (examples/*.yaml), replacing an older one: `npm run openapi` calls it (write-openapi.ts);
 * `tsx scripts/write-workflow-schema.ts` runs it alone. workflow-schema.test.ts checks both
 * are current.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { workflowFileSchema } from "../lib/api/schemas/workflow-file.js";
import { VERSION } from "../lib/version.js";
import { WORKFLOW_SCHEMA_FILE, yamlSchemaComment } from "../lib/workflow-schema-url.js";

/** The text of schemas/workflow.json for `version`. */
export function workflowSchemaText(version: string = VERSION): string {
  return `${JSON.stringify(workflowFileSchema(version), null, 2)}\n`;
}

/** Schema comments of any version at the top of a text (the ones to replace when the line changes). */
const SCHEMA_COMMENTS = /^(?:# (?:yaml-language-server: \$schema=|\$schema: )\S*\n)+/;

/** `text` with `version`'s schema comment as its first lines (older ones are replaced). */
export function withModeline(text: string, version: string = VERSION): string {
  return `${yamlSchemaComment(version)}\n${text.replace(SCHEMA_COMMENTS, "")}`;
}

/** The example files that must carry the modeline: examples/*.yaml. */
export function exampleFiles(root: string): string[] {
  const dir = join(root, "examples");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"))
    .map((f) => join(dir, f));
}

/**
 * Writes the schema under `root` and updates the examples' modelines.
 * @returns the files written.
 */
export function writeWorkflowSchema(root: string, version: string = VERSION): string[] {
  const written: string[] = [];
  const schemaFile = join(root, WORKFLOW_SCHEMA_FILE);
  writeFileSync(schemaFile, workflowSchemaText(version));
  written.push(schemaFile);
  for (const file of exampleFiles(root)) {
    const text = readFileSync(file, "utf8");
    const next = withModeline(text, version);
    if (next === text) continue;
    writeFileSync(file, next);
    written.push(file);
  }
  return written;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const f of writeWorkflowSchema(fileURLToPath(new URL("../", import.meta.url)))) {
    process.stdout.write(`wrote ${f}\n`);
  }
}
