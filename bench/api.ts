/** The bits of the HTTP API (docs/api.md) the benchmarks use. */

import { setTimeout as delay } from "node:timers/promises";

export interface TaskView {
  code: string;
  state: string;
  attempt: number;
  submittedAt?: string;
  startedAt?: string;
  endedAt?: string;
  worker?: string;
}

export interface InstanceView {
  instanceId: string;
  state: string;
  createdAt: string;
  startedAt?: string;
  endedAt?: string;
  tasks: TaskView[];
}

export const FINAL_STATES = new Set(["SUCCESS", "FAILURE", "STOPPED"]);

async function call<T>(apiUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export function putWorkflow(apiUrl: string, name: string, definition: unknown): Promise<unknown> {
  return call(apiUrl, "PUT", `/v1/workflows/${encodeURIComponent(name)}`, definition);
}

export async function startRun(apiUrl: string, name: string): Promise<string> {
  const r = await call<{ instanceId: string }>(
    apiUrl,
    "POST",
    `/v1/workflows/${encodeURIComponent(name)}/runs`,
    {},
  );
  return r.instanceId;
}

export function getInstance(apiUrl: string, id: string): Promise<InstanceView> {
  return call<InstanceView>(apiUrl, "GET", `/v1/instances/${id}`);
}

/**
 * Waits for the workflow's (only) instance to reach a final state by listing instances with
 * `limit=1`: one DynamoDB Query per poll, whatever the instance's size, so polling neither
 * loads the engine nor blurs the request counts much (the caller subtracts `polls`).
 */
export async function waitForFinal(
  apiUrl: string,
  workflow: string,
  opts: { deadlineMs: number; intervalMs?: number },
): Promise<{ state: string; polls: number }> {
  const deadline = Date.now() + opts.deadlineMs;
  let polls = 0;
  for (;;) {
    polls++;
    const page = await call<{ items: Array<{ state: string }> }>(
      apiUrl,
      "GET",
      `/v1/instances?workflow=${encodeURIComponent(workflow)}&limit=1`,
    );
    const state = page.items[0]?.state;
    if (state && FINAL_STATES.has(state)) return { state, polls };
    if (Date.now() > deadline) {
      throw new Error(
        `instance of ${workflow} not finished after ${opts.deadlineMs} ms (state ${state ?? "none"})`,
      );
    }
    await delay(opts.intervalMs ?? 100);
  }
}

export const ms = (iso: string | undefined): number => (iso ? Date.parse(iso) : Number.NaN);
