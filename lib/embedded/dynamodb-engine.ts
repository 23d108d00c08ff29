/**
 * The embedded DynamoDB engine: the operations Shoal uses, on one SQLite file, with inputs and
 * outputs in the awsJson1_0 shapes (binary values as base64; `CreationDateTime` as a Date). Both
 * the in-process client (dynamodb-client.ts) and the wire handler (dynamodb-http.ts) call it.
 */
import { EmbeddedServiceError, storageFailure } from "./client-stack.js";
import { type Consumed, capacityShape } from "./dynamodb-capacity.js";
import { batchGetItem, getItem, readPage } from "./dynamodb-reads.js";
import { DynamoFile } from "./dynamodb-store.js";
import {
  createTable,
  deleteTable,
  describeTable,
  describeTimeToLive,
  listTables,
  updateTimeToLive,
} from "./dynamodb-tables.js";
import { validation } from "./dynamodb-values.js";
import { batchWriteItem, deleteItem, putItem, type Report, updateItem } from "./dynamodb-writes.js";

/**
 * Observer of consumed capacity: called once per operation and table, failed conditional writes
 * included (which return no ConsumedCapacity on AWS).
 * @param op the operation (`PutItem`, `Query`, …).
 * @param consumed DynamoDB's ConsumedCapacity in its INDEXES shape.
 */
export type CapacityObserver = (
  op: string,
  table: string,
  consumed: Record<string, unknown>,
) => void;

/** Options of an engine. */
export interface EngineOptions {
  /** An SQLite file path (created if missing), or `:memory:`. */
  file: string;
  /** Region in ARNs (default `us-east-1`). */
  region?: string;
  onCapacity?: CapacityObserver;
}

// biome-ignore lint/suspicious/noExplicitAny: request shapes are checked field by field
type Input = any;

const SINGLE = new Set(["GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan"]);

/** The engine of one SQLite connection. */
export class DynamoEngine {
  readonly file: DynamoFile;
  private readonly region: string;

  constructor(private readonly options: EngineOptions) {
    this.file = new DynamoFile(options.file);
    this.region = options.region ?? "us-east-1";
  }

  /**
   * Runs operation `op` (`PutItem`, `Query`, …) on `input`.
   * @throws EmbeddedServiceError: ValidationException, ResourceNotFoundException,
   *   ResourceInUseException, ConditionalCheckFailedException, UnknownOperationException.
   */
  execute(op: string, input: Input): Record<string, unknown> {
    if (!input || typeof input !== "object")
      throw validation("The request body must be a JSON object");
    const mode = input.ReturnConsumedCapacity ?? "NONE";
    if (!["NONE", "TOTAL", "INDEXES"].includes(mode))
      throw validation(
        `1 validation error detected: Value '${mode}' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]`,
      );
    const consumed: Array<Record<string, unknown>> = [];
    const observer = this.options.onCapacity;
    const report: Report = (name, table, given) => {
      if (!observer && mode === "NONE") return;
      const c: Consumed = typeof given === "function" ? given() : given;
      observer?.(name, table, capacityShape(table, c, "INDEXES"));
      if (mode !== "NONE") consumed.push(capacityShape(table, c, mode));
    };
    let out: Record<string, unknown>;
    try {
      out = this.run(op, input, report);
    } catch (e) {
      // A lock held beyond the busy timeout, a full disk: a retryable 500, as DynamoDB's own
      // transient errors are (here too for the HTTP endpoint, which does not go through send).
      throw storageFailure(e);
    }
    if (mode !== "NONE" && consumed.length > 0)
      out.ConsumedCapacity = SINGLE.has(op) ? consumed[0] : consumed;
    return out;
  }

  private run(op: string, input: Input, report: Report): Record<string, unknown> {
    const f = this.file;
    switch (op) {
      case "CreateTable":
        return createTable(f, input, this.region, Math.floor(Date.now() / 1000));
      case "DescribeTable":
        return describeTable(f, input, this.region);
      case "ListTables":
        return listTables(f, input);
      case "DeleteTable":
        return deleteTable(f, input, this.region);
      case "UpdateTimeToLive":
        return updateTimeToLive(f, input);
      case "DescribeTimeToLive":
        return describeTimeToLive(f, input);
      case "GetItem":
        return getItem(f, input, report);
      case "PutItem":
        return putItem(f, input, report);
      case "UpdateItem":
        return updateItem(f, input, report);
      case "DeleteItem":
        return deleteItem(f, input, report);
      case "Query":
        return readPage(f, input, report, "Query");
      case "Scan":
        return readPage(f, input, report, "Scan");
      case "BatchGetItem":
        return batchGetItem(f, input, report);
      case "BatchWriteItem":
        return batchWriteItem(f, input, report);
      case "TransactWriteItems":
      case "TransactGetItems":
        throw validation(`${op} is not supported by the embedded backend`);
      default:
        throw new EmbeddedServiceError("UnknownOperationException", `Unknown operation ${op}`);
    }
  }

  /** Closes the SQLite connection. */
  close(): void {
    this.file.db.close();
  }
}
