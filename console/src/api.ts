/**
 * The console's client of Shoal's HTTP API (docs/api.md), same origin: standalone serves the
 * console at `/` and the API under `/v1/`; `shoal console` proxies `/v1/` to a deployed API.
 * Response shapes are the types generated from the OpenAPI document (lib/cli/api-types.generated.ts),
 * never copied by hand.
 */
import type { ErrorBody } from "../../lib/cli/api-types.generated";

export type {
  Health,
  Instance,
  InstanceSummary,
  LogPage,
  TaskInstance,
  WorkflowDetail,
  WorkflowSummary,
} from "../../lib/cli/api-types.generated";

/** A page of a paged list (`nextToken` absent on the last page). */
export interface Page<T> {
  items: T[];
  nextToken?: string;
}

/** An answer other than 2xx, with the API's own message (shown to the user as is). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Sends a request to the API and parses its JSON answer.
 * @param path starting with `/v1/`.
 * @throws {ApiError} for any answer other than 2xx (its `message` is the API's), or when the API
 *   cannot be reached (status 0).
 */
export async function api<T>(path: string, init?: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      ...init,
      headers: {
        accept: "application/json",
        ...(init?.body ? { "content-type": "application/json" } : {}),
      },
    });
  } catch (e) {
    throw new ApiError(0, "Unreachable", `the API could not be reached (${(e as Error).message})`);
  }
  const text = await res.text();
  const body = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) {
    const err = (body as ErrorBody | undefined)?.error;
    throw new ApiError(res.status, err?.code ?? "Error", err?.message ?? `HTTP ${res.status}`);
  }
  return body as T;
}

/** `/v1/…?a=1&b=2` from a path and the query parameters that are set. */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
