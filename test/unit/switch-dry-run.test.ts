// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is Shoal's parameter syntax, not a JS template
import { describe, expect, it } from "vitest";
import { dryRunSwitch, outParamSetters } from "../../lib/core/switch-dry-run.js";
import { evaluateSwitch } from "../../lib/core/switch-expression.js";
import { parseWorkflowDefinition } from "../../lib/core/validate.js";

const def = parseWorkflowDefinition({
  tasks: [
    {
      code: "count",
      type: "SHELL",
      command: "n=$(wc -l < f); echo \"${setValue(rows=$n)}\"; echo '#{setValue( total = 1)}'",
    },
    {
      code: "lookup",
      type: "HTTP",
      url: "http://127.0.0.1:1/x",
      outputs: { threshold: "$.limit", rows: "$.rows" },
    },
    { code: "other", type: "SHELL", command: "echo setValue is not called here" },
  ],
});

describe("outParamSetters", () => {
  it("finds setValue names in SHELL commands and outputs of HTTP tasks", () => {
    const setters = outParamSetters(def.tasks, [0, 1, 2]);
    expect(Object.fromEntries(setters)).toEqual({
      rows: ["count", "lookup"],
      total: ["count"],
      threshold: ["lookup"],
    });
    expect(outParamSetters(def.tasks, [2]).size).toBe(0);
  });
});

describe("dryRunSwitch", () => {
  const setters = outParamSetters(def.tasks, [0, 1]);
  const cases = [
    { condition: 'region == "us"', next: "us" },
    { condition: "rows > threshold", next: "big" },
    { condition: "rows > 0", next: "some" },
  ];

  it("decides as a real run when the conditions need no missing parameter", () => {
    const params = { region: "eu", rows: "5", threshold: "100" };
    const real = evaluateSwitch(cases, "none", params);
    expect(real).toEqual({ next: "some", matched: 2 });
    expect(dryRunSwitch(cases, "none", params, setters)).toEqual({ next: ["some"], matched: 2 });
    expect(dryRunSwitch(cases, "none", { region: "us" }, setters)).toEqual({
      next: ["us"],
      matched: 0,
    });
    expect(dryRunSwitch([{ condition: "x +", next: "a" }], "none", {}, setters)).toEqual({
      error: expect.stringContaining("syntax error"),
    });
  });

  it("follows every branch a condition on a missing OUT parameter may lead to, and says why", () => {
    const r = dryRunSwitch(cases, "none", { region: "eu" }, setters);
    expect(r).toEqual({
      next: ["big", "some", "none"],
      warning:
        "dry run: case 1 (rows > threshold) reads OUT parameter rows of task count or lookup, " +
        "OUT parameter threshold of task lookup; case 2 (rows > 0) reads OUT parameter rows of " +
        "task count or lookup, which the dry run does not have; following every branch it may " +
        "take: big, some, none",
    });
  });

  it("stops at a case that is true, or that fails, after undecided ones", () => {
    const trueAfter = dryRunSwitch(
      [
        { condition: "total > 1", next: "a" },
        { condition: 'region == "eu"', next: "b" },
        { condition: "true", next: "c" },
      ],
      "d",
      { region: "eu" },
      setters,
    );
    expect(trueAfter).toMatchObject({ next: ["a", "b"] });
    const failsAfter = dryRunSwitch(
      [
        { condition: "total > 1", next: "a" },
        { condition: "region > 1", next: "b" },
      ],
      "d",
      { region: "eu" },
      setters,
    );
    expect(failsAfter).toMatchObject({ next: ["a"] });
    expect((failsAfter as { warning: string }).warning).toContain(
      '(a real run that gets past them fails: case 1 ("region > 1"): parameter region is "eu", not a number',
    );
    const noDefault = dryRunSwitch([{ condition: "total > 1", next: "a" }], undefined, {}, setters);
    expect((noDefault as { warning: string }).warning).toContain(
      "a real run in which they are false fails: no case matched and there is no defaultNext",
    );
  });

  it("names a missing parameter no upstream task declares", () => {
    const r = dryRunSwitch(
      [{ condition: 'params["mystery"] == "x"', next: "a" }],
      "b",
      {},
      setters,
    );
    expect(r).toMatchObject({ next: ["a", "b"] });
    expect((r as { warning: string }).warning).toContain(
      "parameter mystery (which no upstream task declares; a SHELL task may set it at run time)",
    );
  });
});
