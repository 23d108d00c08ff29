/**
 * The part of a log the panel keeps: a window of consecutive chunks (pages as read), never more
 * than {@link MAX_LINES} lines, so a 50 MB log is never held whole. The API pages forward only
 * (`nextToken`); the start token and size of every chunk read so far are remembered (a few bytes
 * each), so the window can also move back ("Earlier lines") by reading a chunk again.
 */
import type { LogPage } from "../../../../lib/cli/api-types.generated.js";

export type LogLine = LogPage["lines"][number];

/** Lines read per page when paging by hand. */
export const PAGE = 2_000;
/** Lines read per request while catching up (the API's maximum). */
export const BIG_PAGE = 10_000;
/** The most lines the window keeps (and the DOM shows). */
export const MAX_LINES = 12_000;

export interface Chunk {
  /** The token it was read from (`undefined`: the log's start). */
  start: string | undefined;
  lines: LogLine[];
  /** Where reading goes on after it; absent once the log is over. */
  next: string | undefined;
}

export interface LogWindow {
  chunks: Chunk[];
  /** Every chunk read so far, in log order: where it starts and how many lines it has. */
  history: { start: string | undefined; count: number }[];
  /** Index in `history` of `chunks[0]`. */
  first: number;
}

/** Nothing read yet. */
export const EMPTY: LogWindow = { chunks: [], history: [], first: 0 };

/** How many lines the window holds. */
export function windowLines(w: LogWindow): number {
  return w.chunks.reduce((n, c) => n + c.lines.length, 0);
}

/** The number (0-based) of the window's first line in the whole log. */
export function firstLineNumber(w: LogWindow): number {
  return w.history.slice(0, w.first).reduce((n, h) => n + h.count, 0);
}

/** Whether the window's last chunk is the last one read (the log's known end). */
export function atTail(w: LogWindow): boolean {
  return w.first + w.chunks.length >= w.history.length;
}

/** Where the next forward read starts and how many lines it asks for; undefined at the end. */
export function nextRead(
  w: LogWindow,
  limit: number,
): { token: string | undefined; limit: number } | undefined {
  const last = w.chunks.at(-1);
  if (!last) return { token: undefined, limit };
  if (last.next === undefined) return undefined;
  const known = w.history[w.first + w.chunks.length];
  // A chunk read before: read it again whole, so that the chunks keep their boundaries.
  return known ? { token: known.start, limit: known.count } : { token: last.next, limit };
}

/**
 * The window after a forward read (from {@link nextRead}'s token): lines of a growing log join
 * the last chunk while it is small, else start a new chunk; the oldest chunks are dropped past
 * {@link MAX_LINES}.
 */
export function forward(w: LogWindow, page: LogPage, token: string | undefined): LogWindow {
  const chunks = [...w.chunks];
  const history = [...w.history];
  let first = w.first;
  const last = chunks.at(-1);
  // A followed log with nothing new: the same window, so nothing is drawn again.
  if (last && page.lines.length === 0 && page.nextToken === last.next) return w;
  const tail = atTail(w);
  if (
    last &&
    tail &&
    last.lines.length < PAGE &&
    last.lines.length + page.lines.length <= BIG_PAGE
  ) {
    // A followed log: its new lines join the last, small chunk (no empty chunks every second).
    chunks[chunks.length - 1] = {
      start: last.start,
      lines: page.lines.length ? [...last.lines, ...page.lines] : last.lines,
      next: page.nextToken,
    };
    history[history.length - 1] = {
      start: last.start,
      count: last.lines.length + page.lines.length,
    };
    return { chunks, history, first };
  }
  if (last && page.lines.length === 0) {
    chunks[chunks.length - 1] = { ...last, next: page.nextToken };
    return { chunks, history, first };
  }
  chunks.push({ start: token, lines: page.lines, next: page.nextToken });
  if (tail) history.push({ start: token, count: page.lines.length });
  let total = chunks.reduce((n, c) => n + c.lines.length, 0);
  while (chunks.length > 1 && total > MAX_LINES) {
    total -= chunks.shift()?.lines.length ?? 0;
    first++;
  }
  return { chunks, history, first };
}

/** Where the chunk before the window starts and its size; undefined at the log's start. */
export function previousRead(
  w: LogWindow,
): { token: string | undefined; limit: number } | undefined {
  const before = w.history[w.first - 1];
  return w.first > 0 && before
    ? { token: before.start, limit: Math.max(1, before.count) }
    : undefined;
}

/** The window after reading the chunk before it again; the newest chunks go past MAX_LINES. */
export function backward(w: LogWindow, page: LogPage): LogWindow {
  const before = w.history[w.first - 1];
  if (!before) return w;
  const chunks = [
    { start: before.start, lines: page.lines, next: w.chunks[0]?.start },
    ...w.chunks,
  ];
  let total = chunks.reduce((n, c) => n + c.lines.length, 0);
  while (chunks.length > 1 && total > MAX_LINES) total -= chunks.pop()?.lines.length ?? 0;
  return { chunks, history: w.history, first: w.first - 1 };
}
