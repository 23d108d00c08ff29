// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} in plain strings is the syntax under test
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { checkJsonPath, extractJsonPath } from "../../lib/core/json-path.js";
import { OUT_LIMITS, OutParams, parseSetValues } from "../../lib/core/out-params.js";
import { ParamError } from "../../lib/core/time-params.js";

describe("parseSetValues", () => {
  it("reads what a shell task prints with echo '${setValue(rows=42)}'", () => {
    const line = execFileSync("/bin/sh", ["-c", "echo '${setValue(rows=42)}'"], {
      encoding: "utf8",
    }).trimEnd();
    expect(parseSetValues(line)).toEqual([{ name: "rows", value: "42" }]);
  });

  it("finds several per line, in both forms, around other text", () => {
    expect(parseSetValues("done ${setValue(a=1)} and #{setValue(b=two words)} end")).toEqual([
      { name: "a", value: "1" },
      { name: "b", value: "two words" },
    ]);
  });

  it("runs the value to the next )} and splits the name at the first =", () => {
    expect(parseSetValues("${setValue(expr=f(x) = {y})}")).toEqual([
      { name: "expr", value: "f(x) = {y}" },
    ]);
    expect(parseSetValues("${setValue(empty=)}")).toEqual([{ name: "empty", value: "" }]);
  });

  it("trims the whitespace around the name and the value, not inside", () => {
    expect(parseSetValues("${setValue( spaced =  v w )}")).toEqual([
      { name: "spaced", value: "v w" },
    ]);
    // `echo "#{setValue(rows=$(wc -l < f))}"` with BSD wc, which pads the count.
    expect(parseSetValues("#{setValue(rows=       150)}")).toEqual([
      { name: "rows", value: "150" },
    ]);
    expect(parseSetValues("${setValue(rows = 150\t)}")).toEqual([{ name: "rows", value: "150" }]);
    expect(parseSetValues("${setValue(blank=   )}")).toEqual([{ name: "blank", value: "" }]);
  });

  it("ignores forms without = or without a closing )}", () => {
    expect(parseSetValues("${setValue(noequals)} ${setValue(a=1)")).toEqual([]);
    expect(parseSetValues("${setvalue(a=1)} $setValue(a=1)} plain text")).toEqual([]);
    expect(parseSetValues("${setValue(x)} ${setValue(y=2)}")).toEqual([{ name: "y", value: "2" }]);
  });
});

describe("OutParams", () => {
  it("collects values, a later set overwriting an earlier one", () => {
    const out = new OutParams();
    expect(out.set("rows", "1")).toBeUndefined();
    expect(out.set("system.x", "a")).toBeUndefined();
    expect(out.set("rows", "2")).toBeUndefined();
    expect(out.toRecord()).toEqual({ rows: "2", "system.x": "a" });
    expect(Object.keys(out.toRecord())).toEqual(["rows", "system.x"]);
  });

  it("refuses invalid names", () => {
    const out = new OutParams();
    expect(out.set("1bad", "x")).toBe(
      'OUT parameter name "1bad" is not valid: it must match ^[A-Za-z_][A-Za-z0-9_.]*$.',
    );
    expect(out.set("", "x")).toContain("is not valid");
    expect(out.toRecord()).toEqual({});
  });

  it("limits one value to 4096 UTF-8 bytes", () => {
    const out = new OutParams();
    expect(out.set("max", "x".repeat(OUT_LIMITS.valueBytes))).toBeUndefined();
    expect(out.set("big", "é".repeat(2049))).toBe(
      "OUT parameter big is 4098 bytes, over the limit of 4096 bytes per value.",
    );
    expect(out.toRecord()).not.toHaveProperty("big");
  });

  it("limits the number of names, overwrites still allowed", () => {
    const out = new OutParams();
    for (let i = 0; i < OUT_LIMITS.count; i++) expect(out.set(`p${i}`, "v")).toBeUndefined();
    expect(out.set("one_more", "v")).toBe(
      "OUT parameter one_more would be parameter number 33, over the limit of 32 per task.",
    );
    expect(out.set("p0", "changed")).toBeUndefined();
    expect(Object.keys(out.toRecord())).toHaveLength(32);
  });

  it("limits names and values together to 16384 bytes", () => {
    const out = new OutParams();
    const value = "v".repeat(4000);
    for (const name of ["a", "b", "c", "d"]) expect(out.set(name, value)).toBeUndefined();
    expect(out.set("e", "v".repeat(380))).toBe(
      "OUT parameter e (380 bytes) would bring the task's OUT parameters to 16385 bytes, over the limit of 16384 bytes.",
    );
    expect(out.set("e", "v".repeat(379))).toBeUndefined();
    // Overwriting counts the new value instead of the old one.
    expect(out.set("a", "v".repeat(4001))).toContain("over the limit of 16384 bytes");
    expect(out.set("a", "short")).toBeUndefined();
    expect(out.set("f", "v".repeat(3994))).toBeUndefined(); // 16384 - 4000 + 5 + 1 + 3994
  });
});

describe("JSON paths", () => {
  const doc = {
    data: { id: 7, name: "shoal", tags: ["a", "b", "c"], owner: null, meta: { ok: true } },
    "a.b": "dotted",
    items: [{ id: 1 }, { id: 2 }],
  };

  it("extracts the first match: strings as they are, the rest as JSON", () => {
    expect(extractJsonPath(doc, "$.data.id")).toBe("7");
    expect(extractJsonPath(doc, "$.data.name")).toBe("shoal");
    expect(extractJsonPath(doc, "$.data.owner")).toBe("null");
    expect(extractJsonPath(doc, "$.data.meta")).toBe('{"ok":true}');
    expect(extractJsonPath(doc, "$.data.tags")).toBe('["a","b","c"]');
    expect(extractJsonPath(doc, "$.data.tags[1]")).toBe("b");
    expect(extractJsonPath(doc, "$.data.tags[-1:]")).toBe("c");
    expect(extractJsonPath(doc, "$['a.b']")).toBe("dotted");
    expect(extractJsonPath(doc, '$["data"]["name"]')).toBe("shoal");
    expect(extractJsonPath(doc, "$..id")).toBe("7");
    expect(extractJsonPath(doc, "$.items[*].id")).toBe("1");
    expect(extractJsonPath(doc, "$.items[1,0].id")).toBe("2");
    expect(extractJsonPath(doc, "$")).toBe(JSON.stringify(doc));
  });

  it("gives undefined when nothing matches", () => {
    expect(extractJsonPath(doc, "$.data.missing")).toBeUndefined();
    expect(extractJsonPath(doc, "$.data.tags[9]")).toBeUndefined();
    expect(extractJsonPath(null, "$.x")).toBeUndefined();
    expect(extractJsonPath([10, 20], "$[1]")).toBe("20");
  });

  it("accepts the supported subset", () => {
    for (const p of [
      "$",
      "$.a",
      "$.a.b_c-d",
      "$.*",
      "$..x",
      "$..*",
      "$..[0]",
      "$[0]",
      "$[*]",
      "$[1:3]",
      "$[::2]",
      "$[:]",
      "$['x y']",
      '$["q\\"x"]',
      "$[0,'a']",
      "$.ünï",
    ]) {
      expect(checkJsonPath(p), p).toBeUndefined();
    }
  });

  it("explains paths it rejects, and extractJsonPath throws them as ParamError", () => {
    const cases: Array<[string, string]> = [
      ["data.id", 'it must start with "$"'],
      ["", 'it must start with "$"'],
      ["$.data[?(@.id > 1)]", "filter and script expressions are not supported"],
      ["$.items[(@.length-1)]", "filter and script expressions are not supported"],
      ["$.data[", 'a selector must follow "[" or "," at position 7'],
      ["$.data[]", 'a selector must follow "[" or "," at position 7'],
      ["$.data[1", '"]" expected at position 8'],
      ["$..", 'a name or "*" must follow "." at position 3'],
      ["$.", 'a name or "*" must follow "." at position 2'],
      ["$.a^", 'unexpected "^" at position 3'],
      ["$.a~", 'unexpected "~" at position 3'],
      ["$[-1]", "negative index -1 is not supported (use [-1:] for the last elements)"],
      ["$['open]", 'a selector must follow "[" or "," at position 2'],
      ["$[1:2:3:4]", '"]" expected at position 7'],
    ];
    for (const [path, why] of cases) {
      const problem = checkJsonPath(path) ?? "";
      expect(problem.startsWith(`JSONPath ${JSON.stringify(path)} is not valid: `), path).toBe(
        true,
      );
      expect(problem, path).toContain(why);
      expect(problem.endsWith("."), path).toBe(true);
      expect(() => extractJsonPath(doc, path)).toThrow(ParamError);
    }
  });
});
