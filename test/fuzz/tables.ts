/**
 * What the fuzzer compares to prove that a refused request wrote nothing: a digest of every item
 * of every table of the fuzz server's prefix (a full scan, items canonicalised and sorted), and
 * the write requests the API's clients sent (their request counter), so that only requests that
 * tried to write need a scan of their own.
 */
import { createHash } from "node:crypto";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { AwsClients } from "../../lib/aws/clients.js";
import type { ShoalConfig } from "../../lib/aws/config.js";

/** The digest of the tables and their item counts, by table key (`workflows`, `instances` …). */
export interface TablesDigest {
  hash: string;
  items: Record<string, number>;
}

/** JSON with object keys sorted, so that equal items give equal text whatever their order. */
function canonical(value: unknown): string {
  if (value instanceof Set) return canonical([...value].map(canonical).sort());
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value).toString("base64"));
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

/**
 * Scans every table of `tables` (all pages, in parallel) and digests their items.
 * @returns the digest and each table's item count.
 */
export async function digestTables(
  clients: AwsClients,
  tables: ShoalConfig["tables"],
): Promise<TablesDigest> {
  const entries = await Promise.all(
    Object.entries(tables).map(async ([key, name]) => {
      const lines: string[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await clients.dynamo.send(
          new ScanCommand({ TableName: name, ExclusiveStartKey: start, ConsistentRead: true }),
        );
        for (const item of page.Items ?? []) lines.push(canonical(item));
        start = page.LastEvaluatedKey;
      } while (start);
      return [key, lines.sort()] as const;
    }),
  );
  const hash = createHash("sha256");
  const items: Record<string, number> = {};
  for (const [key, lines] of entries.sort(([a], [b]) => (a < b ? -1 : 1))) {
    hash.update(`${key}\n${lines.join("\n")}\n`);
    items[key] = lines.length;
  }
  return { hash: hash.digest("hex"), items };
}

/** DynamoDB operations that change a table (as the request counter names them). */
const DYNAMO_WRITES = /^DynamoDB\.(Put|Update|Delete|BatchWrite|TransactWrite)/;
/** SQS operations that send something (a refused request must send nothing). */
const SQS_SENDS = /^SQS\.SendMessage/;

/** The write requests counted so far: DynamoDB writes and SQS sends. */
export function writeRequests(clients: AwsClients): { dynamo: number; sqs: number } {
  let dynamo = 0;
  let sqs = 0;
  for (const [key, n] of clients.counter.counts) {
    if (DYNAMO_WRITES.test(key)) dynamo += n;
    else if (SQS_SENDS.test(key)) sqs += n;
  }
  return { dynamo, sqs };
}
