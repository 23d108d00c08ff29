/**
 * Queue attributes as SQS defines them (API Reference, CreateQueue and SetQueueAttributes): the
 * settable ones with their ranges and defaults, kept as a JSON object of strings (as SQS returns
 * them) in the queue's row, and queue names, URLs and ARNs.
 */
import { invalidParameter, sqsError } from "./sqs-errors.js";

/** The account id every embedded queue belongs to (as on the emulators). */
export const ACCOUNT = "000000000000";

/** A queue's settable attributes, as strings. */
export type QueueAttributes = Record<string, string>;

/** Ranges of the numeric attributes (seconds or bytes) and their defaults. */
const NUMERIC: Record<string, { min: number; max: number; def: number }> = {
  DelaySeconds: { min: 0, max: 900, def: 0 },
  MaximumMessageSize: { min: 1024, max: 1_048_576, def: 1_048_576 },
  MessageRetentionPeriod: { min: 60, max: 1_209_600, def: 345_600 },
  ReceiveMessageWaitTimeSeconds: { min: 0, max: 20, def: 0 },
  VisibilityTimeout: { min: 0, max: 43_200, def: 30 },
  KmsDataKeyReusePeriodSeconds: { min: 60, max: 86_400, def: 300 },
};

const SETTABLE = new Set([
  ...Object.keys(NUMERIC),
  "Policy",
  "RedrivePolicy",
  "RedriveAllowPolicy",
  "KmsMasterKeyId",
  "SqsManagedSseEnabled",
  "FifoQueue",
  "ContentBasedDeduplication",
  "DeduplicationScope",
  "FifoThroughputLimit",
]);

/** Attributes GetQueueAttributes computes (besides the settable ones). */
export const COMPUTED = [
  "ApproximateNumberOfMessages",
  "ApproximateNumberOfMessagesNotVisible",
  "ApproximateNumberOfMessagesDelayed",
  "CreatedTimestamp",
  "LastModifiedTimestamp",
  "QueueArn",
] as const;

/** The parsed RedrivePolicy. */
export interface RedrivePolicy {
  deadLetterTargetArn: string;
  maxReceiveCount: number;
}

/** The queue name of a URL (`…/<account>/<name>`) or an ARN (`arn:aws:sqs:…:<name>`). */
export function nameOf(urlOrArn: string): string {
  if (urlOrArn.startsWith("arn:")) return urlOrArn.split(":").pop() ?? "";
  const parts = urlOrArn
    .replace(/[?#].*$/, "")
    .replace(/\/+$/, "")
    .split("/");
  return parts.length >= 2 ? (parts[parts.length - 1] ?? "") : "";
}

/**
 * Checks a queue name: 1..80 characters, letters, digits, hyphens and underscores; a FIFO
 * queue's name ends in `.fifo`.
 * @throws InvalidParameterValue naming the rule.
 */
export function checkQueueName(name: string, fifo: boolean): void {
  const base = fifo ? name.replace(/\.fifo$/, "") : name;
  if (!/^[A-Za-z0-9_-]+$/.test(base) || name.length > 80)
    throw invalidParameter(
      "QueueName",
      name,
      "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.",
    );
  if (fifo !== name.endsWith(".fifo"))
    throw invalidParameter(
      "QueueName",
      name,
      fifo
        ? "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length."
        : "Only a FIFO queue's name may end with .fifo (set FifoQueue to true).",
    );
}

function bad(name: string, value: string, why: string): Error {
  return sqsError(
    "InvalidAttributeValue",
    `Invalid value for the parameter ${name} (${value}): ${why}`,
  );
}

/** The RedrivePolicy of a queue's attributes, if it has one. */
export function redrivePolicy(attrs: QueueAttributes): RedrivePolicy | undefined {
  const raw = attrs.RedrivePolicy;
  if (!raw) return undefined;
  return JSON.parse(raw) as RedrivePolicy;
}

/**
 * Validates attributes given to CreateQueue (`creating`) or SetQueueAttributes and returns them
 * normalised (numbers as decimal strings, RedrivePolicy as SQS renders it).
 * @param fifo whether the queue is (or is being created as) FIFO.
 * @param lookupArn whether a dead-letter target exists, and whether it is FIFO.
 * @throws InvalidAttributeName for an unknown or immutable attribute, InvalidAttributeValue for a
 *   value out of range.
 */
export function normaliseAttributes(
  given: Record<string, string> | undefined,
  fifo: boolean,
  creating: boolean,
  lookupArn: (arn: string) => { fifo: boolean } | undefined,
): QueueAttributes {
  const out: QueueAttributes = {};
  for (const [name, raw] of Object.entries(given ?? {})) {
    const value = String(raw);
    if (!SETTABLE.has(name)) throw sqsError("InvalidAttributeName", `Unknown Attribute ${name}.`);
    const num = NUMERIC[name];
    if (num) {
      const n = Number(value);
      if (!/^\d+$/.test(value.trim()) || n < num.min || n > num.max)
        throw bad(name, value, `must be an integer from ${num.min} to ${num.max}.`);
      out[name] = String(n);
      continue;
    }
    if (name === "FifoQueue") {
      if (!creating) throw sqsError("InvalidAttributeName", "FifoQueue cannot be changed.");
      if (value !== "true" && value !== "false") throw bad(name, value, "must be true or false.");
      if (value === "true") out[name] = "true";
      continue;
    }
    if (["ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"].includes(name)) {
      if (!fifo) throw sqsError("InvalidAttributeName", `Unknown Attribute ${name}.`);
      const allowed =
        name === "ContentBasedDeduplication"
          ? ["true", "false"]
          : name === "DeduplicationScope"
            ? ["messageGroup", "queue"]
            : ["perQueue", "perMessageGroupId"];
      if (!allowed.includes(value)) throw bad(name, value, `must be one of ${allowed.join(", ")}.`);
      out[name] = value;
      continue;
    }
    if (name === "RedrivePolicy") {
      if (value === "") {
        out[name] = "";
        continue;
      }
      let p: { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown };
      try {
        p = JSON.parse(value);
      } catch {
        throw bad(name, value, "not valid JSON.");
      }
      const count = Number(p.maxReceiveCount);
      if (!Number.isInteger(count) || count < 1 || count > 1000)
        throw bad(name, value, "maxReceiveCount must be an integer from 1 to 1000.");
      const arn = String(p.deadLetterTargetArn ?? "");
      const target = lookupArn(arn);
      if (!target) throw bad(name, value, "Dead letter target does not exist.");
      if (target.fifo !== fifo)
        throw bad(name, value, "Dead-letter queue must be same type of queue as the source.");
      out[name] = JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: count });
      continue;
    }
    if (name === "SqsManagedSseEnabled" && value !== "true" && value !== "false")
      throw bad(name, value, "must be true or false.");
    out[name] = value;
  }
  return out;
}

/** A queue's attributes with SQS's defaults filled in (as GetQueueAttributes reports them). */
export function withDefaults(attrs: QueueAttributes): QueueAttributes {
  const out: QueueAttributes = {};
  for (const [name, n] of Object.entries(NUMERIC)) {
    if (name !== "KmsDataKeyReusePeriodSeconds") out[name] = String(n.def);
  }
  out.SqsManagedSseEnabled = "false";
  if (attrs.FifoQueue === "true") {
    out.ContentBasedDeduplication = "false";
    out.DeduplicationScope = "queue";
    out.FifoThroughputLimit = "perQueue";
  }
  for (const [k, v] of Object.entries(attrs)) if (v !== "") out[k] = v;
  return out;
}

/** A numeric setting of a queue (seconds or bytes), its default when unset. */
export function numeric(attrs: QueueAttributes, name: keyof typeof NUMERIC | string): number {
  const v = attrs[name];
  return v !== undefined && v !== "" ? Number(v) : (NUMERIC[name]?.def ?? 0);
}

/** Every attribute name GetQueueAttributes knows (for `All` and for checking names). */
export function knownAttribute(name: string): boolean {
  return SETTABLE.has(name) || (COMPUTED as readonly string[]).includes(name);
}
