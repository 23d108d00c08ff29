/**
 * ANSI escape sequences in task logs as styled text: SGR colours, bold, underline… become
 * segments with CSS classes (never HTML); every other escape sequence (cursor moves, window
 * titles, erase-line) and control character is dropped. The style carries from one line to the
 * next, and so from one log page to the next: a `\x1b[31m` at the end of one page colours the
 * start of the following one, as a terminal would.
 */
import Anser from "anser";

/** The SGR style in force after a line: what the next line starts with. */
export interface AnsiState {
  fg: string | null;
  bg: string | null;
  fgTrue: string | null;
  bgTrue: string | null;
  decorations: readonly string[];
}

/** No colour, no decoration: where every log starts. */
export const PLAIN: AnsiState = { fg: null, bg: null, fgTrue: null, bgTrue: null, decorations: [] };

/** A run of text with one style: CSS classes, and colours the classes cannot name. */
export interface Segment {
  text: string;
  classes: string[];
  /** CSS colours (`rgb(…)`) for 256-palette and true colours. */
  color?: string;
  background?: string;
}

// Escape sequences other than CSI (`ESC [`): OSC (`ESC ] … BEL` or `ESC ] … ESC \`), and
// two-character ones (`ESC ( B`, `ESC =`, `ESC 7`); then a CSI cut off at the line's end, and
// control characters a browser would show as boxes (tab stays).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const OSC = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\|$)/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const OTHER_ESC = /\x1b(?!\[)[\x20-\x2f]*[\x30-\x7e]?/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const CUT_CSI = /\x1b\[[\x30-\x3f]*[\x20-\x2f]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g;

/** Removes the escape sequences that are not CSI and the control characters but `\r`, tab, ESC. */
export function cleanEscapes(raw: string): string {
  return raw.replace(OSC, "").replace(OTHER_ESC, "").replace(CUT_CSI, "").replace(CONTROL, "");
}

interface AnserState {
  fg: string | null;
  bg: string | null;
  fg_truecolor: string | null;
  bg_truecolor: string | null;
  decorations: string[];
}

/** xterm's 256-colour palette entry 16..255 as `rgb(…)`. */
export function paletteColor(index: number): string {
  if (index >= 232) {
    const v = 8 + (index - 232) * 10;
    return `rgb(${v}, ${v}, ${v})`;
  }
  const n = index - 16;
  const level = (c: number) => (c === 0 ? 0 : 55 + c * 40);
  return `rgb(${level(Math.floor(n / 36))}, ${level(Math.floor(n / 6) % 6)}, ${level(n % 6)})`;
}

/** A colour as anser names it (class) → our class or inline colour. */
function colour(
  name: string | null,
  trueColor: string | null,
  side: "fg" | "bg",
): { cls?: string; css?: string } {
  if (!name) return {};
  if (name === "ansi-truecolor" && trueColor) return { css: `rgb(${trueColor})` };
  const palette = /^ansi-palette-(\d+)$/.exec(name);
  if (palette) return { css: paletteColor(Number(palette[1])) };
  return { cls: `${name}-${side}` };
}

/**
 * One log line as styled segments, starting in `state`.
 * A carriage return keeps only what follows the last one (a progress bar's last value), but the
 * styles set before it still apply.
 * @returns the segments (empty text dropped) and the state the next line starts in.
 */
export function styleLine(
  raw: string,
  state: AnsiState,
): { segments: Segment[]; state: AnsiState } {
  const anser = new Anser();
  // Anser keeps the style in force on the instance; seed it with the previous line's.
  const parser = anser as unknown as AnserState;
  parser.fg = state.fg;
  parser.bg = state.bg;
  parser.fg_truecolor = state.fgTrue;
  parser.bg_truecolor = state.bgTrue;
  parser.decorations = [...state.decorations];
  const parts = cleanEscapes(raw).split("\r");
  // The last part with text is what a terminal shows; an empty one after a final \r is not.
  let shown = parts.length - 1;
  while (shown > 0 && stripCsi(parts[shown] ?? "") === "") shown--;
  let segments: Segment[] = [];
  parts.forEach((part, n) => {
    // Anser styles only text after an escape sequence: an SGR code it ignores (1000) makes the
    // text before the line's first one take the style carried in.
    const entries = anser.ansiToJson(`\x1b[1000m${part}`, {
      use_classes: true,
      remove_empty: true,
    });
    if (n !== shown) return;
    segments = entries.map((e) => {
      const classes: string[] = [];
      const fg = colour(e.fg, e.fg_truecolor, "fg");
      const bg = colour(e.bg, e.bg_truecolor, "bg");
      if (fg.cls) classes.push(fg.cls);
      if (bg.cls) classes.push(bg.cls);
      for (const d of new Set(e.decorations)) classes.push(`ansi-${d}`);
      const seg: Segment = { text: e.content, classes };
      if (fg.css) seg.color = fg.css;
      if (bg.css) seg.background = bg.css;
      return seg;
    });
  });
  return {
    segments: segments.filter((s) => s.text !== ""),
    state: {
      fg: parser.fg,
      bg: parser.bg,
      fgTrue: parser.fg_truecolor,
      bgTrue: parser.bg_truecolor,
      decorations: [...parser.decorations],
    },
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const CSI = /\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]/g;

function stripCsi(s: string): string {
  return s.replace(CSI, "");
}

/**
 * Lines in order as styled segments, the style carried from each line to the next.
 * @param state the style the first line starts in (the previous page's end state).
 */
export function styleLines(
  lines: readonly string[],
  state: AnsiState = PLAIN,
): { lines: Segment[][]; state: AnsiState } {
  const out: Segment[][] = [];
  let s = state;
  for (const line of lines) {
    // Lines without ESC and without a style in force need no parser (most log lines).
    if (!line.includes("\x1b") && !line.includes("\r") && s === PLAIN) {
      const text = line.replace(CONTROL, "");
      out.push(text ? [{ text, classes: [] }] : []);
      continue;
    }
    const r = styleLine(line, s);
    out.push(r.segments);
    s = isPlain(r.state) ? PLAIN : r.state;
  }
  return { lines: out, state: s };
}

function isPlain(s: AnsiState): boolean {
  return (
    s.fg === null &&
    s.bg === null &&
    s.fgTrue === null &&
    s.bgTrue === null &&
    s.decorations.length === 0
  );
}
