// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} and ${secret:NAME} are Shoal's reference syntax
/**
 * Credentials a DolphinScheduler export holds as plain text: a global or local parameter named
 * like a password, token or key, an HTTP header that carries one (`Authorization`,
 * `X-Api-Key`, `Cookie`), or an HTTP query or body field named like one, with a literal value.
 * DolphinScheduler has no secret store for these, so exports carry them as they are; Shoal
 * stores and shows parameters and headers as written (the YAML, the API, the console), and has
 * secrets (docs/secrets.md) for them. The import keeps each value, so the workflow still runs
 * as it did, and says, for each, what to write instead. Pure.
 */
import type { NoteBook } from "./notes.js";

/** A parameter or field name that names a credential. */
const CREDENTIAL_NAME = /pass(?:word|wd)|pwd|token|secret|api[_.-]?key|credential/i;
/** Headers that carry a credential whatever their value looks like. */
const CREDENTIAL_HEADERS = new Set(["authorization", "x-api-key", "cookie", "proxy-authorization"]);
/** A value that is only references (`${x}`, `$[…]`) holds no credential itself. */
const ONLY_REFERENCES = /^(?:\s*(?:\$\{[^}]*\}|\$\[[^\]]*\])\s*)+$/;

/** Whether `name` (a parameter, a query or body field) names a credential. */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/** Whether `value` is a literal (not empty, not only parameter references). */
function isLiteral(value: string): boolean {
  return value.trim() !== "" && !ONLY_REFERENCES.test(value);
}

/** An environment variable name for `name`: upper case, `_` for anything else. */
export function envNameFor(name: string): string {
  let env = name.toUpperCase().replace(/[^A-Z0-9_]/g, "_");
  if (!/^[A-Z_]/.test(env)) env = `_${env}`;
  if (env.startsWith("SHOAL_")) env = `DS_${env}`;
  return env.slice(0, 128);
}

/** A Secrets Manager name for a credential (`<workflow>/<where>`), as docs/secrets.md allows. */
function secretNameFor(...parts: string[]): string {
  return parts
    .map((p) => p.replace(/[^A-Za-z0-9/_+=.@-]/g, "-"))
    .join("/")
    .slice(0, 512);
}

interface TaskLike {
  code: string;
  type: string;
  params?: Record<string, string>;
  headers?: Record<string, string>;
  url?: string;
  body?: string;
  command?: string;
}

/** How each task using `${param}` should read the secret instead. */
function replacementFor(param: string, secret: string, users: readonly TaskLike[]): string {
  const env = envNameFor(param);
  // A PYTHON task is a SHELL task running `python3 script.py` (worker-tasks.ts).
  const isPython = (t: TaskLike) => /\npython3 script\.py$/.test(t.command ?? "");
  const shell = users.filter((t) => t.type === "SHELL" && !isPython(t)).map((t) => `\`${t.code}\``);
  const python = users.filter(isPython).map((t) => `\`${t.code}\``);
  const http = users.filter((t) => t.type === "HTTP").map((t) => `\`${t.code}\``);
  const ways: string[] = [];
  if (shell.length > 0)
    ways.push(
      `in ${shell.join(", ")} add \`secrets: {${env}: ${secret}}\` and write \`$${env}\` where the script has \`\${${param}}\``,
    );
  if (python.length > 0)
    ways.push(
      `in ${python.join(", ")} (PYTHON) add \`secrets: {${env}: ${secret}}\` and read \`os.environ["${env}"]\` where the script has \`\${${param}}\``,
    );
  if (http.length > 0)
    ways.push(`in ${http.join(", ")} write \`\${secret:${secret}}\` instead of \`\${${param}}\``);
  if (ways.length === 0)
    ways.push(
      `where a task uses it, read \`\${secret:${secret}}\` (HTTP) or \`secrets: {${env}: ${secret}}\` (SHELL)`,
    );
  return ways.join("; ");
}

/**
 * Adds an `action` note (flagged `credential`) for each plain-text credential of a converted
 * definition: global `params`, each task's `params`, and an HTTP task's headers, query and
 * JSON body fields. Each note names the replacement; the value stays where it is.
 * @param definition the converted WorkflowDefinition body (Shoal names and codes).
 */
export function credentialNotes(definition: Record<string, unknown>, notes: NoteBook): void {
  const wf = notes.workflow;
  const tasks = (definition.tasks ?? []) as TaskLike[];
  const usersOf = (param: string, among: readonly TaskLike[]) =>
    among.filter((t) => JSON.stringify(t).includes(`\${${param}}`));
  const tail =
    "stored and shown as plain text (the YAML, the API, the console); kept so the workflow runs as before";
  const globals = (definition.params ?? {}) as Record<string, string>;
  for (const [name, value] of Object.entries(globals)) {
    if (!isCredentialName(name) || !isLiteral(value)) continue;
    const secret = secretNameFor(wf, name);
    notes.addCredential(
      `global parameter \`${name}\` holds a literal credential, ${tail}. Store it as the secret \`${secret}\` (docs/secrets.md), delete the parameter, and ${replacementFor(name, secret, usersOf(name, tasks))}`,
    );
  }
  for (const t of tasks) {
    for (const [name, value] of Object.entries(t.params ?? {})) {
      if (!isCredentialName(name) || !isLiteral(value)) continue;
      const secret = secretNameFor(wf, t.code, name);
      notes.addCredential(
        `local parameter \`${name}\` holds a literal credential, ${tail}. Store it as the secret \`${secret}\` (docs/secrets.md), delete the parameter, and ${replacementFor(name, secret, [t])}`,
        t.code,
      );
    }
    if (t.type !== "HTTP") continue;
    for (const [header, value] of Object.entries(t.headers ?? {})) {
      const h = header.toLowerCase();
      if (!(CREDENTIAL_HEADERS.has(h) || isCredentialName(h)) || !isLiteral(value)) continue;
      const secret = secretNameFor(wf, t.code, h);
      // Keep an auth scheme (`Bearer`, `Basic`) in front of the reference.
      const scheme = /^(Bearer|Basic|Token|Digest)\s+\S/i.exec(value)?.[1];
      notes.addCredential(
        `HTTP header \`${header}\` has a literal value, ${tail}. Store the value${scheme ? ` after \`${scheme} \`` : ""} as the secret \`${secret}\` and write the header as \`${header}: ${scheme ? `${scheme} ` : ""}\${secret:${secret}}\``,
        t.code,
      );
    }
    const query = (t.url ?? "").split("?")[1] ?? "";
    for (const pair of query.split("&")) {
      const [k = "", v = ""] = pair.split("=");
      const name = safeDecode(k);
      if (!isCredentialName(name) || !isLiteral(safeDecode(v))) continue;
      const secret = secretNameFor(wf, t.code, name);
      notes.addCredential(
        `URL query field \`${name}\` has a literal value, ${tail}. Store it as the secret \`${secret}\` and write \`${k}=\${secret:${secret}}\` in the url`,
        t.code,
      );
    }
    for (const [name, value] of Object.entries(jsonFields(t.body))) {
      if (!isCredentialName(name) || typeof value !== "string" || !isLiteral(value)) continue;
      const secret = secretNameFor(wf, t.code, name);
      notes.addCredential(
        `body field \`${name}\` has a literal value, ${tail}. Store it as the secret \`${secret}\` and write \`"${name}": "\${secret:${secret}}"\` in the body`,
        t.code,
      );
    }
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}

/** The top-level fields of a JSON object body; none for any other body. */
function jsonFields(body: string | undefined): Record<string, unknown> {
  if (body === undefined) return {};
  try {
    const v: unknown = JSON.parse(body);
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
