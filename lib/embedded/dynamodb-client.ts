/**
 * The embedded DynamoDB client: an in-process stand-in for both `DynamoDBClient`
 * (@aws-sdk/client-dynamodb commands, AttributeValue inputs) and `DynamoDBDocumentClient`
 * (@aws-sdk/lib-dynamodb commands, plain values marshalled with `removeUndefinedValues: true`
 * and unmarshalled as the DocumentClient does), on the engine of dynamodb-engine.ts.
 */
import {
  QueryCommand as DocQueryCommand,
  ScanCommand as DocScanCommand,
} from "@aws-sdk/lib-dynamodb";
import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { EmbeddedClient, type EmbeddedCommand, EmbeddedServiceError } from "./client-stack.js";
import { type CapacityObserver, DynamoEngine } from "./dynamodb-engine.js";
import { type Item, itemFromSdk, itemToSdk } from "./dynamodb-values.js";

/** Options of {@link EmbeddedDynamoDBClient}. */
export interface EmbeddedDynamoDBOptions {
  /** SQLite file (created if missing; several processes may share it), or `:memory:`. */
  file: string;
  /** Region in table ARNs (default `us-east-1`). */
  region?: string;
  /** Called with every operation's consumed capacity, failed conditional writes included. */
  onCapacity?: CapacityObserver;
}

/** Document-client commands and the operation each one is. */
const DOC_OPS: Record<string, string> = {
  GetCommand: "GetItem",
  PutCommand: "PutItem",
  UpdateCommand: "UpdateItem",
  DeleteCommand: "DeleteItem",
  BatchGetCommand: "BatchGetItem",
  BatchWriteCommand: "BatchWriteItem",
};

// biome-ignore lint/suspicious/noExplicitAny: inputs are whatever the commands carry
type Any = any;

const MARSHALL = { removeUndefinedValues: true } as const;

function mapItems(out: Any, f: (item: Any) => Any): Any {
  const o = { ...out };
  if (o.Item) o.Item = f(o.Item);
  if (o.Attributes) o.Attributes = f(o.Attributes);
  if (o.Items) o.Items = o.Items.map(f);
  if (o.LastEvaluatedKey) o.LastEvaluatedKey = f(o.LastEvaluatedKey);
  if (o.Responses)
    o.Responses = Object.fromEntries(
      Object.entries(o.Responses as Record<string, Any[]>).map(([t, l]) => [t, l.map(f)]),
    );
  return o;
}

/** Uint8Array → base64 anywhere in a low-level input (binary attribute values). */
function binariesToBase64(v: Any): Any {
  if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
  if (Array.isArray(v)) return v.map(binariesToBase64);
  if (v && typeof v === "object") {
    const o: Any = {};
    for (const k in v) o[k] = binariesToBase64(v[k]);
    return o;
  }
  return v;
}

function docInput(op: string, input: Any): Any {
  const m = (x: Any) => (x === undefined ? undefined : itemFromSdk(marshall(x, MARSHALL) as Any));
  const i = { ...input };
  for (const k of ["Key", "Item", "ExpressionAttributeValues", "ExclusiveStartKey"])
    if (i[k] !== undefined) i[k] = m(i[k]);
  if (op === "BatchGetItem" && i.RequestItems)
    i.RequestItems = Object.fromEntries(
      Object.entries(i.RequestItems as Record<string, Any>).map(([t, r]) => [
        t,
        { ...r, Keys: (r.Keys ?? []).map(m) },
      ]),
    );
  if (op === "BatchWriteItem" && i.RequestItems)
    i.RequestItems = Object.fromEntries(
      Object.entries(i.RequestItems as Record<string, Any[]>).map(([t, l]) => [
        t,
        l.map((w) =>
          w.PutRequest
            ? { PutRequest: { Item: m(w.PutRequest.Item) } }
            : w.DeleteRequest
              ? { DeleteRequest: { Key: m(w.DeleteRequest.Key) } }
              : w,
        ),
      ]),
    );
  return i;
}

/** An in-process DynamoDB on node:sqlite, serving SDK and DocumentClient commands. */
export class EmbeddedDynamoDBClient extends EmbeddedClient {
  readonly engine: DynamoEngine;

  constructor(options: EmbeddedDynamoDBOptions) {
    super("DynamoDBClient");
    this.engine = new DynamoEngine(options);
    this.config.region = options.region ?? "us-east-1";
  }

  protected async execute(
    commandName: string,
    input: unknown,
    command: EmbeddedCommand,
  ): Promise<Record<string, unknown>> {
    let doc = DOC_OPS[commandName];
    // Both packages have a QueryCommand and a ScanCommand; a document command wraps the
    // low-level one (`clientCommand`), which also tells them apart across two package copies.
    if (
      !doc &&
      (commandName === "QueryCommand" || commandName === "ScanCommand") &&
      (command instanceof DocQueryCommand ||
        command instanceof DocScanCommand ||
        "clientCommand" in command)
    )
      doc = commandName === "QueryCommand" ? "Query" : "Scan";
    try {
      if (doc) {
        const out = this.engine.execute(doc, docInput(doc, input));
        return mapItems(out, (item: Item) => unmarshall(itemToSdk(item) as Any));
      }
      const op = commandName.replace(/Command$/, "");
      const out = this.engine.execute(op, binariesToBase64(input));
      return mapItems(out, itemToSdk);
    } catch (e) {
      if (e instanceof EmbeddedServiceError && (e as Any).Item)
        (e as Any).Item = itemToSdk((e as Any).Item);
      throw e;
    }
  }

  /** Closes the SQLite connection. */
  override destroy(): void {
    this.engine.close();
  }
}
