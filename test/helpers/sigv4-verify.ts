/**
 * A SigV4 check as API Gateway makes it, for tests of the CLI's signing (test/unit/cli-aws.test.ts),
 * of `shoal console`'s proxy (test/integration/cli-console.test.ts) and of the region LAMBDA and
 * STEP_FUNCTIONS tasks sign for (test/unit/aws-tasks-region.test.ts): the signature is
 * recomputed on the server side, from the request as received (method, raw path, query, the
 * signed headers, the body), and compared with the one sent.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { Hash } from "@smithy/hash-node";
import { SignatureV4 } from "@smithy/signature-v4";

/** The access key the tests sign with (the AWS documentation's example key). */
export const ACCESS_KEY = "AKIDEXAMPLE";
/** Its secret; the server checks signatures with it. */
export const SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

/** What the server concluded about one request's Authorization header. */
export interface Verdict {
  kind: "none" | "bearer" | "sigv4" | "other";
  /** sigv4: the signature recomputed from the received request equals the one sent. */
  valid?: boolean;
  /** sigv4: `<date>/<region>/<service>/aws4_request`. */
  scope?: string;
  signedHeaders?: string[];
  /** sigv4: x-amz-content-sha256 is the SHA-256 of the body received. */
  payloadHashOk?: boolean;
}

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

const AUTH_RE =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/;

/**
 * Recomputes the SigV4 signature of a request received on 127.0.0.1 (method, raw path, query,
 * headers, body) with {@link SECRET_KEY}; valid only when it matches and the key is {@link ACCESS_KEY}.
 */
export async function verifySigV4(req: IncomingMessage, body: string): Promise<Verdict> {
  const auth = req.headers.authorization;
  if (!auth) return { kind: "none" };
  if (auth.startsWith("Bearer ")) return { kind: "bearer" };
  const m = AUTH_RE.exec(auth);
  if (!m) return { kind: "other" };
  const [, accessKeyId = "", date = "", region = "", service = "", signed = ""] = m;
  const amzDate = String(req.headers["x-amz-date"] ?? "");
  const signingDate = new Date(
    amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"),
  );
  const signedHeaders = signed.split(";");
  // The payload hash header is left out: the signer recomputes it from the body received.
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    if (name !== "x-amz-content-sha256") headers[name] = String(req.headers[name] ?? "");
  }
  const [rawPath = "/", rawQuery = ""] = (req.url ?? "/").split("?");
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(rawQuery)) query[k] = v;
  const signer = new SignatureV4({
    service,
    region,
    credentials: { accessKeyId, secretAccessKey: SECRET_KEY },
    sha256: Hash.bind(null, "sha256"),
  });
  const expected = await signer.sign(
    {
      method: req.method ?? "GET",
      protocol: "http:",
      hostname: "127.0.0.1",
      path: rawPath,
      query,
      headers,
      ...(body !== "" ? { body } : {}),
    },
    { signingDate },
  );
  return {
    kind: "sigv4",
    valid: expected.headers.authorization === auth && accessKeyId === ACCESS_KEY,
    scope: `${date}/${region}/${service}/aws4_request`,
    signedHeaders,
    payloadHashOk: req.headers["x-amz-content-sha256"] === sha256(body),
  };
}

/** Reads a request's body and checks its signature ({@link verifySigV4}). */
export async function receiveSigned(
  req: IncomingMessage,
): Promise<{ body: string; verdict: Verdict }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks).toString("utf8");
  return { body, verdict: await verifySigV4(req, body) };
}
