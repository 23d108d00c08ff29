/** Masking of secret values (lib/secrets/mask.ts): whole texts and streams split anywhere. */
import { describe, expect, it } from "vitest";
import { MASK, SecretMasker } from "../../lib/secrets/mask.js";

/** The stream masker fed `chunks`, everything it gave out joined. */
function streamed(m: SecretMasker, chunks: string[]): string {
  const s = m.stream();
  return chunks.map((c) => s.push(c)).join("") + s.end();
}

/** Every way of cutting `text` in two, and into single characters. */
function cuts(text: string): string[][] {
  const out: string[][] = [[...text]];
  for (let i = 0; i <= text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

describe("SecretMasker.mask", () => {
  it("masks every occurrence, and leaves other text alone", () => {
    const m = new SecretMasker(["hunter2"]);
    expect(m.mask("pw=hunter2; again hunter2.")).toBe(`pw=${MASK}; again ${MASK}.`);
    expect(m.mask("hunter")).toBe("hunter");
  });
  it("masks several secrets, overlapping or adjacent ones as one run", () => {
    const m = new SecretMasker(["abcd", "cdef", "XY"]);
    expect(m.mask("1abcdef2")).toBe(`1${MASK}2`);
    expect(m.mask("abcdXY")).toBe(MASK);
    expect(m.mask("ab cd ef")).toBe("ab cd ef");
  });
  it("masks a secret inside another one's occurrence, and repeated overlapping occurrences", () => {
    const m = new SecretMasker(["aa"]);
    expect(m.mask("aaa b aa")).toBe(`${MASK} b ${MASK}`);
  });
  it("masks the URL-encoded form and long lines of a multi-line value", () => {
    const m = new SecretMasker([
      "p@ss w/rd",
      "-----BEGIN KEY-----\nMIIBOgIBAAJBAK\n-----END KEY-----",
    ]);
    expect(m.mask("https://h/?pw=p%40ss%20w%2Frd")).toBe(`https://h/?pw=${MASK}`);
    expect(m.mask("line: MIIBOgIBAAJBAK")).toBe(`line: ${MASK}`);
  });
  it("ignores empty values; an empty masker changes nothing", () => {
    const m = new SecretMasker(["", "x1"]);
    expect(m.mask("a x1")).toBe(`a ${MASK}`);
    expect(new SecretMasker([]).empty).toBe(true);
    expect(new SecretMasker([""]).mask("abc")).toBe("abc");
  });
  it("tells whether a text holds a value", () => {
    const m = new SecretMasker(["s3cr3t"]);
    expect(m.contains("the s3cr3t")).toBe(true);
    expect(m.contains("the secret")).toBe(false);
  });
});

describe("SecretMasker.stream", () => {
  const m = new SecretMasker(["hunter2", "2abc", "zz"]);
  const text = "x hunter2abc y zz hunte hunter2\nzzz end";
  const expected = m.mask(text);

  it("masks what one chunk would, wherever the text is cut", () => {
    for (const chunks of cuts(text)) expect(streamed(m, chunks)).toBe(expected);
  });
  it("holds back only what could start a value", () => {
    const s = m.stream();
    expect(s.push("hello hun")).toBe("hello ");
    expect(s.push("gry ")).toBe("hungry ");
    expect(s.push("hunter")).toBe("");
    expect(s.push("2!")).toBe(`${MASK}!`);
    expect(s.end()).toBe("");
  });
  it("a value split across lines (a multi-line secret) is masked whole", () => {
    const key = "line-one-abc\nline-two-def";
    const k = new SecretMasker([key]);
    const out = streamed(k, ["before line-one", "-abc\nline-t", "wo-def after"]);
    expect(out).toBe(`before ${MASK} after`);
  });
  it("a run masked across a chunk boundary stays one ***", () => {
    const k = new SecretMasker(["abcd", "cdef"]);
    for (const chunks of cuts("1abcdef2")) expect(streamed(k, chunks)).toBe(`1${MASK}2`);
  });
  it("never gives out a value, whatever the chunking (random)", () => {
    const secrets = ["s3cr3t", "t0k", "ab"];
    const k = new SecretMasker(secrets);
    const alphabet = "s3crt0kab ";
    for (let round = 0; round < 300; round++) {
      let t = "";
      for (let i = 0; i < 40; i++) t += alphabet[Math.floor(Math.random() * alphabet.length)];
      const chunks: string[] = [];
      for (let i = 0; i < t.length; ) {
        const n = 1 + Math.floor(Math.random() * 7);
        chunks.push(t.slice(i, i + n));
        i += n;
      }
      const out = streamed(k, chunks);
      expect(out).toBe(k.mask(t));
      for (const s of secrets) expect(out).not.toContain(s);
    }
  });
});
