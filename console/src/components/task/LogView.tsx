/**
 * The log of one attempt, read through the API a page at a time and never held whole: a window
 * of at most 12,000 lines (log-window.ts) that moves forward ("Later lines", "Skip to the end")
 * and back ("Earlier lines"), followed every second while the attempt runs. ANSI colours are
 * rendered as styled spans (model/ansi.ts), the style carried across lines and pages.
 */
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { api, type LogPage, withQuery } from "../../api";
import { type AnsiState, PLAIN, type Segment, styleLines } from "../../model/ansi";
import { ErrorNote } from "../ErrorNote";
import { downloadLog } from "./log-download";
import {
  atTail,
  BIG_PAGE,
  backward,
  type Chunk,
  EMPTY,
  firstLineNumber,
  forward,
  type LogWindow,
  nextRead,
  PAGE,
  previousRead,
  windowLines,
} from "./log-window";

/**
 * Shows the log of `attempt` of the task at `base` (`/v1/instances/{id}/tasks/{code}`);
 * `fileStem` names its download (`<fileStem>-attempt-<n>.log`).
 */
export function LogView(props: {
  base: string;
  fileStem: string;
  attempt: number;
  running: boolean;
}) {
  const url = `${props.base}/log`;
  const [win, setWin] = useState<LogWindow>(EMPTY);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState<string>();
  /** Lines read so far while the whole log downloads. */
  const [downloading, setDownloading] = useState<number>();
  const winRef = useRef(win);
  const pre = useRef<HTMLPreElement>(null);
  // Where to scroll once the lines just read are drawn (after paging, or while following).
  const scrollTo = useRef<"top" | "bottom">(undefined);
  useLayoutEffect(() => {
    const box = pre.current;
    if (!box || !scrollTo.current || win.chunks.length === 0) return;
    box.scrollTop = scrollTo.current === "top" ? 0 : box.scrollHeight;
    scrollTo.current = undefined;
  }, [win]);
  // A new attempt (or task) starts a new log; reads of the previous one are dropped.
  const generation = useRef(0);

  const read = useCallback(
    (token: string | undefined, limit: number) =>
      api<LogPage>(
        withQuery(url, { attempt: String(props.attempt), limit: String(limit), nextToken: token }),
      ),
    [url, props.attempt],
  );
  const commit = useCallback((w: LogWindow) => {
    winRef.current = w;
    setWin(w);
  }, []);

  /**
   * Reads forward: one page, or (`toEnd`) until a page is not full, keeping only the window and
   * drawing once at the end, so skipping through a 50 MB log costs requests, not memory.
   */
  const inFlight = useRef(false);
  const readForward = useCallback(
    async (toEnd: boolean, limit: number) => {
      if (inFlight.current) return;
      inFlight.current = true;
      const gen = generation.current;
      let w = winRef.current;
      let lines = 0;
      let skipped = false;
      try {
        for (;;) {
          const at = nextRead(w, toEnd ? BIG_PAGE : limit);
          if (!at) break;
          const page = await read(at.token, at.limit);
          if (gen !== generation.current) return;
          w = forward(w, page, at.token);
          lines += page.lines.length;
          if (!toEnd || page.lines.length < at.limit) break;
          skipped = true;
          setBusy(`Skipping to the end… ${lines.toLocaleString()} lines read`);
        }
        setError(undefined);
        commit(w);
      } catch (e) {
        if (gen === generation.current) setError(e);
      } finally {
        // A read of a log no longer shown leaves the newer reads' flag alone.
        if (gen === generation.current) {
          inFlight.current = false;
          if (skipped) setBusy(undefined);
        }
      }
    },
    [read, commit],
  );

  /** Reads the log again from its first line, dropping any read under way. */
  const restart = useCallback(async () => {
    generation.current++;
    inFlight.current = false;
    commit(EMPTY);
    await readForward(false, PAGE);
  }, [readForward, commit]);
  useEffect(() => {
    setBusy(undefined);
    scrollTo.current = undefined;
    void restart();
  }, [restart]);

  // When the attempt ends while followed, read its last lines once.
  const wasRunning = useRef(props.running);
  useEffect(() => {
    if (wasRunning.current && !props.running && atTail(winRef.current))
      void readForward(true, BIG_PAGE);
    wasRunning.current = props.running;
  }, [props.running, readForward]);

  // Follow a running attempt while the window shows the log's end: its last page always carries
  // a token to poll with; a full page means output came faster than a page a second.
  const following = props.running && atTail(win) && win.chunks.at(-1)?.next !== undefined;
  useEffect(() => {
    if (!following) return;
    let stop = false;
    const timer = setInterval(() => {
      if (stop || busy) return;
      const box = pre.current;
      // Keep following the end only if the reader has not scrolled up.
      if (!box || box.scrollTop + box.clientHeight >= box.scrollHeight - 8)
        scrollTo.current = "bottom";
      void readForward(true, BIG_PAGE);
    }, 1_000);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [following, busy, readForward]);

  const act = async (label: string, f: () => Promise<void>, scroll: "top" | "bottom") => {
    setBusy(label);
    scrollTo.current = scroll;
    await f();
    setBusy(undefined);
  };
  const earlier = previousRead(win);
  const later = nextRead(win, PAGE);
  const from = firstLineNumber(win);
  const shown = windowLines(win);
  const styled = useStyled(win.chunks);
  const loaded = win.chunks.length > 0;

  return (
    <section className="log" aria-label="log">
      <h3>
        Log of attempt {props.attempt}{" "}
        <button
          type="button"
          className="link"
          disabled={downloading !== undefined}
          title="the whole log of this attempt as a text file, one line per message with its time"
          onClick={() => {
            setDownloading(0);
            downloadLog(read, `${props.fileStem}-attempt-${props.attempt}.log`, setDownloading)
              .catch((e: unknown) => setError(e))
              .finally(() => setDownloading(undefined));
          }}
        >
          {downloading === undefined
            ? "download"
            : `downloading… ${downloading.toLocaleString()} lines`}
        </button>
      </h3>
      {error ? <ErrorNote error={error} /> : null}
      <p className="log-position note" aria-live="polite">
        {busy ??
          (!loaded
            ? "Loading…"
            : shown === 0
              ? props.running
                ? "No output yet; following."
                : "This attempt wrote no log."
              : `Lines ${(from + 1).toLocaleString()}–${(from + shown).toLocaleString()}${
                  later ? "" : " (the end)"
                }${following ? ", following" : ""}`)}
      </p>
      {earlier ? (
        <div className="log-nav">
          <button
            type="button"
            disabled={!!busy}
            onClick={() =>
              void act(
                "Reading earlier lines…",
                async () => {
                  const gen = generation.current;
                  try {
                    const page = await read(earlier.token, earlier.limit);
                    if (gen === generation.current) commit(backward(winRef.current, page));
                  } catch (e) {
                    setError(e);
                  }
                },
                "top",
              )
            }
          >
            ↑ Earlier lines
          </button>
          <button
            type="button"
            disabled={!!busy}
            onClick={() => void act("Reading the start…", restart, "top")}
          >
            ⇤ Back to the start
          </button>
        </div>
      ) : null}
      <pre ref={pre} hidden={shown === 0}>
        {win.chunks.map((c, n) => (
          <ChunkLines key={c.start ?? "start"} chunk={c} styled={styled[n] ?? []} />
        ))}
      </pre>
      {later && !following ? (
        <div className="log-nav">
          <button
            type="button"
            disabled={!!busy}
            onClick={() =>
              void act("Reading later lines…", () => readForward(false, PAGE), "bottom")
            }
          >
            ↓ Later lines
          </button>
          <button
            type="button"
            disabled={!!busy}
            onClick={() =>
              void act("Skipping to the end…", () => readForward(true, BIG_PAGE), "bottom")
            }
          >
            ⇥ Skip to the end
          </button>
        </div>
      ) : null}
    </section>
  );
}

/** Each chunk's lines as segments, the ANSI style carried from chunk to chunk (cached). */
function useStyled(chunks: Chunk[]): Segment[][][] {
  const cache = useRef(new WeakMap<Chunk, { from: string; lines: Segment[][]; end: AnsiState }>());
  return useMemo(() => {
    let state: AnsiState = PLAIN;
    return chunks.map((c) => {
      const from = JSON.stringify(state);
      let hit = cache.current.get(c);
      if (!hit || hit.from !== from) {
        const r = styleLines(
          c.lines.map((l) => l.message),
          state,
        );
        hit = { from, lines: r.lines, end: r.state };
        cache.current.set(c, hit);
      }
      state = hit.end;
      return hit.lines;
    });
  }, [chunks]);
}

/** One chunk's lines; redrawn only when the chunk changes (a followed log's last one). */
const ChunkLines = memo(function ChunkLines(props: { chunk: Chunk; styled: Segment[][] }) {
  return (
    <>
      {props.chunk.lines.map((l, n) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: log lines have no identity but their place
        <div key={n}>
          <span className="ts">{l.timestamp.slice(11, 23)}</span>{" "}
          <Line segments={props.styled[n]} />
        </div>
      ))}
    </>
  );
});

function Line({ segments }: { segments: Segment[] | undefined }) {
  if (!segments) return null;
  return (
    <>
      {segments.map((s, n) =>
        s.classes.length === 0 && !s.color && !s.background ? (
          s.text
        ) : (
          <span
            // biome-ignore lint/suspicious/noArrayIndexKey: segments have no identity but their place
            key={n}
            className={s.classes.join(" ")}
            style={
              s.color || s.background ? { color: s.color, background: s.background } : undefined
            }
          >
            {s.text}
          </span>
        ),
      )}
    </>
  );
}
