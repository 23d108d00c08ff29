/**
 * The walk behind the API's and `shoal apply`'s refusal of sub-workflow cycles across
 * definitions (lib/core/sub-workflow-cycle.ts): shortest path back, bounded depth, each
 * workflow read once, and the same depth as the engine's nesting limit.
 */
import { describe, expect, it } from "vitest";
import { pathBack, SUB_WORKFLOW_WALK_DEPTH } from "../../lib/core/sub-workflow-cycle.js";
import { MAX_SUB_WORKFLOW_DEPTH } from "../../lib/engine/logic-tasks.js";

/** `childrenOf` over a fixed graph, counting reads. */
function graph(edges: Record<string, string[]>) {
  const reads: string[] = [];
  const childrenOf = async (name: string) => {
    reads.push(name);
    return edges[name] ?? [];
  };
  return { childrenOf, reads };
}

describe("pathBack", () => {
  it("finds the shortest path from a target back to the workflow being written", async () => {
    const g = graph({ p: ["x", "c"], x: ["y"], y: ["c"] });
    expect(await pathBack("p", "c", g.childrenOf)).toEqual(["p", "c"]);
    const h = graph({ p: ["x"], x: ["y"], y: ["c"] });
    expect(await pathBack("p", "c", h.childrenOf)).toEqual(["p", "x", "y", "c"]);
  });

  it("answers undefined without a path, reading each workflow once (diamonds, old cycles)", async () => {
    const g = graph({ p: ["a", "b"], a: ["d"], b: ["d"], d: ["p"] });
    expect(await pathBack("p", "c", g.childrenOf)).toBeUndefined();
    expect(g.reads.sort()).toEqual(["a", "b", "d", "p"]);
  });

  it("never reads the workflow being written (its new version is the caller's)", async () => {
    const g = graph({ p: ["c"], c: ["p"] });
    expect(await pathBack("p", "c", g.childrenOf)).toEqual(["p", "c"]);
    expect(g.reads).toEqual(["p"]);
  });

  it("goes as deep as the engine nests sub-workflows, no deeper", async () => {
    expect(SUB_WORKFLOW_WALK_DEPTH).toBe(MAX_SUB_WORKFLOW_DEPTH);
    const chain = (n: number) =>
      Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`w${i}`, [i === n - 1 ? "c" : `w${i + 1}`]]),
      );
    expect(await pathBack("w0", "c", graph(chain(8)).childrenOf)).toHaveLength(9);
    expect(await pathBack("w0", "c", graph(chain(9)).childrenOf)).toBeUndefined();
  });
});
