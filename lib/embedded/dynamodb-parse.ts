/**
 * Parser of DynamoDB expressions (AWS Developer Guide, "Using expressions in DynamoDB"):
 * condition and filter expressions, key conditions, update expressions and projections, with
 * `#name` / `:value` placeholders left in the tree (they are bound per request). Parsed trees are
 * cached by text. A syntax error is a ValidationException naming the token, as DynamoDB's is.
 */
import { RESERVED_WORDS } from "./dynamodb-reserved.js";
import { validation } from "./dynamodb-values.js";

/** A document path: names as written (`a`, `#n`) and list indexes. */
export interface Path {
  kind: "path";
  els: Array<string | number>;
}

/** An operand of a condition or of SET. */
export type Operand =
  | Path
  | { kind: "value"; name: string }
  | { kind: "size"; path: Path }
  | { kind: "if_not_exists"; path: Path; value: Operand }
  | { kind: "list_append"; a: Operand; b: Operand }
  | { kind: "arith"; op: "+" | "-"; a: Operand; b: Operand };

/** A condition (ConditionExpression, FilterExpression, KeyConditionExpression). */
export type Cond =
  | { kind: "cmp"; op: "=" | "<>" | "<" | "<=" | ">" | ">="; a: Operand; b: Operand }
  | { kind: "between"; a: Operand; lo: Operand; hi: Operand }
  | { kind: "in"; a: Operand; list: Operand[] }
  | { kind: "and" | "or"; a: Cond; b: Cond }
  | { kind: "not"; a: Cond }
  | { kind: "fn"; name: string; args: Operand[] };

/** The actions of an UpdateExpression, by clause. */
export interface Update {
  set: Array<{ path: Path; value: Operand }>;
  remove: Path[];
  add: Array<{ path: Path; value: Operand }>;
  delete: Array<{ path: Path; value: Operand }>;
}

/** A parsed expression and the placeholders it uses. */
export interface Parsed<T> {
  tree: T;
  names: Set<string>;
  values: Set<string>;
}

interface Token {
  t: "id" | "name" | "value" | "num" | "op" | "eof";
  v: string;
}

const TOKEN =
  /\s*(?:(#[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(<>|<=|>=|[=<>(),.[\]+-]))/y;

function tokenize(text: string, label: string): Token[] {
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  let pos = 0;
  while (pos < text.length) {
    if (/^\s*$/.test(text.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(text);
    if (!m) {
      const bad = text.slice(pos).trimStart()[0] ?? "";
      throw validation(
        `Invalid ${label}: Syntax error; token: "${bad}", near: "${text.slice(pos).trim().slice(0, 8)}"`,
      );
    }
    pos = TOKEN.lastIndex;
    if (m[1]) out.push({ t: "name", v: m[1] });
    else if (m[2]) out.push({ t: "value", v: m[2] });
    else if (m[3]) out.push({ t: "id", v: m[3] });
    else if (m[4]) out.push({ t: "num", v: m[4] });
    else out.push({ t: "op", v: m[5] as string });
  }
  out.push({ t: "eof", v: "<EOF>" });
  return out;
}

const COND_FNS = new Set([
  "attribute_exists",
  "attribute_not_exists",
  "attribute_type",
  "begins_with",
  "contains",
]);
const KEYWORDS = new Set(["AND", "OR", "NOT", "BETWEEN", "IN", "SET", "REMOVE", "ADD", "DELETE"]);

class Parser {
  private i = 0;
  readonly names = new Set<string>();
  readonly values = new Set<string>();

  constructor(
    private readonly toks: Token[],
    private readonly label: string,
  ) {}

  peek(): Token {
    return this.toks[this.i] as Token;
  }
  next(): Token {
    return this.toks[this.i++] as Token;
  }
  isKw(kw: string): boolean {
    const t = this.peek();
    return t.t === "id" && t.v.toUpperCase() === kw;
  }
  isOp(op: string): boolean {
    const t = this.peek();
    return t.t === "op" && t.v === op;
  }
  fail(): never {
    const t = this.peek();
    const near = this.toks
      .slice(Math.max(0, this.i - 1), this.i + 2)
      .filter((x) => x.t !== "eof")
      .map((x) => x.v)
      .join(" ");
    throw validation(`Invalid ${this.label}: Syntax error; token: "${t.v}", near: "${near}"`);
  }
  expectOp(op: string): void {
    if (!this.isOp(op)) this.fail();
    this.i++;
  }
  end(): void {
    if (this.peek().t !== "eof") this.fail();
  }

  path(): Path {
    const els: Array<string | number> = [this.pathName()];
    for (;;) {
      if (this.isOp(".")) {
        this.i++;
        els.push(this.pathName());
      } else if (this.isOp("[")) {
        this.i++;
        const t = this.next();
        if (t.t !== "num") {
          this.i--;
          this.fail();
        }
        els.push(Number(t.v));
        this.expectOp("]");
      } else return { kind: "path", els };
    }
  }
  pathName(): string {
    const t = this.peek();
    if (t.t === "name") {
      this.names.add(t.v);
      this.i++;
      return t.v;
    }
    if (t.t === "id" && !KEYWORDS.has(t.v.toUpperCase())) {
      if (RESERVED_WORDS.has(t.v.toUpperCase()))
        throw validation(
          `Invalid ${this.label}: Attribute name is a reserved keyword; reserved keyword: ${t.v}`,
        );
      this.i++;
      return t.v;
    }
    this.fail();
  }

  operand(): Operand {
    const t = this.peek();
    if (t.t === "value") {
      this.i++;
      this.values.add(t.v);
      return { kind: "value", name: t.v };
    }
    if (t.t === "id" && t.v === "size" && this.toks[this.i + 1]?.v === "(") {
      this.i += 2;
      const path = this.path();
      this.expectOp(")");
      return { kind: "size", path };
    }
    return this.path();
  }

  condition(): Cond {
    let a = this.conjunction();
    while (this.isKw("OR")) {
      this.i++;
      a = { kind: "or", a, b: this.conjunction() };
    }
    return a;
  }
  conjunction(): Cond {
    let a = this.negation();
    while (this.isKw("AND")) {
      this.i++;
      a = { kind: "and", a, b: this.negation() };
    }
    return a;
  }
  negation(): Cond {
    if (this.isKw("NOT")) {
      this.i++;
      return { kind: "not", a: this.negation() };
    }
    return this.primary();
  }
  primary(): Cond {
    if (this.isOp("(")) {
      this.i++;
      const c = this.condition();
      this.expectOp(")");
      return c;
    }
    const t = this.peek();
    if (t.t === "id" && COND_FNS.has(t.v) && this.toks[this.i + 1]?.v === "(") {
      this.i += 2;
      const args: Operand[] = [this.operand()];
      while (this.isOp(",")) {
        this.i++;
        args.push(this.operand());
      }
      this.expectOp(")");
      const want = t.v === "attribute_exists" || t.v === "attribute_not_exists" ? 1 : 2;
      if (args.length !== want)
        throw validation(
          `Invalid ${this.label}: Incorrect number of operands for operator or function; operator or function: ${t.v}, number of operands: ${args.length}`,
        );
      if (args[0]?.kind !== "path")
        throw validation(
          `Invalid ${this.label}: Operator or function requires a document path; operator or function: ${t.v}`,
        );
      return { kind: "fn", name: t.v, args };
    }
    const a = this.operand();
    const op = this.peek();
    if (op.t === "op" && ["=", "<>", "<", "<=", ">", ">="].includes(op.v)) {
      this.i++;
      return { kind: "cmp", op: op.v as "=", a, b: this.operand() };
    }
    if (this.isKw("BETWEEN")) {
      this.i++;
      const lo = this.operand();
      if (!this.isKw("AND")) this.fail();
      this.i++;
      return { kind: "between", a, lo, hi: this.operand() };
    }
    if (this.isKw("IN")) {
      this.i++;
      this.expectOp("(");
      const list = [this.operand()];
      while (this.isOp(",")) {
        this.i++;
        list.push(this.operand());
      }
      this.expectOp(")");
      return { kind: "in", a, list };
    }
    this.fail();
  }

  setValue(): Operand {
    const a = this.setOperand();
    if (this.isOp("+") || this.isOp("-")) {
      const op = this.next().v as "+" | "-";
      return { kind: "arith", op, a, b: this.setOperand() };
    }
    return a;
  }
  setOperand(): Operand {
    const t = this.peek();
    if (t.t === "id" && this.toks[this.i + 1]?.v === "(") {
      if (t.v === "if_not_exists") {
        this.i += 2;
        const path = this.path();
        this.expectOp(",");
        const value = this.setOperand();
        this.expectOp(")");
        return { kind: "if_not_exists", path, value };
      }
      if (t.v === "list_append") {
        this.i += 2;
        const a = this.setOperand();
        this.expectOp(",");
        const b = this.setOperand();
        this.expectOp(")");
        return { kind: "list_append", a, b };
      }
      throw validation(`Invalid ${this.label}: Invalid function name; function: ${t.v}`);
    }
    if (t.t === "value") {
      this.i++;
      this.values.add(t.v);
      return { kind: "value", name: t.v };
    }
    return this.path();
  }

  update(): Update {
    const u: Update = { set: [], remove: [], add: [], delete: [] };
    const seen = new Set<string>();
    if (this.peek().t === "eof") this.fail();
    while (this.peek().t !== "eof") {
      const t = this.peek();
      const kw = t.t === "id" ? t.v.toUpperCase() : "";
      if (!["SET", "REMOVE", "ADD", "DELETE"].includes(kw)) this.fail();
      if (seen.has(kw))
        throw validation(
          `Invalid ${this.label}: The "${kw}" section can only be used once in an update expression;`,
        );
      seen.add(kw);
      this.i++;
      do {
        if (kw === "SET") {
          const path = this.path();
          this.expectOp("=");
          u.set.push({ path, value: this.setValue() });
        } else if (kw === "REMOVE") u.remove.push(this.path());
        else {
          const path = this.path();
          const v = this.peek();
          if (v.t !== "value") this.fail();
          this.i++;
          this.values.add(v.v);
          (kw === "ADD" ? u.add : u.delete).push({ path, value: { kind: "value", name: v.v } });
        }
      } while (this.isOp(",") && ++this.i);
    }
    return u;
  }
}

const CACHE_LIMIT = 2000;
const cache = new Map<string, Parsed<unknown>>();

function cached<T>(key: string, build: () => Parsed<T>): Parsed<T> {
  const hit = cache.get(key);
  if (hit) return hit as Parsed<T>;
  const p = build();
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, p);
  return p;
}

function parseWith<T>(kind: string, label: string, text: string, run: (p: Parser) => T): Parsed<T> {
  return cached(`${kind}\u0000${text}`, () => {
    if (text.trim() === "") throw validation(`Invalid ${label}: The expression can not be empty;`);
    const p = new Parser(tokenize(text, label), label);
    const tree = run(p);
    p.end();
    return { tree, names: p.names, values: p.values };
  });
}

/** Parses a condition; `label` names it in errors (`ConditionExpression`, `FilterExpression`, …). */
export function parseCondition(text: string, label: string): Parsed<Cond> {
  return parseWith("c", label, text, (p) => p.condition());
}

/** Parses an UpdateExpression. */
export function parseUpdate(text: string): Parsed<Update> {
  return parseWith("u", "UpdateExpression", text, (p) => p.update());
}

/** Parses a ProjectionExpression. */
export function parseProjection(text: string): Parsed<Path[]> {
  return parseWith("p", "ProjectionExpression", text, (p) => {
    const paths = [p.path()];
    while (p.isOp(",")) {
      p.next();
      paths.push(p.path());
    }
    return paths;
  });
}
