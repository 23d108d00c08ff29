/** The bounded window of a task log the console keeps (console/src/components/task/log-window.ts). */
import { describe, expect, it } from "vitest";
import {
  atTail,
  BIG_PAGE,
  backward,
  EMPTY,
  firstLineNumber,
  forward,
  type LogWindow,
  MAX_LINES,
  nextRead,
  PAGE,
  previousRead,
  windowLines,
} from "../../console/src/components/task/log-window.js";

/** A log of `total` lines whose tokens are line offsets, as standalone's byte offsets behave. */
function fakeLog(total: number, done = true) {
  return (token: string | undefined, limit: number) => {
    const from = Number(token ?? 0);
    const to = Math.min(total, from + limit);
    const lines = Array.from({ length: to - from }, (_, n) => ({
      timestamp: "2026-11-25T00:00:00.000Z",
      message: `line ${from + n}`,
    }));
    const more = !done || to - from === limit;
    return more ? { lines, nextToken: String(to) } : { lines };
  };
}

function readAll(w: LogWindow, read: ReturnType<typeof fakeLog>, limit: number): LogWindow {
  let at = nextRead(w, limit);
  while (at) {
    w = forward(w, read(at.token, at.limit), at.token);
    at = nextRead(w, limit);
  }
  return w;
}

describe("the log window", () => {
  it("pages forward through a huge log keeping at most MAX_LINES lines", () => {
    const read = fakeLog(1_000_000);
    const w = readAll(EMPTY, read, BIG_PAGE);
    expect(windowLines(w)).toBeLessThanOrEqual(MAX_LINES);
    expect(w.chunks.at(-1)?.lines.at(-1)?.message).toBe("line 999999");
    expect(firstLineNumber(w) + windowLines(w)).toBe(1_000_000);
    expect(nextRead(w, PAGE)).toBeUndefined();
    expect(atTail(w)).toBe(true);
  });

  it("moves back by reading the previous chunk again, dropping the newest past MAX_LINES", () => {
    const read = fakeLog(50_000);
    let w = readAll(EMPTY, read, BIG_PAGE);
    const before = firstLineNumber(w);
    const prev = previousRead(w);
    expect(prev).toBeDefined();
    w = backward(w, read(prev?.token, prev?.limit ?? 0));
    expect(firstLineNumber(w)).toBeLessThan(before);
    expect(w.chunks[0]?.lines[0]?.message).toBe(`line ${firstLineNumber(w)}`);
    expect(windowLines(w)).toBeLessThanOrEqual(MAX_LINES);
    expect(atTail(w)).toBe(false);
    // Forward again: the known chunk is read with its own size, so the lines stay in order.
    const at = nextRead(w, PAGE);
    w = forward(w, read(at?.token, at?.limit ?? 0), at?.token);
    const all = w.chunks.flatMap((c) => c.lines.map((l) => l.message));
    expect(all[0]).toBe(`line ${firstLineNumber(w)}`);
    expect(all).toEqual(all.map((_, n) => `line ${firstLineNumber(w) + n}`));
  });

  it("follows a growing log: new lines join the last chunk, empty polls add nothing", () => {
    let total = 3;
    const read = (token: string | undefined, limit: number) => fakeLog(total, false)(token, limit);
    let w = forward(EMPTY, read(undefined, PAGE), undefined);
    for (let i = 0; i < 5; i++) {
      const at = nextRead(w, BIG_PAGE);
      w = forward(w, read(at?.token, at?.limit ?? 0), at?.token);
    }
    expect(w.chunks).toHaveLength(1);
    total = 10;
    const at = nextRead(w, BIG_PAGE);
    w = forward(w, read(at?.token, at?.limit ?? 0), at?.token);
    expect(w.chunks).toHaveLength(1);
    expect(windowLines(w)).toBe(10);
    expect(w.history).toEqual([{ start: undefined, count: 10 }]);
  });
});
