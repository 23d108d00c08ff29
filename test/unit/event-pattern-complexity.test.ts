/**
 * Wildcard complexity: the patterns EventBridge refuses with "Rule is too complex - try using
 * fewer wildcard characters or fewer repeating character sequences after a wildcard character"
 * are refused when the trigger is created. The expected complexities are what aws/event-ruler's
 * MachineComplexityEvaluator (v2.0.1) computes for the same pattern, as its README's per-rule
 * `validate()` example builds the machine; the accepted/refused pairs are answers EventBridge gave
 * (cited per test).
 */
import { describe, expect, it } from "vitest";
import {
  checkEventPattern,
  EVENT_PATTERN_MAX_WILDCARD_COMPLEXITY,
  eventPatternWildcardComplexity,
  matchesEventPattern,
} from "../../lib/core/event-pattern.js";

const wc = (...globs: string[]) => globs.map((wildcard) => ({ wildcard }));
const s3Key = (...globs: string[]) => ({
  source: ["aws.s3"],
  "detail-type": ["Object Created"],
  detail: { bucket: { name: ["ingest"] }, object: { key: wc(...globs) } },
});
const stackIds = (...names: string[]) => ({
  source: ["aws.cloudformation"],
  detail: { "stack-id": wc(...names.map((n) => `*:stack/${n}/*`)) },
});

describe("patterns EventBridge refused or accepted", () => {
  it("four `*/datasync/*.ext` wildcards on one field are refused, two are accepted", () => {
    // EventBridge refused the four in one rule and accepted them split two and two
    // (a Terraform module's comment quoting PutRule's "Rule is too complex" answer).
    const four = s3Key(
      "*/datasync/*.bif",
      "*/datasync/*.tif",
      "*/datasync/*.tiff",
      "*/datasync/*.svs",
    );
    expect(checkEventPattern(four)).toMatch(
      /^detail\.object\.key: wildcard pattern too complex: .*16.* over the 9 allowed/,
    );
    expect(checkEventPattern(s3Key("*/datasync/*.bif", "*/datasync/*.tif"))).toBeUndefined();
    expect(checkEventPattern(s3Key("*/datasync/*.tiff", "*/datasync/*.svs"))).toBeUndefined();
    expect(checkEventPattern(s3Key("*.bif", "*.tiff", "*.tif", "*.svs"))).toBeUndefined();
  });

  it("`*:stack/NAME/*` for three stacks is accepted, for four refused", () => {
    // vals-ai/Valkyrie#278: EventBridge refused the rule once a fourth stack was added.
    const three = stackIds("SharedStack", "TrackerStack", "DriverStack");
    expect(checkEventPattern(three)).toBeUndefined();
    expect(eventPatternWildcardComplexity(three)).toBe(9);
    expect(
      checkEventPattern(stackIds("SharedStack", "TrackerStack", "DriverStack", "MonitoringStack")),
    ).toMatch(/^detail\.stack-id: wildcard pattern too complex: /);
  });

  it("says what to change, as EventBridge does", () => {
    expect(checkEventPattern(s3Key("x*aaaaaaaaaa"))).toMatch(
      /use fewer wildcard characters or fewer repeating character sequences after a wildcard character/,
    );
  });
});

describe("what counts", () => {
  it("repeating character sequences after a wildcard", () => {
    expect(checkEventPattern({ a: wc("x*abcdefghij") })).toBeUndefined();
    expect(checkEventPattern({ a: wc("x*aaaaaaaa") })).toBeUndefined();
    expect(checkEventPattern({ a: wc("x*aaaaaaaaa") })).toMatch(/^a: wildcard pattern too complex/);
    expect(checkEventPattern({ a: wc("x*abababababababab") })).toBeUndefined();
    expect(checkEventPattern({ a: wc("*aXaXaXaXaXaXaXaXaX*") })).toMatch(/too complex/);
  });

  it("many wildcard characters", () => {
    expect(checkEventPattern({ a: wc("*a*b*c*d*e*f*g*") })).toBeUndefined();
    expect(checkEventPattern({ a: wc("*a*b*c*d*e*f*g*h*") })).toMatch(
      /^a: wildcard pattern too complex/,
    );
    // Leading text before the first wildcard costs nothing.
    expect(checkEventPattern({ a: wc("reports/2026/*.csv") })).toBeUndefined();
  });

  it("anything-but wildcards count, and fields are judged one by one", () => {
    expect(
      checkEventPattern({ a: [{ "anything-but": { wildcard: "*a*b*c*d*e*f*g*h*" } }] }),
    ).toMatch(/^a: wildcard pattern too complex/);
    const half = ["*/datasync/*.bif", "*/datasync/*.tif"];
    expect(checkEventPattern({ a: wc(...half), b: wc(...half) })).toBeUndefined();
    expect(
      checkEventPattern({ a: [...wc(...half), { "anything-but": { wildcard: half } }] }),
    ).toMatch(/^a: wildcard pattern too complex/);
  });

  it("wildcards on one field in several $or branches add up", () => {
    const branch = (g: string) => ({ detail: { key: wc(g) } });
    expect(checkEventPattern({ $or: [branch("*/d/*.b"), branch("*/d/*.t")] })).toBeUndefined();
    expect(
      checkEventPattern({ $or: [branch("*/d/*.b"), branch("*/d/*.t"), branch("*/d/*.p")] }),
    ).toMatch(/^detail\.key: wildcard pattern too complex/);
  });

  it("names the field by its dotted path however the pattern spells it", () => {
    expect(checkEventPattern({ "detail.object": { key: wc("*a*b*c*d*e*f*g*h*") } })).toMatch(
      /^detail\.object\.key: wildcard pattern too complex/,
    );
  });

  it("never counts less than event-ruler's MachineComplexityEvaluator", () => {
    // [pattern, event-ruler 2.0.1's complexity for it]
    const cases: Array<[object, number]> = [
      [{ a: wc("*") }, 2],
      [{ a: wc("a*") }, 2],
      [{ a: wc("*a") }, 2],
      [{ a: wc("*a*") }, 3],
      [{ a: wc("*a*b*c*d*e*f*") }, 8],
      [{ a: wc("a*a*a*a*a*") }, 9],
      [{ a: wc("*aaaaaaaaaa*") }, 12],
      [{ a: wc("*ab*ab*ab*") }, 7],
      [{ a: wc("x*aaaa") }, 5],
      [{ a: wc("x*abcdefghijklmnopqrst") }, 2],
      [{ a: wc("x*aXaXaXaXaXaXaXaXaXaX") }, 11],
      [{ a: wc("dir/*.png") }, 2],
      [{ a: wc("*/lib/*") }, 4],
      [{ a: wc("*a*b", "*a*c") }, 6],
      [{ a: wc("*ab*b", "*ab*c") }, 7],
      [{ a: wc("x*b*", "x*c*") }, 6],
      [{ a: wc("x*b", "xy*c") }, 3],
      [{ a: wc("x*b", "y*c") }, 2],
      [{ a: wc("*b", "*c", "*d") }, 6],
      [{ a: wc("*x*", "*x*") }, 5],
      [{ a: wc("x*", "x*") }, 2],
      [{ a: wc("ab*cd*", "ab*ce*", "abc*") }, 8],
      [{ a: [{ "anything-but": { wildcard: ["*a*", "*b*"] } }] }, 4],
      [{ a: [...wc("*x*"), { "anything-but": { wildcard: "*x*" } }] }, 6],
      [{ a: wc("*x*"), $or: [{ b: ["1"] }, { c: ["2"] }] }, 5],
      [{ $or: [{ a: wc("*a*") }, { a: wc("*b*") }] }, 6],
      [{ a: [...wc("*a*"), "abc", { prefix: "ab" }] }, 3],
      [s3Key("*.bif", "*.tiff", "*.tif", "*.svs"), 8],
      [s3Key("*/datasync/*.bif", "*/datasync/*.tif"), 8],
      [stackIds("SharedStack", "TrackerStack", "DriverStack", "MonitoringStack"), 12],
    ];
    for (const [pattern, ruler] of cases) {
      const ours = eventPatternWildcardComplexity(pattern);
      expect(ours, JSON.stringify(pattern)).toBeGreaterThanOrEqual(ruler);
      // Equal except where event-ruler shares states Shoal keeps apart (a repeated pattern).
      expect(ours - ruler, JSON.stringify(pattern)).toBeLessThanOrEqual(2);
    }
    expect(eventPatternWildcardComplexity({ a: ["x"], b: [{ prefix: "y" }] })).toBe(0);
  });
});

describe("limits and matching", () => {
  it("refuses above EVENT_PATTERN_MAX_WILDCARD_COMPLEXITY", () => {
    expect(EVENT_PATTERN_MAX_WILDCARD_COMPLEXITY).toBe(9);
  });

  it("refuses many wildcard values on one field", () => {
    const many = Array.from(
      { length: 60 },
      (_, i) => `*${String.fromCharCode(65 + (i % 26))}${i}*`,
    );
    expect(checkEventPattern({ a: wc(...many) })).toMatch(/^a: wildcard pattern too complex/);
  });

  it("refuses a field repeated in 512 $or alternatives without building its whole automaton", () => {
    // event-ruler adds the long value once per alternative (a sorts before f0..f8): far over 9.
    const pattern: Record<string, unknown> = { a: wc(`x*${"abcdefghij".repeat(150)}`) };
    for (let i = 0; i < 9; i++) pattern[`f${i}`] = { $or: [{ x: [1] }, { y: [2] }] };
    expect(JSON.stringify(pattern).length).toBeLessThanOrEqual(2048);
    const started = performance.now();
    expect(checkEventPattern(pattern)).toMatch(
      /^a: wildcard pattern too complex: complexity 100 or more/,
    );
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("keeps matching with a stored pattern that is now too complex", () => {
    const pattern = s3Key(
      "*/datasync/*.bif",
      "*/datasync/*.tif",
      "*/datasync/*.tiff",
      "*/datasync/*.svs",
    );
    const event = {
      source: "aws.s3",
      "detail-type": "Object Created",
      detail: { bucket: { name: "ingest" }, object: { key: "in/datasync/a.tif" } },
    };
    expect(matchesEventPattern(pattern, event)).toBe(true);
  });
});
