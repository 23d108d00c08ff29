/**
 * HTTP calls to a deployed Shoal API, signed with AWS Signature Version 4 (`@smithy/signature-v4`)
 * so that they pass IAM authorisation: a Lambda function URL with `AuthType: AWS_IAM` takes
 * SigV4 for service `lambda` ("Control access to Lambda function URLs", AWS Lambda Developer
 * Guide), an HTTP API with IAM authorisation for service `execute-api`. LocalStack checks the
 * signature only with ENFORCE_IAM=1 (paid plans), but signing always keeps the suite valid there
 * and on AWS.
 */
import { Hash } from "@smithy/hash-node";
import { SignatureV4 } from "@smithy/signature-v4";

/** A parsed response: status, body as JSON when it parses (else undefined), and raw text. */
export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
  body: any;
  text: string;
}

/** Sends one signed request: method, path (with query) relative to the API URL, JSON body. */
export type ApiCall = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;

/** Static credentials: LocalStack accepts any; `test` is its documented convention. */
export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Per-request limit (ms): a cold start on LocalStack pulls and boots a Lambda container. */
export const REQUEST_TIMEOUT_MS = 120_000;

/**
 * The signing service and region of an API URL: `lambda` for a function URL
 * (`<id>.lambda-url.<region>.on.aws`, or `….localhost.localstack.cloud:4566` on LocalStack),
 * `execute-api` for an HTTP API (`<apiId>.execute-api.<region>.…`); the region from the host
 * when it names one, else `fallbackRegion`.
 */
export function signingScope(
  apiUrl: string,
  fallbackRegion: string,
): { service: "lambda" | "execute-api"; region: string } {
  const host = new URL(apiUrl).hostname;
  const m = /\.(lambda-url|execute-api)\.([a-z]{2}(?:-[a-z]+)+-\d+)\./.exec(host);
  return {
    service: m?.[1] === "execute-api" ? "execute-api" : "lambda",
    region: m?.[2] ?? fallbackRegion,
  };
}

/**
 * A client for the API at `apiUrl` (the stack's `ApiUrl` output, with or without a trailing
 * slash). Each call signs method, host, path, query, `content-type` and the body's SHA-256,
 * sends it with fetch (`REQUEST_TIMEOUT_MS`), and never throws for an HTTP status: callers
 * assert on `status`. Throws on network errors and timeouts.
 */
export function apiClient(
  apiUrl: string,
  fallbackRegion: string,
  credentials: Credentials = { accessKeyId: "test", secretAccessKey: "test" },
): ApiCall {
  const base = new URL(apiUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  const signer = new SignatureV4({
    ...signingScope(apiUrl, fallbackRegion),
    credentials,
    sha256: Hash.bind(null, "sha256"),
  });
  return async (method, path, body) => {
    const url = new URL(`${prefix}${path}`, base);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { host: url.host };
    if (payload !== undefined) headers["content-type"] = "application/json";
    const signed = await signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
    });
    // fetch sets Host itself, to the value signed above (url.host).
    const { host: _host, ...sent } = signed.headers;
    const res = await fetch(url, {
      method,
      headers: sent,
      ...(payload !== undefined ? { body: payload } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text };
  };
}
