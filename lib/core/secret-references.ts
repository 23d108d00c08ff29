// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${secret:…} is Shoal's reference syntax, not a JS template
/**
 * Secret references of task definitions: `${secret:NAME}` in a SHELL command and in an HTTP
 * task's URL, header values and body, and a SHELL task's `secrets` field (`{ENV_VAR: NAME}`).
 * The definition only ever holds the reference; the worker resolves it at run time
 * (lib/secrets/). This file parses and checks names; it is pure.
 *
 * NAME is one of (optionally followed by `#key`, a field of a secret holding a JSON object):
 * - a Secrets Manager secret name (`prod/db`, 1..512 of `A-Za-z0-9/_+=.@-`) or ARN
 *   (`arn:aws:secretsmanager:<region>:<account>:secret:<name>`), AWS Secrets Manager API
 *   reference, "CreateSecret" (Name) and "GetSecretValue" (SecretId);
 * - `ssm:` and an SSM Parameter Store name (`ssm:/prod/db/pw`: 1..2048 of `A-Za-z0-9_.-/`),
 *   AWS Systems Manager API reference, "PutParameter" (Name).
 * In standalone the same names are looked up in the secrets file and the environment.
 */
/** A `${secret:…}` reference anywhere in a text (the inside is checked by {@link secretNameProblem}). */
export const SECRET_REFERENCE = /\$\{secret:([^}\n]*)\}/g;

/** Secrets Manager names: what CreateSecret accepts (AWS Secrets Manager API reference). */
const SM_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
/** Secrets Manager ARNs, with or without the random suffix AWS appends. */
const SM_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}$/;
/** SSM parameter names: letters, digits, `_ . - /` (PutParameter), hierarchy optional. */
const SSM_NAME = /^[A-Za-z0-9_./-]{1,2048}$/;
/** A field of a JSON secret (`#password`). */
const JSON_KEY = /^[A-Za-z0-9_.@+=/-]{1,256}$/;

/** The rule a NAME must follow, for error messages. */
export const SECRET_NAME_RULE =
  "must be a Secrets Manager name (1..512 of A-Za-z0-9/_+=.@-) or ARN, or ssm:<parameter name> (A-Za-z0-9_.-/), optionally followed by #<json key>";

/** A parsed secret name. */
export interface SecretName {
  /** The name as written (`prod/db#password`): the key of caches and of log lines. */
  full: string;
  /** Where it lives on AWS. */
  store: "secrets-manager" | "ssm";
  /** What to ask the store for: the secret name/ARN, or the parameter name (no `ssm:`). */
  id: string;
  /** The lookup name without `#key` (`prod/db`, `ssm:/prod/db/pw`): standalone's file and env key. */
  base: string;
  /** The field of a JSON secret to use, when given. */
  jsonKey?: string;
}

/**
 * Why `name` (the inside of `${secret:…}`, or a value of `secrets`) is not a valid secret
 * name, as a phrase, or undefined when it is.
 */
export function secretNameProblem(name: string): string | undefined {
  return typeof parseSecretName(name) === "string" ? SECRET_NAME_RULE : undefined;
}

/**
 * Parses a secret name.
 * @returns the parts, or the rule it breaks (a string).
 */
export function parseSecretName(name: string): SecretName | string {
  const hash = name.indexOf("#");
  const base = hash < 0 ? name : name.slice(0, hash);
  const jsonKey = hash < 0 ? undefined : name.slice(hash + 1);
  if (jsonKey !== undefined && !JSON_KEY.test(jsonKey)) return SECRET_NAME_RULE;
  const key = jsonKey !== undefined ? { jsonKey } : {};
  if (base.startsWith("ssm:")) {
    const id = base.slice(4);
    if (!SSM_NAME.test(id) || id.includes("//")) return SECRET_NAME_RULE;
    return { full: name, store: "ssm", id, base, ...key };
  }
  if (base.startsWith("arn:")) {
    if (!SM_ARN.test(base)) return SECRET_NAME_RULE;
  } else if (!SM_NAME.test(base)) return SECRET_NAME_RULE;
  return { full: name, store: "secrets-manager", id: base, base, ...key };
}

/** One `${secret:NAME}` in a text: UTF-16 offsets of the whole reference, and NAME. */
export interface SecretReference {
  start: number;
  end: number;
  name: string;
}

/** Every `${secret:…}` of `text`, in order (names not checked). */
export function findSecretReferences(text: string): SecretReference[] {
  return [...text.matchAll(SECRET_REFERENCE)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    name: m[1] as string,
  }));
}

/** Environment variable names a `secrets` field may set. */
export const SECRET_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** At most this many entries in a task's `secrets`. */
export const MAX_SECRET_ENV = 50;

/** The rule of a `secrets` key, or undefined when `key` is a valid one. */
export function secretEnvNameProblem(key: string): string | undefined {
  if (!SECRET_ENV_NAME.test(key)) {
    return "must be an environment variable name (^[A-Za-z_][A-Za-z0-9_]{0,127}$)";
  }
  if (key.toUpperCase().startsWith("SHOAL_")) return "must not start with SHOAL_ (Shoal's own)";
  return undefined;
}

/** A problem of a task's secret references: the field (path inside the task) and the rule. */
export interface SecretIssue {
  path: string[];
  message: string;
}

/** The parts of a task a secret check reads (any task type; absent fields are skipped). */
export interface SecretCheckedTask {
  type: string;
  command?: string;
  url?: string;
  headers?: Record<string, string>;
  body?: string;
  payload?: string;
  input?: string;
  executionName?: string;
  params?: Record<string, string>;
  secrets?: Record<string, string>;
}

/**
 * Problems of a task's secret references, for the API's 400: a bad NAME where references are
 * resolved (SHELL command; HTTP url, headers, body), and any reference where they are not (a
 * LAMBDA payload, a STEP_FUNCTIONS input or execution name, parameter values: these are stored,
 * sent and shown as they are, so a reference there would never be resolved).
 */
export function secretReferenceIssues(task: SecretCheckedTask): SecretIssue[] {
  const issues: SecretIssue[] = [];
  const resolved = (path: string[], text: string | undefined) => {
    for (const r of findSecretReferences(text ?? "")) {
      if (secretNameProblem(r.name)) {
        issues.push({
          path,
          message: `\${secret:${r.name.slice(0, 80)}}: the name ${SECRET_NAME_RULE}`,
        });
      }
    }
  };
  const refused = (path: string[], text: string | undefined, why: string) => {
    const r = findSecretReferences(text ?? "")[0];
    if (r) {
      issues.push({
        path,
        message: `\${secret:${r.name.slice(0, 80)}} is not resolved here: ${why}`,
      });
    }
  };
  if (task.type === "SHELL") resolved(["command"], task.command);
  if (task.type === "HTTP") {
    resolved(["url"], task.url);
    for (const [k, v] of Object.entries(task.headers ?? {})) resolved(["headers", k], v);
    resolved(["body"], task.body);
    const problem = httpDestinationProblem(task);
    if (problem) issues.push({ path: ["url"], message: problem });
  }
  const own =
    "secret references work in SHELL commands and HTTP url, headers and body; let the function or state machine read the secret itself";
  if (task.type === "LAMBDA") refused(["payload"], task.payload, own);
  if (task.type === "STEP_FUNCTIONS") {
    refused(["input"], task.input, own);
    refused(["executionName"], task.executionName, own);
  }
  issues.push(...paramSecretIssues(task.params, ["params"], PARAM_VALUE_RULE));
  return issues;
}

/** Why a parameter value cannot hold a reference (task and workflow parameters). */
export const PARAM_VALUE_RULE =
  "parameter values are stored and shown as they are; put the reference in the command (or use the task's secrets field)";

/** Why a run's parameter value cannot hold a reference. */
export const RUN_PARAM_VALUE_RULE =
  "a run's parameters are plain text and never resolve secrets; put the reference in the task definition (command, or the task's secrets field)";

/**
 * A `${secret:…}` in a parameter value, refused (`PUT` of a workflow: task and workflow
 * `params`; `POST …/runs`: the run's `params`): the value is stored, sent and shown as it is and
 * would never be resolved. One issue per value, at `prefix` + the parameter's name.
 */
export function paramSecretIssues(
  params: Record<string, string> | undefined,
  prefix: string[],
  why: string,
): SecretIssue[] {
  const issues: SecretIssue[] = [];
  for (const [k, v] of Object.entries(params ?? {})) {
    const r = findSecretReferences(v)[0];
    if (r) {
      issues.push({
        path: [...prefix, k],
        message: `\${secret:${r.name.slice(0, 80)}} is not resolved here: ${why}`,
      });
    }
  }
  return issues;
}

/** A parameter reference, `${name}` or a time expression `$[…]` (lib/core/params.ts). */
const PARAM_REFERENCE = /\$\{[A-Za-z_][A-Za-z0-9_.]*\}|\$\[[^\]\n]*\]/;

/**
 * The URL's destination: scheme, user info, host and port, that is everything before the first
 * `/` after `//` (or before the first `/` when there is no `//`; the whole URL when there is
 * neither).
 */
function urlDestination(url: string): string {
  const slashes = url.indexOf("//");
  const from = slashes < 0 ? 0 : slashes + 2;
  const path = url.indexOf("/", from);
  return path < 0 ? url : url.slice(0, path);
}

/**
 * Why an HTTP task that sends a secret (a reference in its url, headers or body) may not take
 * its destination from a parameter: a run's parameters (`-p host=evil`) would send the secret
 * elsewhere. Parameters in the path and query stay allowed. Undefined when there is no problem.
 */
export function httpDestinationProblem(task: SecretCheckedTask): string | undefined {
  if (task.type !== "HTTP" || task.url === undefined) return undefined;
  const texts = [task.url, task.body ?? "", ...Object.values(task.headers ?? {})];
  if (!texts.some((t) => findSecretReferences(t).length > 0)) return undefined;
  const ref = PARAM_REFERENCE.exec(urlDestination(task.url));
  if (!ref) return undefined;
  return `${ref[0].slice(0, 80)} is not allowed before the URL's path in an HTTP task that uses secrets: a run's parameters could send the secret to another host; write the scheme, host and port as text (parameters may stay in the path and query)`;
}

/**
 * The secret names a worker task needs, as written (`${secret:…}` of its resolved fields, and
 * its `secrets` values), deduplicated, in order of appearance.
 */
export function taskSecretNames(task: SecretCheckedTask): string[] {
  const names = new Set<string>();
  const add = (text: string | undefined) => {
    for (const r of findSecretReferences(text ?? "")) names.add(r.name);
  };
  if (task.type === "SHELL") add(task.command);
  if (task.type === "HTTP") {
    add(task.url);
    for (const v of Object.values(task.headers ?? {})) add(v);
    add(task.body);
  }
  for (const v of Object.values(task.secrets ?? {})) names.add(v);
  return [...names];
}
