/**
 * What a PYTHON task's script needs from the worker it will run on, read from its text (no
 * Python runs at import time; python-tokens.ts reads it): the modules it imports that are not
 * in Python's standard library (python-stdlib.ts), to install, and the hosts and ports written
 * into it, to re-point. Best effort by design: an import whose name is computed at run time, or
 * a host assembled from pieces, is not seen (docs/import-dolphinscheduler.md says so). Pure.
 */
import type { NoteBook } from "./notes.js";
import { PYTHON_STDLIB_MODULES } from "./python-stdlib.js";
import { type PyToken, pythonStatements } from "./python-tokens.js";

/** A module the script imports (its top-level package) and the line of its first import. */
export interface PythonImport {
  module: string;
  line: number;
}

/** A host (and port) the script names, and the line, from 1, where it first does. */
export interface PythonEndpoint {
  /** The host or IP; undefined when only a port is written (`port=10000`, the host elsewhere). */
  host?: string;
  port?: number;
  line: number;
}

/** What {@link scanPythonScript} found. */
export interface PythonScan {
  /** Modules outside Python 3.12's standard library, in the order first imported. */
  imports: PythonImport[];
  endpoints: PythonEndpoint[];
}

/**
 * URL-like text: `scheme://[user@]host[:port][,host2[:port]]…`, the scheme possibly nested
 * (`jdbc:mysql://`, `jdbc:hive2://`), and Oracle's `jdbc:oracle:thin:@host:port`.
 */
const URL_AUTHORITY =
  /\b([a-zA-Z][a-zA-Z0-9+.-]*)(?::[a-zA-Z][a-zA-Z0-9+.-]*)*:\/\/([^/\s?#'"]*)|\bjdbc:oracle:[a-z]+:@(?:\/\/)?([^/\s?#'":]+(?::\d+)?)/g;
/** Schemes of object stores and files: a bucket or path, not a host a worker connects to. */
const NOT_HOSTS = new Set([
  "s3",
  "s3a",
  "s3n",
  "gs",
  "gcs",
  "file",
  "abfs",
  "abfss",
  "wasb",
  "wasbs",
  "oss",
]);
const IPV4 = /^(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
/** A host name: labels of letters, digits and `-`, at least one letter somewhere. */
const HOST_NAME = /^(?=.*[A-Za-z])[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9-]{1,63})*$/;
/** Variables and keyword arguments that hold a host, and those that hold a port. */
const HOST_WORD = /^(?:.*[_.])?(?:host|hostname|hosts|server|servers|address|addr|ip)$/i;
const PORT_WORD = /^(?:.*[_.])?port$/i;

/** `host[:port]` as a host and port, or undefined when the text is not one. */
function hostPort(text: string, line: number): PythonEndpoint | undefined {
  const m = /^\[?([^\]]*?)\]?(?::(\d{1,5}))?$/.exec(text.trim());
  const host = m?.[1] ?? "";
  if (!(IPV4.test(host) || HOST_NAME.test(host) || /^[0-9a-f:]+:[0-9a-f:]*$/i.test(host)))
    return undefined;
  const port = m?.[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  return { host, ...(port !== undefined ? { port } : {}), line };
}

/** The hosts in a string literal: URLs anywhere in it, or the whole text as `host:port` list. */
function stringHosts(text: string, line: number): PythonEndpoint[] {
  // A parameter (`${db_host}`) is set per run, not hard-coded.
  if (/\$\{|\$\[/.test(text) && !/:\/\//.test(text)) return [];
  const out: PythonEndpoint[] = [];
  for (const m of text.matchAll(URL_AUTHORITY)) {
    const scheme = (m[1] ?? "").toLowerCase();
    if (NOT_HOSTS.has(scheme)) continue;
    const authority = (m[2] ?? m[3] ?? "").replace(/^.*@/, "");
    for (const part of authority.split(",")) {
      if (/\$\{|\$\[|%|\{/.test(part)) continue;
      const e = hostPort(part, line);
      if (e) out.push(e);
    }
  }
  if (out.length > 0 || /:\/\//.test(text)) return out;
  // A bare literal counts when it can only be a host: an IP, localhost, or `name:port`.
  for (const part of text.split(",")) {
    const e = hostPort(part, line);
    if (e && (e.port !== undefined || IPV4.test(e.host ?? "") || e.host === "localhost"))
      out.push(e);
  }
  return out;
}

/** The value token of `name = value` / `name=value` / `"name": value` at `i` (the name's index). */
function assigned(tokens: readonly PyToken[], i: number): PyToken | undefined {
  const op = tokens[i + 1];
  if (op?.kind !== "op" || (op.text !== "=" && op.text !== ":")) return undefined;
  return tokens[i + 2];
}

/** Hosts and ports of one statement: string literals, and host/port assignments and arguments. */
function statementEndpoints(tokens: readonly PyToken[]): PythonEndpoint[] {
  const out: PythonEndpoint[] = [];
  const ports: Array<{ port: number; line: number }> = [];
  /** Indexes of string tokens already read as a host's value. */
  const read = new Set<number>();
  tokens.forEach((t, i) => {
    if (read.has(i)) return;
    const word = t.kind === "name" || t.kind === "string" ? t.text : undefined;
    const value = word === undefined ? undefined : assigned(tokens, i);
    if (word !== undefined && value && PORT_WORD.test(word)) {
      const port = Number(value.text);
      if (
        (value.kind === "number" || value.kind === "string") &&
        Number.isInteger(port) &&
        port > 0 &&
        port < 65536
      )
        ports.push({ port, line: value.line });
      return;
    }
    if (word !== undefined && value?.kind === "string" && HOST_WORD.test(word)) {
      if (/\$\{|\$\[|:\/\//.test(value.text)) return; // a parameter, or a URL (read below)
      for (const part of value.text.split(",")) {
        const e = hostPort(part, value.line);
        if (e) out.push(e);
      }
      read.add(i + 2);
      return;
    }
    if (t.kind === "string") out.push(...stringHosts(t.text, t.line));
  });
  // `host="h", port=10000` in one call or dict: one endpoint.
  for (const p of ports) {
    const bare = out.find((e) => e.port === undefined);
    if (bare) bare.port = p.port;
    else out.push({ port: p.port, line: p.line });
  }
  return out;
}

/** The top-level modules one statement imports (none for a relative `from . import x`). */
function statementImports(tokens: readonly PyToken[]): PythonImport[] {
  const out: PythonImport[] = [];
  tokens.forEach((t, i) => {
    if (t.kind !== "name") return;
    // `__import__("x")`, `importlib.import_module("x.y")`: a literal name only.
    const arg = tokens[i + 2];
    if (
      (t.text === "__import__" || t.text === "import_module") &&
      tokens[i + 1]?.text === "(" &&
      arg?.kind === "string" &&
      /^[A-Za-z_]\w*(?:\.\w+)*$/.test(arg.text)
    ) {
      out.push({ module: arg.text.split(".")[0] as string, line: arg.line });
      return;
    }
    if (t.text === "from") {
      const next = tokens[i + 1];
      if (next?.kind !== "name") return; // `from . import x`, `yield from (…)`
      // `from x.y import z`: only when `import` follows the dotted name.
      let j = i + 2;
      while (tokens[j]?.text === "." && tokens[j + 1]?.kind === "name") j += 2;
      if (tokens[j]?.kind === "name" && tokens[j]?.text === "import")
        out.push({ module: next.text, line: next.line });
      return;
    }
    // The `import` of `from … import …` (read above, or relative: `from . import x`) names no module.
    if (
      t.text !== "import" ||
      tokens.slice(0, i).some((x) => x.kind === "name" && x.text === "from")
    )
      return;
    // `import a.b as c, d`: the first name of each comma-separated item.
    let j = i + 1;
    let first = true;
    while (j < tokens.length) {
      const tok = tokens[j] as PyToken;
      if (first && tok.kind === "name") out.push({ module: tok.text, line: tok.line });
      first = tok.kind === "op" && tok.text === ",";
      if (tok.kind === "op" && tok.text !== "," && tok.text !== ".") break;
      j++;
    }
  });
  return out;
}

/**
 * The modules outside Python's standard library a script imports, and the hosts and ports it
 * names, each once (its first line). Comments and the text of strings are not read as code.
 */
export function scanPythonScript(script: string): PythonScan {
  const imports = new Map<string, PythonImport>();
  const endpoints = new Map<string, PythonEndpoint>();
  for (const tokens of pythonStatements(script)) {
    for (const imp of statementImports(tokens)) {
      if (!PYTHON_STDLIB_MODULES.has(imp.module) && !imports.has(imp.module))
        imports.set(imp.module, imp);
    }
    for (const e of statementEndpoints(tokens)) {
      const key = `${e.host ?? ""}:${e.port ?? ""}`;
      if (!endpoints.has(key)) endpoints.set(key, e);
    }
  }
  return { imports: [...imports.values()], endpoints: [...endpoints.values()] };
}

/** pip's names of modules whose package is named otherwise (PyPI), for the install command. */
const PIP_NAMES: Record<string, string> = {
  yaml: "PyYAML",
  sklearn: "scikit-learn",
  cv2: "opencv-python",
  PIL: "Pillow",
  MySQLdb: "mysqlclient",
  impala: "impyla",
  dateutil: "python-dateutil",
  bs4: "beautifulsoup4",
  dotenv: "python-dotenv",
  jwt: "PyJWT",
  Crypto: "pycryptodome",
  kafka: "kafka-python",
  odps: "pyodps",
  docx: "python-docx",
  pptx: "python-pptx",
  attr: "attrs",
  snowflake: "snowflake-connector-python",
};

/** `host:port`, `host` or `port N of a host set elsewhere`. */
function endpointText(e: PythonEndpoint): string {
  if (e.host === undefined) return `port ${e.port} of a host set elsewhere`;
  return e.port === undefined ? e.host : `${e.host}:${e.port}`;
}

/**
 * Adds the notes of a PYTHON task's script to `notes` (`action`: to do before the first run):
 * one line listing the modules to install, one line per host (localhost too: on a worker it
 * is the worker itself).
 */
export function notePythonScript(script: string, notes: NoteBook, code: string): void {
  const { imports, endpoints } = scanPythonScript(script);
  if (imports.length > 0) {
    const modules = imports.map((m) => m.module);
    const pip = modules.map((m) => PIP_NAMES[m] ?? m).join(" ");
    notes.add(
      "action",
      `the script imports modules outside Python's standard library: ${modules.join(", ")}: install them where the worker's python3 finds them (\`pip install ${pip}\`; a module of your own goes beside the script), or the first run fails with ModuleNotFoundError`,
      code,
    );
  }
  for (const e of endpoints) {
    const local = e.host === "localhost" || e.host?.startsWith("127.") || e.host === "::1";
    notes.add(
      "action",
      `connects to ${endpointText(e)} (line ${e.line} of the script): ${local ? "on a Shoal worker that is the worker itself; re-point it at the real host" : "check that the worker reaches it, or re-point it"}`,
      code,
    );
  }
}
