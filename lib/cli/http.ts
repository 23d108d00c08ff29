/**
 * A small client for the Shoal HTTP API v1 (docs/api.md) over the global `fetch`.
 * JSON in, JSON out; API errors become {@link ApiError}, network failures a {@link CliError}
 * that tells the user how to point the CLI at a running Shoal. Against a deployed Shoal each
 * request is authenticated before it is sent (SigV4 or a bearer token, signing.ts).
 */
import { CliError } from "./errors.js";
import { type Authorization, detectAwsHost, encodeQuery } from "./signing.js";

/** One entry of an API error's `details`. */
export interface ApiErrorDetail {
  path: string;
  message: string;
}

/**
 * Body field → the flag that filled it, for one verb (e.g. `{priority: "--priority", params:
 * "--param", startTasks: "--start-task"}`), so an API validation error names what the user typed.
 * A key also covers the paths below it: `params.day` is reported as `--param day`,
 * `startTasks[1]` as `--start-task`.
 */
export type FlagMap = Readonly<Record<string, string>>;

/** The flag a detail `path` of a request body stands for under `flags`, or undefined. */
export function flagOf(path: string, flags: FlagMap): string | undefined {
  const exact = flags[path];
  if (exact !== undefined) return exact;
  let best: string | undefined;
  for (const key of Object.keys(flags)) {
    const below = path.startsWith(`${key}.`) || path.startsWith(`${key}[`);
    if (below && (best === undefined || key.length > best.length)) best = key;
  }
  if (best === undefined) return undefined;
  const flag = flags[best] as string;
  const rest = path.slice(best.length);
  // `params.day` → `--param day`; an index (`startTasks[1]`) adds nothing the user typed.
  return rest.startsWith(".") ? `${flag} ${rest.slice(1)}` : flag;
}

/**
 * An error answer of the API (status >= 400), message already formatted for the terminal. The
 * CLI's view of HTTP, so it keeps the `status` the server answered; `retryable` for 429 and 5xx
 * (asking again later may succeed), not for the contract's 4xx.
 */
export class ApiError extends CliError {
  readonly status: number;
  readonly code: string;
  readonly details: ApiErrorDetail[];
  /** The answer's `Retry-After` header (seconds), when it had one (a 429 or 503). */
  retryAfter: string | undefined;

  constructor(status: number, code: string, message: string, details: ApiErrorDetail[]) {
    const lines = details
      .map((d) => `${d.path ? `${d.path}: ` : ""}${d.message}`)
      // The API's message is often its first detail (`priority: must be …`): say it once.
      .filter((line) => line !== message)
      .map((line) => `\n  - ${line}`);
    super(`${message}${lines.join("")}`, { retryable: status === 429 || status >= 500 });
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

/** Options of {@link ApiClient}. */
export interface ApiClientOptions {
  /**
   * Authenticates each request (SigV4 or a bearer token, see signing.ts); none: requests go
   * out unauthenticated, as `shoal standalone` expects.
   */
  authorization?: Authorization;
}

/** Client bound to one endpoint, e.g. `http://localhost:8080`. */
export class ApiClient {
  readonly endpoint: string;
  readonly authorization: Authorization | undefined;

  constructor(endpoint: string, options: ApiClientOptions = {}) {
    this.endpoint = endpoint.replace(/\/+$/, "");
    this.authorization = options.authorization;
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

  /**
   * POST a JSON body (or none). With `flags`, a validation error names the flags that filled
   * the body's fields instead of the fields ({@link FlagMap}).
   */
  async post<T>(path: string, body?: unknown, flags?: FlagMap): Promise<ApiResponse<T>> {
    return this.request<T>("POST", path, { body, ...(flags ? { flags } : {}) });
  }

  /** PUT a JSON body; `flags` as for {@link post}. */
  async put<T>(path: string, body: unknown, flags?: FlagMap): Promise<ApiResponse<T>> {
    return this.request<T>("PUT", path, { body, ...(flags ? { flags } : {}) });
  }

  /** DELETE a resource; the answer body is usually empty (204), so `body` is then undefined. */
  async delete<T = undefined>(path: string): Promise<ApiResponse<T>> {
    return this.request<T>("DELETE", path);
  }

  /**
   * Send one request; throws {@link ApiError} on an error status (an AWS refusal of the
   * signature or token gets a hint naming the permission), {@link CliError} when unreachable
   * or when there are no credentials to sign with.
   */
  async request<T>(
    method: string,
    path: string,
    opts: { query?: Query; body?: unknown; signal?: AbortSignal; flags?: FlagMap } = {},
  ): Promise<ApiResponse<T>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.send<T>(method, path, opts);
      } catch (e) {
        const wait =
          e instanceof ApiError ? retryAfterMs(e, method, opts.body, attempt) : undefined;
        if (wait === undefined || opts.signal?.aborted) throw e;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /** One request, as {@link request} describes it, without retries. */
  private async send<T>(
    method: string,
    path: string,
    opts: { query?: Query; body?: unknown; signal?: AbortSignal; flags?: FlagMap },
  ): Promise<ApiResponse<T>> {
    // The query is encoded as SigV4 canonicalises it, so what is signed is what is sent.
    const url = new URL(`${this.endpoint}${path}${encodeQuery(opts.query ?? {})}`);
    const signed: Record<string, string> = {};
    let payload: string | undefined;
    if (opts.body !== undefined) {
      signed["content-type"] = "application/json";
      payload = JSON.stringify(opts.body);
    }
    const auth = this.authorization
      ? await this.authorization.authorize({ method, url, headers: signed, body: payload })
      : {};
    const headers: Record<string, string> = { accept: "application/json", ...signed, ...auth };
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
          { cause: err, retryable: true },
        );
      }
      throw new CliError(
        detectAwsHost(this.endpoint)
          ? `cannot reach Shoal at ${this.endpoint} (check the network and the endpoint: \`shoal config show\` says where it comes from)`
          : `cannot reach Shoal at ${this.endpoint} (is \`shoal standalone\` running? set --endpoint or SHOAL_ENDPOINT)`,
        { cause: err, retryable: true },
      );
    }
    const text = await res.text();
    const parsed = parseJson(text);
    if (!res.ok) throw awsRefusal(res, parsed, this) ?? toApiError(res, parsed, opts.flags);
    if (text !== "" && parsed === undefined) {
      throw new CliError(`${method} ${path}: the answer is not JSON (status ${res.status})`);
    }
    return { status: res.status, body: parsed as T };
  }
}

/** Attempts of one request answered 429 or 503 before the error is reported. */
const MAX_ATTEMPTS = 4;
/** The longest wait between them, ms (a larger `Retry-After` is cut to it). */
const MAX_RETRY_WAIT_MS = 10_000;

/**
 * How long to wait before sending again a request answered `e`, or undefined when it must not
 * be sent again: only 429 and 503 (with their `Retry-After`, seconds; 1 s when absent), up to
 * {@link MAX_ATTEMPTS}, and only when sending it again cannot do a thing twice — a GET, PUT or
 * DELETE, a request refused before any work (`Overloaded`), or a POST carrying an
 * `idempotencyKey` (docs/api.md "Idempotency and retries").
 */
function retryAfterMs(
  e: ApiError,
  method: string,
  body: unknown,
  attempt: number,
): number | undefined {
  if ((e.status !== 429 && e.status !== 503) || attempt >= MAX_ATTEMPTS) return undefined;
  const keyed = typeof body === "object" && body !== null && "idempotencyKey" in body;
  const safe = method !== "POST" || e.code === "Overloaded" || keyed;
  if (!safe) return undefined;
  const seconds = Number(e.retryAfter ?? 1);
  return Math.min(
    MAX_RETRY_WAIT_MS,
    Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000,
  );
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Builds the error from the contract's shape, falling back to the status line (e.g. a proxy's
 * 502). Detail paths found in `flags` are reported as their flags, in the details and where the
 * message starts with one (`priority: must be …` → `--priority: must be …`).
 */
function toApiError(res: Response, body: unknown, flags: FlagMap = {}): ApiError {
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const code = typeof error?.code === "string" ? error.code : `HTTP${res.status}`;
  let message =
    typeof error?.message === "string"
      ? error.message
      : `HTTP ${res.status} ${res.statusText}`.trim();
  const details: ApiErrorDetail[] = [];
  if (Array.isArray(error?.details)) {
    for (const d of error.details) {
      if (isRecord(d) && typeof d.message === "string") {
        const path = typeof d.path === "string" ? d.path : "";
        const flag = path === "" ? undefined : flagOf(path, flags);
        if (flag !== undefined && message.startsWith(`${path}: `)) {
          message = `${flag}: ${message.slice(path.length + 2)}`;
        }
        details.push({ path: flag ?? path, message: d.message });
      }
    }
  }
  const err = new ApiError(res.status, code, message, details);
  err.retryAfter = res.headers.get("retry-after") ?? undefined;
  return err;
}

/**
 * API Gateway and Lambda function URLs refuse a request before Shoal sees it with their own
 * body, `{"message":"Forbidden"}` (API Gateway) or `{"Message":"Forbidden. …"}` (function
 * URL), not the API's `{error:{…}}`. Such a 401/403 becomes an ApiError (code AwsAccessDenied)
 * that says who refused and what the caller needs: execute-api:Invoke on the API or
 * lambda:InvokeFunctionUrl on the function (API Gateway developer guide, "Control access to
 * an HTTP API with IAM authorization"; Lambda developer guide, "Security and auth model for
 * Lambda function URLs"), or a valid SHOAL_TOKEN for a JWT authorizer.
 */
export function awsRefusal(
  res: Response,
  body: unknown,
  client: Pick<ApiClient, "endpoint" | "authorization">,
): ApiError | undefined {
  if (res.status !== 401 && res.status !== 403) return undefined;
  if (!isRecord(body) || isRecord(body.error)) return undefined;
  const said = typeof body.message === "string" ? body.message : body.Message;
  if (typeof said !== "string") return undefined;
  const status = `HTTP ${res.status}: ${said}`;
  const auth = client.authorization;
  const host = detectAwsHost(client.endpoint);
  // Unsigned, and not an AWS host: some other proxy said no; report it as it is.
  if (!auth && !host) return undefined;
  const service = auth?.service ?? host?.service ?? "execute-api";
  const need =
    service === "lambda"
      ? "lambda:InvokeFunctionUrl on the function behind this URL"
      : `execute-api:Invoke on this API${host?.kind === "api-gateway" ? ` (arn:aws:execute-api:${host.region}:<account>:${host.id}/*)` : ""}`;
  let message: string;
  if (auth?.mode === "iam") {
    message =
      `the request was refused by AWS IAM (${status}): the caller's identity needs ${need}; ` +
      "check which identity signs with `aws sts get-caller-identity`, and the region with `shoal config show`";
  } else if (auth?.mode === "jwt") {
    message = `the request was refused by the API's authorizer (${status}): SHOAL_TOKEN is missing, expired or not accepted by this API`;
  } else {
    message =
      `the request was refused by AWS (${status}): this endpoint expects signed requests; ` +
      `use --auth iam (or SHOAL_AUTH=iam), and the caller's identity needs ${need}`;
  }
  return new ApiError(res.status, "AwsAccessDenied", message, []);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Encodes one path segment (workflow names, instance ids, task codes). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}
