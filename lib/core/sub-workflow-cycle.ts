/**
 * Sub-workflow cycles across definitions: a SUB_WORKFLOW task of `a` that runs `b`, whose stored
 * latest version runs `a` (directly or further down), would make every run of either nest until
 * the engine's depth limit fails it. The API's PUT (lib/api/workflows.ts) and `shoal apply`
 * (lib/cli/commands/apply.ts) look for such a path before they write. Pure: the workflows'
 * references are read through a callback.
 */
import type { TaskDefinition } from "./model.js";

/**
 * How deep the walk goes: the engine fails a run nested deeper than this
 * (lib/engine/logic-tasks.ts MAX_SUB_WORKFLOW_DEPTH), so a longer path fails at run time
 * anyway, cycle or not; the walk stays bounded however many workflows there are.
 */
export const SUB_WORKFLOW_WALK_DEPTH = 8;

/** The workflows `tasks` run as sub-workflows, each once, in task order. */
export function subWorkflowTargets(tasks: readonly TaskDefinition[]): string[] {
  const out = new Set<string>();
  for (const t of tasks) if (t.type === "SUB_WORKFLOW") out.add(t.workflow);
  return [...out];
}

/**
 * The shortest path of SUB_WORKFLOW references from `start` back to `target`, at most `maxDepth`
 * references long, breadth first; `childrenOf(name)` gives the workflows `name` runs (empty for
 * a workflow that does not exist), read once per workflow. `target`'s own references are never
 * read: it is the workflow being written, whose new version is the caller's.
 * @returns `[start, …, target]`, or undefined when `target` is not reached.
 */
export async function pathBack(
  start: string,
  target: string,
  childrenOf: (name: string) => Promise<readonly string[]>,
  maxDepth: number = SUB_WORKFLOW_WALK_DEPTH,
): Promise<string[] | undefined> {
  if (start === target) return [start];
  const parent = new Map<string, string | undefined>([[start, undefined]]);
  let level = [start];
  for (let depth = 1; depth <= maxDepth && level.length > 0; depth++) {
    const next: string[] = [];
    for (const name of level) {
      for (const child of await childrenOf(name)) {
        if (parent.has(child)) continue;
        parent.set(child, name);
        if (child === target) {
          const path = [child];
          for (let p = parent.get(child); p !== undefined; p = parent.get(p)) path.unshift(p);
          return path;
        }
        next.push(child);
      }
    }
    level = next;
  }
  return undefined;
}
