/**
 * DolphinScheduler's worker task types as Shoal worker tasks: SHELL (`rawScript`), PYTHON (a
 * SHELL task that runs `python3` on the script), HTTP (`HttpParameters`), and the failing SHELL
 * placeholder of a type Shoal does not have. Sources: `ShellParameters`, `PythonParameters`,
 * `HttpParameters`/`HttpProperty`/`HttpCheckCondition` (3.2.2; 3.3 drops HEAD and
 * `socketTimeout`) and `HttpTask` (the default check is status 200).
 */
import { LIMITS } from "../../core/validate.js";
import type { DsTask } from "./export-format.js";
import { PARAM_NAME } from "./names.js";
import { convertProperties, outsNotSet } from "./params.js";
import { notePythonScript } from "./python-script.js";
import {
  commonFields,
  minutesToSeconds,
  type TaskBody,
  type TaskContext,
  timeoutFields,
} from "./task-common.js";

/**
 * The lines put before a script: a DolphinScheduler `delayTime` (minutes) becomes a `sleep`
 * (Shoal has no delay field), and a task with run flag NO ("prohibit execution") exits at once
 * with its script kept below for review.
 */
function prelude(
  t: DsTask,
  ctx: TaskContext,
  code: string,
): { lines: string[]; delaySeconds: number } {
  const lines: string[] = [];
  let delaySeconds = 0;
  if (t.flag === "NO") {
    lines.push(
      "# Disabled in DolphinScheduler (run flag NO): it does nothing. Remove these two lines to run it.",
    );
    lines.push("exit 0");
    ctx.notes.add(
      "approximated",
      "disabled (run flag NO): the task exits 0 at once, its script kept below for review",
      code,
    );
  }
  const delay = minutesToSeconds(t.delayTime, LIMITS.timeoutSeconds);
  if (delay !== undefined && t.flag !== "NO") {
    delaySeconds = delay;
    lines.push(`sleep ${delay} # DolphinScheduler delayTime: ${t.delayTime} min`);
    ctx.notes.add(
      "approximated",
      `delayTime ${t.delayTime} min: the command sleeps ${delay} s first, holding a worker slot (its timeout is longer by as much)`,
      code,
    );
  }
  return { lines, delaySeconds };
}

function noteDelayIgnored(t: DsTask, ctx: TaskContext, code: string): void {
  if (t.delayTime > 0) {
    ctx.notes.add(
      "not-converted",
      `delayTime ${t.delayTime} min: Shoal cannot delay a ${t.taskType} task`,
      code,
    );
  }
  if (t.flag === "NO") {
    ctx.notes.add(
      "not-converted",
      "disabled (run flag NO): Shoal has no disabled tasks; this one runs",
      code,
    );
  }
}

/** Parameters of a SHELL-like task, noting OUT names the script never sets. */
function shellParams(t: DsTask, ctx: TaskContext, code: string, script: string): TaskBody {
  const { params, outs } = convertProperties(
    t.params.localParams as never,
    ctx.notes,
    "local parameter",
    code,
  );
  for (const name of outsNotSet(script, outs)) {
    ctx.notes.add(
      "approximated",
      `OUT parameter '${name}' is not set by a literal \${setValue(${name}=…)} in the script; Shoal, like DolphinScheduler, only passes what the script prints`,
      code,
    );
  }
  return Object.keys(params).length > 0 ? { params } : {};
}

/**
 * A here-document delimiter that no line of `script` is: `base`, with `_` appended until none
 * is. Quoted where it is used (`<<'DELIM'`), so the shell expands nothing in the body and Shoal
 * pastes parameter values into it as they are (lib/core/shell-quote.ts `heredoc-literal`),
 * as DolphinScheduler pastes them into its script.
 */
export function heredocDelimiter(script: string, base: string): string {
  const lines = new Set(script.split("\n"));
  let eof = base;
  while (lines.has(eof)) eof += "_";
  return eof;
}

/** The last line of a SHELL task's command that runs its script with bash (convert.ts notes it once per workflow). */
export const BASH_RUN = "bash script.sh";

/**
 * A SHELL task from `rawScript`, run with bash as DolphinScheduler runs it (3.2.2
 * `BashShellInterceptor`: `bash <file>`), not with Shoal's `/bin/sh -c` (dash on Debian and
 * Ubuntu, where `set -o pipefail`, arrays and `[[ ]]` fail): the script is written to
 * `script.sh` in the attempt's directory through a quoted here-document and run with
 * `bash script.sh`. A file rather than `bash <<EOF` keeps the task's stdin the script's stdin
 * (with bash reading the script from stdin, a `read` or `ssh` in it would eat the script).
 */
export function shellTask(t: DsTask, ctx: TaskContext, code: string): TaskBody {
  const script = typeof t.params.rawScript === "string" ? t.params.rawScript : "";
  const { lines, delaySeconds } = prelude(t, ctx, code);
  let body: string;
  if (script.trim() === "") {
    body = "true";
    ctx.notes.add("approximated", "empty script: the command is `true`", code);
  } else {
    const eof = heredocDelimiter(script, "SHOAL_BASH_EOF");
    body = [`cat > script.sh <<'${eof}'`, script, eof, BASH_RUN].join("\n");
  }
  return {
    type: "SHELL",
    command: [...lines, body].join("\n"),
    ...shellParams(t, ctx, code, script),
    ...commonFields(t, ctx, code, true),
    ...timeoutFields(t, ctx, code, delaySeconds),
  };
}

/**
 * A PYTHON task as a SHELL task: the script is written to a file through a here-document with
 * a quoted delimiter (Shoal inserts parameter values into it as they are, as DolphinScheduler
 * pastes them into the script) and run with `python3`.
 */
export function pythonTask(t: DsTask, ctx: TaskContext, code: string): TaskBody {
  const script = typeof t.params.rawScript === "string" ? t.params.rawScript : "";
  const { lines, delaySeconds } = prelude(t, ctx, code);
  const eof = heredocDelimiter(script, "SHOAL_PYTHON_EOF");
  const command = [...lines, `cat > script.py <<'${eof}'`, script, eof, "python3 script.py"].join(
    "\n",
  );
  ctx.notes.add(
    "approximated",
    "PYTHON task: a SHELL task that runs the script with python3 (the worker needs python3 on its PATH)",
    code,
  );
  notePythonScript(script, ctx.notes, code);
  return {
    type: "SHELL",
    command,
    ...shellParams(t, ctx, code, script),
    ...commonFields(t, ctx, code, true),
    ...timeoutFields(t, ctx, code, delaySeconds),
  };
}

interface HttpProperty {
  prop?: unknown;
  httpParametersType?: unknown;
  value?: unknown;
}

const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const HAS_REFERENCE = /\$\{|\$\[/;

/** A query-string part, encoded unless it holds a reference (Shoal substitutes it as is). */
function queryPart(s: string): string {
  return HAS_REFERENCE.test(s) ? s : encodeURIComponent(s);
}

/** An HTTP task from `HttpParameters`. */
export function httpTask(t: DsTask, ctx: TaskContext, code: string): TaskBody {
  const p = t.params;
  const notes = ctx.notes;
  let url = typeof p.url === "string" ? p.url.trim() : "";
  const method = typeof p.httpMethod === "string" ? p.httpMethod.toUpperCase() : "GET";
  const headers: Record<string, string> = {};
  const query: string[] = [];
  const bodyFields: Record<string, string> = {};
  for (const hp of (Array.isArray(p.httpParams) ? p.httpParams : []) as HttpProperty[]) {
    const name = String(hp?.prop ?? "");
    const value = String(hp?.value ?? "");
    if (name === "") continue;
    const kind = String(hp.httpParametersType ?? "PARAMETER").toUpperCase();
    if (kind === "HEADERS") headers[name] = value;
    else if (kind === "BODY") bodyFields[name] = value;
    else query.push(`${queryPart(name)}=${queryPart(value)}`);
  }
  if (query.length > 0) url += (url.includes("?") ? "&" : "?") + query.join("&");
  const out: TaskBody = {
    type: "HTTP",
    url,
    method: HTTP_METHODS.includes(method) ? method : "GET",
  };
  if (!HTTP_METHODS.includes(method))
    notes.add("approximated", `HTTP method '${method}' is sent as GET`, code);
  const httpBody = typeof p.httpBody === "string" ? p.httpBody : "";
  if (httpBody.trim() !== "") {
    out.body = httpBody;
    if (Object.keys(bodyFields).length > 0) {
      notes.add(
        "not-converted",
        `BODY parameters (${Object.keys(bodyFields).join(", ")}) next to httpBody: the httpBody is sent`,
        code,
      );
    }
  } else if (Object.keys(bodyFields).length > 0) {
    // DolphinScheduler's HttpTask sends BODY parameters as one JSON object.
    out.body = JSON.stringify(bodyFields);
  }
  // HttpTask (3.2.2 addRequestParams) sends either body as application/json.
  if (
    out.body !== undefined &&
    !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")
  ) {
    headers["Content-Type"] = "application/json";
  }
  if (Object.keys(headers).length > 0) out.headers = headers;
  const check =
    typeof p.httpCheckCondition === "string" ? p.httpCheckCondition : "STATUS_CODE_DEFAULT";
  const condition = String(p.condition ?? "").trim();
  if (check === "STATUS_CODE_CUSTOM" && /^[1-5]\d\d$/.test(condition)) {
    out.expectStatus = [Number(condition), Number(condition)];
  } else {
    out.expectStatus = [200, 200];
    if (check === "BODY_CONTAINS" || check === "BODY_NOT_CONTAINS") {
      notes.add(
        "approximated",
        `check ${check} '${condition}': Shoal's HTTP task checks the status only (200 here); check the body in a SHELL task with curl if it matters`,
        code,
      );
    } else if (check === "STATUS_CODE_CUSTOM") {
      notes.add(
        "approximated",
        `custom status '${condition}' is not one status code: 200 is expected`,
        code,
      );
    }
  }
  const { params, outs } = convertProperties(
    p.localParams as never,
    notes,
    "local parameter",
    code,
  );
  // HttpTask also sets `<task name>.response` (addDefaultOutput): kept when a task uses it.
  const response = `${t.name}.response`;
  if (ctx.references(response) && !outs.includes(response)) {
    if (PARAM_NAME.test(response)) outs.push(response);
    else {
      notes.add(
        "not-converted",
        `\${${response}} is used, but '${response}' is not a Shoal parameter name: add an output of another name and use it`,
        code,
      );
    }
  }
  if (Object.keys(params).length > 0) out.params = params;
  if (outs.length > 0) {
    // DolphinScheduler passes the whole response body as the OUT parameter.
    out.outputs = Object.fromEntries(outs.map((name) => [name, "$"]));
    notes.add(
      "approximated",
      `OUT parameter${outs.length > 1 ? "s" : ""} ${outs.join(", ")}: the whole response (JSONPath $); Shoal needs a JSON response and fails the task otherwise`,
      code,
    );
  }
  noteDelayIgnored(t, ctx, code);
  Object.assign(out, commonFields(t, ctx, code, true));
  const timeout = timeoutFields(t, ctx, code);
  if (timeout.timeoutSeconds === undefined) {
    const ms = Number(p.connectTimeout ?? 0) + Number(p.socketTimeout ?? 0);
    if (ms > 0 && Number.isFinite(ms)) {
      timeout.timeoutSeconds = Math.min(Math.ceil(ms / 1000), LIMITS.timeoutSeconds);
      notes.add(
        "approximated",
        `connectTimeout + socketTimeout (${ms} ms) bound the whole request: timeoutSeconds ${timeout.timeoutSeconds}`,
        code,
      );
    }
  }
  return { ...out, ...timeout };
}

/**
 * The failing SHELL task that stands for a task type Shoal does not have: it prints what to
 * replace and exits 1; the original task parameters follow as comments, for the rewrite.
 */
export function placeholderTask(t: DsTask, ctx: TaskContext, code: string): TaskBody {
  // The name goes inside a single-quoted word: its own quotes are dropped.
  const what = `this DolphinScheduler ${t.taskType} task (${t.name.replace(/'/g, "")})`;
  const params = JSON.stringify(t.params, null, 2)
    .split("\n")
    .map((l) => `# ${l}`);
  const message = `shoal import: ${what} has no Shoal equivalent: replace this command with one that does its work`;
  const command = [
    `echo '${message}' >&2`,
    "exit 1",
    `# The ${t.taskType} task's parameters, as exported:`,
    ...params,
  ].join("\n");
  return {
    type: "SHELL",
    command: Buffer.byteLength(command) <= LIMITS.commandBytes ? command : command.slice(0, 2000),
    ...commonFields(t, ctx, code, true),
  };
}
