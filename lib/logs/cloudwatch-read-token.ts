/**
 * The read tokens of task logs on CloudWatch Logs: where a read continues (CloudWatch's forward
 * token and the last line's timestamp and count), tied to its stream and opaque to clients.
 */
import { createHash } from "node:crypto";
import { validationError } from "../core/errors.js";

const TOKEN_PREFIX = "cw1.";
const MAX_TOKEN_CHARS = 4096;

/** Where a read continues: CloudWatch's forward token and the last line's timestamp/count. */
export interface ReadPosition {
  /** CloudWatch's forward token (absent: resume from `a`, or from the head). */
  t?: string | undefined;
  /** Timestamp of the last line returned, ms since the epoch. */
  a?: number | undefined;
  /** How many lines returned so far carried timestamp `a`. */
  n?: number | undefined;
}

/** Ties a token to its stream, so a token of another log is refused rather than misapplied. */
function streamTag(stream: string): string {
  return createHash("sha256").update(stream).digest("base64url").slice(0, 11);
}

/** The opaque `nextToken` of a read of `stream` that stopped at `p` (`cw1.` + base64url JSON). */
export function encodeReadToken(stream: string, p: ReadPosition): string {
  const body = {
    s: streamTag(stream),
    ...(p.t !== undefined ? { t: p.t } : {}),
    ...(p.a !== undefined ? { a: p.a, n: p.n } : {}),
  };
  return TOKEN_PREFIX + Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

/** @throws RequestError ValidationError (the API's 400) for anything `encodeReadToken` did not make for `stream`. */
export function decodeReadToken(raw: string, stream: string): ReadPosition {
  const bad = () =>
    validationError([{ path: "nextToken", message: "is not a token this API returned" }]);
  const body = raw.slice(TOKEN_PREFIX.length);
  if (raw.length > MAX_TOKEN_CHARS || !raw.startsWith(TOKEN_PREFIX)) throw bad();
  if (!/^[A-Za-z0-9_-]+$/.test(body)) throw bad();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw bad();
  const { s, t, a, n } = v as Record<string, unknown>;
  if (s !== streamTag(stream)) throw bad();
  if (t !== undefined && (typeof t !== "string" || t.length === 0)) throw bad();
  const whole = (x: unknown): x is number =>
    typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  if (a === undefined ? n !== undefined : !whole(a) || !whole(n) || n < 1) throw bad();
  return { t: t as string | undefined, a: a as number | undefined, n: n as number | undefined };
}
