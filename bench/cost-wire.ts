/**
 * What the cost meter (cost-meter.ts) reads requests and items with: the wire form of DynamoDB
 * items, the billed payload of an SQS message, and an unmetered DynamoDB client of the run's
 * backend for the old and new images of written items.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { AwsConfig } from "../lib/aws/config.js";
import { embeddedClientsFactory } from "../lib/aws/embedded-registry.js";

const TYPE_TAGS = new Set(["S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "L", "M"]);

/** Whether `x` is an item in DynamoDB's wire form (every value a one-key `{ S: … }`-like object). */
export function isWireItem(x: unknown): boolean {
  if (!x || typeof x !== "object") return false;
  return Object.values(x).every((v) => {
    if (!v || typeof v !== "object" || Array.isArray(v) || v instanceof Set) return false;
    const keys = Object.keys(v);
    return keys.length === 1 && TYPE_TAGS.has(keys[0] as string);
  });
}

/** A message's billed payload: body and attributes (names, types, values). */
export function messageBytes(m: Record<string, unknown>): number {
  let n = Buffer.byteLength(String(m.MessageBody ?? m.Body ?? ""), "utf8");
  for (const [k, v] of Object.entries(
    (m.MessageAttributes as Record<string, Record<string, unknown>>) ?? {},
  )) {
    n += Buffer.byteLength(k) + Buffer.byteLength(String(v.DataType ?? ""));
    n +=
      Buffer.byteLength(String(v.StringValue ?? "")) + ((v.BinaryValue as Uint8Array)?.length ?? 0);
  }
  return n;
}

/** What the meter reads with: `send` of @aws-sdk/client-dynamodb commands, unmetered. */
export interface RawClient {
  // biome-ignore lint/suspicious/noExplicitAny: outputs are typed by the command, as in the SDK
  send(command: any): Promise<any>;
}

/**
 * A DynamoDB client of `aws`'s backend without Shoal's middleware: on the embedded backend
 * (SHOAL_EMBEDDED_DIR) a new in-process client on the same files, else an SDK client of the
 * configured endpoint, region and credentials.
 */
export function rawDynamoClient(aws: AwsConfig): RawClient {
  if (aws.embeddedDir)
    return embeddedClientsFactory()(aws.embeddedDir, aws.region ?? "us-east-1").dynamo as RawClient;
  return new DynamoDBClient({
    ...(aws.endpoints.dynamodb ? { endpoint: aws.endpoints.dynamodb } : {}),
    ...(aws.region ? { region: aws.region } : {}),
    ...(aws.credentials ? { credentials: aws.credentials } : {}),
  });
}
