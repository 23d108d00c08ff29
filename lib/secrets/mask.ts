/**
 * Masking of secret values in what a task prints and reports: every occurrence of a value a
 * task resolved becomes `***` before a line reaches the task log, and in the attempt's error and
 * warnings (lib/engine/worker.ts). OUT parameters are parsed from the raw lines instead
 * ({@link SecretMasker.withRawLines}): masking first would let a short value mangle
 * `${setValue(…)}` itself, and the worker refuses an OUT value holding a secret anyway. Overlapping
 * or adjacent occurrences of several secrets become one `***`. What is masked, per value: the
 * value itself, its URL-encoded form (an HTTP URL carries that), and each line of 8 characters
 * or more of a value that spans lines (a task may print one line of a key at a time). A value
 * the task transforms (base64, reversed, …) is not recognised: docs/secrets.md says so.
 */

/** What replaces a secret value. */
export const MASK = "***";

/** Lines of a multi-line value shorter than this are not masked on their own (`{`, `-----`). */
const MIN_LINE_MASK = 8;

/**
 * A raw line longer than this is handed on in pieces, as lib/tasks/shell.ts writes a line
 * without newline once it gets this long (so both see the same lines).
 */
const MAX_RAW_LINE = 16_384;

/** Positions of `text` covered by an occurrence of a value (overlapping occurrences included). */
function coverage(text: string, values: readonly string[], coveredPrefix = 0): Uint8Array {
  const cov = new Uint8Array(text.length);
  cov.fill(1, 0, Math.min(coveredPrefix, text.length));
  for (const v of values) {
    let i = text.indexOf(v);
    while (i >= 0) {
      cov.fill(1, i, i + v.length);
      i = text.indexOf(v, i + 1);
    }
  }
  return cov;
}

/** `text[0, end)` with each run of covered positions as one {@link MASK}. */
function render(text: string, cov: Uint8Array, end: number, continuesRun: boolean): string {
  let out = "";
  let from = 0;
  let i = 0;
  while (i < end) {
    if (!cov[i]) {
      i++;
      continue;
    }
    out += text.slice(from, i);
    let j = i;
    while (j < end && cov[j]) j++;
    if (!(i === 0 && continuesRun)) out += MASK;
    from = j;
    i = j;
  }
  return out + text.slice(from, end);
}

/** The masking of one attempt: the values it resolved, and the forms of them that are masked. */
export class SecretMasker {
  /** Every masked form, longest first. */
  readonly forms: readonly string[];
  private readonly longest: number;
  private readonly values: readonly string[];

  /**
   * @param values the values the attempt resolved.
   * @param onRawLine given each raw line its streams see, before masking (see {@link withRawLines}).
   */
  constructor(
    values: Iterable<string>,
    private readonly onRawLine?: (line: string) => void,
  ) {
    this.values = [...values];
    const forms = new Set<string>();
    for (const v of this.values) {
      if (v === "") continue;
      forms.add(v);
      const encoded = encodeURIComponent(v);
      if (encoded !== v) forms.add(encoded);
      if (v.includes("\n")) {
        for (const line of v.split(/\r?\n/)) {
          const t = line.trim();
          if (t.length >= MIN_LINE_MASK) forms.add(t);
        }
      }
    }
    this.forms = [...forms].sort((a, b) => b.length - a.length);
    this.longest = this.forms[0]?.length ?? 0;
  }

  /** True when there is nothing to mask. */
  get empty(): boolean {
    return this.forms.length === 0;
  }

  /** `text` with every occurrence of a value as {@link MASK}. */
  mask(text: string): string {
    if (this.empty) return text;
    return render(text, coverage(text, this.forms), text.length, false);
  }

  /** Whether `text` holds a value (or a masked form of one). */
  contains(text: string): boolean {
    return this.forms.some((f) => text.includes(f));
  }

  /**
   * A masker for one stream of text arriving in chunks (a process's stdout): a value split
   * across chunks is still masked, since the end of a chunk that could begin a value is held
   * back until the next chunk (or {@link StreamMasker.end}).
   */
  stream(): StreamMasker {
    return new StreamMasker(this.forms, this.longest, this.onRawLine);
  }

  /**
   * The same masking, whose streams also hand each raw line (split at `\n`, unmasked) to
   * `onRawLine` before they mask it: the worker reads `${setValue(name=value)}` from the raw
   * text of a SHELL task's output, and never from its masked log line.
   */
  withRawLines(onRawLine: (line: string) => void): SecretMasker {
    return new SecretMasker(this.values, onRawLine);
  }
}

/** See {@link SecretMasker.stream}. */
export class StreamMasker {
  private carry = "";
  /** Leading positions of `carry` that an occurrence already seen covers. */
  private carryCovered = 0;
  /** The last text given out ended inside a masked run. */
  private endedMasked = false;
  /** The raw text after the last `\n`, for `onRawLine`. */
  private rawCarry = "";

  constructor(
    private readonly forms: readonly string[],
    private readonly longest: number,
    private readonly onRawLine?: (line: string) => void,
  ) {}

  /** The masked text that can be given out now (possibly empty). */
  push(chunk: string): string {
    this.tapRaw(chunk);
    if (this.forms.length === 0) return chunk;
    const text = this.carry + chunk;
    const cov = coverage(text, this.forms, this.carryCovered);
    const hold = this.holdFrom(text);
    // Covered positions right after a masked end extend that run (as in one text).
    const continues = this.endedMasked && cov[0] === 1;
    const out = render(text, cov, hold, continues);
    if (hold > 0) this.endedMasked = cov[hold - 1] === 1;
    let covered = 0;
    while (hold + covered < text.length && cov[hold + covered]) covered++;
    this.carry = text.slice(hold);
    this.carryCovered = covered;
    return out;
  }

  /** The rest, masked (the stream ended). */
  end(): string {
    if (this.onRawLine && this.rawCarry !== "") this.onRawLine(this.rawCarry);
    this.rawCarry = "";
    if (this.carry === "") return "";
    const cov = coverage(this.carry, this.forms, this.carryCovered);
    const out = render(this.carry, cov, this.carry.length, this.endedMasked && cov[0] === 1);
    this.carry = "";
    this.carryCovered = 0;
    this.endedMasked = false;
    return out;
  }

  /** Hands each complete raw line of `chunk` (with what came before) to `onRawLine`. */
  private tapRaw(chunk: string): void {
    if (!this.onRawLine) return;
    const parts = (this.rawCarry + chunk).split("\n");
    this.rawCarry = parts.pop() ?? "";
    for (const p of parts) this.onRawLine(p);
    if (this.rawCarry.length > MAX_RAW_LINE) {
      this.onRawLine(this.rawCarry);
      this.rawCarry = "";
    }
  }

  /** The first position from which the text's end could be the start of a value. */
  private holdFrom(text: string): number {
    for (let i = Math.max(0, text.length - this.longest + 1); i < text.length; i++) {
      const tail = text.slice(i);
      if (this.forms.some((f) => f.length > tail.length && f.startsWith(tail))) return i;
    }
    return text.length;
  }
}
