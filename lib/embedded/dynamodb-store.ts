/**
 * The SQLite layout of the embedded DynamoDB engine (node:sqlite, synchronous):
 * `ddb_tables` (one row per table: its definition as JSON), `ddb_items` (every item, keyed by
 * table id and byte-comparable key encodings, the item as wire JSON) and `ddb_index` (one row
 * per GSI entry: index key then table key, pointing at the item). Several processes may open one
 * file: WAL journal, `synchronous=NORMAL` (a committed write survives `kill -9`), a 10 s busy
 * timeout, and every write runs in one `BEGIN IMMEDIATE` transaction with its condition check.
 */
import type { DatabaseSync as Database, StatementSync } from "node:sqlite";
import { type AV, encodeKey, type Item, validation } from "./dynamodb-values.js";

// Loaded when this module runs rather than when it links, so that quiet-sqlite-warning.ts
// (imported before this module) already filters node:sqlite's ExperimentalWarning.
const { DatabaseSync } = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite");

/** A key attribute of a table or index. */
export interface KeyAttr {
  name: string;
  type: "S" | "N" | "B";
}

/** A global secondary index of a table. */
export interface IndexMeta {
  name: string;
  /** The index's number inside its table (rows of `ddb_index`). */
  i: number;
  hash: KeyAttr;
  range?: KeyAttr;
  projection: "ALL" | "KEYS_ONLY" | "INCLUDE";
  include: string[];
}

/** A table as the engine keeps it. */
export interface TableMeta {
  id: number;
  name: string;
  /** Creation time, epoch seconds. */
  created: number;
  hash: KeyAttr;
  range?: KeyAttr;
  attrs: KeyAttr[];
  indexes: IndexMeta[];
  ttl?: { attribute: string; enabled: boolean };
}

const EMPTY = new Uint8Array(0);

/** One SQLite connection with its prepared statements and table cache. */
export class DynamoFile {
  readonly db: Database;
  private readonly stmts = new Map<string, StatementSync>();
  private readonly tables = new Map<string, TableMeta>();

  /** Opens (creating if needed) `file`; `:memory:` keeps everything in this process. */
  constructor(file: string) {
    this.db = new DatabaseSync(file);
    this.db.exec("PRAGMA busy_timeout = 10000");
    if (file !== ":memory:") this.db.exec("PRAGMA journal_mode = WAL");
    this.db.exec("PRAGMA synchronous = NORMAL");
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS ddb_tables (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE NOT NULL, def TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS ddb_items (t INTEGER NOT NULL, pk BLOB NOT NULL, sk BLOB NOT NULL, item TEXT NOT NULL, size INTEGER NOT NULL, PRIMARY KEY (t, pk, sk)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS ddb_index (t INTEGER NOT NULL, i INTEGER NOT NULL, ipk BLOB NOT NULL, isk BLOB NOT NULL, pk BLOB NOT NULL, sk BLOB NOT NULL, PRIMARY KEY (t, i, ipk, isk, pk, sk)) WITHOUT ROWID;
    `);
  }

  /** A cached prepared statement. */
  stmt(sql: string): StatementSync {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  /** Runs `fn` in one `BEGIN IMMEDIATE` transaction (rolled back when it throws). */
  write<T>(fn: () => T): T {
    // A transaction left open (a failure between BEGIN and COMMIT/ROLLBACK) would make BEGIN fail
    // on every later write: end it first.
    if (this.db.isTransaction) this.stmt("ROLLBACK").run();
    this.stmt("BEGIN IMMEDIATE").run();
    this.checkOthers();
    try {
      const r = fn();
      this.stmt("COMMIT").run();
      return r;
    } catch (e) {
      if (this.db.isTransaction) this.stmt("ROLLBACK").run();
      throw e;
    }
  }

  /** `PRAGMA data_version` when the table cache was last known good. */
  private dataVersion = -1;

  /**
   * Forgets cached definitions when another connection committed since the last look (it may
   * have deleted and re-created a table under a new id); `PRAGMA data_version` costs about a
   * microsecond and changes only for other connections' commits.
   */
  private checkOthers(): void {
    const v = Number(
      (this.stmt("PRAGMA data_version").get() as { data_version: number | bigint }).data_version,
    );
    if (v !== this.dataVersion) {
      this.tables.clear();
      this.dataVersion = v;
    }
  }

  /**
   * The table named `name`, re-read from the file on a miss or after another connection's
   * commit (another process may have made, deleted or re-created it).
   */
  table(name: string): TableMeta | undefined {
    this.checkOthers();
    const hit = this.tables.get(name);
    if (hit) return hit;
    const row = this.stmt("SELECT id, def FROM ddb_tables WHERE name = ?").get(name) as
      | { id: number; def: string }
      | undefined;
    if (!row) return undefined;
    const meta = { ...(JSON.parse(row.def) as Omit<TableMeta, "id">), id: row.id };
    this.tables.set(name, meta);
    return meta;
  }

  /** Forgets cached definitions (after DeleteTable or UpdateTimeToLive). */
  forget(name: string): void {
    this.tables.delete(name);
  }

  /** Names of every table, sorted. */
  tableNames(): string[] {
    return (
      this.stmt("SELECT name FROM ddb_tables ORDER BY name").all() as Array<{ name: string }>
    ).map((r) => r.name);
  }

  /** Stores a new table; `false` when one of that name exists. */
  createTable(meta: Omit<TableMeta, "id">): boolean {
    return this.write(() => {
      if (this.stmt("SELECT 1 FROM ddb_tables WHERE name = ?").get(meta.name)) return false;
      this.stmt("INSERT INTO ddb_tables (name, def) VALUES (?, ?)").run(
        meta.name,
        JSON.stringify(meta),
      );
      return true;
    });
  }

  /** Rewrites a table's definition (TTL setting). */
  updateTable(meta: TableMeta): void {
    const { id, ...def } = meta;
    this.stmt("UPDATE ddb_tables SET def = ? WHERE id = ?").run(JSON.stringify(def), id);
    this.forget(meta.name);
  }

  /** Deletes a table and its items. */
  deleteTable(meta: TableMeta): void {
    this.write(() => {
      this.stmt("DELETE FROM ddb_tables WHERE id = ?").run(meta.id);
      this.stmt("DELETE FROM ddb_items WHERE t = ?").run(meta.id);
      this.stmt("DELETE FROM ddb_index WHERE t = ?").run(meta.id);
    });
    this.forget(meta.name);
  }

  /** Number of items of a table. */
  count(meta: TableMeta): number {
    return Number(
      (this.stmt("SELECT count(*) AS n FROM ddb_items WHERE t = ?").get(meta.id) as { n: number })
        .n,
    );
  }

  /** Number of entries of one GSI. */
  indexCount(meta: TableMeta, i: number): number {
    return Number(
      (
        this.stmt("SELECT count(*) AS n FROM ddb_index WHERE t = ? AND i = ?").get(meta.id, i) as {
          n: number;
        }
      ).n,
    );
  }

  /** The stored item at a key (encoded), with its size. */
  get(meta: TableMeta, pk: Uint8Array, sk: Uint8Array): { item: Item; size: number } | undefined {
    const row = this.stmt("SELECT item, size FROM ddb_items WHERE t = ? AND pk = ? AND sk = ?").get(
      meta.id,
      pk,
      sk,
    ) as { item: string; size: number } | undefined;
    return row && { item: JSON.parse(row.item) as Item, size: row.size };
  }

  /** Writes `item` (replacing `old`), keeping every GSI's entries in step. */
  put(
    meta: TableMeta,
    pk: Uint8Array,
    sk: Uint8Array,
    item: Item,
    size: number,
    old: Item | undefined,
  ): void {
    // An UPDATE rewrites the row in place; INSERT OR REPLACE would delete and insert it.
    const text = JSON.stringify(item);
    if (old)
      this.stmt("UPDATE ddb_items SET item = ?, size = ? WHERE t = ? AND pk = ? AND sk = ?").run(
        text,
        size,
        meta.id,
        pk,
        sk,
      );
    else
      this.stmt("INSERT INTO ddb_items (t, pk, sk, item, size) VALUES (?, ?, ?, ?, ?)").run(
        meta.id,
        pk,
        sk,
        text,
        size,
      );
    for (const ix of meta.indexes) {
      const before = old && indexKey(ix, old);
      const after = indexKey(ix, item);
      if (before && after && sameKey(before, after)) continue;
      if (before)
        this.stmt(
          "DELETE FROM ddb_index WHERE t = ? AND i = ? AND ipk = ? AND isk = ? AND pk = ? AND sk = ?",
        ).run(meta.id, ix.i, before[0], before[1], pk, sk);
      if (after)
        this.stmt(
          "INSERT OR REPLACE INTO ddb_index (t, i, ipk, isk, pk, sk) VALUES (?, ?, ?, ?, ?, ?)",
        ).run(meta.id, ix.i, after[0], after[1], pk, sk);
    }
  }

  /** Deletes the item at a key (whose stored value is `old`) and its GSI entries. */
  delete(meta: TableMeta, pk: Uint8Array, sk: Uint8Array, old: Item): void {
    this.stmt("DELETE FROM ddb_items WHERE t = ? AND pk = ? AND sk = ?").run(meta.id, pk, sk);
    for (const ix of meta.indexes) {
      const before = indexKey(ix, old);
      if (before)
        this.stmt(
          "DELETE FROM ddb_index WHERE t = ? AND i = ? AND ipk = ? AND isk = ? AND pk = ? AND sk = ?",
        ).run(meta.id, ix.i, before[0], before[1], pk, sk);
    }
  }
}

function sameKey(a: [Uint8Array, Uint8Array], b: [Uint8Array, Uint8Array]): boolean {
  return Buffer.compare(a[0], b[0]) === 0 && Buffer.compare(a[1], b[1]) === 0;
}

/** The encoded key of `item` in index `ix`, or `undefined` when the item is not in it (sparse). */
export function indexKey(ix: IndexMeta, item: Item): [Uint8Array, Uint8Array] | undefined {
  const h = item[ix.hash.name];
  if (!h || h[ix.hash.type] === undefined) return undefined;
  if (!ix.range) return [encodeKey(h), EMPTY];
  const r = item[ix.range.name];
  if (!r || r[ix.range.type] === undefined) return undefined;
  return [encodeKey(h), encodeKey(r)];
}

/**
 * The encoded primary key of `key` (a Key parameter or an item).
 * @param exact a Key parameter must hold the key attributes and nothing else.
 * @throws ValidationException "The provided key element does not match the schema".
 */
export function tableKey(
  meta: TableMeta,
  key: Item | undefined,
  exact: boolean,
): [Uint8Array, Uint8Array] {
  const bad = () => validation("The provided key element does not match the schema");
  if (!key) throw bad();
  const h = key[meta.hash.name];
  const r = meta.range && key[meta.range.name];
  if (exact && Object.keys(key).length !== (meta.range ? 2 : 1)) throw bad();
  if (
    !h ||
    h[meta.hash.type] === undefined ||
    (meta.range && (!r || r[meta.range.type] === undefined))
  )
    throw bad();
  for (const [v, a] of [
    [h, meta.hash],
    [r, meta.range],
  ] as Array<[AV | undefined, KeyAttr | undefined]>)
    if (v && a && (v as Record<string, unknown>)[a.type] === "")
      throw validation(
        `One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: ${a.name}`,
      );
  return [encodeKey(h), r ? encodeKey(r) : EMPTY];
}
