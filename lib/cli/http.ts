/**
 * A small client for the Shoal HTTP API v1 (/work/shared/API-v1.md) over the global `fetch`.
 * JSON in, JSON out; API errors become {@link ApiError}, network failures a {@link CliError}
 * that tells the user how to point the CLI at a running Shoal.
 */
import { CliError } from "./errors.js";

/** One entry of an API error's `details`. */
export interface ApiErrorDetail {
  path: string;
  message: string;
}

/** An error answer of the API (status >= 400), message already formatted for the terminal. */
export class ApiError extends CliError {
  readonly status: number;
  readonly code: string;
  readonly details: ApiErrorDetail[];

  constructor(status: number, code: string, message: string, details: ApiErrorDetail[]) {
    const lines = details.map((d) => `\n  - ${d.path ? `${d.path}: ` : ""}${d.message}`);
    super(`${message}${lines.join("")}`);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** A successful answer: its status (201 vs 200 matters for `apply`) and parsed JSON body. */
export interface ApiResponse<T> {
  status: number;
  body: T;
}

/** Query values; `undefined` entries are left out so callers can pass optional flags as-is. */
export type Query = Record<string, string | number | undefined>;

/** Per-request ceiling so a hung server cannot hang the CLI forever. */
const REQUEST_TIMEOUT_MS = 30_000;

/** Client bound to one endpoint, e.g. `http://localhost:8080`. */
export class ApiClient {
  readonly endpoint: string;

  constructor(endpoint: string) {
    this.endpoint = endpoint.replace(/\/+$/, "");
  }

  /** GET a JSON resource; `signal` abandons the request (it then rejects with the signal's reason). */
  async get<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
    return (await this.request<T>("GET", path, { query, signal })).body;
  }

  /**
   * Every item of a paged list: follows `nextToken` in pages of 200 (the API's largest).
   * @throws CliError as `get` does.
   */
  async getAll<T>(path: string, query: Query = {}): Promise<T[]> {
    const items: T[] = [];
    let nextToken: string | undefined;
    do {
      const page = await this.get<{ items?: T[]; nextToken?: string }>(path, {
        ...query,
        limit: 200,
        nextToken,
      });
      items.push(...(page.items ?? []));
      nextToken = page.nextToken;
    } while (nextToken);
    return items;
  }

  /** POST a JSON body (or none). */
  async post<T>(path: string, body?: unknown): Promise<ApiResponse<T>> {
    return this.request<T>("POST", path, { body });
  }

  /** PUT a JSON body. */
  async put<T>(path: string, body: unknown): Promise<ApiResponse<T>> {
    return this.request<T>("PUT", path, { body });
  }

  /** DELETE a resource; the answer body is usually empty (204), so `body` is then undefined. */
  async delete<T = undefined>(path: string): Promise<ApiResponse<T>> {
    return this.request<T>("DELETE", path);
  }

  /** Send one request; throws {@link ApiError} on an error status, {@link CliError} when unreachable. */
  async request<T>(
    method: string,
    path: string,
    opts: { query?: Query; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<ApiResponse<T>> {
    const url = new URL(`${this.endpoint}${path}`);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { accept: "application/json" };
    let payload: string | undefined;
    if (opts.body !== undefined) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(opts.body);
    }
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        body: payload,
        signal: opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout,
      });
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? err;
      if (err instanceof Error && err.name === "TimeoutError") {
        throw new CliError(
          `Shoal at ${this.endpoint} did not answer ${method} ${path} within ${REQUEST_TIMEOUT_MS / 1000}s`,
        );
      }
      throw new CliError(
        `cannot reach Shoal at ${this.endpoint} (is \`shoal standalone\` running? set --endpoint or SHOAL_ENDPOINT)`,
      );
    }
    const text = await res.text();
    const parsed = parseJson(text);
    if (!res.ok) throw toApiError(res, parsed);
    if (text !== "" && parsed === undefined) {
      throw new CliError(`${method} ${path}: the answer is not JSON (status ${res.status})`);
    }
    return { status: res.status, body: parsed as T };
  }
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Builds the error from the contract's shape, falling back to the status line (e.g. a proxy's 502). */
function toApiError(res: Response, body: unknown): ApiError {
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const code = typeof error?.code === "string" ? error.code : `HTTP${res.status}`;
  const message =
    typeof error?.message === "string"
      ? error.message
      : `HTTP ${res.status} ${res.statusText}`.trim();
  const details: ApiErrorDetail[] = [];
  if (Array.isArray(error?.details)) {
    for (const d of error.details) {
      if (isRecord(d) && typeof d.message === "string") {
        details.push({ path: typeof d.path === "string" ? d.path : "", message: d.message });
      }
    }
  }
  return new ApiError(res.status, code, message, details);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Encodes one path segment (workflow names, instance ids, task codes). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}
