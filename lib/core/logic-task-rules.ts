/**
 * Graph rules of logic tasks that a schema cannot say (validate.ts runs them once the shape of a
 * definition is valid). DolphinScheduler's UI enforces the same rules on its canvas.
 */
import type { ErrorDetail } from "./errors.js";
import type { TaskDefinition } from "./model.js";

/**
 * Rules of logic tasks a schema cannot say: CONDITIONS and SWITCH branch targets must be known
 * tasks that list the branching task upstream, and every task after a branching task must be on
 * one of its branches (else it would run on both, which DolphinScheduler's UI does not allow).
 * @param index task code → position, for the paths of the details.
 */
export function checkLogicTasks(
  tasks: readonly TaskDefinition[],
  index: ReadonlyMap<string, number>,
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  tasks.forEach((task, i) => {
    let targets: Array<[string, string]> = [];
    if (task.type === "CONDITIONS") {
      if (task.upstream.length === 0) {
        details.push({
          path: `tasks[${i}].upstream`,
          message: "a CONDITIONS task needs at least one upstream task to branch on",
        });
      }
      targets = [
        ...task.successNext.map((c, j): [string, string] => [c, `tasks[${i}].successNext[${j}]`]),
        ...task.failedNext.map((c, j): [string, string] => [c, `tasks[${i}].failedNext[${j}]`]),
      ];
      for (const [j, c] of task.failedNext.entries()) {
        if (task.successNext.includes(c)) {
          details.push({
            path: `tasks[${i}].failedNext[${j}]`,
            message: `'${c}' is in both successNext and failedNext`,
          });
        }
      }
    } else if (task.type === "SWITCH") {
      targets = task.cases.map((k, j): [string, string] => [
        k.next,
        `tasks[${i}].cases[${j}].next`,
      ]);
      if (task.defaultNext) targets.push([task.defaultNext, `tasks[${i}].defaultNext`]);
    } else return;
    for (const [code, path] of targets) {
      const t = index.get(code);
      if (t === undefined) details.push({ path, message: `unknown task code '${code}'` });
      else if (!tasks[t]?.upstream.includes(task.code)) {
        details.push({
          path,
          message: `'${code}' must list '${task.code}' in its upstream to be one of its branches`,
        });
      }
    }
    const onBranch = new Set(targets.map(([c]) => c));
    tasks.forEach((other, k) => {
      const j = other.upstream.indexOf(task.code);
      if (j >= 0 && !onBranch.has(other.code)) {
        details.push({
          path: `tasks[${k}].upstream[${j}]`,
          message: `'${other.code}' follows ${task.type} task '${task.code}' but is on none of its branches`,
        });
      }
    });
  });
  return details;
}
