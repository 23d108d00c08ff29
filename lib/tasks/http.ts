/**
 * HTTP tasks: one request with `fetch`; success when the status lies in `expectStatus`
 * (inclusive). `timeoutSeconds` with strategy FAIL bounds the request (60 s when unset); with
 * WARN the request goes on and a warning is reported (DolphinScheduler's timeout strategies).
 * `outputs` take OUT parameters from the JSON response by JSON path.
 */
import { extractJsonPath } from "../core/json-path.js";
import { killError, type TaskPlugin } from "./plugin.js";

const DEFAULT_TIMEOUT_S = 60;
const LOGGED_BODY_CHARS = 4_096;

export const runHttp: TaskPlugin = async (ctx) => {
  if (ctx.task.type !== "HTTP") throw new Error("runHttp needs an HTTP task");
  const { task, log } = ctx;
  const timeoutS = task.timeoutSeconds ?? DEFAULT_TIMEOUT_S;
  const warnOnly = task.timeoutStrategy === "WARN" && task.timeoutSeconds !== undefined;
  const signal = warnOnly
    ? ctx.signal
    : AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutS * 1000)]);
  const warnTimer = warnOnly
    ? setTimeout(() => {
        const message = `request still running after its timeout of ${timeoutS}s`;
        log.write(`shoal: WARNING ${message}`);
        ctx.warn?.(message);
      }, timeoutS * 1000)
    : undefined;
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
    if (res.status < lo || res.status > hi) {
      return { state: "FAILURE", error: `HTTP status ${res.status} is outside ${lo}..${hi}` };
    }
    const names = Object.keys(task.outputs ?? {});
    if (names.length === 0) return { state: "SUCCESS" };
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      return { state: "FAILURE", error: "outputs need a JSON response, and the body is not JSON" };
    }
    const outputs: Record<string, string> = {};
    for (const name of names) {
      const path = task.outputs[name] as string;
      const value = extractJsonPath(doc, path);
      if (value === undefined) {
        return {
          state: "FAILURE",
          error: `output '${name}': ${path} matched nothing in the response`,
        };
      }
      outputs[name] = value;
    }
    return { state: "SUCCESS", outputs };
  } catch (e) {
    if (ctx.signal.aborted) return { state: "KILLED", error: killError(ctx.signal) };
    const err = e as Error;
    const msg =
      err.name === "TimeoutError"
        ? `no answer within ${timeoutS}s`
        : `request failed: ${err.message}${err.cause ? ` (${(err.cause as Error).message ?? err.cause})` : ""}`;
    log.write(`shoal: ${msg}`);
    return { state: "FAILURE", error: msg };
  } finally {
    clearTimeout(warnTimer);
  }
};
