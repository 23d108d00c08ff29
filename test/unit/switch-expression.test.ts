import { describe, expect, it } from "vitest";
import {
  checkSwitchExpression,
  evaluateSwitch,
  SWITCH_EXPRESSION_MAX_CHARS,
} from "../../lib/core/switch-expression.js";

/** Evaluates one condition as case 0 with default "dflt"; returns the branch or the error. */
function run(condition: string, params: Record<string, string> = {}): string {
  const r = evaluateSwitch([{ condition, next: "hit" }], "dflt", params);
  return "error" in r ? `error: ${r.error}` : r.next;
}

describe("evaluateSwitch", () => {
  const params = {
    region: "eu",
    count: "5",
    ratio: "0.25",
    "system.biz.date": "20260105",
  };

  it("follows the first true case, in order", () => {
    const cases = [
      { condition: 'region == "us"', next: "us" },
      { condition: 'region == "eu"', next: "eu" },
      { condition: "true", next: "always" },
    ];
    expect(evaluateSwitch(cases, "dflt", params)).toEqual({ next: "eu", matched: 1 });
  });

  it("takes defaultNext when no case is true, and errors without one", () => {
    const cases = [{ condition: 'region == "us"', next: "us" }];
    expect(evaluateSwitch(cases, "dflt", params)).toEqual({ next: "dflt", matched: -1 });
    expect(evaluateSwitch(cases, undefined, params)).toEqual({
      error: "no case matched and there is no defaultNext",
    });
    expect(evaluateSwitch([], "dflt", params)).toEqual({ next: "dflt", matched: -1 });
  });

  it("offers identifier parameters as variables and every parameter in params", () => {
    expect(run('region == "eu"', params)).toBe("hit");
    expect(run('params["system.biz.date"] >= "20260101"', params)).toBe("hit");
    expect(run('params.region == "eu" && params["count"] == count', params)).toBe("hit");
    expect(run('"region" in params && !("absent" in params)', params)).toBe("hit");
    expect(
      run('params.exists(k, k.startsWith("system.") && params[k] == "20260105")', params),
    ).toBe("hit");
  });

  it("compares with a quoted string as text, and converts with int() and double()", () => {
    expect(run('count == "5"', params)).toBe("hit");
    expect(run("int(count) > 3", params)).toBe("hit");
    expect(run("int(count) == 5 && double(ratio) < 0.5", params)).toBe("hit");
    // A quoted string asks for text: lexicographic, "5" > "10".
    expect(run('count > "10"', params)).toBe("hit");
    expect(run('"10" < count', params)).toBe("hit");
    // A number asks for a number.
    expect(run("count == 5", params)).toBe("hit");
    expect(run("count > 10", params)).toBe("dflt");
  });

  it("reports a mistyped comparison even where || would skip it", () => {
    const msg = run("count > true", params);
    expect(msg).toContain('case 0 ("count > true")');
    expect(msg).toContain("no such overload: parameter > bool");
    expect(msg).toContain("a parameter is a string, compared as a number with a number");
    expect(run("true || count > true", params)).toContain("no such overload: parameter > bool");
  });

  it("stops at the first failing case and names its index and expression", () => {
    const cases = [
      { condition: 'region == "us"', next: "a" },
      { condition: "int(region) > 1", next: "b" },
      { condition: "true", next: "c" },
    ];
    const r = evaluateSwitch(cases, "dflt", params);
    expect(r).toEqual({ error: expect.stringContaining('case 1 ("int(region) > 1"): int()') });
  });

  it("fails on unknown variables and missing parameters", () => {
    expect(run('missing == "x"', params)).toContain("Unknown variable: missing");
    expect(run('params["missing"] == "x"', params)).toContain("No such key: missing");
    expect(run('region == "eu"', {})).toContain("Unknown variable: region");
    // Dotted names are not variables: `system` is unknown.
    expect(run('system.biz.date == "20260105"', params)).toContain("Unknown variable: system");
  });

  it("fails on results that are not booleans", () => {
    expect(run("region", params)).toContain("it yields string, not a boolean");
    expect(run("1 + 2", params)).toContain("it yields int, not a boolean");
    expect(run("null", params)).toContain("not a boolean");
    expect(run('params["count"]', params)).toContain("not a boolean");
    expect(run("[true]", params)).toContain("not a boolean");
    // dyn at check time, a string at run time.
    expect(run('dyn(region) == "eu" ? dyn(region) : dyn(false)', params)).toBe(
      'error: case 0 ("dyn(region) == \\"eu\\" ? dyn(region) : dyn(false)"): it yields string "eu", not a boolean',
    );
  });

  it("fails on evaluation errors", () => {
    expect(run("int(count) / 0 == 1", params)).toContain("division by zero");
    expect(run('double("abc") > 1.0', params)).toContain("double()");
  });

  it("handles huge ints: beyond 64 bits is an error, doubles still compare", () => {
    const big = { n: "123456789012345678901234567890", max: "9223372036854775807" };
    expect(run("int(n) > 1", big)).toContain("int() type error");
    expect(run("int(max) == 9223372036854775807", big)).toBe("hit");
    expect(run("int(max) + 1 > 0", big)).toContain("overflow");
    expect(run("double(n) > 1e29", big)).toBe("hit");
  });

  it("treats quotes, backslashes and unicode in values as data", () => {
    const p = { q: '" || true || "', b: "a\\b", u: "é😀", name: "Zoë" };
    expect(run('q == "\\" || true || \\""', p)).toBe("hit");
    expect(run('q == ""', p)).toBe("dflt");
    expect(run('b == "a\\\\b" && b == r"a\\b"', p)).toBe("hit");
    expect(run("size(u) == 2", p)).toBe("hit"); // code points, per the CEL spec
    expect(run('u.startsWith("é") && name == "Zo\\u00eb"', p)).toBe("hit");
    expect(run("name == 'Zoë'", p)).toBe("hit");
  });

  it("gives JavaScript nothing to reach", () => {
    const p = { region: "eu" };
    for (const expr of [
      "process",
      "constructor",
      "this",
      "globalThis",
      "toString",
      "hasOwnProperty",
    ]) {
      expect(run(`${expr} == "x"`, p)).toContain(`Unknown variable: ${expr}`);
    }
    expect(run('__proto__ == "x"', p)).toContain("Reserved identifier: __proto__");
    expect(run('params.constructor == "x"', p)).toContain("No such key: constructor");
    expect(run('params["__proto__"] == "x"', p)).toContain("No such key: __proto__");
    expect(run('params.toString == "x"', p)).toContain("No such key: toString");
    expect(run('region.constructor == "x"', p)).toMatch(/^error: /);
    expect(run('region.toString() == "eu"', p)).toMatch(/^error: .*no matching overload/);
    expect(run('process.exit(1) == "x"', p)).toMatch(/^error: /);
    expect(run('require("fs") == "x"', p)).toMatch(/^error: .*no matching overload/);
  });

  it("lets parameters use names that are JavaScript-special, without effect on others", () => {
    const p = { constructor: "c", toString: "t", __proto__x: "p" } as Record<string, string>;
    expect(run('constructor == "c" && toString == "t"', p)).toBe("hit");
    expect(run('params["constructor"] == "c"', p)).toBe("hit");
    // A parameter named like a built-in stays reachable through params only.
    expect(run('params["int"] == "1" && int("2") == 2', { int: "1" })).toBe("hit");
    expect(run('params["params"] == "x" && size(params) == 1', { params: "x" })).toBe("hit");
  });

  it("rejects expressions over the length limit before parsing them", () => {
    const long = `region == "${"a".repeat(SWITCH_EXPRESSION_MAX_CHARS)}"`;
    expect(run(long, { region: "eu" })).toContain("characters long; the limit is 1000");
  });

  it("rejects deeply nested macros", () => {
    const list = "[1, 2, 3]";
    const deep = `${list}.all(a, ${list}.all(b, ${list}.all(c, a + b + c > 0)))`;
    expect(run(deep)).toContain("nested 3 deep; the limit is 2");
    expect(run(`${list}.all(a, ${list}.exists(b, a == b))`)).toBe("hit");
    expect(
      run("cel.bind(x, [1, 2], cel.bind(y, x + x, cel.bind(z, y + y, size(z) > 0)))"),
    ).toContain("nested 3 deep");
    expect(run("cel.bind(x, [1, 2], size(x + x) == 4)")).toBe("hit");
  });
});

describe("evaluateSwitch: numbers compare as numbers, as DolphinScheduler's substitution does", () => {
  const p = { rows: "5", threshold: "100", ratio: "0.25", region: "eu", dt: "20260105" };

  it("compares two number-like parameters as numbers", () => {
    expect(run("rows > threshold", p)).toBe("dflt");
    expect(run("rows < threshold && threshold >= rows && rows != threshold", p)).toBe("hit");
    expect(run('params["rows"] > params["threshold"]', p)).toBe("dflt");
    expect(run("a < b", { a: "9.75", b: "10.5" })).toBe("hit");
    expect(run("a < b", { a: "-3", b: "-2" })).toBe("hit");
    expect(run("a < b", { a: "-10", b: "2" })).toBe("hit");
    // Exactly, leading zeros and trailing decimal zeros included.
    expect(run("a == b && a <= b && a >= b", { a: "05", b: "5.000" })).toBe("hit");
    expect(run("a == b", { a: "-0", b: "0.0" })).toBe("hit");
    expect(run("a > b", { a: "9007199254740993", b: "9007199254740992" })).toBe("hit");
    expect(run("a > b", { a: "123456789012345678901234567890", b: "99" })).toBe("hit");
  });

  it("orders two parameters as text only when neither looks like a number", () => {
    expect(run("a < b", { a: "2026-01-05", b: "2026-01-06" })).toBe("hit");
    expect(run("a > b", { a: "eu", b: "EU" })).toBe("hit");
    expect(run("a < b", { a: "", b: "eu" })).toBe("hit");
    expect(run("a == b", { a: "Infinity", b: "Infinity" })).toBe("hit");
  });

  it("fails <, <=, >, >= between two parameters when exactly one looks like a number", () => {
    // As text, "" < "100" and " 1e3" < "20": each would silently take another branch.
    for (const notNumber of ["", "1e3", "+5", "0x10", "5.", ".5", "1,000", "1_000", "1 000"]) {
      for (const op of ["<", "<=", ">", ">="]) {
        expect(run(`a ${op} b`, { a: notNumber, b: "20" }), `${notNumber} ${op}`).toBe(
          `error: case 0 ("a ${op} b"): parameter a is ${JSON.stringify(notNumber)}, not a number, while parameter b is the number 20: ${op} needs two numbers or two texts (to compare them as text, write string(a) ${op} string(b)) at character 1`,
        );
        expect(run(`b ${op} a`, { a: notNumber, b: "20" }), `${notNumber} ${op}`).toContain(
          `parameter a is ${JSON.stringify(notNumber)}, not a number, while parameter b is the number 20`,
        );
      }
      expect(run("a > 3", { a: notNumber }), notNumber).toContain("not a number");
    }
    expect(run("rows > threshold", { rows: "", threshold: "100" })).toContain(
      'parameter rows is "", not a number, while parameter threshold is the number 100',
    );
    // The way out the message names: text order on purpose.
    expect(run("string(a) < string(b)", { a: "10", b: "9a" })).toBe("hit");
    // Equality never fails: as numbers when both are, else as the exact text.
    expect(run("a == b", { a: "1e3", b: "1000" })).toBe("dflt");
    expect(run("a != b", { a: "", b: "0" })).toBe("hit");
    expect(run("a in [b]", { a: "1e3", b: "1000" })).toBe("dflt");
  });

  it("trims the whitespace around a number, as DolphinScheduler's pasted text is read", () => {
    // `${setValue(rows= 150)}`, BSD `wc -l` padding, a trailing newline.
    for (const padded of [" 150", "150 ", "\t150\n", "  150\r\n", "\u00a0150"]) {
      const p = { rows: padded, threshold: "100" };
      expect(run("rows > threshold", p), JSON.stringify(padded)).toBe("hit");
      expect(run("threshold < rows && rows >= 150 && rows == 150", p)).toBe("hit");
      expect(run("rows + 1 == 151 && rows * 2 > threshold", p)).toBe("hit");
      expect(
        run('rows == b && rows in [150] && rows in [b] && rows != "150"', { ...p, b: "150" }),
      ).toBe("hit");
    }
    expect(run("a > b", { a: " -2.50 ", b: "-3" })).toBe("hit");
    expect(run("a + 1 > 0", { a: " 9223372036854775808" })).toContain(
      "parameter a (9223372036854775808) is beyond the 64-bit int range",
    );
    // Inner spaces and the empty value are not numbers.
    expect(run("a > 3", { a: "1 5" })).toContain('parameter a is "1 5", not a number');
    expect(run("a > 3", { a: "  " })).toContain('parameter a is "  ", not a number');
  });

  it("compares with a number literal as a number, and fails when the value is not one", () => {
    expect(run("rows > 3 && 3 < rows && rows <= 5 && rows == 5 && rows != 6", p)).toBe("hit");
    expect(run("ratio < 0.5 && rows > 4.5 && 4.5 < rows && ratio == 0.25", p)).toBe("hit");
    expect(run("dt > 20251231 && dt < 20260106", p)).toBe("hit");
    expect(run("a == 9007199254740993", { a: "9007199254740993" })).toBe("hit");
    expect(run("a > 9007199254740992", { a: "9007199254740993" })).toBe("hit");
    expect(run("true && region > 3", p)).toBe(
      'error: case 0 ("true && region > 3"): parameter region is "eu", not a number at character 9',
    );
    // Equality across types is false rather than an error, as CEL's own.
    expect(run("region == 3", p)).toBe("dflt");
    expect(run("region != 3", p)).toBe("hit");
  });

  it("keeps text comparisons with quoted strings and every string function", () => {
    expect(run('rows == "5" && region == "eu" && dt >= "20260101"', p)).toBe("hit");
    expect(run('a == "5"', { a: "05" })).toBe("dflt"); // text: "05" is not "5"
    expect(run('dt.startsWith("2026") && dt.substring(4, 6) == "01" && size(dt) == 8', p)).toBe(
      "hit",
    );
    expect(run('region.upperAscii() == "EU" && region.matches("^e") && "u" in [region]', p)).toBe(
      "dflt",
    );
    expect(run('region.upperAscii() == "EU" && region.matches("^e") && region in ["eu"]', p)).toBe(
      "hit",
    );
    expect(run("string(rows) + region == '5eu' && int(rows) + 1 == 6", p)).toBe("hit");
    expect(run('dt.split("0").size() == 4 && region.indexOf("u") == 1', p)).toBe("hit");
  });

  it("computes with numbers: int with ints, double as soon as one side is a decimal", () => {
    expect(run("rows + 1 == 6 && rows * 2 == 10 && threshold / rows == 20", p)).toBe("hit");
    expect(run("threshold % 7 == 2 && threshold - rows == 95 && -rows == -5", p)).toBe("hit");
    expect(run("rows + threshold == 105 && rows * 2 < threshold", p)).toBe("hit");
    expect(run("ratio * 4 == 1.0 && rows + ratio == 5.25 && rows / 2.0 == 2.5", p)).toBe("hit");
    expect(run("rows + 1 > threshold", p)).toBe("dflt");
    expect(run("region * 2 > 1", p)).toContain('parameter region is "eu", not a number');
    expect(run("rows / 0 > 1", p)).toContain("division by zero");
    expect(run("a + 1 > 0", { a: "9223372036854775807" })).toContain("overflow");
    expect(run("a + 1 > 0", { a: "9223372036854775808" })).toContain(
      "parameter a (9223372036854775808) is beyond the 64-bit int range",
    );
  });

  it("concatenates with + unless both sides are number-like parameters", () => {
    expect(run('region + region == "eueu" && region + "-x" == "eu-x"', p)).toBe("hit");
    expect(run('"x-" + rows == "x-5" && rows + region == "5eu"', p)).toBe("hit");
  });

  it("tests membership by number or by text, as the list holds", () => {
    expect(run("rows in [1, 5] && ratio in [0.25] && !(rows in [6])", p)).toBe("hit");
    expect(run('region in ["eu", "us"] && !(rows in ["05"])', p)).toBe("hit");
    expect(run("rows in [threshold, a]", { ...p, a: "5.0" })).toBe("hit");
    expect(run('"5" in [rows] && 5 in [rows]', p)).toBe("hit");
  });

  it("passes the write-time check for numeric comparisons and arithmetic", () => {
    for (const expr of [
      "rows > threshold",
      "rows > 3",
      "3 <= rows",
      "ratio < 0.5",
      "rows + 1 > threshold",
      'region + "x" == "eux"',
      "rows in [1, 2]",
      'params["a.b"] >= 20260101',
    ]) {
      expect(checkSwitchExpression(expr), expr).toBeUndefined();
    }
    expect(checkSwitchExpression("rows > [1]")).toContain("no such overload");
    expect(checkSwitchExpression("rows.foo()")).toContain("no matching overload");
  });
});

describe("checkSwitchExpression", () => {
  it("accepts valid conditions", () => {
    for (const expr of [
      'region == "eu"',
      "int(count) > 3",
      'params["system.biz.date"] >= "20260101"',
      'count == "5" || double(ratio) < 0.5',
      '"x" in params && params.x.matches("^a+$")',
      "[1, 2].exists(x, x > 1)",
      'type(region) == string && region != ""',
      "dyn(region)",
    ]) {
      expect(checkSwitchExpression(expr), expr).toBeUndefined();
    }
  });

  it("describes syntax errors with their position", () => {
    expect(checkSwitchExpression('region == "eu" &&')).toBe(
      "syntax error: Unexpected token: EOF at the end",
    );
    expect(checkSwitchExpression('"😀" == region )')).toBe(
      "syntax error: Unexpected character: ')' at character 15",
    );
    expect(checkSwitchExpression('region == "eu')).toMatch(/^syntax error: Unterminated string/);
    expect(checkSwitchExpression("")).toMatch(/^syntax error: /);
    expect(checkSwitchExpression("   ")).toMatch(/^syntax error: /);
    expect(checkSwitchExpression("a === b")).toMatch(/^syntax error: /);
    // DolphinScheduler's placeholders are not CEL.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text is the point
    expect(checkSwitchExpression("${region} == 'eu'")).toMatch(/^syntax error: /);
  });

  it("rejects type errors certain at run time", () => {
    expect(checkSwitchExpression("count > true")).toContain("no such overload: parameter > bool");
    expect(checkSwitchExpression('params["x"] > [3]')).toContain(
      "no such overload: parameter > list<int>",
    );
    expect(checkSwitchExpression("size(region)")).toBe("it yields int, not a boolean");
    expect(checkSwitchExpression("region")).toBe("it yields string, not a boolean");
    expect(checkSwitchExpression('region.foo("x")')).toContain("no matching overload");
  });

  it("rejects the limits: length and macro nesting", () => {
    const atLimit = `r == "${"é".repeat(SWITCH_EXPRESSION_MAX_CHARS - 7)}"`;
    expect([...atLimit].length).toBe(SWITCH_EXPRESSION_MAX_CHARS);
    expect(checkSwitchExpression(atLimit)).toBeUndefined();
    expect(checkSwitchExpression(`${atLimit} `)).toBe(
      "the expression is 1001 characters long; the limit is 1000",
    );
    expect(checkSwitchExpression("[1].all(a, [1].all(b, [1].all(c, true)))")).toContain(
      "nested 3 deep",
    );
  });

  it("leaves unknown names to run time (parameters come from the run)", () => {
    expect(checkSwitchExpression('anything == "x"')).toBeUndefined();
    expect(checkSwitchExpression("process == constructor")).toBeUndefined();
  });
});
