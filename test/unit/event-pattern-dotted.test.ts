/**
 * Keys with dots: aws/event-ruler, the matcher EventBridge runs, flattens the pattern and the
 * event into field paths joined with "." (JsonRuleCompiler for rules, Event's traversal for
 * events; GenericMachine.isFieldStepUsed's comment says in so many words that `{"a.b": [123]}`
 * and `{"a": {"b": [123]}}` must both match). So a nested pattern matches a dotted event key, a
 * dotted pattern key matches a nested event, and an event holding both spellings gives the field
 * both values. Every expectation here was checked against event-ruler 2.0.1's
 * Machine.rulesForJSONEvent.
 */
import { describe, expect, it } from "vitest";
import { checkEventPattern, matchesEventPattern } from "../../lib/core/event-pattern.js";

function expectMatches(pattern: object, yes: object[], no: object[] = []): void {
  expect(checkEventPattern(pattern)).toBeUndefined();
  for (const event of yes) {
    expect(matchesEventPattern(pattern, event), `should match ${JSON.stringify(event)}`).toBe(true);
  }
  for (const event of no) {
    expect(matchesEventPattern(pattern, event), `should not match ${JSON.stringify(event)}`).toBe(
      false,
    );
  }
}

const d = (detail: Record<string, unknown>) => ({ source: "app", detail });

describe("a nested pattern and a dotted event key", () => {
  it("matches the brief's example", () => {
    expectMatches(
      { detail: { state: { status: ["running"] } } },
      [d({ "state.status": "running" }), d({ state: { status: "running" } })],
      [d({ "state.status": "stopped" }), d({ state: "running" }), d({ "state.other": "running" })],
    );
  });

  it("splits event keys at every dot, at any depth", () => {
    expectMatches(
      { detail: { a: { b: { c: [1] } } } },
      [{ "detail.a.b.c": 1 }, { detail: { "a.b": { c: 1 } } }, { "detail.a": { "b.c": 1 } }],
      [{ "detail.a.b": 1 }, { "detail.ab.c": 1 }],
    );
  });
});

describe("a dotted pattern key and a nested event", () => {
  it("matches nested objects and dotted keys alike", () => {
    expectMatches(
      { detail: { "state.status": ["running"] } },
      [d({ state: { status: "running" } }), d({ "state.status": "running" })],
      [d({ state: { status: "stopped" } })],
    );
    expectMatches(
      { "detail.state.status": ["running"], source: ["app"] },
      [d({ state: { status: "running" } })],
      [{ source: "app", "detail-state": { status: "running" } }],
    );
  });

  it("keeps the later of two spellings of one field, as a key given twice", () => {
    const pattern = JSON.parse('{"a":{"b":["1"]},"a.b":["2"]}');
    expectMatches(pattern, [{ a: { b: "2" } }], [{ a: { b: "1" } }]);
  });

  it("a field and a field below it are two fields", () => {
    expectMatches({ a: [2], "a.b": [1] }, [{ a: 2, "a.b": 1 }], [{ a: 2 }, { a: { b: 1 } }]);
  });
});

describe("an event with both spellings", () => {
  const both = { a: { b: 2, c: 3 }, "a.b": 1 };

  it("gives the field both values", () => {
    expectMatches({ a: { b: [1] } }, [both]);
    expectMatches({ a: { b: [2] } }, [both]);
    expectMatches({ "a.b": [1], "a.c": [3] }, [both]);
    expectMatches({ a: { b: [{ numeric: [">", 1] }] } }, [both], [{ "a.b": 1 }]);
  });

  it("exists and anything-but see every value", () => {
    expectMatches({ a: { b: [{ exists: true }] } }, [both, { "a.b": null }], [{ a: {} }]);
    expectMatches({ "a.b": [{ exists: false }] }, [{ a: { c: 1 } }], [both, { "a.b": 1 }]);
    expectMatches(
      { a: { b: [{ "anything-but": [1] }] } },
      [both, { a: { b: 2 } }],
      [{ "a.b": 1 }, { a: { b: 1 } }],
    );
  });

  it("an object under one spelling and a value under the other", () => {
    expectMatches(
      { a: [1], "a.b": ["x"] },
      [
        { a: 1, "a.b": "x" },
        { "a.b": "x", a: [1] },
      ],
      [{ "a.b": "x" }],
    );
  });
});

describe("inside $or", () => {
  it("branches name fields either way", () => {
    expectMatches(
      { $or: [{ "detail.a": ["1"] }, { detail: { "b.c": ["2"] } }] },
      [d({ a: "1" }), d({ "b.c": "2" }), d({ b: { c: "2" } }), { "detail.b": { c: "2" } }],
      [d({ a: "2", b: { c: "1" } })],
    );
  });
});

describe("arrays of objects", () => {
  it("dotted keys inside array elements and across them", () => {
    expectMatches(
      { items: { sku: { id: ["1"] } } },
      [
        { items: [{ "sku.id": "1" }] },
        { "items.sku.id": "1" },
        { items: [{ sku: [{ id: "1" }] }] },
      ],
      [{ items: [{ "sku.id": "2" }] }],
    );
    expectMatches({ "items.sku.id": ["1"] }, [{ items: [{ sku: { id: "1" } }] }]);
  });

  it("keeps fields matched inside one array element together", () => {
    const items = {
      items: [
        { x: 1, "y.z": 2 },
        { x: 3, y: { z: 4 } },
      ],
    };
    expectMatches({ items: { x: [1], y: { z: [2] } } }, [items]);
    expectMatches({ items: { x: [3], "y.z": [4] } }, [items]);
    expectMatches({ items: { x: [1], y: { z: [4] } } }, [], [items]);
  });

  it("a value outside the array goes with any element", () => {
    // event-ruler: a.c has no array membership, so it is consistent with either element.
    const event = { a: [{ b: 1 }, { b: 3 }], "a.c": 2 };
    expectMatches({ a: { b: [3], c: [2] } }, [event]);
    expectMatches({ a: { b: [1], c: [{ exists: false }] } }, [], [event]);
    expectMatches({ "a.c": [2] }, [{ a: [], "a.c": 2 }]);
  });

  it("two arrays under two spellings are two arrays", () => {
    const event = { a: { b: [{ c: 1 }] }, "a.b": [{ d: 2 }] };
    expectMatches({ a: { b: { c: [1], d: [2] } } }, [event]);
  });
});

describe("empty path segments, as event-ruler reads events", () => {
  it("an event key that is empty counts only when a pattern key has an inner empty step", () => {
    // Event skips a step no rule recorded; "a." records only "a" (Java's split drops
    // trailing empty strings), "a..b" records "a", "" and "b".
    expectMatches({ a: { "": [1] } }, [{ "a.": 1 }], [{ a: { "": 1 } }]);
    expectMatches({ "a..b": [1] }, [{ a: { "": { b: 1 } } }, { "a.": { b: 1 } }, { "a..b": 1 }]);
  });
});

describe("checkEventPattern", () => {
  it("names a field by its dotted path", () => {
    expect(checkEventPattern({ detail: { "state.status": "running" } })).toBe(
      "detail.state.status: must be an object or an array",
    );
    expect(checkEventPattern({ "detail.n": [{ numeric: ["<", 6e9] }] })).toMatch(
      /^detail\.n: 6000000000 is outside/,
    );
  });
});
