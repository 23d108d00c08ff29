/**
 * Counts what AWS bills for a run (bench/cost.ts), as `initialize`-step middleware on a bundle's
 * DynamoDB and SQS clients:
 * - DynamoDB: sets `ReturnConsumedCapacity: "INDEXES"` on every call that takes it and records
 *   the ConsumedCapacity the backend returns, by table and by GSI ("reported"); and computes the
 *   units exactly from the items (cost-units.ts: "computed"), reading the item before each write
 *   and after each update with an UNCOUNTED GetItem on a client of its own, and the tables' key
 *   schemas and GSIs with DescribeTable. dynalite reports table units only, and nothing for a
 *   failed conditional write; where a backend reports INDEXES, both are printed with whether
 *   they agree.
 * - SQS: requests as billed: one per 64 KB chunk of payload (SendMessage(Batch), and the messages
 *   a ReceiveMessage returns), FIFO and standard apart, ReceiveMessage calls that return nothing
 *   counted (and counted apart).
 * Counts are a flat `label → number` map, so a `shoal worker` child's can be added over IPC.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { performance } from "node:perf_hooks";
import { DescribeTableCommand, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import {
  type AttributeValue,
  itemSize,
  queryReadUnits,
  readUnits,
  type TableShape,
  tableShape,
  type WireItem,
  writeCharge,
} from "./cost-units.js";
import { isWireItem, messageBytes, type RawClient } from "./cost-wire.js";

/** `label → count`; see {@link CostMeter} for the labels. */
export type CostCounts = Record<string, number>;

/** Adds `b` into `a`. */
export function addCounts(a: CostCounts, b: CostCounts): CostCounts {
  for (const [k, v] of Object.entries(b)) a[k] = (a[k] ?? 0) + v;
  return a;
}

/** A client whose middleware stack takes an `initialize` middleware (SDK or embedded). */
interface Stackable {
  middlewareStack: { add(mw: unknown, opts: { step: string; name: string }): void };
}

type Next = (args: { input: Record<string, unknown> }) => Promise<{ output: unknown }>;

/** Document-client command names and their DynamoDB operation. */
const OPS: Record<string, string> = {
  PutCommand: "PutItem",
  UpdateCommand: "UpdateItem",
  DeleteCommand: "DeleteItem",
  GetCommand: "GetItem",
  QueryCommand: "Query",
  ScanCommand: "Scan",
  BatchWriteCommand: "BatchWriteItem",
  BatchGetCommand: "BatchGetItem",
};
const opOf = (commandName = "?"): { op: string; doc: boolean } =>
  OPS[commandName]
    ? { op: OPS[commandName] as string, doc: true }
    : { op: commandName.replace(/Command$/, ""), doc: false };

const TAKES_CAPACITY = new Set([
  "PutItem",
  "UpdateItem",
  "DeleteItem",
  "GetItem",
  "Query",
  "Scan",
  "BatchWriteItem",
  "BatchGetItem",
]);

/**
 * Labels:
 * - `ddb.req.<table>.<Op>` requests; `ddb.fail.<table>.<Op>` failed conditional writes;
 * - `ddb.rep.w.<table>`, `ddb.rep.w.<table>/<index>`, `ddb.rep.r.<table>`: reported units;
 * - `ddb.cmp.w.<table>`, `ddb.cmp.w.<table>/<index>`, `ddb.cmp.r.<table>`: computed units;
 *   `ddb.cmp.w.<table>.<Op>` the table units by operation; `ddb.cmp.wok.<table>` the table units
 *   of successful writes (what a backend reports); `ddb.bytes.<table>.<Op>` item bytes written;
 * - `sqs.<fifo|std>.<queue>.<Op>` billed requests, `sqs.calls.<queue>.<Op>` calls,
 *   `sqs.empty.<queue>` receives that came back empty, `sqs.msgs.<queue>` messages received.
 */
export class CostMeter {
  counts: CostCounts = {};
  /** Uncounted, unmetered: reads old and new images and table descriptions. */
  readonly raw: RawClient;
  private readonly shapes = new Map<string, Promise<TableShape>>();

  /**
   * @param tableLabel short name of a table (its name without the deployment prefix).
   * @param rawClient a DynamoDB client configured as the metered one, without its middleware.
   */
  constructor(
    rawClient: RawClient,
    private readonly tableLabel: (name: string) => string = (n) => n,
    private readonly queueLabel: (url: string) => string = (u) => u.slice(u.lastIndexOf("/") + 1),
    /** Who sends the request in flight (bench/instrumentation.ts's components), if known. */
    private readonly component: () => string | undefined = () => undefined,
  ) {
    this.raw = rawClient;
  }

  reset(): void {
    this.counts = {};
  }

  /** The request in flight: background (labels under `bg.`) and the meter's own ms in it. */
  private readonly call = new AsyncLocalStorage<{ bg: boolean; ms: number }>();

  private add(label: string, n = 1): void {
    const key = this.call.getStore()?.bg ? `bg.${label}` : label;
    this.counts[key] = (this.counts[key] ?? 0) + n;
  }

  /**
   * Runs one metered request: the sweeper's requests and those on the `leases` table (sweeper
   * shard leases, `shoal worker` heartbeats: time-driven, not task-driven, and on AWS the sweeper
   * runs once a minute) count under `bg.`; the meter's own reads are timed (`meter.ms.<who>`), as
   * they lengthen the handler that waits for the request.
   */
  private metered<T>(table: string, body: () => Promise<T>): Promise<T> {
    const who = this.component() ?? "worker";
    const ctx = { bg: who === "sweeper" || table === "leases", ms: 0 };
    return this.call.run(ctx, async () => {
      try {
        return await body();
      } finally {
        this.add(`meter.ms.${who}`, ctx.ms);
      }
    });
  }

  /** Times the meter's own work in the request in flight. */
  private async timed<T>(p: () => Promise<T>): Promise<T> {
    const t = performance.now();
    try {
      return await p();
    } finally {
      const ctx = this.call.getStore();
      if (ctx) ctx.ms += performance.now() - t;
    }
  }

  private shape(table: string): Promise<TableShape> {
    return this.timed(() => this.shapeOf(table));
  }

  private shapeOf(table: string): Promise<TableShape> {
    let s = this.shapes.get(table);
    if (!s) {
      s = this.raw
        .send(new DescribeTableCommand({ TableName: table }))
        .then((d) => tableShape(d.Table ?? {}));
      this.shapes.set(table, s);
    }
    return s;
  }

  private async read(table: string, key: WireItem): Promise<WireItem | undefined> {
    const r = await this.timed(() =>
      this.raw.send(
        new GetItemCommand({ TableName: table, Key: key as never, ConsistentRead: true }),
      ),
    );
    return r.Item as WireItem | undefined;
  }

  /** Adds the metering middleware to `client` (a DynamoDB document or low-level client). */
  instrumentDynamo(client: Stackable): void {
    client.middlewareStack.add(
      ((next: Next, ctx: { commandName?: string }) =>
        async (args: { input: Record<string, unknown> }) => {
          const { op, doc } = opOf(ctx.commandName);
          if (!TAKES_CAPACITY.has(op)) return next(args);
          const input: Record<string, unknown> = {
            ...args.input,
            ReturnConsumedCapacity: "INDEXES",
          };
          // A document client's values are still plain at this step (it marshals them at the
          // serialize step, whatever the command's name says): marshal them as it does.
          const wire = (x: unknown): WireItem =>
            (doc || !isWireItem(x)
              ? marshall(x as Record<string, unknown>, {
                  removeUndefinedValues: true,
                  convertClassInstanceToMap: true,
                })
              : x) as WireItem;
          const table = String(input.TableName ?? "");
          const label = this.tableLabel(table);
          return this.metered(label, async () => {
            let before: WireItem | undefined;
            let key: WireItem | undefined;
            let injected = false;
            if (op === "PutItem" || op === "UpdateItem" || op === "DeleteItem") {
              // The meter never fails the request: what it cannot compute it counts as an error.
              try {
                const shape = await this.shape(table);
                if (op === "PutItem") {
                  const item = wire(input.Item);
                  if (shape.keys.every((k) => k in item))
                    key = Object.fromEntries(shape.keys.map((k) => [k, item[k] as AttributeValue]));
                } else key = wire(input.Key);
                // The old image comes back with the write itself where the caller asks for
                // nothing back (ALL_OLD, removed from the answer): one uncounted read less.
                if (input.ReturnValues === undefined || input.ReturnValues === "NONE") {
                  input.ReturnValues = "ALL_OLD";
                  injected = true;
                } else if (key) before = await this.read(table, key);
              } catch {
                key = undefined;
                this.add("meter.errors");
              }
            }
            let result: { output: unknown };
            try {
              result = await next({ ...args, input });
            } catch (e) {
              if ((e as Error).name === "ConditionalCheckFailedException" && key) {
                const shape = await this.shape(table);
                if (injected) before = await this.read(table, key).catch(() => undefined);
                const c = writeCharge(shape, before, undefined, true);
                this.add(`ddb.req.${label}.${op}`);
                this.add(`ddb.fail.${label}.${op}`);
                this.add(`ddb.cmp.w.${label}`, c.table);
                this.add(`ddb.cmp.w.${label}.${op}`, c.table);
              }
              throw e;
            }
            this.add(`ddb.req.${label}.${op}`);
            this.recordReported(result.output, this.kindOf(op));
            try {
              const out = result.output as { Attributes?: unknown };
              if (injected) {
                before = out.Attributes ? wire(out.Attributes) : undefined;
                delete out.Attributes;
              }
              await this.recordComputed(op, input, table, label, before, key, result.output, wire);
            } catch {
              this.add("meter.errors");
            }
            return result;
          });
        }) as never,
      { step: "initialize", name: "benchCostMeter" },
    );
  }

  private recordReported(output: unknown, kind: "r" | "w"): void {
    const cc = (output as { ConsumedCapacity?: unknown } | undefined)?.ConsumedCapacity;
    const list = (Array.isArray(cc) ? cc : cc ? [cc] : []) as Array<{
      TableName?: string;
      CapacityUnits?: number;
      ReadCapacityUnits?: number;
      WriteCapacityUnits?: number;
      Table?: { CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number };
      GlobalSecondaryIndexes?: Record<
        string,
        { CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number }
      >;
    }>;
    for (const c of list) {
      const label = this.tableLabel(c.TableName ?? "");
      // With INDEXES, `Table` holds the table's share of the total `CapacityUnits`.
      const tableUnits = c.Table?.CapacityUnits ?? c.CapacityUnits ?? 0;
      this.add(`ddb.rep.${kind}.${label}`, tableUnits);
      this.add(`ddb.rep.calls.${kind}`);
      for (const [ix, u] of Object.entries(c.GlobalSecondaryIndexes ?? {}))
        this.add(`ddb.rep.${kind}.${label}/${ix}`, u.CapacityUnits ?? 0);
    }
  }

  private async recordComputed(
    op: string,
    input: Record<string, unknown>,
    table: string,
    label: string,
    before: WireItem | undefined,
    key: WireItem | undefined,
    output: unknown,
    wire: (x: unknown) => WireItem,
  ): Promise<void> {
    const out = output as Record<string, unknown>;
    const consistent = input.ConsistentRead === true;
    if (op === "PutItem" || op === "UpdateItem" || op === "DeleteItem") {
      const shape = await this.shape(table);
      const after =
        op === "PutItem"
          ? wire(input.Item)
          : op === "DeleteItem"
            ? undefined
            : input.ReturnValues === "ALL_NEW" && out.Attributes
              ? wire(out.Attributes)
              : await this.read(table, key as WireItem);
      const c = writeCharge(shape, before, after);
      this.add(`ddb.cmp.w.${label}`, c.table);
      this.add(`ddb.cmp.wok.${label}`, c.table);
      this.add(`ddb.cmp.w.${label}.${op}`, c.table);
      this.add(`ddb.bytes.${label}.${op}`, Math.max(itemSize(before), itemSize(after)));
      for (const [ix, u] of Object.entries(c.indexes)) this.add(`ddb.cmp.w.${label}/${ix}`, u);
    } else if (op === "GetItem") {
      this.add(
        `ddb.cmp.r.${label}`,
        readUnits(itemSize(out.Item ? wire(out.Item) : {}), consistent),
      );
    } else if (op === "Query" || op === "Scan") {
      const items = ((out.Items as unknown[]) ?? []).map(wire);
      this.add(`ddb.cmp.r.${label}`, queryReadUnits(items, consistent));
    } else if (op === "BatchGetItem") {
      for (const [t, items] of Object.entries((out.Responses as Record<string, unknown[]>) ?? {}))
        for (const i of items)
          this.add(`ddb.cmp.r.${this.tableLabel(t)}`, readUnits(itemSize(wire(i)), false));
    } else if (op === "BatchWriteItem") {
      // Batch writes carry no condition: before images are not read (the item may exist: a
      // put over an existing item is charged the larger image; Shoal's batch deletes expire items).
      for (const [t, reqs] of Object.entries(
        (input.RequestItems as Record<string, unknown[]>) ?? {},
      )) {
        const shape = await this.shape(t);
        for (const r of reqs as Array<{
          PutRequest?: { Item: unknown };
          DeleteRequest?: { Key: unknown };
        }>) {
          const k = r.PutRequest
            ? Object.fromEntries(
                shape.keys.map((a) => [a, wire(r.PutRequest?.Item)[a] as Record<string, unknown>]),
              )
            : wire(r.DeleteRequest?.Key);
          const c = writeCharge(
            shape,
            await this.read(t, k),
            r.PutRequest ? wire(r.PutRequest.Item) : undefined,
          );
          this.add(`ddb.cmp.w.${this.tableLabel(t)}`, c.table);
          this.add(`ddb.cmp.wok.${this.tableLabel(t)}`, c.table);
          for (const [ix, u] of Object.entries(c.indexes))
            this.add(`ddb.cmp.w.${this.tableLabel(t)}/${ix}`, u);
        }
      }
    }
  }

  /** Adds the SQS metering middleware to `client`. */
  instrumentSqs(client: Stackable): void {
    client.middlewareStack.add(
      ((next: Next, ctx: { commandName?: string }) =>
        async (args: { input: Record<string, unknown> }) => {
          const op = (ctx.commandName ?? "?").replace(/Command$/, "");
          const url = String(args.input.QueueUrl ?? args.input.QueueName ?? "");
          const q = this.queueLabel(url);
          const kind = url.endsWith(".fifo") ? "fifo" : "std";
          return this.metered("", async () => {
            const result = await next(args);
            let payload = 0;
            if (op === "SendMessage") payload = messageBytes(args.input);
            else if (op === "SendMessageBatch")
              payload = ((args.input.Entries as Array<Record<string, unknown>>) ?? []).reduce(
                (a, e) => a + messageBytes(e),
                0,
              );
            else if (op === "ReceiveMessage") {
              const msgs =
                (result.output as { Messages?: Array<Record<string, unknown>> }).Messages ?? [];
              payload = msgs.reduce((a, m) => a + messageBytes(m), 0);
              this.add(`sqs.msgs.${q}`, msgs.length);
              if (msgs.length === 0) this.add(`sqs.empty.${q}`);
            }
            this.add(`sqs.calls.${q}.${op}`);
            this.add(`sqs.${kind}.${q}.${op}`, Math.max(1, Math.ceil(payload / 65536)));
            return result;
          });
        }) as never,
      { step: "initialize", name: "benchCostMeterSqs" },
    );
  }

  /** Tells recordReported whether the units of the call in flight are reads or writes. */
  kindOf(op: string): "r" | "w" {
    return op === "PutItem" || op === "UpdateItem" || op === "DeleteItem" || op === "BatchWriteItem"
      ? "w"
      : "r";
  }
}

/**
 * Meters every client of the given classes this process uses from now on (the middleware is
 * added on a client's first request): for a `shoal worker` process, whose client bundle is built
 * inside lib/standalone/worker-process.ts. Clients in `exclude` (the meter's own) stay unmetered.
 */
export function meterEveryClient(
  meter: CostMeter,
  classes: ReadonlyArray<readonly [{ prototype: object }, "dynamo" | "sqs"]>,
  exclude: readonly object[] = [],
): void {
  const done = new WeakSet<object>(exclude);
  for (const [cls, kind] of classes) {
    const proto = cls.prototype as { send: (...a: unknown[]) => unknown };
    const send = proto.send;
    proto.send = function (this: Stackable, ...a: unknown[]) {
      if (!done.has(this)) {
        done.add(this);
        if (kind === "dynamo") meter.instrumentDynamo(this);
        else meter.instrumentSqs(this);
      }
      return send.apply(this, a);
    };
  }
}
