/**
 * How the CLI authenticates its requests to a deployed Shoal: AWS Signature Version 4 for
 * IAM-protected endpoints (API Gateway with an IAM authorizer, Lambda function URLs with
 * AuthType AWS_IAM), or a bearer token for a JWT authorizer.
 *
 * SigV4 itself is @smithy/signature-v4, the signer the AWS SDKs use ("Create a signed AWS API
 * request", IAM User Guide); credentials come from the SDK's default chain, so the CLI finds
 * them where the AWS CLI does (environment, ~/.aws profiles incl. SSO, container/instance roles).
 */
import { defaultProvider } from "@aws-sdk/credential-provider-node";
import { Hash } from "@smithy/hash-node";
import { SignatureV4 } from "@smithy/signature-v4";
import { CliError } from "./errors.js";
import type { OutStream } from "./out-stream.js";

/** The SigV4 signing name of an AWS service that can front the Shoal API. */
export type SigningService = "execute-api" | "lambda";

/** What an AWS host name says about signing: its service and, when it names one, its region. */
export interface AwsHost {
  service: SigningService;
  region: string;
  /** What kind of front door: an API Gateway API or a Lambda function URL. */
  kind: "api-gateway" | "function-url";
  /** The API id (API Gateway) or URL id (function URL): the host's first label. */
  id: string;
}

const HOST_PATTERNS: Array<{ re: RegExp; service: SigningService; kind: AwsHost["kind"] }> = [
  // {api-id}.execute-api.{region}.amazonaws.com (API Gateway developer guide, "Invoke an API");
  // .amazonaws.com.cn in the China partition.
  {
    re: /^([^.]+)\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/,
    service: "execute-api",
    kind: "api-gateway",
  },
  // {url-id}.lambda-url.{region}.on.aws (Lambda developer guide, "Function URLs").
  { re: /^([^.]+)\.lambda-url\.([a-z0-9-]+)\.on\.aws$/, service: "lambda", kind: "function-url" },
  // LocalStack serves function URLs as {url-id}.lambda-url.{region}.localhost.localstack.cloud.
  {
    re: /^([^.]+)\.lambda-url\.([a-z0-9-]+)\.localhost\.localstack\.cloud$/,
    service: "lambda",
    kind: "function-url",
  },
];

/**
 * Recognises an AWS API host in `endpoint` (a URL): API Gateway (`execute-api`) or a Lambda
 * function URL (`lambda`), on AWS or LocalStack. Returns undefined for anything else
 * (localhost, a custom domain, an invalid URL).
 */
export function detectAwsHost(endpoint: string): AwsHost | undefined {
  let host: string;
  try {
    host = new URL(endpoint).hostname.toLowerCase();
  } catch {
    return undefined;
  }
  for (const p of HOST_PATTERNS) {
    const m = p.re.exec(host);
    if (m?.[1] && m[2]) return { service: p.service, region: m[2], kind: p.kind, id: m[1] };
  }
  return undefined;
}

/** AWS credentials as the default chain yields them (structurally the SDK's AwsCredentialIdentity). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** Yields credentials; may be called many times. */
export type CredentialProvider = () => Promise<AwsCredentials>;

/**
 * The AWS SDK's default credential chain (environment, SSO, web identity, ~/.aws profiles,
 * credential_process, ECS/EC2 roles; `profile` or AWS_PROFILE picks the profile). The SDK's
 * chain keeps what it found: later calls reuse it, so one CLI run asks the chain once, until
 * temporary credentials come within 5 minutes of expiring (then it asks again); a failure is
 * not kept, so a long-running `shoal console` picks up an `aws sso login` done after it started.
 * The SDK's warnings go to `warn` (e.g. AWS_PROFILE set together with access keys).
 * @throws CliError (exit 1) "no AWS credentials found for signing requests to <endpoint>: …"
 *   when the chain finds none; the SDK's reason follows on a second line when it says more.
 */
export function defaultCredentials(opts: {
  endpoint: string;
  profile?: string;
  warn?: OutStream;
}): CredentialProvider {
  const chain = defaultProvider({
    ...(opts.profile ? { profile: opts.profile } : {}),
    logger: {
      debug: () => {},
      info: () => {},
      warn: (...parts: unknown[]) => opts.warn?.write(`warning: ${parts.join(" ").trim()}\n`),
      error: () => {},
    },
  });
  return () =>
    chain().catch((err: unknown) => {
      throw noCredentials(opts.endpoint, opts.profile, err);
    });
}

/** The SDK's own reason is kept when it is more than "nothing found" (an expired SSO session). */
function noCredentials(endpoint: string, profile: string | undefined, err: unknown): CliError {
  const reason = err instanceof Error ? err.message.split("\n")[0]?.trim() : undefined;
  const generic = !reason || /could not load credentials from any providers/i.test(reason);
  return new CliError(
    `no AWS credentials found for signing requests to ${endpoint}: set AWS_PROFILE or ` +
      "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or run `aws sso login`" +
      (generic ? "" : `\n  ${profile ? `profile ${profile}: ` : ""}${reason}`),
    { cause: err },
  );
}

/** A request about to be sent, as the signer needs it. */
export interface OutgoingRequest {
  method: string;
  /** The full URL; its query must have been built with {@link encodeQuery}. */
  url: URL;
  /** Lower-case header names; every one of them is signed. */
  headers: Record<string, string>;
  /** The exact body bytes sent (UTF-8 text), or none. */
  body?: string;
}

/** Computes the extra headers that authenticate one request (Authorization and friends). */
export type RequestAuthorizer = (req: OutgoingRequest) => Promise<Record<string, string>>;

/** How requests are authenticated, as the API client needs to know for its error hints. */
export interface Authorization {
  mode: "iam" | "jwt";
  /** The SigV4 service (iam only). */
  service?: SigningService;
  /** The signing region (iam only). */
  region?: string;
  authorize: RequestAuthorizer;
}

/**
 * SigV4 authorization: signs method, path, query, the given headers plus `host`, and the
 * body's SHA-256 with `service` and `region`, returning `authorization`, `x-amz-date`,
 * `x-amz-content-sha256` and (for temporary credentials) `x-amz-security-token`. The path is
 * escaped once more, as every service but S3 expects (SignatureV4's `uriEscapePath`).
 * @throws CliError from `credentials` when there are none.
 */
export function iamAuthorization(opts: {
  service: SigningService;
  region: string;
  credentials: CredentialProvider;
}): Authorization {
  const signer = new SignatureV4({
    service: opts.service,
    region: opts.region,
    credentials: opts.credentials,
    sha256: Hash.bind(null, "sha256"),
    uriEscapePath: true,
    // Adds x-amz-content-sha256: Lambda function URLs ask for it on requests with a body.
    applyChecksum: true,
  });
  return {
    mode: "iam",
    service: opts.service,
    region: opts.region,
    authorize: async (req) => {
      const query: Record<string, string> = {};
      for (const [k, v] of req.url.searchParams) query[k] = v;
      const signed = await signer.sign({
        method: req.method,
        protocol: req.url.protocol,
        hostname: req.url.hostname,
        ...(req.url.port ? { port: Number(req.url.port) } : {}),
        path: req.url.pathname,
        query,
        // fetch sends the URL's host (with a non-default port): the same value is signed.
        headers: { ...req.headers, host: req.url.host },
        ...(req.body !== undefined ? { body: req.body } : {}),
      });
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(signed.headers)) {
        if (k.toLowerCase() !== "host" && !(k.toLowerCase() in req.headers)) out[k] = v;
      }
      return out;
    },
  };
}

/** Bearer-token authorization for an API Gateway JWT authorizer (`Authorization: Bearer …`). */
export function jwtAuthorization(token: string): Authorization {
  return { mode: "jwt", authorize: async () => ({ authorization: `Bearer ${token}` }) };
}

/**
 * Query string encoding that matches SigV4's canonical query (RFC 3986: everything but
 * `A-Za-z0-9-_.~` percent-encoded, space as %20, never `+`), so the URL sent and the string
 * signed cannot disagree. `undefined` values are left out. Returns "" or `?a=1&b=2`.
 */
export function encodeQuery(query: Record<string, string | number | undefined>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined) parts.push(`${rfc3986(k)}=${rfc3986(String(v))}`);
  }
  return parts.length > 0 ? `?${parts.join("&")}` : "";
}

function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}
