/**
 * What `shoal standalone` checks before it starts anything (lib/cli/commands/server.ts), so that
 * a start that cannot succeed fails at once with the problem named, and leaves nothing behind:
 * the API's port is free, the data directory can be used and no other standalone uses it.
 *
 * A standalone holds its data directory with a lock file, `<dataDir>/standalone.pid` (its pid),
 * taken by {@link claimDataDir} and removed when the process exits; a file left by a process
 * that is gone (a `kill -9`) does not hold the directory.
 */
import { constants, readFileSync, rmSync, statfsSync } from "node:fs";
import { access, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";

/** The lock file of a data directory in use, holding the pid of the standalone using it. */
export const LOCK_FILE = "standalone.pid";

/**
 * Why `port` cannot be listened on at 127.0.0.1 (where the API listens), or undefined when it can
 * (0 always can: the system picks a free port). Listens for a moment and closes.
 */
export async function checkPort(port: number): Promise<string | undefined> {
  if (port === 0) return undefined;
  const server = createServer();
  const error = await new Promise<NodeJS.ErrnoException | undefined>((done) => {
    server.once("error", (e: NodeJS.ErrnoException) => done(e));
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => done(undefined));
  });
  if (!error) {
    await new Promise<void>((done) => server.close(() => done()));
    return undefined;
  }
  if (error.code === "EADDRINUSE") {
    return `port ${port} is in use: stop what listens there or pass --port`;
  }
  if (error.code === "EACCES") {
    return `port ${port} needs privileges this user does not have: pass --port with a port above 1023`;
  }
  return `port ${port} cannot be listened on (${error.code ?? error.message}): pass --port`;
}

/** Free space below which a data dir's file system counts as full, bytes. */
export const MIN_FREE_BYTES = 1024 * 1024;

/**
 * Says so when the file system holding `dir` has less than {@link MIN_FREE_BYTES} free for
 * this user (the emulators then fail their writes: dynalite closes its database and exits),
 * else undefined; also undefined when it cannot be told.
 */
export function fullFileSystem(dir: string): string | undefined {
  try {
    const fs = statfsSync(dir);
    const free = fs.bavail * fs.bsize;
    if (free >= MIN_FREE_BYTES) return undefined;
    return `the file system of ${resolve(dir)} is full (${Math.floor(free / 1024)} KiB free): free some space`;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, owned by another user.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid in a data directory's lock file when that process is alive (not this one). */
async function holder(dir: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, LOCK_FILE), "utf8");
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  if (!isAlive(pid)) return undefined;
  // Where /proc exists, a pid reused by another program since a `kill -9` does not hold it.
  const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => undefined);
  return cmdline === undefined || cmdline.includes("standalone") ? pid : undefined;
}

/**
 * Why `dir` cannot be standalone's data directory, or undefined when it can: it is a directory,
 * or can be created (its nearest existing parent is a writable directory); it is writable; no
 * live standalone holds it ({@link LOCK_FILE}). Creates nothing.
 */
export async function checkDataDir(dir: string): Promise<string | undefined> {
  const path = resolve(dir);
  let existing = path;
  for (;;) {
    const st = await stat(existing).catch((e: NodeJS.ErrnoException) => e);
    if (!(st instanceof Error)) {
      if (!st.isDirectory()) {
        return existing === path
          ? `data dir ${path} is not a directory: pass --data-dir with a directory`
          : `data dir ${path} cannot be created: ${existing} is not a directory`;
      }
      break;
    }
    // ENOTDIR: a file on the way, found (and named) one level up.
    if (st.code !== "ENOENT" && st.code !== "ENOTDIR")
      return `data dir ${path} cannot be read (${st.code}): ${st.message}`;
    const parent = dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  try {
    await access(existing, constants.W_OK | constants.X_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "EROFS" ? "is on a read-only file system" : `is not writable (${code})`;
    return existing === path
      ? `data dir ${path} ${why}: pass --data-dir with a writable directory`
      : `data dir ${path} cannot be created: ${existing} ${why}`;
  }
  const full = fullFileSystem(existing);
  if (full) return `data dir ${path} cannot be used: ${full}`;
  if (existing !== path) return undefined;
  const pid = await holder(path);
  if (pid !== undefined) {
    return `data dir ${path} is in use by another shoal standalone (pid ${pid}): stop it or pass another --data-dir`;
  }
  return undefined;
}

/**
 * Takes `dir` for this process: creates it, writes {@link LOCK_FILE} with this pid (a file left
 * by a process that is gone is taken over), and removes that file when the process exits.
 * @throws Error with the reason when another live standalone took it meanwhile, or when the
 *   directory cannot be created or the file written (call checkDataDir first to name why).
 */
export async function claimDataDir(dir: string): Promise<void> {
  const path = resolve(dir);
  await mkdir(path, { recursive: true });
  const file = join(path, LOCK_FILE);
  const mine = `${process.pid}\n`;
  try {
    // Exclusive create: of two standalones started at once, one gets it.
    await writeFile(file, mine, { flag: "wx" });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    const pid = await holder(path);
    if (pid !== undefined) {
      throw new Error(
        `data dir ${path} is in use by another shoal standalone (pid ${pid}): stop it or pass another --data-dir`,
      );
    }
    await writeFile(file, mine);
  }
  process.once("exit", () => {
    // Synchronous: nothing asynchronous runs in an `exit` listener. Only this process's file.
    try {
      if (readFileSync(file, "utf8") === mine) rmSync(file, { force: true });
    } catch {
      // Gone already, or unreadable: a file left behind names a process that is gone.
    }
  });
}
