/**
 * Context-aware quoting of parameter values substituted into a `/bin/sh -c` command, so that a
 * value can never become shell syntax, whatever quotes the author put around the reference.
 *
 * The command text is scanned once (POSIX Shell Command Language, XCU 2.2–2.7, plus the bash
 * `$'…'` form): at each replacement the scanner knows whether it stands unquoted, inside `'…'`,
 * `"…"`, `$'…'`, `$(…)`, `$((…))`/`((…))`, `${…}`, a comment, or a here-document body, and
 * quotes the value for that place. What it does not model, and how that stays safe:
 * - backquotes (`` `…` ``) re-parse their text with another layer of backslashes: a reference
 *   inside them is refused (ParamError) — `$( )` works;
 * - `case` patterns inside `$( )` are recognised by the `case`/`esac`/`in` keywords at command
 *   position; exotic spellings may confuse the parenthesis count;
 * - here-documents: bodies are found line by line as the shell does (joining `\`-newline
 *   when the delimiter is unquoted); a value that would produce the delimiter line, and so end
 *   the body early, is refused; a reference in the delimiter word is refused;
 * - inside `"${x:-…}"` bash pairs `'` while parsing (dash does not), so a value holding an odd
 *   number of `'` there is a bash syntax error — never code, as the value is escaped for "…";
 * - aliases, `eval`, and commands that re-parse their arguments (`sh -c "$x"`, `ssh`, bash's
 *   `[[ $a -eq … ]]` and `let`, which evaluate `a[$(…)]`) are the author's choice: the value
 *   reaches them exactly, and they may interpret it.
 */

import { ParamError } from "./time-params.js";

/**
 * Where a value lands: `unquoted` (also inside `$( )` and `${…}`), `single` ('…'), `double`
 * ("…", also `${…}` inside "…"), `ansi-c` (bash `$'…'`), `arithmetic` (`$((…))`, `((…))`),
 * `heredoc` (body of `<<EOF`), `heredoc-literal` (body of `<<'EOF'`), `comment`.
 */
export type ShellContext =
  | "unquoted"
  | "single"
  | "double"
  | "ansi-c"
  | "arithmetic"
  | "heredoc"
  | "heredoc-literal"
  | "comment";

/** Replace `command.slice(start, end)` (UTF-16 offsets) with `value`; `label` names it in errors. */
export interface ShellReplacement {
  start: number;
  end: number;
  value: string;
  label?: string;
}

const NUMBER = /^-?[0-9]+$/;

/**
 * `value` quoted for `context`, assuming the character before it does not combine with it
 * (`substituteShell` handles a preceding `\` or `$`):
 * - unquoted → `'…'` with `'` as `'\''` (empty → `''`);
 * - single → `'` as `'\''`; double → `\ " $ \`` backslash-escaped;
 * - ansi-c → closes the `$'…'`, adds the unquoted form and reopens it (bash reads `\'` inside
 *   `$'…'` as a quote, dash as the end of the string: this form is safe under both);
 * - arithmetic → integers only, as they are (so `$((${n}+1))` works): quotes do not quote in
 *   `$((…))` (it reads as if inside "…", and bash evaluates names and `a[$(…)]` subscripts), so
 *   anything else throws ParamError;
 * - heredoc → `\ $ \`` escaped (quotes are ordinary characters there); heredoc-literal → as is;
 * - comment → newlines become spaces (a newline would end the comment).
 */
export function quoteForShell(value: string, context: ShellContext): string {
  switch (context) {
    case "unquoted":
      return `'${value.replaceAll("'", "'\\''")}'`;
    case "single":
      return value.replaceAll("'", "'\\''");
    case "double":
      return value.replace(/[\\"$`]/g, "\\$&");
    case "ansi-c":
      return `'${quoteForShell(value, "unquoted")}$'`;
    case "arithmetic":
      if (NUMBER.test(value)) return value;
      throw new ParamError(
        `value ${JSON.stringify(value.slice(0, 40))} is not an integer, and only integers can be substituted into shell arithmetic`,
      );
    case "heredoc":
      return value.replace(/[\\$`]/g, "\\$&");
    case "heredoc-literal":
      return value;
    case "comment":
      return value.replaceAll("\n", " ");
  }
}

interface Heredoc {
  delim: string;
  /** `<<-`: leading tabs are stripped before comparing with the delimiter. */
  strip: boolean;
  /** Quoted delimiter: the body is literal (no expansion, no `\`-newline joining). */
  literal: boolean;
}

interface WordFrame {
  kind: "top" | "subst";
  /** Unclosed `(` inside this `$(`. */
  depth: number;
  /** Open `case` commands: their `pattern)` does not close the `$(`. */
  caseDepth: number;
  /** The next word is in command position (keywords count there). */
  cmdPos: boolean;
  /** The next character starts a word (so `#` starts a comment). */
  wordStart: boolean;
  comment: boolean;
  afterCase: boolean;
}

interface HeredocFrame {
  kind: "heredoc";
  doc: Heredoc;
  /** Body is text[start, end); the delimiter line ends at `resume`. */
  end: number;
  resume: number;
  outStart: number;
  queue: Heredoc[];
  labels: string[];
}

type Frame =
  | WordFrame
  | HeredocFrame
  | { kind: "arith"; depth: number }
  | { kind: "brace"; inDouble: boolean }
  | { kind: "single" | "double" | "ansi" | "backquote" };

/** Words after which the next word is still a command. */
const RESERVED = new Set(["then", "do", "else", "elif", "if", "while", "until", "!", "{", "}"]);
const WORD_RUN = /[^\s;&|()<>'"`\\$]+/y;
const DELIMITER = /[\s;&|()<>]/;

function endsWithActiveBackslash(line: string): boolean {
  let n = 0;
  while (n < line.length && line[line.length - 1 - n] === "\\") n++;
  return n % 2 === 1;
}

/**
 * Where a here-document body starting at `start` ends: `end` is the start of the delimiter
 * line, `resume` the position after it (both `text.length` when the delimiter never comes).
 */
function heredocEnd(text: string, start: number, doc: Heredoc): { end: number; resume: number } {
  let ls = start;
  while (ls < text.length) {
    let le = text.indexOf("\n", ls);
    if (le < 0) le = text.length;
    let line = text.slice(ls, le);
    // Unquoted delimiter: bash and dash join `\`-newline before comparing.
    while (!doc.literal && endsWithActiveBackslash(line) && le < text.length) {
      const next = text.indexOf("\n", le + 1);
      const ne = next < 0 ? text.length : next;
      line = line.slice(0, -1) + text.slice(le + 1, ne);
      le = ne;
    }
    if ((doc.strip ? line.replace(/^\t+/, "") : line) === doc.delim) {
      return { end: ls, resume: Math.min(le + 1, text.length) };
    }
    ls = le + 1;
  }
  return { end: text.length, resume: text.length };
}

class Scanner {
  private readonly out: string[] = [];
  private copyFrom = 0;
  private readonly stack: Frame[] = [this.wordFrame("top")];
  private pending: Heredoc[] = [];
  private ri = 0;
  private afterBackslash = false;
  private afterDollar = false;

  constructor(
    private readonly text: string,
    private readonly reps: readonly ShellReplacement[],
  ) {}

  run(): string {
    const text = this.text;
    let i = 0;
    for (;;) {
      const h = this.heredocIndex();
      const hf = h >= 0 ? (this.stack[h] as HeredocFrame) : undefined;
      if (hf && i >= hf.end) {
        i = this.finishHeredoc(h, hf);
        continue;
      }
      if (i >= text.length) break;
      const rep = this.reps[this.ri];
      if (rep && rep.start === i) {
        if (hf && rep.end > hf.end)
          throw new RangeError("a replacement crosses a here-document end");
        this.replace(rep, hf);
        i = rep.end;
        continue;
      }
      const before = i;
      i = this.step(i, hf ? hf.end : text.length);
      if (i === before) i++;
      if (i > this.nextRepStart()) {
        throw new RangeError(`replacement at ${this.nextRepStart()} starts inside a shell token`);
      }
      if (this.reps[this.ri]?.start !== i) {
        this.afterBackslash = false;
        this.afterDollar = false;
      }
    }
    this.flush(text.length);
    return this.out.join("");
  }

  private get top(): Frame {
    return this.stack[this.stack.length - 1] as Frame;
  }

  private heredocIndex(): number {
    for (let k = this.stack.length - 1; k > 0; k--) {
      if (this.stack[k]?.kind === "heredoc") return k;
    }
    return -1;
  }

  private nextRepStart(): number {
    return this.reps[this.ri]?.start ?? Number.POSITIVE_INFINITY;
  }

  private flush(upTo: number): void {
    if (upTo > this.copyFrom) this.out.push(this.text.slice(this.copyFrom, upTo));
    this.copyFrom = Math.max(this.copyFrom, upTo);
  }

  private label(rep: ShellReplacement): string {
    return rep.label ?? this.text.slice(rep.start, rep.end);
  }

  private contextOf(frame: Frame, rep: ShellReplacement): ShellContext {
    switch (frame.kind) {
      case "top":
      case "subst":
        return frame.comment ? "comment" : "unquoted";
      case "arith":
        return "arithmetic";
      case "brace":
        return frame.inDouble ? "double" : "unquoted";
      case "single":
        return "single";
      case "double":
        return "double";
      case "ansi":
        return "ansi-c";
      case "heredoc":
        return frame.doc.literal ? "heredoc-literal" : "heredoc";
      case "backquote":
        throw new ParamError(
          `${this.label(rep)} is inside a backquoted command substitution, where its value cannot be quoted safely; use $( ) instead`,
        );
    }
  }

  private replace(rep: ShellReplacement, hf: HeredocFrame | undefined): void {
    const frame = this.top;
    const context = this.contextOf(frame, rep);
    if (context === "arithmetic" && !NUMBER.test(rep.value)) {
      throw new ParamError(
        `${this.label(rep)} is used in shell arithmetic, where only integer values can be substituted safely`,
      );
    }
    let prefix = "";
    // An active `\` right before the value would escape its first character: pair it.
    if (this.afterBackslash) prefix = "\\";
    // A lone `$` before the value would join it (`$'…'`, `$(…`, `$name`): separate them.
    if (this.afterDollar) {
      if (context === "heredoc") {
        throw new ParamError(
          `${this.label(rep)} follows a lone "$" in a here-document, where its value cannot be quoted safely`,
        );
      }
      prefix = context === "double" ? '""' : "''";
    }
    this.flush(rep.start);
    this.out.push(prefix + quoteForShell(rep.value, context));
    this.copyFrom = rep.end;
    this.ri++;
    this.afterBackslash = false;
    this.afterDollar = false;
    if (hf) hf.labels.push(this.label(rep));
    if (frame.kind === "top" || frame.kind === "subst") {
      frame.wordStart = false;
      frame.cmdPos = false;
    }
  }

  private startHeredoc(start: number, queue: Heredoc[]): void {
    const [doc, ...rest] = queue;
    if (!doc) return;
    const { end, resume } = heredocEnd(this.text, start, doc);
    this.flush(start);
    this.stack.push({
      kind: "heredoc",
      doc,
      end,
      resume,
      outStart: this.out.length,
      queue: rest,
      labels: [],
    });
  }

  /** Ends a body: checks no value forged the delimiter line, resumes after the real one. */
  private finishHeredoc(h: number, hf: HeredocFrame): number {
    this.flush(hf.end);
    if (hf.labels.length > 0) {
      const body = this.out.slice(hf.outStart).join("");
      if (heredocEnd(body, 0, hf.doc).end < body.length) {
        throw new ParamError(
          `the value of ${hf.labels.join(", ")} would end the here-document <<${hf.doc.delim} early`,
        );
      }
    }
    this.stack.length = h;
    this.startHeredoc(hf.resume, hf.queue);
    return hf.resume;
  }

  /** `\` at i: escapes the next character, unless a replacement starts there. */
  private escape(i: number): number {
    if (this.nextRepStart() === i + 1) {
      this.afterBackslash = true;
      return i + 1;
    }
    return i + 2;
  }

  /** `$` at i, in unquoted (`ansi` allowed) or double-quote-like text. */
  private dollar(i: number, inDouble: boolean): number {
    if (this.nextRepStart() === i + 1) {
      this.afterDollar = true;
      return i + 1;
    }
    const c = this.text[i + 1];
    if (c === "(") {
      if (this.text[i + 2] === "(") {
        this.stack.push({ kind: "arith", depth: 0 });
        return i + 3;
      }
      this.stack.push(this.wordFrame("subst"));
      return i + 2;
    }
    if (c === "{") {
      this.stack.push({ kind: "brace", inDouble });
      return i + 2;
    }
    if (c === "'" && !inDouble) {
      this.stack.push({ kind: "ansi" });
      return i + 2;
    }
    if (c !== undefined && "$#?!-@*0123456789".includes(c)) return i + 2;
    return i + 1;
  }

  private wordFrame(kind: "top" | "subst"): WordFrame {
    return {
      kind,
      depth: 0,
      caseDepth: 0,
      cmdPos: true,
      wordStart: true,
      comment: false,
      afterCase: false,
    };
  }

  /** Advances over one token at i (never past `limit`), updating the frame stack. */
  private step(i: number, limit: number): number {
    const frame = this.top;
    const text = this.text;
    const c = text[i] as string;
    switch (frame.kind) {
      case "top":
      case "subst":
        return this.stepWord(frame, i, limit);
      case "single": {
        if (c === "'") {
          this.stack.pop();
          return i + 1;
        }
        const close = text.indexOf("'", i);
        return Math.min(close < 0 ? limit : close, limit, this.nextRepStart());
      }
      case "ansi":
        if (c === "\\") return this.escape(i);
        if (c === "'") this.stack.pop();
        return i + 1;
      case "backquote":
        if (c === "\\") return this.escape(i);
        if (c === "`") this.stack.pop();
        return i + 1;
      case "heredoc":
        if (frame.doc.literal) return Math.min(limit, this.nextRepStart());
        if (c === "\\") return "$`\\\n".includes(text[i + 1] ?? "") ? this.escape(i) : i + 1;
        if (c === "$") return this.dollar(i, true);
        if (c === "`") this.stack.push({ kind: "backquote" });
        return i + 1;
      case "double":
      case "brace": {
        const inDouble = frame.kind === "double" || (frame.kind === "brace" && frame.inDouble);
        if (c === "\\") {
          if (!inDouble || '$`"\\\n'.includes(text[i + 1] ?? "")) return this.escape(i);
          return i + 1;
        }
        if (c === "$") return this.dollar(i, inDouble);
        if (c === "`") this.stack.push({ kind: "backquote" });
        else if (c === '"') {
          if (frame.kind === "double") this.stack.pop();
          else this.stack.push({ kind: "double" });
        } else if (c === "'" && !inDouble) this.stack.push({ kind: "single" });
        else if (c === "}" && frame.kind === "brace") this.stack.pop();
        return i + 1;
      }
      case "arith":
        if (c === "(") frame.depth++;
        else if (c === ")") {
          if (frame.depth > 0) frame.depth--;
          else {
            this.stack.pop();
            return text[i + 1] === ")" ? i + 2 : i + 1;
          }
        } else if (c === "\\") {
          return '$`"\\\n'.includes(text[i + 1] ?? "") ? this.escape(i) : i + 1;
        } else if (c === "$") return this.dollar(i, true);
        else if (c === "`") this.stack.push({ kind: "backquote" });
        // Quotes are not quoting here: the expression is read as if inside "…" (XCU 2.6.4).
        return i + 1;
    }
  }

  /** Unquoted command text: words, operators, comments, here-document operators. */
  private stepWord(frame: WordFrame, i: number, limit: number): number {
    const text = this.text;
    const c = text[i] as string;
    if (frame.comment) {
      if (c !== "\n") {
        const nl = text.indexOf("\n", i);
        return Math.min(nl < 0 ? limit : nl, limit, this.nextRepStart());
      }
      frame.comment = false;
    }
    const wordStart = frame.wordStart;
    frame.wordStart = false;
    switch (c) {
      case " ":
      case "\t":
        frame.wordStart = true;
        return i + 1;
      case "\n":
      case ";":
      case "&":
      case "|":
        frame.wordStart = true;
        frame.cmdPos = true;
        if (c === "\n" && this.pending.length > 0) {
          const queue = this.pending;
          this.pending = [];
          this.startHeredoc(i + 1, queue);
        }
        return i + 1;
      case "(":
        if (wordStart && text[i + 1] === "(") {
          this.stack.push({ kind: "arith", depth: 0 });
          return i + 2;
        }
        frame.depth++;
        frame.wordStart = true;
        frame.cmdPos = true;
        return i + 1;
      case ")":
        frame.wordStart = true;
        frame.cmdPos = true;
        if (frame.depth > 0) frame.depth--;
        else if (frame.kind === "subst" && frame.caseDepth === 0) this.stack.pop();
        return i + 1;
      case "<":
      case ">":
        frame.wordStart = true;
        if (c === "<" && text[i + 1] === "<") return this.heredocOperator(i, limit);
        return i + 1;
      case "\\":
        frame.cmdPos = false;
        return this.escape(i);
      case "'":
        frame.cmdPos = false;
        this.stack.push({ kind: "single" });
        return i + 1;
      case '"':
        frame.cmdPos = false;
        this.stack.push({ kind: "double" });
        return i + 1;
      case "`":
        frame.cmdPos = false;
        this.stack.push({ kind: "backquote" });
        return i + 1;
      case "$":
        frame.cmdPos = false;
        return this.dollar(i, false);
      case "#":
        if (wordStart) {
          frame.comment = true;
          return i + 1;
        }
    }
    WORD_RUN.lastIndex = i;
    const m = WORD_RUN.exec(text);
    const end = Math.min(i + (m ? m[0].length : 1), limit, this.nextRepStart());
    if (wordStart) this.keyword(frame, text.slice(i, end), end);
    return end;
  }

  /** Tracks `case … in … esac` so that `pattern)` inside `$( )` does not close it. */
  private keyword(frame: WordFrame, word: string, end: number): void {
    const bare = end >= this.text.length || DELIMITER.test(this.text[end] as string);
    const wasCmd = frame.cmdPos;
    frame.cmdPos = false;
    if (!bare) return;
    if (word === "in" && frame.afterCase) {
      frame.afterCase = false;
      frame.cmdPos = true;
    } else if (wasCmd && word === "case") {
      frame.caseDepth++;
      frame.afterCase = true;
    } else if (wasCmd && word === "esac") {
      frame.caseDepth = Math.max(0, frame.caseDepth - 1);
    } else if (wasCmd && RESERVED.has(word)) {
      frame.cmdPos = true;
    }
  }

  /** `<<`, `<<-` or `<<<` at i; a here-document's body starts after the next newline. */
  private heredocOperator(i: number, limit: number): number {
    const text = this.text;
    if (text[i + 2] === "<") return i + 3;
    let j = i + 2;
    const strip = text[j] === "-";
    if (strip) j++;
    while (text[j] === " " || text[j] === "\t") j++;
    let delim = "";
    let literal = false;
    while (j < limit && !DELIMITER.test(text[j] as string)) {
      const c = text[j] as string;
      if (c === "'") {
        const close = text.indexOf("'", j + 1);
        const k = close < 0 ? limit : close;
        delim += text.slice(j + 1, k);
        literal = true;
        j = k + 1;
      } else if (c === '"') {
        literal = true;
        j++;
        while (j < limit && text[j] !== '"') {
          if (text[j] === "\\" && '$`"\\'.includes(text[j + 1] ?? "")) j++;
          delim += text[j];
          j++;
        }
        j++;
      } else if (c === "\\") {
        literal = true;
        delim += text[j + 1] ?? "";
        j += 2;
      } else {
        delim += c;
        j++;
      }
    }
    j = Math.min(j, limit);
    const rep = this.reps[this.ri];
    if (rep && rep.start < j) {
      throw new ParamError(
        `${this.label(rep)} is part of a here-document delimiter, which cannot be substituted`,
      );
    }
    if (delim !== "" || literal) this.pending.push({ delim, strip, literal });
    return j;
  }
}

/**
 * Applies `replacements` to `command`, each value quoted for the context at its position (see
 * `quoteForShell`); the context scan runs once. A `\` right before a replacement is paired
 * (`\\`, a literal backslash) and a lone `$` before it is separated (`''` or `""`), so neither
 * can combine with the value.
 *
 * @throws ParamError for a replacement inside backquotes, in a here-document delimiter, after a
 *   lone `$` in a here-document body, or whose value would end a here-document early.
 * @throws RangeError for overlapping or out-of-range replacements (a caller bug).
 */
export function substituteShell(
  command: string,
  replacements: readonly ShellReplacement[],
): string {
  const reps = [...replacements].sort((a, b) => a.start - b.start);
  let prevEnd = 0;
  for (const r of reps) {
    if (r.start < prevEnd || r.end < r.start || r.end > command.length) {
      throw new RangeError(
        `replacement [${r.start}, ${r.end}) overlaps another or is out of range`,
      );
    }
    prevEnd = r.end;
  }
  return new Scanner(command, reps).run();
}
