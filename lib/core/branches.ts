/**
 * Which branch decision skipped a task. A CONDITIONS or SWITCH task marks the branch targets it
 * did not take SKIPPED, then every waiting task all of whose upstream tasks are SKIPPED
 * (lib/core/progress.ts `skipBranches`, DolphinScheduler's behaviour); this walks that back.
 */
import type { TaskDefinition } from "./model.js";
import { SLOT } from "./progress.js";

/** The codes a CONDITIONS or SWITCH task may lead to (empty for other task types). */
export function branchTargets(task: TaskDefinition): string[] {
  switch (task.type) {
    case "CONDITIONS":
      return [...task.successNext, ...task.failedNext];
    case "SWITCH":
      return [...task.cases.map((c) => c.next), ...(task.defaultNext ? [task.defaultNext] : [])];
    default:
      return [];
  }
}

/** Why task `index` is SKIPPED. */
export interface SkipCause {
  /** Code of the CONDITIONS or SWITCH task whose decision did not take this branch. */
  by: string;
  /** Its type. */
  byType: "CONDITIONS" | "SWITCH";
  /**
   * Codes of the skipped tasks between it and this task, nearest first (empty when this task is
   * itself a branch target that was not taken).
   */
  via: string[];
}

/**
 * The branch decision that skipped task `index`, or undefined when its slot is not SKIPPED or the
 * cause cannot be found (a definition changed under the instance, which cannot happen).
 * @param slots the instance's progress slots.
 * @param upstream upstream task indices per task (Dag.upstream).
 */
export function skipCause(
  tasks: readonly TaskDefinition[],
  upstream: readonly (readonly number[])[],
  slots: string,
  index: number,
): SkipCause | undefined {
  const via: string[] = [];
  let at = index;
  // Each step goes one task up the DAG, so the walk ends within the DAG's depth.
  for (let steps = 0; steps <= tasks.length; steps++) {
    if (slots[at] !== SLOT.SKIPPED) return undefined;
    const code = tasks[at]?.code;
    const ups = upstream[at] ?? [];
    const decider = ups.find((u) => {
      const t = tasks[u];
      return (
        t !== undefined &&
        (t.type === "CONDITIONS" || t.type === "SWITCH") &&
        slots[u] !== SLOT.SKIPPED &&
        code !== undefined &&
        branchTargets(t).includes(code)
      );
    });
    if (decider !== undefined) {
      const t = tasks[decider] as TaskDefinition;
      return { by: t.code, byType: t.type as "CONDITIONS" | "SWITCH", via };
    }
    // Skipped because every upstream task was skipped: follow the first of them.
    const next = ups.find((u) => slots[u] === SLOT.SKIPPED);
    if (next === undefined) return undefined;
    via.push(tasks[next]?.code ?? "");
    at = next;
  }
  return undefined;
}
