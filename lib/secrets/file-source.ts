/**
 * Secrets from a local file (standalone): a YAML or JSON map of name → value, where a value is
 * a string (numbers and booleans are taken as their text) or a map (its JSON text, so that
 * `${secret:NAME#key}` picks a field). The file must have mode 0600 or stricter
 * (file-mode.ts); it is read again at each lookup, so edits apply to the next attempt.
 *
 *     db-password: s3cr3t
 *     ssm:/prod/api/token: abc123        # the same names as on AWS, so workflows move unchanged
 *     prod/db: { user: app, password: s3cr3t }
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { SecretName } from "../core/secret-references.js";
import { secretsFileProblem } from "./file-mode.js";
import { SecretReadError, type SecretSource } from "./secret-source.js";

/**
 * The entries of the secrets file `path`, by name.
 * @throws SecretReadError when the file is too open, missing, or not a YAML/JSON map.
 */
export function readSecretsFile(path: string): Map<string, string> {
  const problem = secretsFileProblem(path);
  if (problem) throw new SecretReadError(problem);
  let doc: unknown;
  try {
    doc = parse(readFileSync(path, "utf8"));
  } catch (e) {
    // The parser's message may quote the file's text (a value): say where, not what.
    const line = (e as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    throw new SecretReadError(
      `secrets file ${path} is not valid YAML or JSON${line ? ` (line ${line})` : ""}`,
    );
  }
  if (doc === null || doc === undefined) return new Map();
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw new SecretReadError(`secrets file ${path} must be a map of name: value`);
  }
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    out.set(k, typeof v === "object" ? JSON.stringify(v) : String(v));
  }
  return out;
}

export class FileSecretSource implements SecretSource {
  constructor(readonly path: string) {}

  async get(name: SecretName): Promise<string | undefined> {
    return readSecretsFile(this.path).get(name.base);
  }

  where(_name: SecretName): string {
    return `secrets file ${this.path}`;
  }
}
