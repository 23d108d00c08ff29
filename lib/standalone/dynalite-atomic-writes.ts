/**
 * Makes dynalite write an item and its index entries at once, as DynamoDB does.
 *
 * dynalite 4.0.0 writes a PutItem, UpdateItem or DeleteItem as separate LevelDB writes: first the
 * index entries (`db.updateIndexes`: deletes, then puts), then the item. When the emulator dies
 * in between (`kill -9`, or its disk fills and the item's write fails), the index keeps an entry
 * the item never got. `npm run chaos -- --seed 2030 --scenario disk-full` found one: the outbox
 * index said an attempt had SUCCEEDED while the attempt item still read RUNNING, so the sweeper
 * sent its task event again every second and the attempt never ended (docs/reliability.md). The
 * reverse (old index entry deleted, new item not written) loses a lease from the index, so a
 * dead worker's attempt would never be failed over.
 *
 * Here the index writes of an item write are held back and written with the item in one LevelDB
 * batch, which LevelDB applies whole or not at all (one record in its write-ahead log). The
 * holding is safe because dynalite locks the item's key for the whole action and writes the
 * item right after `updateIndexes` calls back.
 */
import { createRequire } from "node:module";

/** What this patch uses of dynalite's `db` module (node_modules/dynalite/db/index.js). */
interface DynaliteDb {
  create(options: unknown): DynaliteStore;
  updateIndexes(
    store: DynaliteStore,
    table: DynaliteTable,
    existingItem: unknown,
    item: unknown,
    cb: (err?: Error | null) => void,
  ): void;
  getIndexActions(
    indexes: unknown[],
    existingItem: unknown,
    item: unknown,
    table: DynaliteTable,
  ): {
    puts: { index: string; key: string; item: unknown }[];
    deletes: { index: string; key: string }[];
  };
  createKey(item: unknown, table: DynaliteTable): string;
}

interface DynaliteTable {
  TableName: string;
  LocalSecondaryIndexes?: unknown[];
  GlobalSecondaryIndexes?: unknown[];
}

type Callback = (err?: Error | null) => void;

interface BatchOp {
  type: "put" | "del";
  key: string;
  value?: unknown;
}

interface SubDb {
  put(key: string, value: unknown, cb: Callback): void;
  del(key: string, cb: Callback): void;
}

interface DynaliteStore {
  db: { batch(ops: BatchOp[], cb: Callback): void };
  getItemDb(name: string): SubDb;
}

/** Index writes held until their item is written, by table and item key. */
const HELD = Symbol("shoal.heldIndexWrites");
const PATCHED = Symbol("shoal.atomicItemDb");

type PatchedStore = DynaliteStore & { [HELD]?: Map<string, BatchOp[]> };

let installed = false;

/**
 * Patches dynalite's `db` module (the instance dynalite itself uses) so that every store created
 * afterwards writes an item and its index entries in one LevelDB batch. Idempotent; call it
 * before starting dynalite. Relies on dynalite 4.0.0's key prefixes (`item-<table>~`,
 * `index-<global|local>~<table>~<index>~`), which is why the dependency is pinned exactly.
 */
export function makeDynaliteWritesAtomic(): void {
  if (installed) return;
  installed = true;
  const require = createRequire(import.meta.url);
  const db = require("dynalite/db/index.js") as DynaliteDb;
  const create = db.create.bind(db);
  const updateIndexes = db.updateIndexes.bind(db);

  db.create = (options) => {
    const store = create(options) as PatchedStore;
    store[HELD] = new Map();
    const getItemDb = store.getItemDb.bind(store);
    store.getItemDb = (name) => atomicItemDb(store, name, getItemDb(name));
    return store;
  };

  db.updateIndexes = (store, table, existingItem, item, cb) => {
    const held = (store as PatchedStore)[HELD];
    if (!held || (!existingItem && !item))
      return updateIndexes(store, table, existingItem, item, cb);
    const ops: BatchOp[] = [];
    const puts: BatchOp[] = [];
    for (const type of ["Local", "Global"] as const) {
      const indexes = table[`${type}SecondaryIndexes`] ?? [];
      const actions = db.getIndexActions(indexes, existingItem, item, table);
      const prefix = (index: string) => `index-${type.toLowerCase()}~${table.TableName}~${index}~`;
      for (const d of actions.deletes) ops.push({ type: "del", key: prefix(d.index) + d.key });
      for (const p of actions.puts)
        puts.push({ type: "put", key: prefix(p.index) + p.key, value: p.item });
    }
    // dynalite deletes before it puts; a batch keeps that order.
    ops.push(...puts);
    held.set(heldKey(table.TableName, db.createKey(item ?? existingItem, table)), ops);
    cb(null);
  };
}

function heldKey(table: string, key: string): string {
  return `${table}\u0000${key}`;
}

/** The item sub-database of `table`, whose put and del carry the held index writes along. */
function atomicItemDb(store: PatchedStore, table: string, sub: SubDb): SubDb {
  const patched = sub as SubDb & { [PATCHED]?: true };
  if (patched[PATCHED]) return sub;
  patched[PATCHED] = true;
  const put = sub.put.bind(sub);
  const del = sub.del.bind(sub);
  const take = (key: string): BatchOp[] | undefined => {
    const k = heldKey(table, key);
    const ops = store[HELD]?.get(k);
    store[HELD]?.delete(k);
    return ops && ops.length > 0 ? ops : undefined;
  };
  const itemKey = (key: string) => `item-${table}~${key}`;
  sub.put = (key, value, cb) => {
    const ops = take(key);
    if (!ops) return put(key, value, cb);
    store.db.batch([...ops, { type: "put", key: itemKey(key), value }], cb);
  };
  sub.del = (key, cb) => {
    const ops = take(key);
    if (!ops) return del(key, cb);
    store.db.batch([...ops, { type: "del", key: itemKey(key) }], cb);
  };
  return sub;
}
