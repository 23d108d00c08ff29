/**
 * A small Python tokenizer, enough to read a PYTHON task's script without Python (none runs at
 * import time): names, numbers, string literals (with their text), operators, and the end of
 * each statement. Comments are dropped; strings are single tokens, so neither is mistaken for
 * code; brackets and backslashes continue a statement over lines, as in Python's own tokenizer
 * (Python language reference, "Lexical analysis"). Indentation is not tracked: an import inside
 * a function is an import all the same. Pure.
 */

/** One token; `line` is where it starts, from 1. */
export type PyToken =
  | { kind: "name"; text: string; line: number }
  | { kind: "number"; text: string; line: number }
  /** `text` is the literal's content, prefix and quotes removed, escapes left as written. */
  | { kind: "string"; text: string; line: number }
  | { kind: "op"; text: string; line: number };

/** Operators of two or three characters (the rest are one character). */
const LONG_OPS = [
  "**=",
  "//=",
  ">>=",
  "<<=",
  "...",
  "==",
  "!=",
  "<=",
  ">=",
  ":=",
  "->",
  "**",
  "//",
  "<<",
  ">>",
  "+=",
  "-=",
  "*=",
  "/=",
  "%=",
  "&=",
  "|=",
  "^=",
  "@=",
];

const STRING_START = /^(?:[rRbBuUfF]|[rR][bBfF]|[bBfF][rR])?['"]/;
const NAME = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/u;
const NUMBER =
  /^0[xXoObB][\da-fA-F_]+|^(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJlL]?/;

/**
 * The script's statements, each a list of tokens (`;` and the end of a line outside brackets
 * end one; empty statements are left out). Never throws: an unterminated string ends at the end
 * of its line (or of the script, when triple-quoted), an unknown character is an operator.
 */
export function pythonStatements(script: string): PyToken[][] {
  const statements: PyToken[][] = [];
  let current: PyToken[] = [];
  const end = () => {
    if (current.length > 0) statements.push(current);
    current = [];
  };
  let depth = 0;
  let line = 1;
  let i = 0;
  const n = script.length;
  while (i < n) {
    const c = script[i] as string;
    if (c === "\n") {
      line++;
      i++;
      if (depth === 0) end();
      continue;
    }
    if (c === " " || c === "\t" || c === "\f" || c === "\r") {
      i++;
      continue;
    }
    if (c === "#") {
      while (i < n && script[i] !== "\n") i++;
      continue;
    }
    if (c === "\\" && (script[i + 1] === "\n" || script.startsWith("\r\n", i + 1))) {
      i += script[i + 1] === "\n" ? 2 : 3;
      line++;
      continue;
    }
    const prefix = STRING_START.exec(script.slice(i, i + 3));
    if (prefix) {
      const start = line;
      const quote = prefix[0].slice(-1);
      let j = i + prefix[0].length;
      const triple = script.startsWith(quote.repeat(2), j);
      const close = triple ? quote.repeat(3) : quote;
      if (triple) j += 2;
      const from = j;
      while (j < n && !script.startsWith(close, j)) {
        if (script[j] === "\\") j++;
        else if (script[j] === "\n" && !triple) break;
        j++;
      }
      if (j > n) j = n;
      // Lines counted from the text: an escaped newline inside a string is a new line too.
      const text = script.slice(from, j);
      line = start + (text.match(/\n/g)?.length ?? 0);
      current.push({ kind: "string", text, line: start });
      i = j < n && script.startsWith(close, j) ? j + close.length : j;
      continue;
    }
    const name = NAME.exec(script.slice(i, i + 200));
    if (name) {
      current.push({ kind: "name", text: name[0], line });
      i += name[0].length;
      continue;
    }
    const num = NUMBER.exec(script.slice(i, i + 100));
    if (num) {
      current.push({ kind: "number", text: num[0], line });
      i += num[0].length;
      continue;
    }
    const op = LONG_OPS.find((o) => script.startsWith(o, i)) ?? c;
    if (op === ";" && depth === 0) end();
    else current.push({ kind: "op", text: op, line });
    if ("([{".includes(op)) depth++;
    else if (")]}".includes(op)) depth = Math.max(0, depth - 1);
    i += op.length;
  }
  end();
  return statements;
}
