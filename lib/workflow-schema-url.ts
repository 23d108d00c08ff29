/**
 * Where editors find the JSON Schema of a workflow file (docs/workflow-schema.md): the copy in
 * the npm package, served by jsDelivr for the release line (`major.minor`) of this build, so the
 * address needs no running server and follows the package's fixes within a release line. Every
 * file Shoal ships or writes (examples/*.yaml, `shoal import … --output`) names it on its first
 * line, the modeline yaml-language-server (VS Code, JetBrains) reads. Beside version.ts, so
 * that every layer but lib/core (lib/import's writers included) may import it.
 */
import { VERSION } from "./version.js";

/** Path of the schema inside the package (and the repository). */
export const WORKFLOW_SCHEMA_FILE = "schemas/workflow.json";

/** `0.1` of `0.1.0`: the release line whose files share a schema. */
export function releaseLine(version: string): string {
  const [major = "0", minor = "0"] = version.split(/[.+-]/);
  return `${major}.${minor}`;
}

/** The published address of the schema of `version`'s release line. */
export function workflowSchemaUrl(version: string = VERSION): string {
  return `https://cdn.jsdelivr.net/npm/shoal@${releaseLine(version)}/${WORKFLOW_SCHEMA_FILE}`;
}

/**
 * The comment lines that tie a YAML document to the schema, each starting with `#`: the
 * modeline of yaml-language-server (VS Code and the editors that run it), then the form
 * JetBrains IDEs document (`# $schema: URL`, which yaml-language-server 1.22+ also reads).
 * yaml-language-server reads them from the comments at the top of each document, so a file of
 * several documents repeats them after each `---`.
 */
export function yamlSchemaCommentLines(version: string = VERSION): string[] {
  const url = workflowSchemaUrl(version);
  return [`# yaml-language-server: $schema=${url}`, `# $schema: ${url}`];
}

/** {@link yamlSchemaCommentLines} as text, without a final line break. */
export function yamlSchemaComment(version: string = VERSION): string {
  return yamlSchemaCommentLines(version).join("\n");
}

/**
 * The schema comment of this build's release line (two lines, no final line break): the top of
 * every workflow file Shoal writes, `${YAML_SCHEMA_COMMENT}\n${yaml}`.
 */
export const YAML_SCHEMA_COMMENT: string = yamlSchemaComment();
