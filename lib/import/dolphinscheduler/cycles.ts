/**
 * Sub-workflow cycles among the workflows of one import (A's SUB_PROCESS runs B, B's runs A).
 * DolphinScheduler saves them (a run nests until it fails); Shoal's API refuses a SUB_WORKFLOW
 * task whose workflow does not exist yet and a definition that closes a cycle
 * (lib/core/sub-workflow-cycle.ts), so such workflows cannot be applied as they are. Pure.
 */

/** A workflow by its Shoal name and the in-file workflows its SUB_WORKFLOW tasks run. */
export interface SubWorkflowNode {
  name: string;
  children: readonly string[];
}

/**
 * Every elementary cycle met by a depth-first walk in `nodes` order, each once, as
 * `[first, …, first]` starting at its member that comes first in `nodes` (file order);
 * `[a, a]` for a workflow that runs itself. Children outside `nodes` are ignored.
 */
export function subWorkflowCycles(nodes: readonly SubWorkflowNode[]): string[][] {
  const order = new Map(nodes.map((n, i) => [n.name, i]));
  const children = new Map(nodes.map((n) => [n.name, n.children.filter((c) => order.has(c))]));
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (name: string) => {
    stack.push(name);
    for (const child of children.get(name) ?? []) {
      const at = stack.indexOf(child);
      if (at >= 0) {
        const ring = stack.slice(at);
        // Start at the member first in file order, so one cycle has one spelling.
        const first = ring.reduce((a, b) => ((order.get(b) ?? 0) < (order.get(a) ?? 0) ? b : a));
        const k = ring.indexOf(first);
        const rotated = [...ring.slice(k), ...ring.slice(0, k)];
        const key = rotated.join("\u0000");
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...rotated, first]);
        }
      } else if (!done.has(child)) visit(child);
    }
    stack.pop();
    done.add(name);
  };
  for (const n of nodes) if (!done.has(n.name)) visit(n.name);
  return cycles;
}
