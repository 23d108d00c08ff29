// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/**
 * Secrets into a worker task, in two steps around parameter substitution (lib/tasks/substitute.ts):
 * 1. {@link protectSecretReferences}: each `${secret:NAME}` the definition holds becomes a
 *    marker with a random nonce, so that parameter substitution leaves it alone and no parameter
 *    value (a run's startup parameters may be anyone's) can add a reference of its own: a value
 *    holding `${secret:…}` stays text.
 * 2. {@link applySecrets}: markers become what the values need.
 *    - SHELL: never the value itself (it would show in `ps`, in the rendered command): an
 *      expansion of an environment variable set for this process only, quoted for where the
 *      reference stands (`"${SHOAL_SECRET_1}"` unquoted, `${SHOAL_SECRET_1}` inside "…",
 *      `'"${SHOAL_SECRET_1}"'` inside '…'); the `secrets` field adds its variables likewise.
 *    - HTTP: the value, in memory, right before the request (URL-encoded in the URL).
 */
import { randomBytes } from "node:crypto";
import type { WorkerTaskDefinition } from "../core/model.js";
import { SECRET_REFERENCE, taskSecretNames } from "../core/secret-references.js";
import { quoteForShell, type ShellContext, substituteShell } from "../core/shell-quote.js";
import { ParamError } from "../core/time-params.js";
import { SecretMasker } from "./mask.js";
import { SecretReadError } from "./secret-source.js";

/** A task whose references are markers, and what the markers stand for. */
export interface ProtectedTask {
  task: WorkerTaskDefinition;
  /** Every secret name the task needs (references and the `secrets` field), in order. */
  names: string[];
  /** Marker → secret name. */
  markers: Map<string, string>;
  /** Finds markers in a text (global). */
  markerPattern: RegExp;
}

/**
 * Step 1. Undefined when the task uses no secret (nothing else to do).
 */
export function protectSecretReferences(task: WorkerTaskDefinition): ProtectedTask | undefined {
  const names = taskSecretNames(task);
  if (names.length === 0) return undefined;
  const nonce = randomBytes(16).toString("hex");
  const markers = new Map<string, string>();
  const markerOf = new Map<string, string>();
  const protect = (text: string): string =>
    text.replace(SECRET_REFERENCE, (_whole, name: string) => {
      let m = markerOf.get(name);
      if (m === undefined) {
        m = `SHOALSECRET${nonce}N${markers.size}Z`;
        markerOf.set(name, m);
        markers.set(m, name);
      }
      return m;
    });
  let out: WorkerTaskDefinition = task;
  if (task.type === "SHELL") out = { ...task, command: protect(task.command) };
  if (task.type === "HTTP") {
    out = {
      ...task,
      url: protect(task.url),
      headers: Object.fromEntries(Object.entries(task.headers).map(([k, v]) => [k, protect(v)])),
      ...(task.body !== undefined ? { body: protect(task.body) } : {}),
    };
  }
  return { task: out, names, markers, markerPattern: new RegExp(`SHOALSECRET${nonce}N\\d+Z`, "g") };
}

/** What a task runs with once its secrets are in. */
export interface AppliedSecrets {
  task: WorkerTaskDefinition;
  /** Environment variables for the task's process (SHELL), values included. */
  env: Record<string, string>;
  masker: SecretMasker;
}

/** The variable a SHELL reference to the `i`-th name (0-based) reads. */
export function secretVariable(i: number): string {
  return `SHOAL_SECRET_${i + 1}`;
}

/** A value whose quoted form tells every context apart (the final `\u0001` ends no here-document). */
const PROBE = `'"$\n\u0001`;
const CONTEXTS: readonly ShellContext[] = [
  "unquoted",
  "single",
  "double",
  "ansi-c",
  "heredoc",
  "heredoc-literal",
  "comment",
];

/** The expansion of `variable` for a reference that stood in `context`. */
function expansion(variable: string, context: ShellContext, label: string): string {
  switch (context) {
    case "unquoted":
      return `"\${${variable}}"`;
    case "single":
      return `'"\${${variable}}"'`;
    case "ansi-c":
      return `'"\${${variable}}"$'`;
    case "double":
    case "heredoc":
      return `\${${variable}}`;
    case "comment":
      return label;
    case "heredoc-literal":
      throw new ParamError(
        `${label} is in a here-document whose delimiter is quoted (<<'EOF'), where nothing is expanded; leave the delimiter unquoted`,
      );
    case "arithmetic":
      throw new ParamError(`${label} cannot be used in shell arithmetic`);
  }
}

/**
 * The command with each marker replaced by the expansion of its variable. The context of each
 * marker comes from the shell scanner (shell-quote.ts): it is asked to substitute a probe value
 * at that one place, and how it quoted the probe says where the marker stands (the scanner copies
 * everything else as it is).
 * @throws ParamError where no expansion is safe (backquotes, arithmetic, a quoted here-document).
 */
function shellCommand(
  command: string,
  p: ProtectedTask,
  variables: ReadonlyMap<string, string>,
): string {
  const found = [...command.matchAll(p.markerPattern)];
  let out = "";
  let from = 0;
  for (const m of found) {
    const name = p.markers.get(m[0]) as string;
    const label = `\${secret:${name}}`;
    const start = m.index;
    const end = start + m[0].length;
    const probed = substituteShell(command, [{ start, end, value: PROBE, label }]);
    const mid = probed.slice(start, probed.length - (command.length - end));
    let replaced: string | undefined;
    for (const prefix of ["", "\\", "''", '""']) {
      const context = CONTEXTS.find((c) => prefix + quoteForShell(PROBE, c) === mid);
      if (context) {
        replaced = prefix + expansion(variables.get(name) as string, context, label);
        break;
      }
    }
    // Never guess: a context not recognised is refused rather than risk a wrong quoting.
    if (replaced === undefined) throw new ParamError(`${label} cannot be placed safely here`);
    out += command.slice(from, start) + replaced;
    from = end;
  }
  return out + command.slice(from);
}

/**
 * Step 2, after parameter substitution of `p.task`.
 * @param task `p.task` with its parameters substituted.
 * @param values the value of every name of `p.names` (lib/secrets/resolve.ts).
 * @throws ParamError when a SHELL reference stands where no expansion is safe, or
 *   SecretReadError when a value cannot go where it is used (CR/LF/NUL in a header).
 */
export function applySecrets(
  task: WorkerTaskDefinition,
  p: ProtectedTask,
  values: ReadonlyMap<string, string>,
): AppliedSecrets {
  const masker = new SecretMasker(values.values());
  const value = (name: string) => values.get(name) as string;
  if (task.type === "SHELL") {
    const env: Record<string, string> = {};
    const variables = new Map<string, string>();
    const referenced = [...new Set(p.markers.values())];
    for (const [i, name] of referenced.entries()) {
      variables.set(name, secretVariable(i));
      env[secretVariable(i)] = value(name);
    }
    for (const [variable, name] of Object.entries(task.secrets ?? {})) env[variable] = value(name);
    return { task: { ...task, command: shellCommand(task.command, p, variables) }, env, masker };
  }
  if (task.type === "HTTP") {
    const fill = (text: string, encode: (v: string) => string) =>
      text.replace(p.markerPattern, (m) => encode(value(p.markers.get(m) as string)));
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(task.headers)) {
      const filled = fill(v, (x) => x);
      if (/[\r\n\0]/.test(filled)) {
        throw new SecretReadError(
          `header '${k}': a secret it uses holds CR, LF or NUL, which a header value cannot hold`,
        );
      }
      headers[k] = filled;
    }
    return {
      task: {
        ...task,
        url: fill(task.url, encodeURIComponent),
        headers,
        ...(task.body !== undefined ? { body: fill(task.body, (x) => x) } : {}),
      },
      env: {},
      masker,
    };
  }
  return { task, env: {}, masker };
}
