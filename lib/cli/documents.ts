/** Reads workflow definition files for `shoal apply`: YAML (one or more documents) or JSON. */
import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import { parseAllDocuments } from "yaml";
import { CliError } from "./errors.js";

/** One workflow to PUT: its name and the WorkflowDefinition body (without `name`). */
export interface WorkflowDocument {
  name: string;
  body: Record<string, unknown>;
  /** Its number in the file, from 1 (empty documents are not counted). */
  position: number;
}

/** A document that could not be read, with `FILE (document N): ` before the message. */
export interface DocumentProblem {
  position: number;
  message: string;
}

/** What a definition file holds: the documents that could be read, and why the others could not. */
export interface WorkflowFile {
  documents: WorkflowDocument[];
  /** One per document that is not a workflow with a name: invalid YAML, not a mapping, no `name`. */
  problems: DocumentProblem[];
  /** How many documents the file holds, read or not. */
  count: number;
}

/**
 * Fields `shoal get workflow` prints that are not part of a WorkflowDefinition body; dropped
 * so a printed workflow can be edited and applied again.
 */
const READ_ONLY_FIELDS = ["version", "createdAt"] as const;

/**
 * Reads `file` (`-` = stdin): its workflows in file order, and a problem for each document that
 * is not one, so that one bad document does not hide the others' problems.
 * @throws CliError when the file cannot be read, is not JSON (a .json file), or holds nothing.
 */
export async function loadWorkflowDocuments(file: string): Promise<WorkflowFile> {
  const text = await readSource(file);
  const label = file === "-" ? "stdin" : file;
  const values = parseDocuments(label, file, text);
  if (values.length === 0) throw new CliError(`${label}: no workflow definition found`);
  // The file name only names a workflow when it is unambiguous: a file with one document.
  const fallback = file !== "-" && values.length === 1 ? basename(file, extname(file)) : undefined;
  const out: WorkflowFile = { documents: [], problems: [], count: values.length };
  for (const [i, value] of values.entries()) {
    const position = i + 1;
    const where = values.length > 1 ? `${label} (document ${position})` : label;
    const read = "yamlError" in value ? value.yamlError : toDocument(value.value, fallback);
    if (typeof read === "string") {
      const note = read === MISSING_NAME ? missingNameNote(values.length) : "";
      out.problems.push({ position, message: `${where}: ${read}${note}` });
    } else out.documents.push({ ...read, position });
  }
  return out;
}

const MISSING_NAME = "missing top-level `name`";

/**
 * Why a document needs a `name`: the file holds several, or (one document) it was read from
 * stdin, which has no file name to fall back on.
 */
function missingNameNote(count: number): string {
  return count > 1
    ? " (required when a file holds several workflows)"
    : " (a definition read from stdin has no file name to name it)";
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
    throw new CliError(`cannot read ${file}: ${why ?? String(err)}`, { cause: err });
  }
}

/** A document's value, or why it is not valid YAML. */
type Parsed = { value: unknown } | { yamlError: string };

function parseDocuments(label: string, file: string, text: string): Parsed[] {
  if (extname(file).toLowerCase() === ".json") {
    try {
      return [{ value: JSON.parse(text) }];
    } catch (err) {
      throw new CliError(`${label}: invalid JSON: ${(err as Error).message}`, { cause: err });
    }
  }
  const docs = parseAllDocuments(text, { prettyErrors: true });
  if (!Array.isArray(docs)) return []; // an empty stream
  const out: Parsed[] = [];
  for (const doc of docs) {
    const first = doc.errors[0];
    if (first) {
      out.push({ yamlError: `invalid YAML: ${first.message}` });
      continue;
    }
    const value: unknown = doc.toJS();
    // A stray `---` at the end (or between documents) yields an empty document: skip it.
    if (value === null || value === undefined) continue;
    out.push({ value });
  }
  return out;
}

/** The workflow a document holds, or what is wrong with it. */
function toDocument(
  value: unknown,
  fallback: string | undefined,
): Omit<WorkflowDocument, "position"> | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "expected a mapping with a workflow definition";
  }
  const { name, ...body } = value as Record<string, unknown>;
  for (const field of READ_ONLY_FIELDS) delete body[field];
  if (name !== undefined && (typeof name !== "string" || name === "")) {
    return "`name` must be a non-empty string";
  }
  const resolved = name ?? fallback;
  if (resolved === undefined) return MISSING_NAME;
  return { name: resolved, body };
}
