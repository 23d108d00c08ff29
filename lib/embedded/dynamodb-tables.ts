/**
 * Table operations of the embedded DynamoDB engine: CreateTable, DescribeTable, ListTables,
 * DeleteTable, UpdateTimeToLive and DescribeTimeToLive, with DynamoDB's output shapes
 * (API Reference, TableDescription). Tables are ACTIVE at once; TTL is remembered, never applied.
 */

import { EmbeddedServiceError } from "./client-stack.js";
import type { DynamoFile, IndexMeta, KeyAttr, TableMeta } from "./dynamodb-store.js";
import { validation } from "./dynamodb-values.js";

// biome-ignore lint/suspicious/noExplicitAny: request shapes are checked field by field
type Input = any;

/** ResourceNotFoundException as DynamoDB words it. */
export function notFound(): EmbeddedServiceError {
  return new EmbeddedServiceError("ResourceNotFoundException", "Requested resource not found");
}

/** The table named `name`. @throws ResourceNotFoundException. */
export function requireTable(file: DynamoFile, name: unknown): TableMeta {
  if (typeof name !== "string" || name === "")
    throw validation(
      "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null",
    );
  const meta = file.table(name);
  if (!meta) throw notFound();
  return meta;
}

function keySchema(hash: KeyAttr, range?: KeyAttr) {
  return [
    { AttributeName: hash.name, KeyType: "HASH" },
    ...(range ? [{ AttributeName: range.name, KeyType: "RANGE" }] : []),
  ];
}

/** A TableDescription of `meta`. */
export function describe(
  file: DynamoFile,
  meta: TableMeta,
  region: string,
  status = "ACTIVE",
): Record<string, unknown> {
  const arn = `arn:aws:dynamodb:${region}:000000000000:table/${meta.name}`;
  const count = file.count(meta);
  const throughput = { ReadCapacityUnits: 0, WriteCapacityUnits: 0, NumberOfDecreasesToday: 0 };
  return {
    TableName: meta.name,
    TableArn: arn,
    TableId: `00000000-0000-0000-0000-${String(meta.id).padStart(12, "0")}`,
    TableStatus: status,
    CreationDateTime: new Date(meta.created * 1000),
    KeySchema: keySchema(meta.hash, meta.range),
    AttributeDefinitions: meta.attrs.map((a) => ({ AttributeName: a.name, AttributeType: a.type })),
    ItemCount: count,
    TableSizeBytes: 0,
    ProvisionedThroughput: throughput,
    BillingModeSummary: { BillingMode: "PAY_PER_REQUEST" },
    ...(meta.indexes.length > 0
      ? {
          GlobalSecondaryIndexes: meta.indexes.map((ix) => ({
            IndexName: ix.name,
            IndexArn: `${arn}/index/${ix.name}`,
            IndexStatus: "ACTIVE",
            KeySchema: keySchema(ix.hash, ix.range),
            Projection: {
              ProjectionType: ix.projection,
              ...(ix.projection === "INCLUDE" ? { NonKeyAttributes: ix.include } : {}),
            },
            ItemCount: file.indexCount(meta, ix.i),
            IndexSizeBytes: 0,
            ProvisionedThroughput: throughput,
          })),
        }
      : {}),
  };
}

function parseKeys(
  schema: unknown,
  attrs: Map<string, KeyAttr>,
  used: Set<string>,
  where: string,
): { hash: KeyAttr; range?: KeyAttr } {
  const list = Array.isArray(schema)
    ? (schema as Array<{ AttributeName?: string; KeyType?: string }>)
    : [];
  const h = list.find((k) => k.KeyType === "HASH");
  const r = list.find((k) => k.KeyType === "RANGE");
  if (!h || list.length > 2 || (list.length === 2 && !r))
    throw validation(
      `1 validation error detected: Invalid KeySchema of ${where}: a HASH key and at most one RANGE key`,
    );
  const get = (n?: string): KeyAttr => {
    const a = attrs.get(n ?? "");
    if (!a)
      throw validation(
        `One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [${list.map((k) => k.AttributeName).join(", ")}], AttributeDefinitions: [${[...attrs.keys()].join(", ")}]`,
      );
    used.add(a.name);
    return a;
  };
  return { hash: get(h.AttributeName), ...(r ? { range: get(r.AttributeName) } : {}) };
}

/** CreateTable. @throws ResourceInUseException when the table exists; ValidationException. */
export function createTable(file: DynamoFile, input: Input, region: string, nowSeconds: number) {
  const name = input.TableName;
  if (typeof name !== "string" || !/^[A-Za-z0-9_.-]{3,255}$/.test(name))
    throw validation("TableName must be 3 to 255 characters of a-z, A-Z, 0-9, '_', '-' and '.'");
  const attrs = new Map<string, KeyAttr>();
  for (const a of (input.AttributeDefinitions ?? []) as Array<{
    AttributeName: string;
    AttributeType: string;
  }>) {
    if (!["S", "N", "B"].includes(a.AttributeType))
      throw validation(`Invalid AttributeType ${a.AttributeType} for ${a.AttributeName}`);
    attrs.set(a.AttributeName, { name: a.AttributeName, type: a.AttributeType as KeyAttr["type"] });
  }
  const used = new Set<string>();
  const keys = parseKeys(input.KeySchema, attrs, used, "table");
  const indexes: IndexMeta[] = [];
  for (const [i, g] of ((input.GlobalSecondaryIndexes ?? []) as Input[]).entries()) {
    const p = g.Projection ?? {};
    const type = (p.ProjectionType ?? "ALL") as IndexMeta["projection"];
    if (!["ALL", "KEYS_ONLY", "INCLUDE"].includes(type))
      throw validation(`Invalid ProjectionType ${type}`);
    if (indexes.some((x) => x.name === g.IndexName))
      throw validation(`Duplicate index name: ${g.IndexName}`);
    indexes.push({
      name: g.IndexName,
      i,
      ...parseKeys(g.KeySchema, attrs, used, `index ${g.IndexName}`),
      projection: type,
      include: type === "INCLUDE" ? [...((p.NonKeyAttributes ?? []) as string[])] : [],
    });
  }
  if (input.LocalSecondaryIndexes?.length)
    throw validation("LocalSecondaryIndexes are not supported by the embedded backend");
  if (used.size !== attrs.size)
    throw validation(
      `One or more parameter values were invalid: Some AttributeDefinitions are not used. AttributeDefinitions: [${[...attrs.keys()].join(", ")}], keys used: [${[...used].join(", ")}]`,
    );
  const meta = { name, created: nowSeconds, ...keys, attrs: [...attrs.values()], indexes };
  if (!file.createTable(meta))
    throw new EmbeddedServiceError("ResourceInUseException", `Table already exists: ${name}`);
  return { TableDescription: describe(file, requireTable(file, name), region) };
}

/** DescribeTable. */
export function describeTable(file: DynamoFile, input: Input, region: string) {
  file.forget(input.TableName);
  return { Table: describe(file, requireTable(file, input.TableName), region) };
}

/** ListTables (paged by ExclusiveStartTableName, at most `Limit` (100) names). */
export function listTables(file: DynamoFile, input: Input) {
  const limit = input.Limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw validation("Limit must be between 1 and 100");
  const all = file
    .tableNames()
    .filter((n) => !input.ExclusiveStartTableName || n > input.ExclusiveStartTableName);
  const page = all.slice(0, limit);
  return {
    TableNames: page,
    ...(all.length > limit ? { LastEvaluatedTableName: page[page.length - 1] } : {}),
  };
}

/** DeleteTable. */
export function deleteTable(file: DynamoFile, input: Input, region: string) {
  file.forget(input.TableName);
  const meta = requireTable(file, input.TableName);
  const desc = describe(file, meta, region, "DELETING");
  file.deleteTable(meta);
  return { TableDescription: desc };
}

/** UpdateTimeToLive: remembers the setting (items are never expired by the embedded engine). */
export function updateTimeToLive(file: DynamoFile, input: Input) {
  const meta = requireTable(file, input.TableName);
  const spec = input.TimeToLiveSpecification;
  if (!spec || typeof spec.AttributeName !== "string" || typeof spec.Enabled !== "boolean")
    throw validation("TimeToLiveSpecification needs AttributeName and Enabled");
  file.updateTable({ ...meta, ttl: { attribute: spec.AttributeName, enabled: spec.Enabled } });
  return { TimeToLiveSpecification: { AttributeName: spec.AttributeName, Enabled: spec.Enabled } };
}

/** DescribeTimeToLive. */
export function describeTimeToLive(file: DynamoFile, input: Input) {
  file.forget(input.TableName);
  const meta = requireTable(file, input.TableName);
  return {
    TimeToLiveDescription: meta.ttl?.enabled
      ? { TimeToLiveStatus: "ENABLED", AttributeName: meta.ttl.attribute }
      : { TimeToLiveStatus: "DISABLED" },
  };
}
