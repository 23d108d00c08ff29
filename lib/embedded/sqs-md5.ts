/**
 * Message checksums and sizes as SQS computes them: MD5OfMessageBody is the MD5 of the body's
 * UTF-8 bytes; MD5OfMessageAttributes is the MD5 of the attributes sorted by name, each encoded as
 * name, data type (length-prefixed, 4-byte big-endian), a transport byte (1 string, 2 binary) and
 * the value (length-prefixed) — SQS Developer Guide, "Calculating the MD5 message digest for
 * message attributes". The SDK v3 checks MD5OfMessageBody on send and receive.
 */
import { createHash } from "node:crypto";
import { invalidParameter, sqsError } from "./sqs-errors.js";

/** One message attribute as the SDK carries it. */
export interface MessageAttributeValue {
  DataType?: string;
  StringValue?: string;
  BinaryValue?: Uint8Array;
}

/** The hex MD5 of `text`'s UTF-8 bytes. */
export function md5Hex(text: string): string {
  return createHash("md5").update(text, "utf8").digest("hex");
}

function lengthPrefixed(hash: ReturnType<typeof createHash>, bytes: Uint8Array): void {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(bytes.length);
  hash.update(len);
  hash.update(bytes);
}

/** MD5OfMessageAttributes, or undefined when there are none. */
export function md5OfAttributes(
  attrs: Record<string, MessageAttributeValue> | undefined,
): string | undefined {
  if (!attrs) return undefined;
  const names = Object.keys(attrs).sort();
  if (names.length === 0) return undefined;
  const hash = createHash("md5");
  for (const name of names) {
    const a = attrs[name] as MessageAttributeValue;
    lengthPrefixed(hash, Buffer.from(name, "utf8"));
    lengthPrefixed(hash, Buffer.from(a.DataType ?? "", "utf8"));
    if (a.BinaryValue !== undefined) {
      hash.update(Buffer.from([2]));
      lengthPrefixed(hash, a.BinaryValue);
    } else {
      hash.update(Buffer.from([1]));
      lengthPrefixed(hash, Buffer.from(a.StringValue ?? "", "utf8"));
    }
  }
  return hash.digest("hex");
}

/** Characters SQS accepts in a message (W3C XML's Char production). */
const INVALID_CHARS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/**
 * Checks a body's characters.
 * @throws InvalidMessageContents when it holds a character SQS refuses.
 */
export function checkBody(body: string): void {
  if (INVALID_CHARS.test(body))
    throw sqsError(
      "InvalidMessageContents",
      "Invalid binary character in the message body: see the allowed characters in SendMessage.",
    );
}

const ATTRIBUTE_NAME = /^(?!\.)(?!.*\.\.)(?!.*\.$)[A-Za-z0-9_.-]{1,256}$/;
const DATA_TYPE = /^(String|Number|Binary)(\.[^\s]{1,255})?$/;

/**
 * Checks message attributes (at most 10; names and data types as SQS allows them; a value of
 * the declared kind) and returns their size in bytes (name + data type + value), which counts
 * towards the message size limit.
 * @throws InvalidParameterValue naming the attribute and the rule.
 */
export function checkAttributes(attrs: Record<string, MessageAttributeValue> | undefined): number {
  if (!attrs) return 0;
  const names = Object.keys(attrs);
  if (names.length > 10)
    throw invalidParameter("MessageAttributes", names.length, "At most 10 message attributes.");
  let size = 0;
  for (const name of names) {
    const a = attrs[name] as MessageAttributeValue;
    if (!ATTRIBUTE_NAME.test(name) || /^(aws|amazon)\./i.test(name))
      throw invalidParameter("MessageAttributes", name, "The attribute name is not valid.");
    const type = a?.DataType ?? "";
    if (!DATA_TYPE.test(type))
      throw invalidParameter(
        `MessageAttributes.${name}.DataType`,
        type,
        "The data type must be String, Number or Binary, optionally with a .label.",
      );
    const binary = type.startsWith("Binary");
    const value = binary ? a.BinaryValue : a.StringValue;
    if (value === undefined || value.length === 0)
      throw invalidParameter(
        `MessageAttributes.${name}`,
        "(empty)",
        `A ${binary ? "BinaryValue" : "StringValue"} is required and must not be empty.`,
      );
    if (type.startsWith("Number") && !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(String(value)))
      throw invalidParameter(`MessageAttributes.${name}`, value, "Not a number.");
    if (typeof value === "string") checkBody(value);
    size +=
      Buffer.byteLength(name) +
      Buffer.byteLength(type) +
      (typeof value === "string" ? Buffer.byteLength(value) : value.length);
  }
  return size;
}
