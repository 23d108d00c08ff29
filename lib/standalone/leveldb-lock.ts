/**
 * Waits for LevelDB's lock on dynalite's data directory. After a `kill -9` of standalone, its
 * dynamodb emulator child closes its database as it exits; a standalone restarted at once would
 * otherwise start dynalite on a database still locked, and dynalite fails on its first request
 * ("Database is closed"). The data dir's own lock file (preflight.ts) already keeps a second live
 * standalone out, so a LevelDB lock found here is a previous run's child on its way out.
 */
import { createRequire } from "node:module";

interface LevelDb {
  open(): Promise<void>;
  close(): Promise<void>;
}

/** `level`, as dynalite itself loads it: the same LevelDB binding, so the same lock. */
function levelOfDynalite(): new (path: string) => LevelDb {
  const require = createRequire(import.meta.resolve("dynalite"));
  return (require("level") as { Level: new (path: string) => LevelDb }).Level;
}

/** True when opening failed because another process holds the database's lock. */
function isLocked(e: unknown): boolean {
  const err = e as { code?: string; cause?: { code?: string } } | undefined;
  return err?.code === "LEVEL_LOCKED" || err?.cause?.code === "LEVEL_LOCKED";
}

/**
 * Resolves once the LevelDB database at `path` can be opened (it is opened and closed again).
 * @param opts.timeoutMs how long to wait for a holder to let go, ms (dynalite's own graceful
 *   close gives up after 30 s).
 * @param opts.onWait called once, when the first try finds the lock held.
 * @throws Error naming the path when the lock is still held after `timeoutMs`; what opening
 *   throws otherwise.
 */
export async function waitForLevelDbLock(
  path: string,
  opts: { timeoutMs: number; onWait?: () => void },
): Promise<void> {
  const Level = levelOfDynalite();
  const deadline = Date.now() + opts.timeoutMs;
  let told = false;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1_000)) {
    const db = new Level(path);
    try {
      await db.open();
      await db.close();
      return;
    } catch (e) {
      if (!isLocked(e)) throw e;
    }
    if (Date.now() >= deadline) {
      throw new Error(`the LevelDB lock of ${path} is still held after ${opts.timeoutMs / 1000} s`);
    }
    if (!told) {
      told = true;
      opts.onWait?.();
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}
