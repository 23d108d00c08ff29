/**
 * Task logs as files: `<dir>/<workflow>/<instanceId>/<taskCode>/<attempt>.log`, one line per
 * log line as `<ISO timestamp>\t<message>`. The read token is a byte offset.
 */
import { createWriteStream, mkdirSync } from "node:fs";
import { open } from "node:fs/promises";
import { dirname, join } from "node:path";
import { validationError } from "../core/errors.js";
import {
  type LogLine,
  type LogPage,
  logName,
  type TaskLogKey,
  type TaskLogs,
  type TaskLogWriter,
} from "./task-log.js";

const READ_CHUNK = 256 * 1024;
/** Bytes `tail` reads back from the end at most (a log of few, huge lines). */
const TAIL_MAX_BYTES = 4 * 1024 * 1024;

export class FileTaskLogs implements TaskLogs {
  constructor(private readonly dir: string) {}

  path(key: TaskLogKey): string {
    return join(this.dir, `${logName(key)}.log`);
  }

  open(key: TaskLogKey): TaskLogWriter {
    const file = this.path(key);
    mkdirSync(dirname(file), { recursive: true });
    const stream = createWriteStream(file, { flags: "a" });
    stream.on("error", () => {}); // a full disk must not crash the worker
    return {
      write(message: string, at = Date.now()) {
        const ts = new Date(at).toISOString();
        stream.write(`${ts}\t${message.replace(/\r?\n/g, " ")}\n`);
      },
      close() {
        return new Promise<void>((resolve) => stream.end(() => resolve()));
      },
    };
  }

  /** The last `limit` complete lines, read backwards from the file's end in chunks. */
  async tail(key: TaskLogKey, limit: number): Promise<LogLine[]> {
    if (limit <= 0) return [];
    let fh: Awaited<ReturnType<typeof open>>;
    try {
      fh = await open(this.path(key), "r");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw e;
    }
    try {
      const { size } = await fh.stat();
      let data = Buffer.alloc(0);
      let start = size;
      // Lines end with "\n"; bytes after the last one are a line still being written. `cut`
      // counts the bytes from the last "\n" (included) to the end of the file.
      let cut = -1;
      while (start > 0 && size - start < TAIL_MAX_BYTES) {
        const len = Math.min(READ_CHUNK, start);
        const buf = Buffer.alloc(len);
        const { bytesRead } = await fh.read(buf, 0, len, start - len);
        start -= len;
        data = Buffer.concat([buf.subarray(0, bytesRead), data]);
        if (cut < 0) {
          const last = data.lastIndexOf(10);
          if (last < 0) continue;
          cut = data.length - last;
        }
        let found = 0;
        for (let i = data.indexOf(10); i >= 0; i = data.indexOf(10, i + 1)) found++;
        // `limit` + 1 newlines: the first line wanted starts after the extra one.
        if (found > limit) break;
      }
      if (cut < 0) return [];
      const text = data
        .subarray(0, data.length - cut)
        .toString("utf8")
        .split("\n");
      // Unless the file's start was reached, the first piece may be a line's cut end.
      const whole = start === 0 ? text : text.slice(1);
      return whole.slice(-limit).map((raw) => {
        const tab = raw.indexOf("\t");
        return { timestamp: raw.slice(0, tab), message: raw.slice(tab + 1) };
      });
    } finally {
      await fh.close();
    }
  }

  async read(key: TaskLogKey, opts: { nextToken?: string; limit: number }): Promise<LogPage> {
    let offset = 0;
    if (opts.nextToken !== undefined) {
      offset = Number(opts.nextToken);
      if (!Number.isSafeInteger(offset) || offset < 0) {
        throw validationError([{ path: "nextToken", message: "is not a token this API returned" }]);
      }
    }
    let fh: Awaited<ReturnType<typeof open>>;
    try {
      fh = await open(this.path(key), "r");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT")
        return { lines: [], nextToken: String(offset) };
      throw e;
    }
    try {
      const lines: LogLine[] = [];
      let pos = offset;
      let carry = Buffer.alloc(0);
      while (lines.length < opts.limit) {
        const buf = Buffer.alloc(READ_CHUNK);
        const { bytesRead } = await fh.read(buf, 0, READ_CHUNK, pos + carry.length);
        if (bytesRead === 0) break;
        let data = Buffer.concat([carry, buf.subarray(0, bytesRead)]);
        let nl = data.indexOf(10);
        while (nl >= 0 && lines.length < opts.limit) {
          const raw = data.subarray(0, nl).toString("utf8");
          const tab = raw.indexOf("\t");
          lines.push({ timestamp: raw.slice(0, tab), message: raw.slice(tab + 1) });
          pos += nl + 1;
          data = data.subarray(nl + 1);
          nl = data.indexOf(10);
        }
        carry = data; // a partial last line waits for the writer
      }
      return { lines, nextToken: String(pos) };
    } finally {
      await fh.close();
    }
  }
}
