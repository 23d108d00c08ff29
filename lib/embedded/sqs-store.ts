/**
 * The embedded SQS engine's storage: one node:sqlite connection per database file and process,
 * shared by every EmbeddedSQSClient of that file (refcounted), with the tables, the prepared
 * statements, the `BEGIN IMMEDIATE` transactions and the long-poll waiters.
 *
 * Durability and sharing: WAL journal, `synchronous=NORMAL` (a committed transaction survives
 * kill -9 of the process; an OS crash may lose the last ones), `busy_timeout` 5 s, so that
 * standalone's processes and `shoal worker`s can open one file together.
 *
 * Waking long polls: a commit in this process wakes this process's waiters on that queue at
 * once; after a commit that may make a message visible, the process also touches the file's
 * `-notify` companion, which every process watches (fs.watch, inotify: no polling), and a change
 * is confirmed by `PRAGMA data_version`, with a 1 s check as a fallback while anyone waits. The
 * `-wal` file is not watched: its writes come before the commit is visible to other connections,
 * so a check on its last event could miss the commit (seen: one wake-up in five took the fallback).
 */
import { closeSync, type FSWatcher, futimesSync, openSync, watch } from "node:fs";
import { resolve } from "node:path";
import type { DatabaseSync as Database, StatementSync } from "node:sqlite";
import { storageFailure } from "./client-stack.js";

// Loaded when this module runs rather than when it links, so that quiet-sqlite-warning.ts
// (imported before this module) already filters node:sqlite's ExperimentalWarning.
const { DatabaseSync } = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite");

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sqs_queues (
  name TEXT PRIMARY KEY,
  fifo INTEGER NOT NULL,
  attrs TEXT NOT NULL,
  created_s INTEGER NOT NULL,
  modified_s INTEGER NOT NULL,
  next_seq INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS sqs_messages (
  seq INTEGER PRIMARY KEY,
  queue TEXT NOT NULL,
  id TEXT NOT NULL,
  body TEXT NOT NULL,
  attrs TEXT,
  md5_body TEXT NOT NULL,
  md5_attrs TEXT,
  group_id TEXT,
  dedup_id TEXT,
  seq_number TEXT,
  sent_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL,
  visible_ms INTEGER NOT NULL,
  receive_count INTEGER NOT NULL DEFAULT 0,
  first_receive_ms INTEGER,
  receive_ms INTEGER,
  receipt TEXT,
  dlq_source TEXT
);
CREATE INDEX IF NOT EXISTS sqs_messages_visible ON sqs_messages(queue, visible_ms);
CREATE INDEX IF NOT EXISTS sqs_messages_group ON sqs_messages(queue, group_id, seq)
  WHERE group_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS sqs_messages_received ON sqs_messages(queue, group_id, visible_ms)
  WHERE receive_count > 0 AND group_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS sqs_dedup (
  queue TEXT NOT NULL,
  key TEXT NOT NULL,
  message_id TEXT NOT NULL,
  seq_number TEXT,
  expires_ms INTEGER NOT NULL,
  PRIMARY KEY (queue, key)
) WITHOUT ROWID;
`;

/**
 * FIFO message groups, one row per group that has messages: its oldest message (head_seq) and
 * when it can next be received (ready_ms: the head's visible_ms, or later while any of the
 * group's messages is in flight). A receive walks the (queue, ready_ms, head_seq) index from the
 * oldest ready group and stops after MaxNumberOfMessages, so its cost does not grow with the
 * number of groups. Triggers keep the table in step with sqs_messages on every connection
 * (FIFO queue names end in `.fifo`; standard queues have no rows here).
 */
const GROUPS = `
CREATE TABLE IF NOT EXISTS sqs_fifo_groups (
  queue TEXT NOT NULL,
  group_id TEXT NOT NULL,
  head_seq INTEGER NOT NULL,
  ready_ms INTEGER NOT NULL,
  PRIMARY KEY (queue, group_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sqs_fifo_groups_ready ON sqs_fifo_groups(queue, ready_ms, head_seq);
-- A message due later than before (a receive, a longer visibility) can only move its group's
-- ready time later: when it is the head or has been received, ready_ms = max(ready_ms, its).
CREATE TRIGGER IF NOT EXISTS sqs_fifo_groups_later
  AFTER UPDATE OF visible_ms, receive_count ON sqs_messages
  WHEN NEW.group_id IS NOT NULL AND NEW.queue LIKE '%.fifo' AND NEW.visible_ms >= OLD.visible_ms
  BEGIN UPDATE sqs_fifo_groups SET ready_ms = MAX(ready_ms, NEW.visible_ms)
    WHERE queue = NEW.queue AND group_id = NEW.group_id
      AND (NEW.receive_count > 0 OR head_seq = NEW.seq); END;
${["INSERT", "UPDATE", "DELETE"]
  .map((event) => {
    const row = event === "DELETE" ? "OLD" : "NEW";
    // A new message (rowids only grow) is the head only of a group that had none; a deleted one
    // changes the group only when it was the head or had been received; a message due sooner
    // (visibility changed to 0) needs the group's ready time found again.
    const when =
      event === "INSERT"
        ? ""
        : event === "DELETE"
          ? ` AND (OLD.receive_count > 0 OR OLD.seq = (SELECT head_seq FROM sqs_fifo_groups
              WHERE queue = OLD.queue AND group_id = OLD.group_id))`
          : " AND NEW.visible_ms < OLD.visible_ms";
    const body =
      event === "INSERT"
        ? `INSERT OR IGNORE INTO sqs_fifo_groups (queue, group_id, head_seq, ready_ms)
             VALUES (NEW.queue, NEW.group_id, NEW.seq, NEW.visible_ms);`
        : `DELETE FROM sqs_fifo_groups WHERE queue = ${row}.queue AND group_id = ${row}.group_id;
           INSERT INTO sqs_fifo_groups (queue, group_id, head_seq, ready_ms)
             SELECT h.queue, h.group_id, h.seq, MAX(h.visible_ms, COALESCE((
               SELECT r.visible_ms FROM sqs_messages r
               WHERE r.queue = h.queue AND r.group_id = h.group_id AND r.receive_count > 0
               ORDER BY r.visible_ms DESC LIMIT 1), 0))
             FROM sqs_messages h WHERE h.queue = ${row}.queue AND h.group_id = ${row}.group_id
             ORDER BY h.seq LIMIT 1;`;
    const of = event === "UPDATE" ? "UPDATE OF visible_ms, receive_count" : event;
    return `CREATE TRIGGER IF NOT EXISTS sqs_fifo_groups_${event.toLowerCase()}
  AFTER ${of} ON sqs_messages
  WHEN ${row}.group_id IS NOT NULL AND ${row}.queue LIKE '%.fifo'${when}
  BEGIN ${body} END;`;
  })
  .join("\n")}
`;

/** How often expired messages and deduplication ids are swept, at most, ms. */
const SWEEP_EVERY_MS = 60_000;

/** How often a process with waiters checks for other processes' commits anyway, ms. */
const FALLBACK_CHECK_MS = 1_000;

interface Waiter {
  queue: string;
  wake: () => void;
}

/** One database file's connection, statements and waiters in this process. */
export class SqsStore {
  readonly db: Database;
  private readonly statements = new Map<string, StatementSync>();
  private readonly waiters = new Set<Waiter>();
  private watcher: FSWatcher | undefined;
  /** The `-notify` file, touched after commits other processes may be waiting for. */
  private notifyFd: number | undefined;
  private fallback: NodeJS.Timeout | undefined;
  private dataVersion = 0;
  private refs = 0;
  private closed = false;

  private constructor(readonly file: string) {
    this.db = new DatabaseSync(file);
    this.db.exec("PRAGMA busy_timeout = 5000");
    this.db.exec("PRAGMA journal_mode = WAL");
    this.db.exec("PRAGMA synchronous = NORMAL");
    this.tx(() => {
      this.db.exec(SCHEMA);
      // A file made before sqs_fifo_groups existed: fill it once from the messages.
      const fresh = !this.db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqs_fifo_groups'")
        .get();
      this.db.exec(GROUPS);
      if (fresh)
        this.db.exec(`INSERT INTO sqs_fifo_groups (queue, group_id, head_seq, ready_ms)
          SELECT queue, group_id, MIN(seq), 0 FROM sqs_messages
          WHERE group_id IS NOT NULL AND queue LIKE '%.fifo' GROUP BY queue, group_id;
          UPDATE sqs_fifo_groups SET ready_ms = MAX(
            (SELECT visible_ms FROM sqs_messages WHERE seq = head_seq),
            COALESCE((SELECT MAX(visible_ms) FROM sqs_messages r WHERE r.queue = sqs_fifo_groups.queue
              AND r.group_id = sqs_fifo_groups.group_id AND r.receive_count > 0), 0));`);
    });
    this.dataVersion = this.readDataVersion();
    if (file !== ":memory:") {
      try {
        this.notifyFd = openSync(`${file}-notify`, "a");
      } catch {
        // A read-only directory: other processes' waits fall back to the 1 s check.
      }
    }
    this.watchNotify();
  }

  private static readonly open = new Map<string, SqsStore>();

  /** The store of `file` in this process (opened on first use); release it with {@link release}. */
  static acquire(file: string): SqsStore {
    const path = file === ":memory:" ? file : resolve(file);
    let s = SqsStore.open.get(path);
    if (!s || s.closed) {
      s = new SqsStore(path);
      SqsStore.open.set(path, s);
    }
    s.refs++;
    return s;
  }

  /** Gives a reference back; the last one ends the waits, the watcher and the connection. */
  release(): void {
    if (--this.refs > 0 || this.closed) return;
    this.closed = true;
    SqsStore.open.delete(this.file);
    for (const w of this.waiters) w.wake();
    this.waiters.clear();
    this.watcher?.close();
    clearInterval(this.fallback);
    if (this.notifyFd !== undefined) closeSync(this.notifyFd);
    this.db.close();
  }

  /** A cached prepared statement. */
  stmt(sql: string): StatementSync {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /**
   * A cached prepared statement whose rows come back as arrays of column values: node:sqlite
   * builds row objects slowly (about 3 times the cost for 10 rows of 15 columns).
   */
  arrays(sql: string): StatementSync {
    const key = `arrays:${sql}`;
    let s = this.statements.get(key);
    if (!s) {
      s = this.db.prepare(sql);
      s.setReturnArrays(true);
      this.statements.set(key, s);
    }
    return s;
  }

  /**
   * Runs `fn` in one `BEGIN IMMEDIATE` transaction (the write lock first, so that two processes
   * never read the same visible message and both take it).
   * @throws ServiceUnavailable (retryable) when the file stays locked beyond the busy timeout.
   */
  tx<T>(fn: () => T): T {
    // A transaction left open by a failure between BEGIN and COMMIT/ROLLBACK would make every
    // later BEGIN fail: end it first.
    if (this.db.isTransaction) this.stmt("ROLLBACK").run();
    try {
      this.stmt("BEGIN IMMEDIATE").run();
    } catch (e) {
      throw busy(e);
    }
    try {
      const out = fn();
      this.stmt("COMMIT").run();
      return out;
    } catch (e) {
      if (this.db.isTransaction) this.stmt("ROLLBACK").run();
      throw busy(e);
    }
  }

  /**
   * Wakes the long polls on `queue` after a commit that may have made a message visible: this
   * process's at once, other processes' through the `-notify` file (about 5 µs).
   */
  notify(queue: string): void {
    for (const w of this.waiters) if (w.queue === queue) w.wake();
    if (this.notifyFd === undefined) return;
    try {
      // Every touch is an inotify event, even with the same times.
      futimesSync(this.notifyFd, 0, 0);
    } catch {
      // The fallback check still finds the commit.
    }
  }

  /**
   * Waits until a commit may have changed `queue`, until `untilMs` (epoch ms), until `wake` is
   * called or until the store closes, whichever comes first.
   */
  wait(queue: string, untilMs: number): { done: Promise<void>; wake: () => void } {
    if (this.closed) return { done: Promise.resolve(), wake: () => {} };
    let w: Waiter | undefined;
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => w?.wake(), Math.max(0, untilMs - Date.now()));
      const waiter: Waiter = {
        queue,
        wake: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          if (this.waiters.size === 0) {
            clearInterval(this.fallback);
            this.fallback = undefined;
          }
          resolve();
        },
      };
      w = waiter;
      this.waiters.add(waiter);
    });
    if (!this.watcher) this.watchNotify();
    this.fallback ??= setInterval(() => this.checkOthers(), FALLBACK_CHECK_MS).unref();
    return { done, wake: () => w?.wake() };
  }

  /** When expired rows were last swept (epoch ms; see sweepDue). */
  private lastSweepMs = 0;

  /** Whether a sweep of expired rows is due (at most once a minute per process); marks it done. */
  sweepDue(nowMs: number): boolean {
    if (nowMs - this.lastSweepMs < SWEEP_EVERY_MS) return false;
    this.lastSweepMs = nowMs;
    return true;
  }

  /** Whether this store was closed (its last client destroyed). */
  get isClosed(): boolean {
    return this.closed;
  }

  private readDataVersion(): number {
    const row = this.stmt("PRAGMA data_version").get() as { data_version: number };
    return Number(row.data_version);
  }

  /** Another connection committed since we last looked: every waiter looks again. */
  private checkOthers(): void {
    if (this.closed || this.waiters.size === 0) return;
    const v = this.readDataVersion();
    if (v === this.dataVersion) return;
    this.dataVersion = v;
    for (const w of [...this.waiters]) w.wake();
  }

  private watchNotify(): void {
    if (this.file === ":memory:" || this.closed) return;
    try {
      this.watcher = watch(`${this.file}-notify`, { persistent: false }, (event) => {
        this.checkOthers();
        if (event === "rename") {
          // The file was replaced or removed: watch the new one on the next wait.
          this.watcher?.close();
          this.watcher = undefined;
        }
      });
      this.watcher.on("error", () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      this.watcher = undefined;
    }
  }
}

/** A storage failure (a lock beyond the busy timeout, a full disk) as SQS's retryable 503. */
function busy(e: unknown): unknown {
  return storageFailure(e, "ServiceUnavailable", 503);
}
