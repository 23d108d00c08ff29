/** Reads workflow definition files for `shoal apply`: YAML (one or more documents) or JSON. */
import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import { parseAllDocuments } from "yaml";
import { CliError } from "./errors.js";

/** One workflow to PUT: its name and the WorkflowDefinition body (without `name`). */
export interface WorkflowDocument {
  name: string;
  body: Record<string, unknown>;
}

/**
 * Fields `shoal get workflow` prints that are not part of a WorkflowDefinition body; dropped
 * so a printed workflow can be edited and applied again.
 */
const READ_ONLY_FIELDS = ["version", "createdAt"] as const;

/** Reads `file` (`-` = stdin) and returns its workflows in file order. */
export async function loadWorkflowDocuments(file: string): Promise<WorkflowDocument[]> {
  const text = await readSource(file);
  const values = parseDocuments(file, text);
  if (values.length === 0) throw new CliError(`${file}: no workflow definition found`);
  // The file name only names a workflow when it is unambiguous: a file with one document.
  const fallback = file !== "-" && values.length === 1 ? basename(file, extname(file)) : undefined;
  return values.map((value, i) => toDocument(file, value, i, values.length, fallback));
}

async function readSource(file: string): Promise<string> {
  try {
    if (file === "-") {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
      return Buffer.concat(chunks).toString("utf8");
    }
    return await readFile(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : code;
    throw new CliError(`cannot read ${file}: ${why ?? String(err)}`);
  }
}

function parseDocuments(file: string, text: string): unknown[] {
  if (extname(file).toLowerCase() === ".json") {
    try {
      return [JSON.parse(text)];
    } catch (err) {
      throw new CliError(`${file}: invalid JSON: ${(err as Error).message}`);
    }
  }
  const docs = parseAllDocuments(text, { prettyErrors: true });
  if (!Array.isArray(docs)) return []; // an empty stream
  const values: unknown[] = [];
  for (const [i, doc] of docs.entries()) {
    const first = doc.errors[0];
    if (first) {
      const where = docs.length > 1 ? ` (document ${i + 1})` : "";
      throw new CliError(`${file}${where}: invalid YAML: ${first.message}`);
    }
    const value: unknown = doc.toJS();
    // A stray `---` at the end (or between documents) yields an empty document: skip it.
    if (value === null || value === undefined) continue;
    values.push(value);
  }
  return values;
}

function toDocument(
  file: string,
  value: unknown,
  index: number,
  count: number,
  fallback: string | undefined,
): WorkflowDocument {
  const where = count > 1 ? `${file} (document ${index + 1})` : file;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CliError(`${where}: expected a mapping with a workflow definition`);
  }
  const { name, ...body } = value as Record<string, unknown>;
  for (const field of READ_ONLY_FIELDS) delete body[field];
  if (name !== undefined && (typeof name !== "string" || name === "")) {
    throw new CliError(`${where}: \`name\` must be a non-empty string`);
  }
  const resolved = name ?? fallback;
  if (resolved === undefined) {
    throw new CliError(
      `${where}: missing top-level \`name\` (required when a file holds several workflows)`,
    );
  }
  return { name: resolved, body };
}
