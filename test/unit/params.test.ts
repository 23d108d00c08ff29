// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} in plain strings is the syntax under test
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  MAX_PARAM_DEPTH,
  PARAM_NAME,
  ParamError,
  paramsToEnv,
  referencedParams,
  resolveParams,
  substitute,
} from "../../lib/core/params.js";
import { builtinParams } from "../../lib/core/time-params.js";

/** 2026-11-21 09:00 UTC (17:00 in Shanghai). */
const BASE = Date.UTC(2026, 10, 21, 9);
const builtins = builtinParams({ baseMs: BASE, workflow: "etl", instanceId: "wi-7" });

describe("PARAM_NAME", () => {
  it("accepts identifiers with dots and rejects the rest", () => {
    for (const ok of ["a", "_x", "system.biz.date", "A1_b.c"])
      expect(PARAM_NAME.test(ok)).toBe(true);
    for (const bad of ["", "1a", "a-b", "a b", ".a", "a$"])
      expect(PARAM_NAME.test(bad)).toBe(false);
  });
});

describe("resolveParams", () => {
  it("applies DolphinScheduler's precedence: startup > local > upstream OUT > global > builtins", () => {
    const layers = {
      builtins: { p: "builtin", q: "builtin", r: "builtin", s: "builtin", t: "builtin" },
      global: { p: "global", q: "global", r: "global", s: "global" },
      upstreamOut: { p: "out", q: "out", r: "out" },
      local: { p: "local", q: "local" },
      startup: { p: "startup" },
    };
    expect(resolveParams({ ...layers, baseMs: BASE })).toEqual({
      p: "startup",
      q: "local",
      r: "out",
      s: "global",
      t: "builtin",
    });
  });

  it("overrides built-ins, and keeps them otherwise", () => {
    const out = resolveParams({
      builtins,
      global: { "system.biz.date": "20000101" },
      baseMs: BASE,
    });
    expect(out["system.biz.date"]).toBe("20000101");
    expect(out["system.biz.curdate"]).toBe("20261121");
    expect(out["system.workflow.instance.id"]).toBe("wi-7");
  });

  it("expands a global time expression referenced by a local value", () => {
    const out = resolveParams({
      builtins,
      global: { dt: "$[yyyyMMdd-1]" },
      local: { path: "/d/${dt}" },
      baseMs: BASE,
    });
    expect(out.dt).toBe("20261120");
    expect(out.path).toBe("/d/20261120");
  });

  it("evaluates time expressions in the zone", () => {
    const out = resolveParams({
      builtins: {},
      global: { hour: "$[HH]", day: "$[yyyyMMdd]" },
      baseMs: Date.UTC(2026, 10, 20, 20),
      zone: "Asia/Shanghai",
    });
    expect(out).toEqual({ hour: "04", day: "20261121" });
  });

  it("expands chains, built-ins and names used inside $[…]", () => {
    const out = resolveParams({
      builtins,
      global: { a: "${b}-a", b: "${c}-b", c: "${system.biz.curdate}", n: "2" },
      local: { back: "$[yyyyMMdd-${n}]", label: "${system.workflow.definition.name}/${a}" },
      baseMs: BASE,
    });
    expect(out.a).toBe("20261121-b-a");
    expect(out.back).toBe("20261119");
    expect(out.label).toBe("etl/20261121-b-a");
  });

  it("lets a higher layer change a value that lower-layer values refer to", () => {
    const out = resolveParams({
      builtins: {},
      global: { dt: "$[yyyyMMdd]", path: "/d/${dt}" },
      startup: { dt: "20200101" },
      baseMs: BASE,
    });
    expect(out.path).toBe("/d/20200101");
  });

  it("leaves unknown names and cycles as written", () => {
    const out = resolveParams({
      builtins: {},
      global: {
        home: "${HOME}/x",
        a: "${b}",
        b: "${a}",
        self: "x${self}",
        viaCycle: "[${a}]",
      },
      baseMs: BASE,
    });
    expect(out.home).toBe("${HOME}/x");
    expect(out.a).toBe("${b}");
    expect(out.b).toBe("${a}");
    expect(out.self).toBe("x${self}");
    expect(out.viaCycle).toBe("[${b}]");
  });

  it(`stops expanding after ${MAX_PARAM_DEPTH} levels`, () => {
    const global: Record<string, string> = { p30: "end" };
    for (let i = 0; i < 30; i++) global[`p${i}`] = `\${p${i + 1}}`;
    const deep = resolveParams({ builtins: {}, global, baseMs: BASE });
    expect(deep.p0).toBe(`\${p${MAX_PARAM_DEPTH + 1}}`);
    expect(deep.p29).toBe("end");
    expect(deep[`p${30 - MAX_PARAM_DEPTH}`]).toBe("end");
    const short: Record<string, string> = { p10: "end" };
    for (let i = 0; i < 10; i++) short[`p${i}`] = `\${p${i + 1}}`;
    expect(resolveParams({ builtins: {}, global: short, baseMs: BASE }).p0).toBe("end");
  });

  it("refuses values that explode through nesting", () => {
    const global: Record<string, string> = { a0: "x".repeat(4000) };
    for (let i = 1; i < 12; i++) global[`a${i}`] = `\${a${i - 1}}\${a${i - 1}}`;
    expect(() => resolveParams({ builtins: {}, global, baseMs: BASE })).toThrow(
      /parameter a\d+ expands to more than 65536 bytes/,
    );
  });

  it("throws ParamError naming the parameter for a bad $[…]", () => {
    const call = () =>
      resolveParams({ builtins: {}, local: { when: "$[yyyyMMdd+N]" }, baseMs: BASE });
    expect(call).toThrow(ParamError);
    expect(call).toThrow("parameter when: time expression $[yyyyMMdd+N] is not valid");
    expect(() =>
      resolveParams({ builtins: {}, global: { d: "$[yyyy]" }, baseMs: BASE, zone: "Nowhere/X" }),
    ).toThrow(ParamError);
  });

  it("keeps odd names such as __proto__ as plain entries", () => {
    const global = JSON.parse('{"__proto__": "p", "x": "${__proto__}"}') as Record<string, string>;
    const out = resolveParams({ builtins: {}, global, baseMs: BASE });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(out.x).toBe("p");
  });
});

describe("substitute", () => {
  const params = { dt: "20261120", name: "it's", dir: "/data/${dt}", n: "3" };

  it("raw: replaces known names and time expressions, leaves the rest", () => {
    const text = "cp ${dir}/${dt}.csv ${HOME}/$[yyyy-MM-dd] ${missing} $[yyyyMMdd-${n}]";
    expect(substitute(text, params, { mode: "raw", baseMs: BASE })).toBe(
      "cp /data/${dt}/20261120.csv ${HOME}/2026-11-21 ${missing} 20261118",
    );
  });

  it("raw: does not scan inserted values again", () => {
    expect(substitute("${a}", { a: "${b}", b: "x" }, { mode: "raw", baseMs: BASE })).toBe("${b}");
    expect(substitute("${a}", { a: "$[yyyy]" }, { mode: "raw", baseMs: BASE })).toBe("$[yyyy]");
  });

  it("shell: quotes values and time expressions for their place", () => {
    const text = `echo \${name} '\${name}' "\${name}" $[yyyyMMdd] \${HOME}`;
    expect(substitute(text, params, { mode: "shell", baseMs: BASE })).toBe(
      `echo 'it'\\''s' 'it'\\''s' "it's" '20261121' \${HOME}`,
    );
  });

  it("shell: the command prints the values exactly", () => {
    const hostile = { a: "$(touch /nonexistent-shoal)", b: "x'; exit 3; '", c: '"$HOME"' };
    const cmd = substitute('printf "%s|" ${a} \'${b}\' "${c}" $[HH:mm]', hostile, {
      mode: "shell",
      baseMs: BASE,
      zone: "Asia/Shanghai",
    });
    expect(execFileSync("/bin/sh", ["-c", cmd], { encoding: "utf8" })).toBe(
      `${hostile.a}|${hostile.b}|${hostile.c}|17:00|`,
    );
  });

  it("throws ParamError for a bad time expression or an unsafe place", () => {
    expect(() => substitute("$[xx]", {}, { mode: "raw", baseMs: BASE })).toThrow(ParamError);
    expect(() => substitute("echo `${dt}`", params, { mode: "shell", baseMs: BASE })).toThrow(
      "${dt} is inside a backquoted command substitution",
    );
  });
});

describe("paramsToEnv", () => {
  it("keeps environment-safe names and turns dots into underscores", () => {
    expect(paramsToEnv({ a: "1", "system.biz.date": "2", "x-y": "3", _z: "4" })).toEqual({
      a: "1",
      system_biz_date: "2",
      _z: "4",
    });
  });

  it("prefers the undotted name, then the first dotted one in order", () => {
    expect(paramsToEnv({ "a.b": "dotted", a_b: "plain" })).toEqual({ a_b: "plain" });
    expect(paramsToEnv({ "a_b.c": "second", "a.b_c": "first" })).toEqual({ a_b_c: "first" });
  });
});

describe("referencedParams", () => {
  it("lists each ${name} once, in order of first use", () => {
    expect(referencedParams("${b} ${a} ${b} $[yyyy] ${1x} ${sys.date} $x")).toEqual([
      "b",
      "a",
      "sys.date",
    ]);
    expect(referencedParams("no references")).toEqual([]);
  });
});
