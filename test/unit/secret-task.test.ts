// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${…} is Shoal's reference syntax, not a JS template
/**
 * Secrets into tasks (lib/secrets/task-secrets.ts): a SHELL command gets an expansion of a
 * per-process variable quoted for where the reference stands (checked by running /bin/sh), never
 * the value; a parameter value cannot add a reference; HTTP fields get the value in memory.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type {
  HttpTaskDefinition,
  ShellTaskDefinition,
  WorkerTaskDefinition,
} from "../../lib/core/model.js";
import { ParamError } from "../../lib/core/time-params.js";
import { SecretReadError } from "../../lib/secrets/secret-source.js";
import { applySecrets, protectSecretReferences } from "../../lib/secrets/task-secrets.js";
import { substituteTask } from "../../lib/tasks/substitute.js";

const BASE: Omit<ShellTaskDefinition, "code" | "type" | "command"> = {
  upstream: [],
  priority: "MEDIUM",
  retries: 0,
  retryIntervalSeconds: 0,
  retryBackoff: "FIXED",
  timeoutStrategy: "FAIL",
  workerGroup: "default",
  params: {},
  taskGroupPriority: 0,
};

const NASTY = `a'b"c $(echo no) \`echo no\` \\ * $HOME`;

function shellTask(command: string, secrets?: Record<string, string>): ShellTaskDefinition {
  return { ...BASE, code: "t", type: "SHELL", command, ...(secrets ? { secrets } : {}) };
}

/** Protect, substitute `params`, apply `values`: what the worker does. */
function prepare(
  task: WorkerTaskDefinition,
  values: Record<string, string>,
  params: Record<string, string> = {},
) {
  const p = protectSecretReferences(task);
  if (!p) throw new Error("no secrets");
  const substituted = substituteTask(p.task, params, 0);
  const missing = p.names.filter((n) => !(n in values));
  if (missing.length) throw new Error(`test gives no value for ${missing.join(", ")}`);
  return { names: p.names, ...applySecrets(substituted, p, new Map(Object.entries(values))) };
}

/** Runs a prepared SHELL task's command; its stdout. */
function run(task: WorkerTaskDefinition, env: Record<string, string>, shell = "/bin/sh"): string {
  if (task.type !== "SHELL") throw new Error("not SHELL");
  const r = spawnSync(shell, ["-c", task.command], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`sh failed: ${r.stderr}`);
  return r.stdout;
}

describe("SHELL: references become quoted expansions of per-process variables", () => {
  it.each([
    ["unquoted", "printf '%s|' ${secret:pw}", `${NASTY}|`],
    ["inside double quotes", 'printf "%s|" "pw=${secret:pw}!"', `pw=${NASTY}!|`],
    ["inside single quotes", "printf '%s|' 'pw=${secret:pw}!'", `pw=${NASTY}!|`],
    ["inside $'…'", "printf '%s|' $'pw=${secret:pw}\\t'", `pw=${NASTY}\t|`],
    ["in a default of ${X:-…}", 'printf "%s|" "${UNSET:-${secret:pw}}"', `${NASTY}|`],
    ["in an unquoted here-document", "cat <<EOF\nv=${secret:pw}\nEOF", `v=${NASTY}\n`],
    [
      "twice, and after a backslash",
      "printf '%s|' ${secret:pw} \\${secret:pw}",
      `${NASTY}|\\${NASTY}|`,
    ],
  ])("%s", (_where, command, expected) => {
    const { task, env } = prepare(shellTask(command), { pw: NASTY });
    // $'…' is bash's (dash, a common /bin/sh, has no such quoting).
    expect(run(task, env, command.includes("$'") ? "bash" : "/bin/sh")).toBe(expected);
    if (task.type !== "SHELL") throw new Error();
    expect(task.command).not.toContain(NASTY);
    expect(task.command).not.toContain("secret:");
    expect(Object.keys(env)).toEqual(["SHOAL_SECRET_1"]);
  });

  it("several secrets get one variable each", () => {
    const { task, env } = prepare(shellTask("echo ${secret:a}-${secret:b}-${secret:a}"), {
      a: "x y",
      b: "z",
    });
    expect(run(task, env)).toBe("x y-z-x y\n");
    expect(env).toEqual({ SHOAL_SECRET_1: "x y", SHOAL_SECRET_2: "z" });
  });

  it("a comment keeps the reference as written", () => {
    const { task, env } = prepare(shellTask("echo ok # uses ${secret:pw}"), { pw: "v" });
    expect(run(task, env)).toBe("ok\n");
    if (task.type === "SHELL") expect(task.command).toBe("echo ok # uses ${secret:pw}");
  });

  it.each([
    ["a quoted here-document", "cat <<'EOF'\n${secret:pw}\nEOF", /quoted \(<<'EOF'\)/],
    ["backquotes", "echo `echo ${secret:pw}`", /backquoted/],
    ["arithmetic", "echo $((${secret:pw} + 1))", /arithmetic/],
  ])("refuses %s", (_where, command, message) => {
    expect(() => prepare(shellTask(command), { pw: "1" })).toThrow(ParamError);
    expect(() => prepare(shellTask(command), { pw: "1" })).toThrow(message);
  });

  it("the secrets field sets its variables", () => {
    const { task, env } = prepare(shellTask('printf %s "$DB_PW"', { DB_PW: "prod/db#pw" }), {
      "prod/db#pw": NASTY,
    });
    expect(run(task, env)).toBe(NASTY);
    expect(env).toEqual({ DB_PW: NASTY });
  });

  it("a parameter value holding ${secret:…} stays text: only the definition's references resolve", () => {
    const p = protectSecretReferences(shellTask("printf '%s|' ${p} ${secret:mine}"));
    expect(p?.names).toEqual(["mine"]);
    const { task, env } = prepare(
      shellTask("printf '%s|' ${p} ${secret:mine}"),
      { mine: "m" },
      { p: "${secret:other}" },
    );
    expect(run(task, env)).toBe("${secret:other}|m|");
  });

  it("a parameter value that forges a marker of an earlier attempt is text too", () => {
    const first = protectSecretReferences(shellTask("echo ${secret:a}"));
    const forged = first?.task.type === "SHELL" ? first.task.command.slice(5) : "";
    const { task, env } = prepare(
      shellTask("printf '%s|' ${p} ${secret:a}"),
      { a: "A" },
      { p: forged },
    );
    expect(run(task, env)).toBe(`${forged}|A|`);
  });

  it("tasks without secrets are left alone", () => {
    expect(protectSecretReferences(shellTask("echo ${HOME}"))).toBeUndefined();
  });
});

describe("HTTP: values in memory, URL-encoded in the URL", () => {
  const http: HttpTaskDefinition = {
    ...BASE,
    code: "h",
    type: "HTTP",
    url: "https://api.example.com/x?key=${secret:k}&q=${q}",
    method: "POST",
    headers: { authorization: "Bearer ${secret:tok}" },
    body: '{"pw":"${secret:k}"}',
    expectStatus: [200, 299],
    outputs: {},
  };

  it("fills url, headers and body", () => {
    const { task, env, masker } = prepare(http, { k: "a&b c", tok: "T0K" }, { q: "v" });
    expect(task).toMatchObject({
      url: "https://api.example.com/x?key=a%26b%20c&q=v",
      headers: { authorization: "Bearer T0K" },
      body: '{"pw":"a&b c"}',
    });
    expect(env).toEqual({});
    expect(masker.mask(task.type === "HTTP" ? task.url : "")).toBe(
      "https://api.example.com/x?key=***&q=v",
    );
  });

  it("refuses a header value that a secret would split", () => {
    expect(() => prepare(http, { k: "x", tok: "a\r\nX-Evil: 1" })).toThrow(SecretReadError);
  });
});
