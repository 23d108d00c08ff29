/**
 * DynamoDB attribute values inside the embedded engine: their in-engine shape (the wire JSON,
 * binary as base64), exact decimal numbers, DynamoDB's ordering and equality, item sizes
 * (AWS Developer Guide, "Item sizes and formats":
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html)
 * and byte-comparable key encodings (SQLite compares BLOBs with memcmp).
 */
import { EmbeddedServiceError } from "./client-stack.js";

/** An attribute value as the awsJson1_0 wire carries it (B and BS as base64 strings). */
export interface AV {
  S?: string;
  N?: string;
  B?: string;
  SS?: string[];
  NS?: string[];
  BS?: string[];
  M?: Record<string, AV>;
  L?: AV[];
  NULL?: boolean;
  BOOL?: boolean;
}

/** An item: attribute name → value. */
export type Item = Record<string, AV>;

/** A ValidationException as DynamoDB words it. */
export function validation(message: string): EmbeddedServiceError {
  return new EmbeddedServiceError("ValidationException", message);
}

/** The type descriptor of `v` (`S`, `N`, …, `NULL`, `BOOL`). */
export function typeOf(v: AV): string {
  for (const k in v) return k;
  throw validation(
    "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
  );
}

/** A decimal number: sign, significant digits (no leading/trailing zeros), value = 0.digits × 10^exp. */
interface Dec {
  neg: boolean;
  digits: string;
  exp: number;
}

const NUM = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/;

/** Parses DynamoDB's N text exactly. @throws ValidationException for text that is no number. */
export function parseNumber(text: string): Dec {
  const m = NUM.exec(text);
  if (!m || (m[2] === "" && (m[3] ?? "") === ""))
    throw validation("A value provided cannot be converted into a number");
  const int = m[2] ?? "";
  const frac = m[3] ?? "";
  let all = int + frac;
  let exp = int.length + Number(m[4] ?? 0);
  const lead = all.search(/[1-9]/);
  if (lead < 0) return { neg: false, digits: "", exp: 0 };
  all = all.slice(lead);
  exp -= lead;
  all = all.replace(/0+$/, "");
  if (all.length > 38)
    throw validation("Attempting to store more than 38 significant digits in a Number");
  if (exp > 126)
    throw validation(
      "Number overflow. Attempting to store a number with magnitude larger than supported range",
    );
  if (exp < -129)
    throw validation(
      "Number underflow. Attempting to store a number with magnitude smaller than supported range",
    );
  return { neg: m[1] === "-", digits: all, exp };
}

const PLAIN_INT = /^-?(0|[1-9]\d{0,14})$/;

/** The canonical text of a number, as DynamoDB returns it (`1.50` → `1.5`, `1e2` → `100`). */
export function canonicalNumber(text: string): string {
  if (PLAIN_INT.test(text)) return text === "-0" ? "0" : text;
  const d = parseNumber(text);
  if (d.digits === "") return "0";
  const sign = d.neg ? "-" : "";
  if (d.exp <= 0) return `${sign}0.${"0".repeat(-d.exp)}${d.digits}`;
  if (d.exp >= d.digits.length) return sign + d.digits + "0".repeat(d.exp - d.digits.length);
  return `${sign}${d.digits.slice(0, d.exp)}.${d.digits.slice(d.exp)}`;
}

function decToScaled(d: Dec): { n: bigint; scale: number } {
  // value = digits × 10^(exp - len)
  const n = BigInt(d.digits || "0");
  return { n: d.neg ? -n : n, scale: d.exp - d.digits.length };
}

/** `a + b` or `a - b` exactly (SET's arithmetic and ADD), as canonical text. */
export function addNumbers(a: string, b: string, subtract = false): string {
  const x = decToScaled(parseNumber(a));
  const y = decToScaled(parseNumber(b));
  const scale = Math.min(x.scale, y.scale);
  const xn = x.n * 10n ** BigInt(x.scale - scale);
  const yn = y.n * 10n ** BigInt(y.scale - scale);
  const sum = subtract ? xn - yn : xn + yn;
  const neg = sum < 0n;
  const digits = (neg ? -sum : sum).toString();
  return canonicalNumber(`${neg ? "-" : ""}${digits}e${scale}`);
}

/** Numeric comparison of two N texts: negative, zero or positive. */
export function compareNumbers(a: string, b: string): number {
  if (a === b) return 0;
  const x = parseNumber(a);
  const y = parseNumber(b);
  const sx = x.digits === "" ? 0 : x.neg ? -1 : 1;
  const sy = y.digits === "" ? 0 : y.neg ? -1 : 1;
  if (sx !== sy) return sx - sy;
  if (sx === 0) return 0;
  let c = x.exp - y.exp;
  if (c === 0) c = x.digits < y.digits ? -1 : x.digits > y.digits ? 1 : 0;
  return sx < 0 ? -c : c;
}

/** Byte order of two base64 binaries. */
function compareBinary(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "base64"), Buffer.from(b, "base64"));
}

/** UTF-8 byte order of two strings (DynamoDB orders S by UTF-8 bytes, not UTF-16 units). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  // Code-point order equals UTF-8 byte order; UTF-16 order differs only above the BMP.
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/**
 * Order of two scalar values of one type (S, N, B); `undefined` when they cannot be ordered
 * (different types, or not scalars), which makes a comparison false.
 */
export function compareValues(a: AV, b: AV): number | undefined {
  if (a.S !== undefined && b.S !== undefined) return compareStrings(a.S, b.S);
  if (a.N !== undefined && b.N !== undefined) return compareNumbers(a.N, b.N);
  if (a.B !== undefined && b.B !== undefined) return compareBinary(a.B, b.B);
  return undefined;
}

function sameSet(a: string[], b: string[], eq: (x: string, y: string) => boolean): boolean {
  return a.length === b.length && a.every((x) => b.some((y) => eq(x, y)));
}

/** DynamoDB equality: same type and value (numbers numerically, sets ignoring order). */
export function equalValues(a: AV, b: AV): boolean {
  const t = typeOf(a);
  if (t !== typeOf(b)) return false;
  switch (t) {
    case "S":
      return a.S === b.S;
    case "N":
      return compareNumbers(a.N as string, b.N as string) === 0;
    case "B":
      return compareBinary(a.B as string, b.B as string) === 0;
    case "BOOL":
      return a.BOOL === b.BOOL;
    case "NULL":
      return true;
    case "SS":
      return sameSet(a.SS as string[], b.SS as string[], (x, y) => x === y);
    case "NS":
      return sameSet(a.NS as string[], b.NS as string[], (x, y) => compareNumbers(x, y) === 0);
    case "BS":
      return sameSet(a.BS as string[], b.BS as string[], (x, y) => compareBinary(x, y) === 0);
    case "L": {
      const x = a.L as AV[];
      const y = b.L as AV[];
      return x.length === y.length && x.every((v, i) => equalValues(v, y[i] as AV));
    }
    default: {
      const x = a.M as Item;
      const y = b.M as Item;
      const kx = Object.keys(x);
      if (kx.length !== Object.keys(y).length) return false;
      return kx.every((k) => y[k] !== undefined && equalValues(x[k] as AV, y[k] as AV));
    }
  }
}

function numberSize(n: string): number {
  const d = parseNumber(n);
  return Math.ceil(d.digits.length / 2) + 1;
}

function binaryLength(b64: string): number {
  return Buffer.byteLength(b64, "base64");
}

/** The size of a value in bytes, by "Item sizes and formats" (without its attribute name). */
export function valueSize(v: AV): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return numberSize(v.N);
  if (v.B !== undefined) return binaryLength(v.B);
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.SS) return v.SS.reduce((s, x) => s + Buffer.byteLength(x), 0);
  if (v.NS) return v.NS.reduce((s, x) => s + numberSize(x), 0);
  if (v.BS) return v.BS.reduce((s, x) => s + binaryLength(x), 0);
  if (v.L) return v.L.reduce((s, x) => s + valueSize(x) + 1, 3);
  if (v.M)
    return Object.entries(v.M).reduce(
      (s, [k, x]) => s + Buffer.byteLength(k) + valueSize(x) + 1,
      3,
    );
  return 0;
}

/** The size of an item in bytes: attribute names plus values ("Item sizes and formats"). */
export function itemSize(item: Item): number {
  let n = 0;
  for (const k in item) n += Buffer.byteLength(k) + valueSize(item[k] as AV);
  return n;
}

/**
 * A key value as a byte string whose memcmp order is DynamoDB's order: S as UTF-8, B as its
 * bytes, N as sign byte, 16-bit exponent and digits (inverted, with a terminator, when negative).
 */
export function encodeKey(v: AV): Uint8Array {
  if (v.S !== undefined) return Buffer.from(v.S, "utf8");
  if (v.B !== undefined) return Buffer.from(v.B, "base64");
  const d = parseNumber(v.N as string);
  if (d.digits === "") return Uint8Array.of(0x80);
  const out = new Uint8Array(3 + d.digits.length + (d.neg ? 1 : 0));
  const e = d.exp + 1000;
  if (!d.neg) {
    out[0] = 0x81;
    out[1] = e >> 8;
    out[2] = e & 0xff;
    for (let i = 0; i < d.digits.length; i++) out[3 + i] = d.digits.charCodeAt(i);
  } else {
    out[0] = 0x7f;
    out[1] = 0xff - (e >> 8);
    out[2] = 0xff - (e & 0xff);
    for (let i = 0; i < d.digits.length; i++) out[3 + i] = 0xff - d.digits.charCodeAt(i);
    out[out.length - 1] = 0xff;
  }
  return out;
}

/** Walks `v` applying `f` to binaries (base64 ↔ bytes); returns `v` itself when it holds none. */
function mapBinaries(v: unknown, f: (b: unknown) => unknown): unknown {
  if (!v || typeof v !== "object") return v;
  const o = v as Record<string, unknown>;
  if ("B" in o) return { B: f(o.B) };
  if ("BS" in o) return { BS: (o.BS as unknown[]).map(f) };
  if ("L" in o) {
    const l = o.L as unknown[];
    const m = l.map((x) => mapBinaries(x, f));
    return m.every((x, i) => x === l[i]) ? v : { L: m };
  }
  if ("M" in o) {
    const m = mapItemBinaries(o.M as Record<string, unknown>, f);
    return m === o.M ? v : { M: m };
  }
  return v;
}

function mapItemBinaries(item: Record<string, unknown>, f: (b: unknown) => unknown) {
  let out: Record<string, unknown> | undefined;
  for (const k in item) {
    const x = item[k];
    const y = mapBinaries(x, f);
    if (y !== x) {
      out ??= { ...item };
      out[k] = y;
    }
  }
  return out ?? item;
}

const toBase64 = (b: unknown) =>
  typeof b === "string" ? b : Buffer.from(b as Uint8Array).toString("base64");
const fromBase64 = (b: unknown) => new Uint8Array(Buffer.from(b as string, "base64"));

/** An SDK item (binaries as Uint8Array) in the engine's shape (binaries as base64). */
export function itemFromSdk(item: Record<string, unknown> | undefined): Item | undefined {
  return item && (mapItemBinaries(item, toBase64) as Item);
}

/** An engine item in the SDK's shape (binaries as Uint8Array). */
export function itemToSdk(item: Item): Record<string, unknown> {
  return mapItemBinaries(item as Record<string, unknown>, fromBase64);
}
