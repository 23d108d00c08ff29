/**
 * Parameter substitution into a worker task's fields, just before it runs: `${name}` and
 * `$[...]` in a SHELL command are shell-quoted for their quoting context (a value can never
 * inject a command); in an HTTP task's URL, headers and body they are replaced as they are
 * (DolphinScheduler replaces them there too), and the URL must still be an http(s) URL.
 */
import type { WorkerTaskDefinition } from "../core/model.js";
import { ParamError, substitute } from "../core/params.js";

/**
 * @param baseMs base time of `$[...]` expressions, epoch ms.
 * @throws ParamError for a bad time expression or a URL that substitution broke.
 */
export function substituteTask(
  task: WorkerTaskDefinition,
  params: Record<string, string>,
  baseMs: number,
): WorkerTaskDefinition {
  if (task.type === "SHELL") {
    return { ...task, command: substitute(task.command, params, { mode: "shell", baseMs }) };
  }
  const raw = (text: string) => substitute(text, params, { mode: "raw", baseMs });
  const url = raw(task.url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ParamError(`the URL after parameter substitution is not valid: ${url.slice(0, 200)}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ParamError(
      `the URL after parameter substitution is not http(s): ${url.slice(0, 200)}`,
    );
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(task.headers)) {
    const value = raw(v);
    if (/[\r\n\0]/.test(value)) {
      throw new ParamError(`header '${k}' contains CR, LF or NUL after parameter substitution`);
    }
    headers[k] = value;
  }
  return {
    ...task,
    url,
    headers,
    ...(task.body !== undefined ? { body: raw(task.body) } : {}),
  };
}
