/**
 * HTTP tasks: one request with `fetch`; success when the status lies in `expectStatus`
 * (inclusive). `timeoutSeconds` bounds the request (60 s when unset).
 */
import type { TaskPlugin } from "./plugin.js";

const DEFAULT_TIMEOUT_S = 60;
const LOGGED_BODY_CHARS = 4_096;

export const runHttp: TaskPlugin = async (ctx) => {
  if (ctx.task.type !== "HTTP") throw new Error("runHttp needs an HTTP task");
  const { task, log } = ctx;
  const timeoutS = task.timeoutSeconds ?? DEFAULT_TIMEOUT_S;
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutS * 1000)]);
  log.write(`shoal: ${task.method} ${task.url}`);
  const started = Date.now();
  try {
    const res = await fetch(task.url, {
      method: task.method,
      headers: task.headers,
      ...(task.body !== undefined && task.method !== "GET" && task.method !== "HEAD"
        ? { body: task.body }
        : {}),
      signal,
    });
    const text = await res.text();
    log.write(`shoal: HTTP ${res.status} in ${Date.now() - started} ms`);
    for (const line of text.slice(0, LOGGED_BODY_CHARS).split("\n")) log.write(line);
    if (text.length > LOGGED_BODY_CHARS)
      log.write(`shoal: … ${text.length - LOGGED_BODY_CHARS} more characters`);
    const [lo, hi] = task.expectStatus;
    if (res.status >= lo && res.status <= hi) return { state: "SUCCESS" };
    return { state: "FAILURE", error: `HTTP status ${res.status} is outside ${lo}..${hi}` };
  } catch (e) {
    if (ctx.signal.aborted) return { state: "KILLED", error: "killed on request" };
    const err = e as Error;
    const msg =
      err.name === "TimeoutError"
        ? `no answer within ${timeoutS}s`
        : `request failed: ${err.message}${err.cause ? ` (${(err.cause as Error).message ?? err.cause})` : ""}`;
    log.write(`shoal: ${msg}`);
    return { state: "FAILURE", error: msg };
  }
};
